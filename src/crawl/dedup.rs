//! The content-seen test: payload digests already archived, in this crawl or in earlier
//! crawls' CDXJ indexes (`--dedup-index`), mapped to the capture holding that payload.
//!
//! Shared by all workers behind a plain mutex: one short lookup or insert per page, never held
//! across an await. Two identical pages fetched at the same moment may both be stored in full;
//! that costs bytes, never correctness.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use crate::record::Original;

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

    /// Remembers a full capture, unless the digest is known already.
    pub fn insert(&self, digest: String, original: Original) {
        self.lock().entry(digest).or_insert(original);
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
                });
                added += 1;
            }
        }
        Ok(added)
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
        };
        t.insert("sha1:X".into(), o("first"));
        t.insert("sha1:X".into(), o("second"));
        assert_eq!(t.lookup("sha1:X").unwrap().target_uri, "first");
    }
}
