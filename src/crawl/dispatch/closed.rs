//! What is left of the crawl loop once every job has ended: the ledger, the shared crawl's
//! part, why the loop stopped, and what the report and the last save point need.

use super::Dispatcher;
use crate::crawl::ledger::Ledger;
use crate::crawl::save_point::{CrawlSession, StateError};
use crate::crawl::setup::Shared;
use crate::report::StopReason;

impl Dispatcher {
    /// Ends every job and drops the loop's senders (to jobs and, through the job context, to
    /// the writer), keeping what shutdown needs.
    pub(in crate::crawl) async fn close(mut self) -> Closed {
        self.tasks.shutdown().await;
        self.idle.clear();
        Closed {
            shared: self.shared,
            ledger: self.ledger,
            stopping: self.stopping,
            state_error: self.state_error,
            started_at: self.started_at,
            seed_problems: match self.seeds {
                Some(feed) => feed.into_problems(),
                None => self.seed_problems,
            },
            out: self.rules.out,
            finished_dir: self.rules.finished_dir,
            session: self.rules.session,
        }
    }
}

/// What is left of the loop once every job has ended.
pub(in crate::crawl) struct Closed {
    /// This worker's part in a shared crawl.
    pub(in crate::crawl) shared: Option<Shared>,
    /// Frontier, admission rules and counters.
    pub(in crate::crawl) ledger: Ledger,
    /// Why the loop stopped, if it was stopped.
    pub(in crate::crawl) stopping: Option<StopReason>,
    /// The first save-point failure.
    pub(in crate::crawl) state_error: Option<StateError>,
    /// When the crawl started (RFC 3339).
    pub(in crate::crawl) started_at: String,
    /// Seed lines skipped this run (the first ones), for the report.
    pub(in crate::crawl) seed_problems: Vec<String>,
    /// The output directory.
    pub(in crate::crawl) out: std::path::PathBuf,
    /// `--finished-dir` (for the status file).
    pub(in crate::crawl) finished_dir: Option<std::path::PathBuf>,
    /// The crawl's name and cookie jar.
    pub(in crate::crawl) session: CrawlSession,
}
