//! The crawl loop proper: hand ready jobs to tasks up to the concurrency, apply each finished
//! job to the ledger, and on a timer keep idle connections fresh, take save points and write the
//! status file; stop on the page target, an output error or a signal. Commands from the console
//! (this worker's or, in a shared crawl, another's) are `commands.rs`; a shared crawl's steps
//! `shared_steps.rs`; what is left once every job has ended `closed.rs`.

mod closed;
mod commands;
mod shared_steps;

pub(super) use closed::Closed;
use commands::next_command;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::console_link::ConsoleLink;
use super::disk_guard::DiskGuard;
use super::idle_pool::IdlePool;
use super::job::{run_job, JobContext, JobResult};
use super::ledger::{Handled, Ledger};
use super::save_point::{save, CrawlSession, StateError};
use super::seed_feed::SeedFeed;
use super::setup::Shared;
use super::status::{status_of, worker_stats};
use crate::frontier::Next;
use crate::report::status_file::write_status;
use crate::report::{Progress, Snapshot, StopReason};
use crate::warc::WriterHandle;

/// How often crawl state is saved while crawling.
const SAVE_EVERY: Duration = Duration::from_secs(5);
/// Earliest save point after the last one when a shared crawl's worker has hosts waiting for
/// their acknowledgement (they cannot be handed on before).
const EARLY_SAVE: Duration = Duration::from_secs(1);
/// How often the status file is rewritten.
const STATUS_EVERY: Duration = Duration::from_secs(2);
/// The loop's timer.
const TICK: Duration = Duration::from_millis(250);
/// Most job results applied in one pass of the loop, so a burst of them cannot hold off
/// signals, the console or new dispatches for long.
const MAX_RESULTS_PER_PASS: usize = 32;

/// Loop settings.
#[derive(Debug, Clone)]
pub(super) struct DispatchRules {
    /// The crawl's name and cookie jar (saved with the state).
    pub(super) session: CrawlSession,
    /// When the crawl (this run of it) started.
    pub(super) start: Instant,
    /// `--time-limit`: stop resumably after this long.
    pub(super) time_limit: Option<Duration>,
    /// `--max-bytes`: stop after this many response bytes.
    pub(super) max_bytes: Option<u64>,
    /// Simultaneous jobs.
    pub(super) concurrency: usize,
    /// Most idle keep-alive connections kept (what the open-files limit leaves room for).
    pub(super) idle_connections: usize,
    /// Grace period for in-flight jobs after the first stop request.
    pub(super) shutdown_timeout: Duration,
    /// The output directory (for the status file).
    pub(super) out: std::path::PathBuf,
    /// `--finished-dir`, where closed WARC files go (for the status file).
    pub(super) finished_dir: Option<std::path::PathBuf>,
    /// `--page-requisites`: once `--max-pages` is reached, fetch the requisites queued for
    /// the pages archived before ending.
    pub(super) drain_requisites: bool,
    /// `--min-free`: least free bytes under `out` for new fetches to start (0: no guard).
    pub(super) min_free: u64,
}

/// The loop's state. Everything here is touched by the loop task only; jobs get an
/// `Arc<JobContext>` and report through `results`.
pub(super) struct Dispatcher {
    /// Frontier, admission rules and counters.
    ledger: Ledger,
    /// Idle keep-alive connections, one per host, lent to that host's next job.
    idle: IdlePool,
    /// Shared by every job. It holds a writer sender, so it is dropped (by [`Dispatcher::close`])
    /// before the writer is asked to finish.
    jobs: Arc<JobContext>,
    /// Running jobs; aborted when a stop is forced.
    tasks: JoinSet<()>,
    /// Jobs spawned whose result has not arrived yet.
    in_flight: usize,
    /// Cloned into each job, which sends exactly once; dropped at shutdown.
    results_tx: mpsc::Sender<JobResult>,
    /// Capacity = concurrency, and each job sends once, so no send ever waits.
    results: mpsc::Receiver<JobResult>,
    /// Set when the crawl is to end: no job is dispatched after it.
    stopping: Option<StopReason>,
    /// The page target is reached and only page requisites are fetched; the crawl ends
    /// (target reached) when none are left.
    draining: bool,
    /// The first save-point failure; it stops the crawl.
    state_error: Option<StateError>,
    /// Progress output.
    progress: Progress,
    /// When the crawl started (RFC 3339), for the status file.
    started_at: String,
    rules: DispatchRules,
    /// This worker's part in a shared crawl (`--redis`).
    shared: Option<Shared>,
    /// The live console (`--console`).
    console: Option<ConsoleLink>,
    /// Paused from the console: no new job starts.
    paused: bool,
    /// Console changes applied and not answered yet: answered after the save point that makes
    /// them durable (`commands.rs`).
    unsaved_changes: Vec<commands::HeldReply>,
    /// `--min-free`: no new job starts while disk space is low.
    disk: DiskGuard,
    /// The seeds file, until read to its end.
    seeds: Option<SeedFeed>,
    /// Its skipped lines, once read, for the report.
    seed_problems: Vec<String>,
}

impl Dispatcher {
    /// A loop over `ledger`; nothing runs until [`Dispatcher::run`].
    pub(super) fn new(
        ledger: Ledger,
        jobs: Arc<JobContext>,
        progress: Progress,
        rules: DispatchRules,
        shared: Option<Shared>,
        console: Option<ConsoleLink>,
        seeds: Option<SeedFeed>,
    ) -> Self {
        let (results_tx, results) = mpsc::channel(rules.concurrency);
        let stopping = jobs.budget.exhausted().then_some(StopReason::TargetReached);
        let disk = DiskGuard::new(rules.out.clone(), rules.min_free);
        let mut shared = shared;
        if let (Some(shared), Some(_)) = (&mut shared, &seeds) {
            shared.coordinator.set_seeds_reading(true);
        }
        Dispatcher {
            ledger,
            idle: IdlePool::new(rules.idle_connections),
            jobs,
            tasks: JoinSet::new(),
            in_flight: 0,
            results_tx,
            results,
            stopping,
            draining: false,
            state_error: None,
            progress,
            started_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            rules,
            shared,
            console,
            paused: false,
            unsaved_changes: Vec::new(),
            disk,
            seeds,
            seed_problems: Vec::new(),
        }
    }

    /// Runs until the frontier is exhausted with nothing in flight, or a stop completes.
    /// `signals` delivers stop requests (SIGINT/SIGTERM).
    pub(super) async fn run(
        &mut self,
        writer: &WriterHandle,
        mut signals: mpsc::UnboundedReceiver<()>,
    ) {
        // A state saved before the first fetch means any crash from here on is recovered by
        // replaying the WARC files written since (the replay needs a starting point).
        self.save_point(writer).await;
        // A worker of a shared crawl learns the crawl's console changes (a pause, say) before
        // its first fetch, also for the hosts it took back at start.
        self.sync_shared(false).await;
        let mut tick = tokio::time::interval(TICK);
        // A shared crawl's background Redis calls say when they are done (refills then follow
        // at once rather than at the next tick).
        let background = self
            .shared
            .as_ref()
            .map(|s| s.coordinator.background_finished());
        let mut last_save = Instant::now();
        let mut last_status = Instant::now();
        let mut signals_open = true;
        let mut shutdown_deadline: Option<tokio::time::Instant> = None;
        let mut arrived = Vec::with_capacity(MAX_RESULTS_PER_PASS);
        let time_limit = self
            .rules
            .time_limit
            .map(|limit| tokio::time::Instant::from_std(self.rules.start + limit));
        self.disk.check(Instant::now());
        self.write_status(0, None);
        loop {
            let more_seeds = self.feed_seeds();
            let (wake, exhausted) = self.dispatch();
            // A worker of a shared crawl with nothing to do ends only with the crawl (or, past
            // the crawl's page target, once its requisites are fetched); a crawl still reading
            // its seeds is not over.
            let over = exhausted
                && self.seeds.is_none()
                && (self.draining
                    || self
                        .shared
                        .as_ref()
                        .is_none_or(|s| s.coordinator.crawl_over()));
            if self.in_flight == 0 && (over || self.stopping.is_some()) {
                break;
            }
            // More seeds to read and room for them: come straight back (after what is ready).
            let wake = if more_seeds {
                Some(Instant::now())
            } else {
                wake
            };
            let sleep_until = wake.map(tokio::time::Instant::from_std);
            tokio::select! {
                // Every result already waiting (up to a bound) in one pass of this loop.
                1.. = self.results.recv_many(&mut arrived, MAX_RESULTS_PER_PASS) => {
                    let mut ran_dry = false;
                    for result in arrived.drain(..) {
                        ran_dry |= self.finished(result);
                    }
                    if ran_dry {
                        self.refill_shared();
                    }
                }
                Some(request) = next_command(&mut self.console) => {
                    if let Some(deadline) = self.command(request, writer) {
                        shutdown_deadline = Some(deadline);
                    }
                    // A crawl-wide change goes to the other workers now (a failure is retried
                    // at the next step).
                    if let Some(shared) = &mut self.shared {
                        let _ = shared.coordinator.send_changes().await;
                    }
                    if self.save_changes(writer).await {
                        last_save = Instant::now();
                    }
                }
                _ = notified_opt(background.as_deref()), if background.is_some() => {
                    // No host left, nothing running: step now (the crawl's end, or a claim).
                    if self.advance_shared().await && self.in_flight == 0 {
                        tick.reset_immediately();
                    }
                }
                _ = sleep_until_opt(sleep_until), if sleep_until.is_some() && self.stopping.is_none() => {}
                signal = signals.recv(), if signals_open => {
                    if signal.is_none() {
                        signals_open = false;
                    } else if matches!(self.stopping, None | Some(StopReason::TargetReached)) {
                        tracing::warn!(
                            "stop requested: finishing {} fetch(es) within {:?}; signal again to abort them",
                            self.in_flight, self.rules.shutdown_timeout
                        );
                        shutdown_deadline = Some(self.begin_stop(StopReason::Interrupted));
                    } else {
                        tracing::warn!("second stop request: aborting {} fetch(es)", self.in_flight);
                        self.tasks.abort_all();
                        break;
                    }
                }
                _ = sleep_until_opt(time_limit), if time_limit.is_some() && self.stopping.is_none() => {
                    tracing::warn!(
                        "time limit reached: finishing {} fetch(es) within {:?}; the next run resumes",
                        self.in_flight, self.rules.shutdown_timeout
                    );
                    // A stop request as the first SIGTERM is, for what runs beside the loop
                    // too: no --on-close command starts (a backlog kept a 3 s run for minutes).
                    crate::crawl::stop_signals::received_one();
                    shutdown_deadline = Some(self.begin_stop(StopReason::TimeLimit));
                }
                _ = sleep_until_opt(shutdown_deadline), if shutdown_deadline.is_some() => {
                    tracing::warn!("shutdown timeout: abandoning {} fetch(es)", self.in_flight);
                    self.tasks.abort_all();
                    break;
                }
                _ = tick.tick() => {
                    if self.disk.check(Instant::now()) {
                        self.write_status(writer.bytes_written.load(Ordering::Relaxed), None);
                        self.publish_console(writer);
                    }
                    match (self.sync_shared(exhausted && self.in_flight == 0).await, self.stopping) {
                        (Some(reason), None) => shutdown_deadline = Some(self.begin_stop(reason)),
                        // A worker already stopping that finds the crawl's state lost says so.
                        (Some(StopReason::SharedStateLost), Some(_)) => {
                            self.stopping = Some(StopReason::SharedStateLost);
                        }
                        _ => {}
                    }
                    self.check_page_target();
                    self.idle.expire(Instant::now());
                    while self.tasks.try_join_next().is_some() {}
                    // Hosts wait to be let go: a save point soon, at once when nothing runs.
                    // ... and when a permit was refused: the crawl's page target is met once
                    // the pages under the permits are committed.
                    let early = (self.shared.as_ref().is_some_and(|s| s.coordinator.wants_save())
                        || self.jobs.budget.wants_commit())
                        && (last_save.elapsed() >= EARLY_SAVE || self.in_flight == 0);
                    if (last_save.elapsed() >= SAVE_EVERY || early) && self.stopping.is_none() {
                        last_save = Instant::now();
                        self.save_point(writer).await;
                    }
                    if self.console.as_ref().is_some_and(|c| c.publish_due(Instant::now())) {
                        self.publish_console(writer);
                    }
                    if last_status.elapsed() >= STATUS_EVERY {
                        last_status = Instant::now();
                        self.write_status(writer.bytes_written.load(Ordering::Relaxed), None);
                    }
                }
            }
            self.progress.update(&Snapshot {
                pages: self.ledger.tally.pages,
                queued: self.ledger.frontier.queued(),
                in_flight: self.in_flight,
                errors: self.ledger.tally.errors.values().sum(),
                bytes_written: writer.bytes_written.load(Ordering::Relaxed),
            });
        }
        if self.draining && self.stopping.is_none() {
            self.stopping = Some(StopReason::TargetReached);
        }
        self.progress.finish();
    }

    /// Feeds the frontier a batch of seeds when its queue is short; returns true when there is
    /// more to read and room for it. Once the file is read to its end, a worker of a shared
    /// crawl may mark the crawl seeded.
    fn feed_seeds(&mut self) -> bool {
        let Some(feed) = &mut self.seeds else {
            return false;
        };
        if self.stopping.is_some() {
            return false;
        }
        let more = feed.feed(&mut self.ledger, Instant::now());
        if feed.done() {
            if let Some(feed) = self.seeds.take() {
                self.seed_problems = feed.into_problems();
            }
            if let Some(shared) = &mut self.shared {
                shared.coordinator.set_seeds_reading(false);
            }
        }
        more
    }

    /// Spawns jobs while there is room; returns when to wake for the next one and whether the
    /// frontier is exhausted. In a shared crawl, a host left with nothing by URLs declined
    /// here is refilled from Redis at once, as one whose last fetch finished.
    fn dispatch(&mut self) -> (Option<Instant>, bool) {
        let held = self.paused || self.disk.is_low();
        let mut ran_dry = false;
        let next = loop {
            if self.stopping.is_some() || held || self.in_flight >= self.rules.concurrency {
                break (None, false);
            }
            let now = Instant::now();
            match self.ledger.frontier.next(now) {
                Next::Job(job) if self.ledger.declined_now(&job, now) => {
                    ran_dry |= self
                        .shared
                        .as_ref()
                        .is_some_and(|s| s.coordinator.ran_dry(&job.host, &self.ledger.frontier));
                }
                Next::Job(job) => {
                    let job = self.ledger.as_needed(job);
                    let conn = self.idle.take(&job.host);
                    let (jobs, tx) = (self.jobs.clone(), self.results_tx.clone());
                    // Boxed: the job's state is ~5 KB, and a task's own state is copied
                    // when it is spawned, when it finishes and when it is joined.
                    self.tasks.spawn(Box::pin(async move {
                        let result = run_job(jobs, job, conn).await;
                        // The loop outlives every job unless it aborted them.
                        let _ = tx.send(result).await;
                    }));
                    self.in_flight += 1;
                }
                Next::Wait(at) => break (Some(at), false),
                Next::Idle => break (None, false),
                Next::Exhausted => break (None, true),
            }
        };
        if ran_dry {
            self.refill_shared();
        }
        next
    }

    /// Applies a finished job. True when its host ran dry here and a shared crawl may refill
    /// it from Redis at once.
    fn finished(&mut self, mut result: JobResult) -> bool {
        self.in_flight -= 1;
        let refill = self
            .shared
            .as_ref()
            .is_some_and(|s| s.coordinator.may_refill(&result.job.host))
            .then(|| result.job.host.clone());
        if let Some(console) = &mut self.console {
            console.record(&result);
        }
        if let Some(conn) = result.conn.take() {
            self.idle.put(result.job.host.clone(), conn);
        }
        if self.ledger.handle(result, Instant::now()) == Handled::OutputClosed {
            self.stopping = Some(StopReason::OutputError);
        }
        self.check_page_target();
        let downloaded = self.ledger.tally.bytes_downloaded;
        if self.stopping.is_none() && self.rules.max_bytes.is_some_and(|max| downloaded >= max) {
            self.stopping = Some(StopReason::ByteLimit);
        }
        refill.is_some_and(|host| {
            self.shared
                .as_ref()
                .is_some_and(|s| s.coordinator.ran_dry(&host, &self.ledger.frontier))
        })
    }

    /// Once `--max-pages` is met: stops, or with `-p` fetches only the requisites of the pages
    /// archived. Checked after each result and, in a shared crawl, at each step (the target
    /// may be met by the other workers' pages).
    fn check_page_target(&mut self) {
        if self.stopping.is_none() && !self.draining && self.jobs.budget.exhausted() {
            if self.rules.drain_requisites {
                tracing::info!(
                    "page target reached: fetching the requisites of the pages archived"
                );
                self.draining = true;
                self.ledger.frontier.requisites_only();
            } else {
                self.stopping = Some(StopReason::TargetReached);
            }
        }
    }

    /// Takes a save point; a failure stops the crawl. A worker of a shared crawl then
    /// acknowledges in Redis what the save point made durable.
    async fn save_point(&mut self, writer: &WriterHandle) {
        if let Err(e) = save(&mut self.ledger, writer, &self.rules.session).await {
            tracing::error!("stopping: {e}");
            self.state_error = Some(e);
            self.stopping = Some(StopReason::OutputError);
            return;
        }
        if let Some(shared) = &mut self.shared {
            let tally = &self.ledger.tally;
            let stats = worker_stats(tally);
            let budget = shared.budget.as_deref();
            shared
                .coordinator
                .save(&mut self.ledger.frontier, &stats, budget)
                .await;
        }
    }

    /// Starts a graceful stop for `reason`: no new job starts, and those running get the
    /// shutdown timeout, whose deadline is returned.
    fn begin_stop(&mut self, reason: StopReason) -> tokio::time::Instant {
        self.stopping = Some(reason);
        tokio::time::Instant::now() + self.rules.shutdown_timeout
    }

    /// Rewrites the status file.
    fn write_status(&self, bytes_written: u64, stop: Option<StopReason>) {
        let mut status = status_of(
            &self.ledger,
            &self.started_at,
            self.in_flight,
            bytes_written,
            stop,
        );
        status.finished_dir = self.rules.finished_dir.clone();
        status.waiting = if self.paused {
            Some("paused from the console".into())
        } else {
            self.disk.waiting()
        };
        write_status(&self.rules.out, &status);
    }
}

async fn notified_opt(notify: Option<&tokio::sync::Notify>) {
    if let Some(notify) = notify {
        notify.notified().await;
    }
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}
