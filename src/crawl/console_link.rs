//! The crawl loop's side of the live console: it publishes a [`View`] of the ledger about
//! once a second (and right after each change), keeps the last fetches, and turns the
//! operator's commands into changes of the ledger or of the loop (pause, resume, stop).
//! For a worker of a shared crawl, a task reads the whole crawl from Redis every two seconds
//! for the page.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use tokio::task::JoinHandle;

use super::job::{JobResult, Outcome};
use super::ledger::Ledger;
use crate::chain::filter::SkipReason;
use crate::console::command::{Command, Reply, Request};
use crate::console::view::{BusyHost, Fetch, HostCounts, Settings, View, WarcFile};
use crate::console::{Console, ConsoleConfig, ConsoleError};
use crate::frontier::JobKind;
use crate::warc::WriterHandle;

/// Fetches kept for the page.
const RECENT: usize = 50;
/// Busiest hosts shown.
const BUSIEST: usize = 15;
/// How often the view is published.
const PUBLISH_EVERY: Duration = Duration::from_secs(1);
/// How often a shared crawl's totals are read from Redis.
const SHARED_EVERY: Duration = Duration::from_secs(2);

/// What a command asks of the loop itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    /// Nothing more: the ledger did it.
    None,
    /// Start no new fetch.
    Pause,
    /// Fetch again.
    Resume,
    /// End the crawl as a stop signal does.
    Stop,
}

/// What the loop tells the view about itself.
pub(super) struct LoopState<'a> {
    /// The crawl's name.
    pub(super) crawl_id: &'a str,
    /// When this run started (RFC 3339).
    pub(super) started: &'a str,
    /// `running`, `paused` or `stopping`.
    pub(super) state: &'static str,
    /// Fetches running.
    pub(super) in_flight: usize,
}

/// The console as the loop holds it.
pub(super) struct ConsoleLink {
    console: Console,
    recent: VecDeque<Fetch>,
    last_publish: Option<Instant>,
    /// The whole shared crawl, as the refresher last read it.
    crawl: Arc<Mutex<Option<serde_json::Value>>>,
    refresher: Option<JoinHandle<()>>,
}

impl ConsoleLink {
    /// Starts the console; for a worker of a shared crawl, `shared` is the Redis URL and the
    /// crawl id to read the whole crawl's totals from.
    pub(super) async fn start(
        config: &ConsoleConfig,
        shared: Option<(String, String)>,
    ) -> Result<Self, ConsoleError> {
        let console = Console::start(config.clone()).await?;
        let crawl = Arc::new(Mutex::new(None));
        let refresher = shared.map(|(url, id)| {
            let slot = crawl.clone();
            tokio::spawn(async move {
                loop {
                    let status = crate::redis_crawl::control::status(&url, &id)
                        .await
                        .ok()
                        .and_then(|s| serde_json::to_value(s).ok());
                    if let Ok(mut slot) = slot.lock() {
                        *slot = status;
                    }
                    tokio::time::sleep(SHARED_EVERY).await;
                }
            })
        });
        Ok(ConsoleLink {
            console,
            recent: VecDeque::with_capacity(RECENT),
            last_publish: None,
            crawl,
            refresher,
        })
    }

    /// The page's address (with the token when it was made here).
    pub(super) fn url(&self) -> String {
        self.console.url()
    }

    /// The next command (waits forever once the server is gone).
    pub(super) async fn next_command(&mut self) -> Option<Request> {
        self.console.commands.recv().await
    }

    /// Keeps a finished job for the list of last fetches.
    pub(super) fn record(&mut self, result: &JobResult) {
        let (status, outcome) = match &result.outcome {
            Outcome::Archived { status, .. } => (Some(*status), "archived".to_string()),
            Outcome::RetryLater { status, .. } => {
                (Some(*status), "retried later: host slowed down".to_string())
            }
            Outcome::Traversed { status, .. } => (
                Some(*status),
                "links followed, not archived: type".to_string(),
            ),
            Outcome::Skipped { status, reason, .. } => (
                Some(*status),
                match reason {
                    SkipReason::ContentType => "skipped: type",
                    SkipReason::TargetReached => "skipped: target reached",
                }
                .to_string(),
            ),
            Outcome::Failed(e) => (None, format!("error: {}", e.kind())),
            Outcome::OutputClosed => (None, "output closed".to_string()),
            Outcome::Resolved(_) => (None, "resolved".to_string()),
        };
        if self.recent.len() == RECENT {
            self.recent.pop_back();
        }
        self.recent.push_front(Fetch {
            url: result.job.url.to_string(),
            kind: match result.job.kind {
                JobKind::Page => "page",
                JobKind::Robots { .. } => "robots",
                JobKind::Sitemap { .. } => "sitemap",
                JobKind::Requisite { .. } => "requisite",
                JobKind::Resolve => "lookup",
            },
            status,
            outcome,
            bytes: result.bytes,
            ms: result.elapsed.as_millis() as u64,
            at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        });
    }

    /// True when the view is due again.
    pub(super) fn publish_due(&self, now: Instant) -> bool {
        self.last_publish
            .is_none_or(|at| now.saturating_duration_since(at) >= PUBLISH_EVERY)
    }

    /// Publishes the view of `ledger` now.
    pub(super) fn publish(&mut self, ledger: &Ledger, writer: &WriterHandle, state: LoopState<'_>) {
        let now = Instant::now();
        self.last_publish = Some(now);
        let tally = &ledger.tally;
        let frontier = &ledger.frontier;
        let counters = frontier.counters();
        let overview = frontier.host_overview(now, BUSIEST);
        let mut filtered: BTreeMap<String, u64> = serde_json::to_value(&tally.filtered)
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        filtered.insert("robots".into(), counters.robots_denied);
        filtered.insert("robots_unavailable".into(), counters.robots_unavailable);
        filtered.insert("host_down".into(), counters.host_down);
        let view = View {
            crawl_id: state.crawl_id.to_string(),
            started: state.started.to_string(),
            state: state.state.to_string(),
            pages: tally.pages,
            requests: tally.requests,
            bytes_downloaded: tally.bytes_downloaded,
            bytes_written: writer
                .bytes_written
                .load(std::sync::atomic::Ordering::Relaxed),
            queued: frontier.queued() as u64,
            in_flight: state.in_flight as u64,
            hosts: HostCounts {
                seen: overview.seen,
                active: overview.active,
                waiting: overview.waiting,
                // Origins whose robots.txt stayed unavailable, hosts that stopped answering.
                given_up: counters.origins_given_up + counters.hosts_down,
            },
            busiest: overview
                .busiest
                .into_iter()
                .map(|b| BusyHost {
                    name: b.name,
                    queued: b.queued,
                    next_in_ms: b.next_in.as_millis() as u64,
                    fetching: b.fetching,
                })
                .collect(),
            status_codes: tally
                .status_codes
                .iter()
                .map(|(code, n)| (code.to_string(), *n))
                .collect(),
            errors: tally.errors.clone(),
            filtered,
            warc: writer
                .current
                .get()
                .map(|(name, bytes)| WarcFile { name, bytes }),
            peak_rss_bytes: crate::report::stats::peak_rss_bytes(),
            recent: self.recent.iter().cloned().collect(),
            settings: Settings {
                delay_ms: frontier.delay().as_millis() as u64,
                excludes: ledger.admission.filter().excludes().to_vec(),
            },
            crawl: self.crawl.lock().ok().and_then(|c| c.clone()),
        };
        self.console.hub.publish(view);
    }
}

impl Drop for ConsoleLink {
    fn drop(&mut self) {
        if let Some(task) = self.refresher.take() {
            task.abort();
        }
    }
}

/// True for the changes a worker of a shared crawl makes for every worker (through Redis):
/// pause and resume, exclude patterns, the delay, host drops. A stop ends this worker only
/// (`trawl stop --redis` ends them all); added seeds reach the shared queue anyway.
pub(super) fn crawl_wide(command: &Command) -> bool {
    !matches!(command, Command::Stop | Command::AddSeeds(_))
}

/// Applies `command` to the ledger; returns the answer and what the loop must do.
pub(super) fn apply(command: Command, ledger: &mut Ledger, now: Instant) -> (Reply, Effect) {
    match command {
        Command::Pause => (Ok("paused: no new fetch starts".into()), Effect::Pause),
        Command::Resume => (Ok("resumed".into()), Effect::Resume),
        Command::Stop => (
            Ok("stopping: fetches running finish, then the crawl ends (resumable)".into()),
            Effect::Stop,
        ),
        Command::AddSeeds(seeds) => (ledger.add_seeds(&seeds, now), Effect::None),
        Command::AddExclude(p) => (ledger.add_exclude(&p), Effect::None),
        Command::RemoveExclude(p) => (ledger.remove_exclude(&p), Effect::None),
        Command::SetDelay(d) => (ledger.set_delay(d), Effect::None),
        Command::DropHost(h) => (ledger.drop_host(&h), Effect::None),
    }
}
