//! The crawl loop: the only place that wires the stages together.
//!
//! ```text
//! seeds -> frontier -> [worker task: fetch -> record -> writer channel] -> results channel
//!                ^                                                              |
//!                +---------------- admission <- links / redirects <-------------+
//! ```
//! The loop owns the frontier, the idle connections and the tally; workers own one job each and
//! report back through a bounded channel (capacity = concurrency, one message per worker, so it
//! never blocks). The WARC writer runs on its own thread; when every sender is gone it closes
//! the last file. Shutdown requests arrive on a channel: the first stops dispatching and lets
//! in-flight fetches finish, the second aborts them.

pub mod admission;
pub mod dedup;
pub mod idle;
mod loop_state;
pub mod resume;
pub mod worker;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::config::Config;
use crate::fetch::Fetcher;
use crate::frontier::{Frontier, Next};
use crate::report::stats::Totals;
use crate::report::status::{write_status, CrawlStatus};
use crate::report::{CrawlStats, Progress, Snapshot, StopReason};
use crate::state::{CrawlState, StateError, STATE_META, STATE_VERSION};
use crate::store::Store;
use crate::warc::{spawn_writer, WarcError, WriterConfig};
use loop_state::LoopState;
use worker::{run_job, JobResult, PageBudget, WorkerContext};

/// Why a crawl could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    /// The WARC output could not be set up.
    #[error(transparent)]
    Output(#[from] WarcError),
    /// Saved crawl state could not be read.
    #[error(transparent)]
    State(#[from] StateError),
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
    let config = Arc::new(config);
    let store = Store::open(&config.state_dir).map_err(StateError::from)?;
    let frontier =
        Frontier::open(config.frontier.clone(), store, Instant::now()).map_err(StateError::from)?;
    // The counters are saved beside the frontier, by the same checkpoint.
    let blob = frontier.saved_meta(STATE_META).map_err(StateError::from)?;
    let saved = CrawlState::decode(&config.state_dir, blob.as_deref())?;
    let replay_from = saved.as_ref().and_then(|s| s.replay_from_serial);
    if let Some(s) = &saved {
        tracing::warn!(
            "resuming: {} pages archived, {} URLs queued",
            s.tally.pages,
            frontier.queued()
        );
    }
    let mut state = LoopState::new(config.clone(), frontier, saved);
    if let Some(serial) = replay_from {
        let replayed =
            resume::replay(&mut state, serial, Instant::now()).map_err(CrawlError::Replay)?;
        if replayed > 0 {
            tracing::warn!("recovered {replayed} capture(s) written after the last saved state");
        }
    }
    let writer = spawn_writer(WriterConfig {
        dir: config.out.clone(),
        prefix: config.warc_prefix.clone(),
        rotation: config.rotation,
        gzip_level: config.gzip_level,
        info: warcinfo_fields(&config),
        queue: config.concurrency.max(8) * 2,
    })?;
    let ctx = Arc::new(WorkerContext {
        config: config.clone(),
        fetcher: Fetcher::new(config.fetch.clone()),
        writer: writer.sender.clone(),
        budget: PageBudget::with_taken(config.max_pages, state.tally.pages),
    });
    if ctx.budget.exhausted() {
        state.stopping = Some(StopReason::TargetReached);
    }

    let (results_tx, mut results) = mpsc::channel::<JobResult>(config.concurrency);
    let mut last_save = Instant::now();
    // A state saved before the first fetch means any crash from here on is recovered by
    // replaying the WARC files written since (the replay needs a starting point).
    let mut state_error = save_state(&mut state, &writer).await.err();
    if state_error.is_some() {
        state.stopping = Some(StopReason::OutputError);
    }
    let mut tasks = JoinSet::new();
    let mut in_flight = 0usize;
    let log = config.log_file.as_ref().and_then(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .ok()
    });
    let mut progress = Progress::new(
        config.quiet,
        config.progress_interval,
        config.max_pages,
        log,
    );
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut signals_open = true;
    let mut shutdown_deadline: Option<tokio::time::Instant> = None;
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let mut last_status = Instant::now();
    write_status(&config.out, &status_of(&state, &started_at, 0, 0, None));

    loop {
        let mut wake = None;
        let mut exhausted = false;
        while state.stopping.is_none() && in_flight < config.concurrency {
            match state.frontier.next(Instant::now()) {
                Next::Job(job) => {
                    let conn = state.idle.take(&job.host);
                    let (ctx, tx) = (ctx.clone(), results_tx.clone());
                    tasks.spawn(async move {
                        let result = run_job(ctx, job, conn).await;
                        // The loop outlives every worker unless it aborted them.
                        let _ = tx.send(result).await;
                    });
                    in_flight += 1;
                }
                Next::Wait(at) => {
                    wake = Some(at);
                    break;
                }
                Next::Idle => break,
                Next::Exhausted => {
                    exhausted = true;
                    break;
                }
            }
        }
        if in_flight == 0 && (exhausted || state.stopping.is_some()) {
            break;
        }
        let sleep_until = wake.map(tokio::time::Instant::from_std);
        tokio::select! {
            Some(result) = results.recv() => {
                in_flight -= 1;
                state.handle(result, Instant::now());
                if state.stopping.is_none() && ctx.budget.exhausted() {
                    state.stopping = Some(StopReason::TargetReached);
                }
            }
            _ = sleep_until_opt(sleep_until), if sleep_until.is_some() && state.stopping.is_none() => {}
            signal = signals.recv(), if signals_open => {
                if signal.is_none() {
                    signals_open = false;
                } else if state.stopping.is_none() || state.stopping == Some(StopReason::TargetReached) {
                    tracing::warn!(
                        "stop requested: finishing {in_flight} fetch(es) within {:?}; signal again to abort them",
                        config.shutdown_timeout
                    );
                    state.stopping = Some(StopReason::Interrupted);
                    shutdown_deadline = Some(tokio::time::Instant::now() + config.shutdown_timeout);
                } else {
                    tracing::warn!("second stop request: aborting {in_flight} fetch(es)");
                    tasks.abort_all();
                    break;
                }
            }
            _ = sleep_until_opt(shutdown_deadline), if shutdown_deadline.is_some() => {
                tracing::warn!("shutdown timeout: abandoning {in_flight} fetch(es)");
                tasks.abort_all();
                break;
            }
            _ = tick.tick() => {
                state.idle.expire(Instant::now());
                while tasks.try_join_next().is_some() {}
                if last_save.elapsed() >= SAVE_EVERY && state.stopping.is_none() {
                    last_save = Instant::now();
                    if let Err(e) = save_state(&mut state, &writer).await {
                        tracing::error!("stopping: {e}");
                        state_error = Some(e);
                        state.stopping = Some(StopReason::OutputError);
                    }
                }
                if last_status.elapsed() >= STATUS_EVERY {
                    last_status = Instant::now();
                    let written = writer.bytes_written.load(std::sync::atomic::Ordering::Relaxed);
                    write_status(&config.out, &status_of(&state, &started_at, in_flight, written, None));
                }
            }
        }
        progress.update(&Snapshot {
            pages: state.tally.pages,
            queued: state.frontier.queued(),
            in_flight,
            errors: state.tally.errors.values().sum(),
            bytes_written: writer
                .bytes_written
                .load(std::sync::atomic::Ordering::Relaxed),
        });
    }
    progress.finish();
    tasks.shutdown().await;
    state.idle.clear();
    drop(results_tx);
    drop(ctx);
    let writer_replay_from = writer
        .replay_from
        .load(std::sync::atomic::Ordering::Acquire);
    let writer_result = tokio::task::spawn_blocking(move || writer.finish())
        .await
        .unwrap_or_else(|e| {
            Err(WarcError::Io {
                path: PathBuf::new(),
                source: std::io::Error::other(e),
            })
        });
    let (report, output_error) = match writer_result {
        Ok(report) => (report, None),
        Err(e) => (Default::default(), Some(e)),
    };
    let stop_reason = if output_error.is_some() {
        StopReason::OutputError
    } else {
        state.stopping.unwrap_or(StopReason::FrontierExhausted)
    };
    let final_state = CrawlState {
        version: STATE_VERSION,
        tally: state.tally.clone(),
        // Every file is closed: nothing to replay, unless the output failed mid-way.
        replay_from_serial: output_error.is_some().then_some(writer_replay_from),
        stopped: Some(stop_reason),
    };
    // Jobs abandoned at a forced stop are still marked in flight: the checkpoint saves them
    // as queued.
    if let Err(e) = state
        .frontier
        .checkpoint(&[(STATE_META, &final_state.encode())])
    {
        tracing::error!("could not save crawl state: {e}");
        state_error.get_or_insert(e.into());
    }
    write_status(
        &config.out,
        &status_of(&state, &started_at, 0, report.bytes, Some(stop_reason)),
    );
    let counters = state.frontier.counters().clone();
    state.tally.filtered.robots = counters.robots_denied;
    state.tally.filtered.robots_unavailable = counters.robots_unavailable;
    let stats = CrawlStats::build(
        &state.tally,
        Totals {
            stop_reason,
            elapsed: start.elapsed(),
            bytes_written: report.bytes,
            records_written: report.records,
            warc_files: report
                .files
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            hosts_seen: state.frontier.hosts_seen(),
            queued_at_end: state.frontier.queued(),
            seed_problems: config.seed_problems.iter().map(|p| p.to_string()).collect(),
        },
    );
    Ok(CrawlOutcome {
        stats,
        output_error,
        state_error,
    })
}

/// How often crawl state is saved while crawling.
const SAVE_EVERY: Duration = Duration::from_secs(5);

/// Saves crawl state mid-crawl: first the writer syncs the current file (every job the loop
/// counts as done has its records written already), then the store commits the frontier and
/// the counters, naming that file as the place to replay from after a crash.
async fn save_state(
    state: &mut LoopState,
    writer: &crate::warc::WriterHandle,
) -> Result<(), StateError> {
    let replay_from = writer
        .replay_from
        .load(std::sync::atomic::Ordering::Acquire);
    let (request, synced) = crate::warc::Batch::sync_request();
    if writer.sender.send(request).await.is_err() || synced.await.is_err() {
        // The writer is gone (an output error, reported on its own); nothing to save against.
        return Ok(());
    }
    let saved = CrawlState {
        version: STATE_VERSION,
        tally: state.tally.clone(),
        replay_from_serial: Some(replay_from),
        stopped: None,
    };
    // The commit writes and syncs the pages changed since the last one (about a second for
    // 100,000 new URLs on a 10-million-URL store); other tasks move off this thread meanwhile.
    let meta = saved.encode();
    let mut commit = || state.frontier.checkpoint(&[(STATE_META, &meta)]);
    let multi_thread = tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread;
    if multi_thread {
        tokio::task::block_in_place(commit)?;
    } else {
        commit()?;
    }
    Ok(())
}

/// How often the status file is rewritten.
const STATUS_EVERY: Duration = Duration::from_secs(2);

fn status_of(
    state: &LoopState,
    started: &str,
    in_flight: usize,
    bytes_written: u64,
    stop: Option<StopReason>,
) -> CrawlStatus {
    CrawlStatus {
        pid: std::process::id(),
        started: started.to_string(),
        updated: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        running: stop.is_none(),
        pages: state.tally.pages,
        queued: state.frontier.queued(),
        in_flight,
        errors: state.tally.errors.values().sum(),
        bytes_written,
        stop_reason: stop.map(|s| {
            serde_json::to_value(s)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        }),
    }
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

/// The fields of the warcinfo record that opens every file.
fn warcinfo_fields(config: &Config) -> Vec<(String, String)> {
    let hostname = gethostname::gethostname().to_string_lossy().to_string();
    let mut info = vec![
        (
            "software".to_string(),
            format!(
                "trawl/{} (https://github.com/trawl-crawler/trawl)",
                env!("CARGO_PKG_VERSION")
            ),
        ),
        ("format".to_string(), "WARC File Format 1.1".to_string()),
        (
            "conformsTo".to_string(),
            "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
                .to_string(),
        ),
        ("hostname".to_string(), hostname),
        (
            "http-header-user-agent".to_string(),
            config.fetch.user_agent.clone(),
        ),
        (
            "robots".to_string(),
            if config.frontier.obey_robots {
                "obey".to_string()
            } else {
                "ignore".to_string()
            },
        ),
        ("isPartOf".to_string(), config.warc_prefix.clone()),
        (
            "started".to_string(),
            humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        ),
    ];
    if let Some(op) = &config.operator {
        info.push(("operator".to_string(), op.clone()));
    }
    info
}
