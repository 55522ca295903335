//! Stage 3, the content-seen test: has a capture's payload been archived already, in this crawl
//! or in an earlier crawl's CDXJ index (`--dedup-index`)? If so the capture is written as a
//! revisit record that refers to the original.
//!
//! The table maps payload digests to the capture holding that payload. It is shared by all
//! jobs behind a plain mutex: one short lookup or insert per page, never held across an
//! await. Two identical pages fetched at the same moment may both be stored in full; that costs
//! bytes, never correctness. Only complete, non-empty page payloads take part.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use crate::capture::Capture;
use crate::record::{sha1_digest, warc_date, Original};

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

    /// Loads full 2xx captures from a CDXJ index (revisits and other statuses are skipped).
    /// Returns how many digests were added.
    pub fn load_cdxj(&self, path: &Path) -> std::io::Result<usize> {
        let text = std::fs::read_to_string(path)?;
        let mut added = 0;
        let mut map = self.lock();
        for line in text.lines() {
            let Some((url, date, digest)) = parse_cdxj_line(line) else {
                continue;
            };
            if let std::collections::hash_map::Entry::Vacant(slot) = map.entry(digest) {
                slot.insert(Original {
                    target_uri: url,
                    date,
                    record_id: None,
                    body_len: None,
                });
                added += 1;
            }
        }
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

/// Tests `capture` against `table` (`None`: no deduplication). `page`: the filter's verdict.
pub fn content_seen(table: Option<&DedupTable>, capture: &Capture, page: bool) -> ContentSeen {
    let digest = sha1_digest(capture.payload());
    let eligible =
        table.is_some() && page && capture.is_complete() && !capture.payload().is_empty();
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
                },
            );
        }
    }
}

/// (url, WARC-Date, digest) of a CDXJ line for a full 2xx capture.
fn parse_cdxj_line(line: &str) -> Option<(String, String, String)> {
    let mut parts = line.splitn(3, ' ');
    let (_key, ts, json) = (parts.next()?, parts.next()?, parts.next()?);
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    if v["mime"] == "warc/revisit" || !v["status"].as_str()?.starts_with('2') {
        return None;
    }
    if ts.len() < 14 || !ts.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let date = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &ts[0..4],
        &ts[4..6],
        &ts[6..8],
        &ts[8..10],
        &ts[10..12],
        &ts[12..14]
    );
    Some((
        v["url"].as_str()?.to_string(),
        date,
        v["digest"].as_str()?.to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_full_captures_from_cdxj() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.cdxj");
        std::fs::write(
            &path,
            concat!(
                "com,a)/ 20261122005234 {\"url\": \"http://a.com/\", \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \"sha1:AAA\", \"length\": \"1\", \"offset\": \"0\", \"filename\": \"f\"}\n",
                "com,a)/r 20261122005235 {\"url\": \"http://a.com/r\", \"mime\": \"warc/revisit\", \"status\": \"200\", \"digest\": \"sha1:BBB\", \"length\": \"1\", \"offset\": \"0\", \"filename\": \"f\"}\n",
                "com,a)/404 20261122005236 {\"url\": \"http://a.com/404\", \"mime\": \"text/html\", \"status\": \"404\", \"digest\": \"sha1:CCC\", \"length\": \"1\", \"offset\": \"0\", \"filename\": \"f\"}\n",
                "garbage\n"
            ),
        )
        .unwrap();
        let t = DedupTable::default();
        assert_eq!(t.load_cdxj(&path).unwrap(), 1);
        let o = t.lookup("sha1:AAA").unwrap();
        assert_eq!(o.target_uri, "http://a.com/");
        assert_eq!(o.date, "2026-11-22T00:52:34Z");
        assert!(t.lookup("sha1:BBB").is_none() && t.lookup("sha1:CCC").is_none());
    }

    #[test]
    fn first_capture_wins() {
        let t = DedupTable::default();
        let o = |u: &str| Original {
            target_uri: u.into(),
            date: "d".into(),
            record_id: None,
            body_len: None,
        };
        t.insert("sha1:X".into(), o("first"));
        t.insert("sha1:X".into(), o("second"));
        assert_eq!(t.lookup("sha1:X").unwrap().target_uri, "first");
    }
}
