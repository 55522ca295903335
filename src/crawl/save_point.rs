//! Save points: every few seconds, and at start and stop, the writer syncs the current WARC
//! file and then the crawl database commits the frontier together with [`SavedCrawl`] (the
//! counters, why the crawl stopped, and the WARC file that was open), so the saved state always
//! describes a moment the WARC files agree with.
//!
//! What a crash loses since the last save point is recovered from the WARC files themselves
//! (`crawl/replay.rs`): the URLs archived since then are taken out of the queue and run through
//! the chain's filter and link extraction again, so only fetches that were in flight repeat.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::ledger::Ledger;
use super::operator_changes::LiveChanges;
use crate::fetch::CookieJar;
use crate::frontier::storage::StoreError;
use crate::report::{StopReason, Tally};
use crate::seeds::SavedSeeds;
use crate::warc::{Batch, WriterHandle};

/// Name of the crawl state blob in the store.
pub const STATE_META: &str = "crawl";
/// Name of the cookie jar (cookies.txt text) in the store.
pub const COOKIES_META: &str = "cookies";
/// Format version, bumped on incompatible changes.
pub const STATE_VERSION: u32 = 2;
/// The single JSON file that held crawl state before the store (version 1).
const LEGACY_FILE: &str = "crawl-state.json";

/// Counters and markers needed to continue a crawl, saved beside the frontier.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SavedCrawl {
    /// Format version.
    pub version: u32,
    /// Counters so far.
    pub tally: Tally,
    /// Serial of the WARC file open when this was saved: after a crash, records in that file
    /// and later ones are replayed. `None` after a clean stop.
    pub replay_from_serial: Option<u64>,
    /// Set when the crawl ended (rather than being saved mid-way).
    pub stopped: Option<StopReason>,
    /// The crawl's name in warcinfo records, kept across resumes.
    #[serde(default)]
    pub crawl_id: String,
    /// What the operator changed through the live console.
    #[serde(default, skip_serializing_if = "LiveChanges::is_empty")]
    pub live: LiveChanges,
    /// How far the seeds file was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds: Option<SavedSeeds>,
    /// Chunks of the seed journal saved (`ledger/seed_journal.rs`): the scope the seeds read
    /// so far and their redirects made, and the fallbacks of bare-host seeds not reached yet,
    /// which a resumed crawl does not read again.
    #[serde(default)]
    pub seed_chunks: u64,
}

/// What lasts for a whole crawl, across resumes, beside the frontier and the counters: its
/// name and its cookie jar.
#[derive(Debug, Clone)]
pub(super) struct CrawlSession {
    /// The crawl's name in warcinfo records.
    pub(super) crawl_id: String,
    /// The cookie jar (none with `--no-cookies`).
    pub(super) cookies: Option<Arc<CookieJar>>,
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

impl SavedCrawl {
    /// Encodes for the store.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("plain data serializes")
    }

    /// Decodes the blob saved in state directory `dir` (`None`: a new crawl).
    pub fn decode(dir: &Path, blob: Option<&[u8]>) -> Result<Option<SavedCrawl>, StateError> {
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
        let state: SavedCrawl = serde_json::from_slice(blob).map_err(|e| corrupt(e.to_string()))?;
        if state.version != STATE_VERSION {
            return Err(corrupt(format!(
                "version {} (this trawl reads {STATE_VERSION})",
                state.version
            )));
        }
        Ok(Some(state))
    }
}

/// Saves crawl state mid-crawl: first the writer syncs the current file (every job the ledger
/// counts as done has its records written already), then the crawl database commits the
/// frontier and the counters, naming that file as the place to replay from after a crash.
pub(super) async fn save(
    ledger: &mut Ledger,
    writer: &WriterHandle,
    session: &CrawlSession,
) -> Result<(), StateError> {
    let replay_from = writer.replay_from.load(Ordering::Acquire);
    let (request, synced) = Batch::sync_request();
    if writer.sender.send(request).await.is_err() || synced.await.is_err() {
        // The writer is gone (an output error, reported on its own); nothing to save against.
        return Ok(());
    }
    let journal = ledger.seed_journal.next_chunk();
    let saved = SavedCrawl {
        version: STATE_VERSION,
        tally: ledger.tally.clone(),
        replay_from_serial: Some(replay_from),
        stopped: None,
        crawl_id: session.crawl_id.clone(),
        live: ledger.live.clone(),
        seeds: ledger.seeds.clone(),
        seed_chunks: ledger.seed_journal.chunks + u64::from(journal.is_some()),
    };
    let cookies = session.cookies.as_ref().and_then(|jar| jar.unsaved());
    // The commit writes and syncs the pages changed since the last one (about a second for
    // 100,000 new URLs on a 10-million-URL store); other tasks move off this thread meanwhile.
    let meta = saved.encode();
    let mut parts: Vec<(&str, &[u8])> = vec![(STATE_META, &meta)];
    if let Some(jar) = &cookies {
        parts.push((COOKIES_META, jar.as_bytes()));
    }
    if let Some((name, json)) = &journal {
        parts.push((name, json));
    }
    let frontier = &mut ledger.frontier;
    let mut commit = || frontier.checkpoint(&parts);
    let multi_thread = tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread;
    if multi_thread {
        tokio::task::block_in_place(commit)?;
    } else {
        commit()?;
    }
    if journal.is_some() {
        ledger.seed_journal.chunk_saved();
    }
    Ok(())
}

/// Saves the state a crawl ends with: the final counters and why it stopped. `replay_from` is
/// set only when the output failed mid-way (otherwise every file is closed).
pub(super) fn save_final(
    ledger: &mut Ledger,
    stop: StopReason,
    replay_from: Option<u64>,
    session: &CrawlSession,
) -> Result<(), StateError> {
    let journal = ledger.seed_journal.next_chunk();
    let saved = SavedCrawl {
        version: STATE_VERSION,
        tally: ledger.tally.clone(),
        replay_from_serial: replay_from,
        stopped: Some(stop),
        crawl_id: session.crawl_id.clone(),
        live: ledger.live.clone(),
        seeds: ledger.seeds.clone(),
        seed_chunks: ledger.seed_journal.chunks + u64::from(journal.is_some()),
    };
    let meta = saved.encode();
    let cookies = session.cookies.as_ref().and_then(|jar| jar.unsaved());
    let mut parts: Vec<(&str, &[u8])> = vec![(STATE_META, &meta)];
    if let Some(jar) = &cookies {
        parts.push((COOKIES_META, jar.as_bytes()));
    }
    if let Some((name, json)) = &journal {
        parts.push((name, json));
    }
    // Jobs abandoned at a forced stop are still in flight: the checkpoint saves them as queued.
    ledger.frontier.checkpoint(&parts)?;
    if journal.is_some() {
        ledger.seed_journal.chunk_saved();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let dir = tempfile::tempdir().unwrap();
        assert!(SavedCrawl::decode(dir.path(), None).unwrap().is_none());
        let mut state = SavedCrawl {
            version: STATE_VERSION,
            replay_from_serial: Some(3),
            ..Default::default()
        };
        state.tally.pages = 7;
        state.tally.status_codes.insert(200, 7);
        let back = SavedCrawl::decode(dir.path(), Some(&state.encode()))
            .unwrap()
            .unwrap();
        assert_eq!(back.tally.pages, 7);
        assert_eq!(back.tally.status_codes.get(&200), Some(&7));
        assert_eq!(back.replay_from_serial, Some(3));
        assert!(matches!(
            SavedCrawl::decode(dir.path(), Some(b"{not json")),
            Err(StateError::Corrupt { .. })
        ));
        std::fs::write(dir.path().join(LEGACY_FILE), b"{}").unwrap();
        assert!(SavedCrawl::decode(dir.path(), None).is_err());
    }
}
