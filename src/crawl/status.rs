//! What the loop tells the world outside the process: the status file's snapshot
//! (`status.json`, read by `trawl status` and monitoring) and the counters a shared crawl's
//! coordinator publishes for this worker.

use std::time::SystemTime;

use super::ledger::Ledger;
use crate::redis_crawl::WorkerStats;
use crate::report::status_file::CrawlStatus;
use crate::report::{StopReason, Tally};

/// The status file's snapshot of a crawl.
pub(super) fn status_of(
    ledger: &Ledger,
    started_at: &str,
    in_flight: usize,
    bytes_written: u64,
    stop: Option<StopReason>,
) -> CrawlStatus {
    CrawlStatus {
        pid: std::process::id(),
        started: started_at.to_string(),
        updated: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        running: stop.is_none(),
        pages: ledger.tally.pages,
        // At the end, what the next run takes up: fetches abandoned at the stop too.
        queued: match stop {
            Some(_) => ledger.frontier.queued_for_next_run(),
            None => ledger.frontier.queued(),
        },
        resumed: ledger.tally.resumed,
        finished_dir: None,
        in_flight,
        errors: ledger.tally.errors.values().sum(),
        bytes_written,
        stop_reason: stop.map(|s| {
            serde_json::to_value(s)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        }),
        waiting: None,
    }
}

/// The counters a shared crawl's coordinator reports and needs.
pub(super) fn worker_stats(tally: &Tally) -> WorkerStats<'_> {
    WorkerStats {
        pages: tally.pages,
        requests: tally.requests,
        bytes: tally.bytes_downloaded,
        pages_per_host: &tally.pages_per_host,
    }
}
