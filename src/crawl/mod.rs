//! The crawl loop: the only place that wires the stages together.
//!
//! ```text
//! seeds -> frontier -> [job task: fetch -> chain (filter, outlinks, content seen,
//!              ^                   build records, write)] -> results channel
//!              |                                                   |
//!              +------- ledger: admission <- links / redirects <---+
//! ```
//!
//! | part | file |
//! |---|---|
//! | start-up I/O: output dir, dedup index, database, replay, writer (a shared worker: `setup/shared.rs`) | `setup/` |
//! | a crawl state already there: resume, refuse, `--recrawl`, `--fresh`, a raised budget | `existing_state.rs` |
//! | the loop: dispatch, results, timer, signals (console commands: `dispatch/commands.rs`) | `dispatch/` |
//! | the seeds file, fed to the frontier as the crawl runs | `seed_feed.rs` |
//! | one job: fetch and the chain | `job.rs` |
//! | what a finished job changes (counters, frontier, retries) | `ledger/` |
//! | what may enter the frontier | `admission.rs` |
//! | save points and the saved counters | `save_point.rs` |
//! | the status file's snapshot, a shared worker's counters | `status.rs` |
//! | replay of WARC records after a crash | `replay.rs` |
//! | the end: writer, final state, report | `shutdown.rs` |
//! | idle keep-alive connections | `idle_pool.rs` |
//! | `--min-free`: no new fetch while disk space is low | `disk_guard.rs` |
//! | WET/WAT and the search index of each closed WARC (`--wet`, `--wat`, `--search-index`) | `derivatives.rs` |
//! | the hand-off of closed files (`--finished-dir`, `--on-close`) | `handoff.rs` |
//!
//! The loop owns the ledger (frontier and counters) and the idle connections; jobs own one
//! fetch each and report back through a bounded channel. The WARC writer runs on its own
//! thread; when every sender is gone it closes the last file.

mod admission;
mod console_link;
mod derivatives;
mod disk_guard;
mod dispatch;
mod existing_state;
mod handoff;
mod idle_pool;
mod job;
mod ledger;
mod live_changes;
mod open_files;
mod operator_changes;
mod replay;
pub mod save_point;
mod seed_feed;
pub mod setup;
mod shutdown;
mod site_hosts;
mod status;
pub mod stop_signals;

use std::time::Instant;

use tokio::sync::mpsc;

use crate::config::Config;
use crate::report::{CrawlStats, Progress};
use crate::warc::WarcError;
use console_link::ConsoleLink;
use dispatch::{DispatchRules, Dispatcher};
use save_point::StateError;
use setup::SetupError;

/// Why a crawl could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    /// Start-up failed (output directory, dedup index).
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The WARC output could not be set up.
    #[error(transparent)]
    Output(#[from] WarcError),
    /// Saved crawl state could not be read.
    #[error(transparent)]
    State(#[from] StateError),
    /// The live console could not start.
    #[error(transparent)]
    Console(#[from] crate::console::ConsoleError),
    /// WARC files written after the last saved state could not be read back.
    #[error("replaying WARC files after an unclean stop: {0}")]
    Replay(std::io::Error),
}

/// How a crawl ended.
#[derive(Debug)]
pub struct CrawlOutcome {
    /// The final report.
    pub stats: CrawlStats,
    /// The output error that stopped the crawl, if any.
    pub output_error: Option<WarcError>,
    /// The crawl state could not be saved (the crawl stopped because of it).
    pub state_error: Option<StateError>,
}

/// Runs a crawl to its end. `signals` delivers shutdown requests (SIGINT/SIGTERM).
pub async fn run(
    config: Config,
    mut signals: mpsc::UnboundedReceiver<()>,
) -> Result<CrawlOutcome, CrawlError> {
    let start = Instant::now();
    // Bound first: an address that cannot be used stops the run before anything starts.
    let console = match &config.run.console {
        Some(console) => {
            let shared = config
                .shared
                .as_ref()
                .map(|s| (s.url.clone(), s.crawl_id.clone()));
            let link = ConsoleLink::start(console, shared).await?;
            // Printed whatever the verbosity: without it the operator cannot steer the crawl.
            eprintln!("trawl: console at {}", link.url());
            Some(link)
        }
        None => None,
    };
    let started = match &config.shared {
        // Joining may wait (for seeds, for Redis): a signal ends the wait.
        Some(settings) => tokio::select! {
            started = setup::start_shared(&config, settings) => started?,
            _ = signals.recv() => return Err(SetupError::Interrupted.into()),
        },
        None => setup::start(&config)?,
    };
    let log = config
        .report
        .log_file
        .as_ref()
        .and_then(|p| crate::report::log_file::LogFile::open(p).ok());
    let progress = Progress::new(
        config.report.quiet,
        config.report.progress_interval,
        config.run.max_pages,
        log,
    );
    let open_files = open_files::raise_limit();
    if let Some(problem) = open_files::shortage(open_files, config.run.concurrency) {
        tracing::warn!("{problem}");
    }
    let rules = DispatchRules {
        idle_connections: open_files::idle_connections(open_files, config.run.concurrency),
        session: started.session,
        start,
        time_limit: config.run.time_limit,
        max_bytes: config.run.max_bytes,
        concurrency: config.run.concurrency,
        shutdown_timeout: config.run.shutdown_timeout,
        out: config.output.out.clone(),
        finished_dir: config.output.handoff.finished_dir.clone(),
        drain_requisites: config.chain.links.page_requisites,
        min_free: config.run.min_free,
    };
    let mut dispatcher = Dispatcher::new(
        started.ledger,
        started.jobs,
        progress,
        rules,
        started.shared,
        console,
        started.seeds,
    );
    dispatcher.run(&started.writer, signals).await;
    let closed = dispatcher.close().await;
    let mut seed_problems: Vec<String> =
        config.seed_problems.iter().map(|p| p.to_string()).collect();
    seed_problems.extend(closed.seed_problems.iter().cloned());
    Ok(shutdown::finish(
        closed,
        started.writer,
        started.deriver,
        start,
        seed_problems,
        config.cookies.save.as_deref(),
    )
    .await)
}
