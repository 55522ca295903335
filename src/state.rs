//! Crawl state besides the frontier, for resuming: the counters, why the crawl stopped, and the
//! WARC file that was open when the state was saved.
//!
//! It is a JSON blob in the store (see [`crate::store`]), committed in the same transaction as
//! the frontier at every save point, always after the writer has synced every record of the
//! jobs it counts as done. What a crash loses since the last save point is recovered from the
//! WARC files themselves (see `crawl::resume`): the URLs archived since then are taken out of
//! the queue and their links extracted again, so only fetches that were in flight are repeated.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::report::{StopReason, Tally};
use crate::store::StoreError;

/// Name of the crawl state blob in the store.
pub const STATE_META: &str = "crawl";
/// Format version, bumped on incompatible changes.
pub const STATE_VERSION: u32 = 2;
/// The single JSON file that held crawl state before the store (version 1).
const LEGACY_FILE: &str = "crawl-state.json";

/// Counters and markers needed to continue a crawl.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CrawlState {
    /// Format version.
    pub version: u32,
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
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The saved state is not valid.
    #[error("crawl state in {dir} is unreadable: {detail}")]
    Corrupt {
        /// The state directory.
        dir: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

impl CrawlState {
    /// Encodes for the store.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("plain data serializes")
    }

    /// Decodes the blob saved in state directory `dir` (`None`: a new crawl).
    pub fn decode(dir: &Path, blob: Option<&[u8]>) -> Result<Option<CrawlState>, StateError> {
        let corrupt = |detail: String| StateError::Corrupt {
            dir: dir.to_path_buf(),
            detail,
        };
        if dir.join(LEGACY_FILE).exists() {
            return Err(corrupt(format!(
                "{LEGACY_FILE} was written by an older trawl; move it away to start a new crawl"
            )));
        }
        let Some(blob) = blob else {
            return Ok(None);
        };
        let state: CrawlState = serde_json::from_slice(blob).map_err(|e| corrupt(e.to_string()))?;
        if state.version != STATE_VERSION {
            return Err(corrupt(format!(
                "version {} (this trawl reads {STATE_VERSION})",
                state.version
            )));
        }
        Ok(Some(state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let dir = tempfile::tempdir().unwrap();
        assert!(CrawlState::decode(dir.path(), None).unwrap().is_none());
        let mut state = CrawlState {
            version: STATE_VERSION,
            replay_from_serial: Some(3),
            ..Default::default()
        };
        state.tally.pages = 7;
        state.tally.status_codes.insert(200, 7);
        let back = CrawlState::decode(dir.path(), Some(&state.encode()))
            .unwrap()
            .unwrap();
        assert_eq!(back.tally.pages, 7);
        assert_eq!(back.tally.status_codes.get(&200), Some(&7));
        assert_eq!(back.replay_from_serial, Some(3));
        assert!(matches!(
            CrawlState::decode(dir.path(), Some(b"{not json")),
            Err(StateError::Corrupt { .. })
        ));
        std::fs::write(dir.path().join(LEGACY_FILE), b"{}").unwrap();
        assert!(CrawlState::decode(dir.path(), None).is_err());
    }
}
