//! Stage 3, the content-seen test: has a capture's payload been archived already, in this crawl
//! or in an earlier crawl's index (`--dedup-index`: CDXJ, or wget's and pywb's CDX)? If so the
//! capture is written as a revisit record that refers to the original.
//!
//! The table maps payload digests to the capture holding that payload. It is shared by all
//! jobs behind a plain mutex: one short lookup or insert per page, never held across an
//! await. Two identical pages fetched at the same moment may both be stored in full; that costs
//! bytes, never correctness. Only complete, non-empty payloads of pages and page requisites take
//! part.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

mod index_files;

use crate::capture::Capture;
use crate::record::{sha1_digest_pieces, warc_date, Original};

/// Digest → original capture.
#[derive(Debug, Default)]
pub struct DedupTable {
    map: Mutex<HashMap<String, Original>>,
}

impl DedupTable {
    /// The capture already archived with this payload digest.
    pub fn lookup(&self, digest: &str) -> Option<Original> {
        self.lock().get(digest).cloned()
    }

    /// Remembers a full capture, unless the digest is known already; true when it was new.
    pub fn insert(&self, digest: String, original: Original) -> bool {
        match self.lock().entry(digest) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(original);
                true
            }
            std::collections::hash_map::Entry::Occupied(_) => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Original>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Loads the full 2xx captures an index of earlier crawls lists (CDXJ or CDX; revisits
    /// and other statuses are skipped). Returns how many digests were added.
    pub fn load_index(&self, path: &Path) -> std::io::Result<usize> {
        let file = std::io::BufReader::new(std::fs::File::open(path)?);
        let mut added = 0;
        index_files::read_index(file, |digest, original| {
            added += usize::from(self.insert(digest, original));
        })?;
        Ok(added)
    }
}

/// The content-seen verdict on one capture.
#[derive(Debug)]
pub struct ContentSeen {
    /// WARC-Payload-Digest of the capture.
    pub digest: String,
    /// The capture already archived with this payload: write a revisit.
    pub original: Option<Original>,
    /// True when this capture may become the original of later revisits.
    eligible: bool,
}

/// Tests `capture` against `table` (`None`: no deduplication). `payload`: true for a page (the
/// filter's verdict) or a page requisite answered 2xx, whose payloads take part; robots.txt,
/// sitemaps, redirects and error answers do not; nor does a response whose records state no
/// payload digest (a transfer coding other than chunked, `build_records.rs`).
pub fn content_seen(table: Option<&DedupTable>, capture: &Capture, payload: bool) -> ContentSeen {
    let digest = sha1_digest_pieces(capture.payload_windows());
    let eligible = table.is_some()
        && payload
        && capture.is_complete()
        && !capture.payload().is_empty()
        && !capture.head.has_other_transfer_coding();
    let original = table.filter(|_| eligible).and_then(|t| t.lookup(&digest));
    ContentSeen {
        digest,
        original,
        eligible,
    }
}

impl ContentSeen {
    /// Body bytes a revisit does not store again (0 for a full record).
    pub fn bytes_saved(&self, capture: &Capture) -> u64 {
        match self.original {
            Some(_) => capture.body_len() as u64,
            None => 0,
        }
    }

    /// After a full response record with id `record_id` was built for `capture`: remembers it
    /// as the original of its payload.
    pub fn remember(&self, table: Option<&DedupTable>, capture: &Capture, record_id: &str) {
        if let (Some(table), true, None) = (table, self.eligible, &self.original) {
            table.insert(
                self.digest.clone(),
                Original {
                    target_uri: capture.exchange.target_uri.clone(),
                    date: warc_date(capture.exchange.date),
                    record_id: Some(record_id.to_string()),
                    body_len: Some(capture.body_len() as u64),
                    stored: None,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_capture_wins() {
        let t = DedupTable::default();
        let o = |u: &str| Original {
            target_uri: u.into(),
            date: "d".into(),
            record_id: None,
            body_len: None,
            stored: None,
        };
        t.insert("sha1:X".into(), o("first"));
        t.insert("sha1:X".into(), o("second"));
        assert_eq!(t.lookup("sha1:X").unwrap().target_uri, "first");
    }
}
