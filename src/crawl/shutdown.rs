//! The end of a crawl: once every job has ended, the writer closes and renames its last file,
//! the final state is saved, the status file says why the crawl stopped, and the report is
//! built.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::derivatives::Deriver;
use super::dispatch::Closed;
use super::save_point::save_final;
use super::status::{status_of, worker_stats};
use super::CrawlOutcome;
use crate::fetch::CookieJar;
use crate::report::stats::Totals;
use crate::report::status_file::write_status;
use crate::report::{CrawlStats, StopReason};
use crate::warc::{WarcError, WriterHandle};
use crate::whole_file::write_whole;

/// Finishes a crawl whose loop has closed. `start`: when the crawl started; `seed_problems`:
/// the skipped seed lines, for the report.
pub(super) async fn finish(
    closed: Closed,
    writer: WriterHandle,
    deriver: Option<Deriver>,
    start: Instant,
    seed_problems: Vec<String>,
    save_cookies: Option<&Path>,
) -> CrawlOutcome {
    let Closed {
        shared,
        mut ledger,
        stopping,
        mut state_error,
        started_at,
        out,
        finished_dir,
        session,
        seed_problems: _,
    } = closed;
    let replay_from = writer.replay_from.load(Ordering::Acquire);
    // Every sender is gone now (the jobs' context went with the loop): the writer drains its
    // queue, closes and renames the last file.
    // What it wrote is reported also when it failed (the files it closed are valid).
    let (report, output_error) = tokio::task::spawn_blocking(move || writer.finish())
        .await
        .unwrap_or_else(|e| {
            let e = WarcError::Io {
                path: PathBuf::new(),
                source: std::io::Error::other(e),
            };
            (Default::default(), Some(e))
        });
    // The writer's sender is gone with it: the last closed file is derived, then the thread ends.
    let derived = match deriver {
        Some(d) => tokio::task::spawn_blocking(move || d.finish())
            .await
            .unwrap_or_default(),
        None => Default::default(),
    };
    let stop_reason = if output_error.is_some() {
        StopReason::OutputError
    } else {
        stopping.unwrap_or(StopReason::FrontierExhausted)
    };
    // Every file is closed: nothing to replay, unless the output failed mid-way.
    let replay_from = output_error.is_some().then_some(replay_from);
    if let Err(e) = save_final(&mut ledger, stop_reason, replay_from, &session) {
        tracing::error!("could not save crawl state: {e}");
        state_error.get_or_insert(e);
    }
    if let (Some(path), Some(jar)) = (save_cookies, &session.cookies) {
        save_cookies_file(path, jar);
    }
    if let Some(mut shared) = shared {
        let state = if stop_reason.is_finished() {
            "finished"
        } else {
            "stopped"
        };
        let stats = worker_stats(&ledger.tally);
        shared
            .coordinator
            .leave(
                &mut ledger.frontier,
                &stats,
                shared.budget.as_deref(),
                state,
            )
            .await;
    }
    let mut status = status_of(&ledger, &started_at, 0, report.bytes, Some(stop_reason));
    status.finished_dir = finished_dir;
    write_status(&out, &status);
    let counters = ledger.frontier.counters().clone();
    ledger.tally.filtered.robots = counters.robots_denied;
    ledger.tally.filtered.robots_unavailable = counters.robots_unavailable;
    ledger.tally.filtered.host_down = counters.host_down;
    ledger.tally.sitemaps.over_limits += counters.sitemaps_over_budget;
    let stats = CrawlStats::build(
        &ledger.tally,
        Totals {
            stop_reason,
            elapsed: start.elapsed(),
            bytes_written: report.bytes,
            records_written: report.records,
            warc_files: report
                .files
                .iter()
                .map(|p| derived.now_at(p).display().to_string())
                .collect(),
            derived_files: derived
                .files
                .iter()
                .map(|p| derived.now_at(p).display().to_string())
                .collect(),
            files_not_derived: derived.failed,
            hosts_seen: ledger.frontier.hosts_seen(),
            queued_at_end: ledger.frontier.queued_for_next_run(),
            seed_problems,
            origins_given_up: counters.origins_given_up,
            hosts_down: counters.hosts_down,
        },
    );
    CrawlOutcome {
        stats,
        output_error,
        state_error,
    }
}

/// `--save-cookies`: the jar in the cookies.txt format, written beside the file and renamed
/// over it, so a reader never sees half a file. A failure is logged; the crawl is not lost.
fn save_cookies_file(path: &Path, jar: &CookieJar) {
    match write_whole(path, jar.to_cookies_txt().as_bytes()) {
        Ok(()) => tracing::info!("--save-cookies: wrote {}", path.display()),
        Err(e) => tracing::error!("--save-cookies: cannot write {}: {e}", path.display()),
    }
}
