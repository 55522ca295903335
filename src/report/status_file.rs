//! The crawl's status file, `DIR/.trawl-status.json`: rewritten every few seconds while a crawl
//! runs and once when it ends, and read by `trawl status DIR` (cron jobs, operators).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::whole_file::write_whole;

/// Name of the status file in the output directory.
pub const STATUS_FILE: &str = ".trawl-status.json";

/// A snapshot of a crawl.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CrawlStatus {
    /// Process id of the crawler.
    pub pid: u32,
    /// When the crawl started (RFC 3339).
    pub started: String,
    /// When this snapshot was written (RFC 3339).
    pub updated: String,
    /// False once the crawl has ended.
    pub running: bool,
    /// Pages archived.
    pub pages: u64,
    /// URLs queued.
    pub queued: usize,
    /// Fetches in flight.
    pub in_flight: usize,
    /// Failed attempts.
    pub errors: u64,
    /// WARC bytes written.
    pub bytes_written: u64,
    /// Why it ended (when it has).
    pub stop_reason: Option<String>,
    /// Why no new fetch starts while it runs (the console's pause, low disk space).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<String>,
}

/// Writes the status atomically (aside, then renamed); failures are ignored, the status file
/// is a convenience and must never stop a crawl.
pub fn write_status(dir: &Path, status: &CrawlStatus) {
    if let Ok(json) = serde_json::to_vec_pretty(status) {
        // A full disk leaves no empty part behind.
        let _ = write_whole(&dir.join(STATUS_FILE), &json);
    }
}

/// Reads the status of the crawl in `dir`, if there is one.
pub fn read_status(dir: &Path) -> Option<CrawlStatus> {
    serde_json::from_slice(&std::fs::read(dir.join(STATUS_FILE)).ok()?).ok()
}
