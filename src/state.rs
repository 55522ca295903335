//! Crawl state on disk, for resuming: the frontier (seen and queued URLs, robots.txt rules), the
//! counters, and the WARC file that was open when the state was saved.
//!
//! Saved as one JSON document, written aside, synced and renamed, so a crash leaves either the
//! old or the new state, never a torn one. It is saved every few seconds and when the crawl
//! stops, always after the writer has synced every record of the jobs it counts as done. What a
//! crash loses since the last save is recovered from the WARC files themselves (see
//! `crawl::resume`): the URLs archived since then are taken out of the queue and their links
//! extracted again, so only fetches that were in flight are repeated.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::frontier::FrontierSnapshot;
use crate::report::{StopReason, Tally};

/// Name of the state file in the state directory.
pub const STATE_FILE: &str = "crawl-state.json";
/// Format version, bumped on incompatible changes.
pub const STATE_VERSION: u32 = 1;

/// Everything needed to continue a crawl.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CrawlState {
    /// Format version.
    pub version: u32,
    /// Frontier contents.
    pub frontier: FrontierSnapshot,
    /// Counters so far.
    pub tally: Tally,
    /// Serial of the WARC file open when this was saved: after a crash, records in that file
    /// and later ones are replayed. `None` after a clean stop.
    pub replay_from_serial: Option<u64>,
    /// Set when the crawl ended (rather than being saved mid-way).
    pub stopped: Option<StopReason>,
}

/// Why state could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// File system error.
    #[error("crawl state {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not valid state.
    #[error("crawl state {path} is unreadable: {detail}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

/// Loads the state in `dir`, if any.
pub fn load(dir: &Path) -> Result<Option<CrawlState>, StateError> {
    let path = dir.join(STATE_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(StateError::Io { path, source }),
    };
    let state: CrawlState = serde_json::from_slice(&bytes).map_err(|e| StateError::Corrupt {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    if state.version != STATE_VERSION {
        return Err(StateError::Corrupt {
            path,
            detail: format!(
                "version {} (this trawl reads {STATE_VERSION})",
                state.version
            ),
        });
    }
    Ok(Some(state))
}

/// Saves `state` in `dir` atomically and durably.
pub fn save(dir: &Path, state: &CrawlState) -> Result<(), StateError> {
    let path = dir.join(STATE_FILE);
    let tmp = dir.join(format!("{STATE_FILE}.tmp"));
    let io = |source| StateError::Io {
        path: tmp.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut file = std::fs::File::create(&tmp).map_err(io)?;
    serde_json::to_writer(&mut file, state).map_err(|e| io(e.into()))?;
    file.flush().map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    std::fs::rename(&tmp, &path).map_err(io)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::QueuedUrl;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(dir.path()).unwrap().is_none());
        let mut state = CrawlState {
            version: STATE_VERSION,
            replay_from_serial: Some(3),
            ..Default::default()
        };
        state.frontier.seen.push("http://a.org/".into());
        state.frontier.queue.push(QueuedUrl {
            url: "http://a.org/x".into(),
            depth: 1,
            redirects: 0,
            attempt: 0,
        });
        state.tally.pages = 7;
        state.tally.status_codes.insert(200, 7);
        save(dir.path(), &state).unwrap();
        let back = load(dir.path()).unwrap().unwrap();
        assert_eq!(back.tally.pages, 7);
        assert_eq!(back.tally.status_codes.get(&200), Some(&7));
        assert_eq!(back.frontier.queue[0].url, "http://a.org/x");
        std::fs::write(dir.path().join(STATE_FILE), b"{not json").unwrap();
        assert!(matches!(load(dir.path()), Err(StateError::Corrupt { .. })));
    }
}
