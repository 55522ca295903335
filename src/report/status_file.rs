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
    /// This run resumed a crawl begun by earlier runs: `started` and `bytes_written` are this
    /// run's, the other counters the whole crawl's.
    #[serde(default)]
    pub resumed: bool,
    /// `--finished-dir`, where the crawl's closed WARC files are moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_dir: Option<std::path::PathBuf>,
}

/// The length every status file is written to at least (its JSON followed by spaces), so that
/// one written on a full disk fits over the one before it.
const STATUS_ROOM: usize = 2048;

/// Writes the status atomically (aside, then renamed); failures are ignored, the status file
/// is a convenience and must never stop a crawl. When that fails (a full disk: the crawl's last
/// status, saying why it stopped, is written just then), the status is written over the file
/// in place, which needs no new space: before, `trawl status` read the last running status of a
/// crawl that had stopped on a full disk and called it killed or crashed.
pub fn write_status(dir: &Path, status: &CrawlStatus) {
    let Ok(mut json) = serde_json::to_vec_pretty(status) else {
        return;
    };
    json.resize(json.len().max(STATUS_ROOM), b' ');
    let path = dir.join(STATUS_FILE);
    // A full disk leaves no empty part behind.
    if write_whole(&path, &json).is_err() {
        let _ = write_in_place(&path, json);
    }
}

/// Writes `json` over the file at `path` without growing it: padded with spaces to the file's
/// length, or not at all when it would not fit.
fn write_in_place(path: &Path, mut json: Vec<u8>) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    let room = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX);
    if room < json.len() {
        return Err(std::io::ErrorKind::StorageFull.into());
    }
    json.resize(room, b' ');
    file.write_all(&json)
}

/// Reads the status of the crawl in `dir`, if there is one.
pub fn read_status(dir: &Path) -> Option<CrawlStatus> {
    serde_json::from_slice(&std::fs::read(dir.join(STATUS_FILE)).ok()?).ok()
}
