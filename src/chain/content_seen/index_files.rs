//! The indexes of earlier crawls that `--dedup-index` reads: CDXJ (trawl's `--cdxj` and
//! `trawl index`, pywb's cdxj-indexer) and classic CDX, whose first line names its fields
//! (` CDX a b a m s k r M V g u` from wget's `--warc-cdx`, ` CDX N b a m s k r M S V g` from
//! pywb's cdx-indexer, Heritrix's and the Wayback Machine's). Each yields the full 2xx
//! captures it lists; revisits, other statuses, repeated headers and lines that do not parse
//! (or run over 64 KiB) are skipped. Read a line at a time.

use std::io::BufRead;

use crate::record::Original;

/// Most bytes of one index line read; a longer one is skipped (a CDXJ line is ~300).
const MAX_LINE: usize = 64 * 1024;

/// Calls `each` with the payload digest (`sha1:BASE32`) and the capture holding it, of each
/// full 2xx capture that `index` lists, reading a line at a time (an index of a large crawl
/// runs to gigabytes).
pub(super) fn read_index(
    mut index: impl BufRead,
    mut each: impl FnMut(String, Original),
) -> std::io::Result<()> {
    let mut fields: Option<Option<Vec<char>>> = None;
    let mut raw = Vec::new();
    loop {
        raw.clear();
        if index.read_until(b'\n', &mut raw)? == 0 {
            return Ok(());
        }
        if raw.len() > MAX_LINE {
            continue;
        }
        let line = String::from_utf8_lossy(&raw);
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        // The first line says the format: a CDX header names its fields, else CDXJ.
        let format = fields.get_or_insert_with(|| cdx_fields(line));
        let capture = match format {
            Some(_) if cdx_fields(line).is_some() => None,
            Some(fields) => cdx_capture(fields, line),
            None => cdxj_capture(line),
        };
        if let Some((digest, original)) = capture {
            each(digest, original);
        }
    }
}

/// The field letters a CDX header line names (`None`: not a CDX header).
fn cdx_fields(line: &str) -> Option<Vec<char>> {
    let mut tokens = line.split_ascii_whitespace();
    (tokens.next()? == "CDX").then(|| tokens.filter_map(|t| t.chars().next()).collect())
}

/// A CDX line by its header's `fields`: `a` the URL, `b` the date, `m` the type, `s` the
/// status, `k` the digest, `u` the record's id (wget's).
fn cdx_capture(fields: &[char], line: &str) -> Option<(String, Original)> {
    let values: Vec<&str> = line.split_ascii_whitespace().collect();
    if values.len() != fields.len() {
        return None;
    }
    let field = |letter: char| {
        fields
            .iter()
            .position(|&f| f == letter)
            .map(|i| values[i])
            .filter(|v| *v != "-")
    };
    if field('m') == Some("warc/revisit") || !field('s')?.starts_with('2') {
        return None;
    }
    let record_id = field('u').map(|id| match id.starts_with('<') {
        true => id.to_string(),
        false => format!("<{id}>"),
    });
    let original = Original {
        target_uri: field('a')?.to_string(),
        date: warc_date_of(field('b')?)?,
        record_id,
        body_len: None,
        stored: None,
    };
    Some((prefixed_digest(field('k')?), original))
}

/// A CDXJ line (`key timestamp {json}`).
fn cdxj_capture(line: &str) -> Option<(String, Original)> {
    let mut parts = line.splitn(3, ' ');
    let (_key, ts, json) = (parts.next()?, parts.next()?, parts.next()?);
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    if v["mime"] == "warc/revisit" || !v["status"].as_str()?.starts_with('2') {
        return None;
    }
    let original = Original {
        target_uri: v["url"].as_str()?.to_string(),
        date: warc_date_of(ts)?,
        record_id: None,
        body_len: None,
        stored: None,
    };
    Some((prefixed_digest(v["digest"].as_str()?), original))
}

/// A digest as WARC-Payload-Digest writes it: CDX files leave out the `sha1:`.
fn prefixed_digest(digest: &str) -> String {
    match digest.contains(':') {
        true => digest.to_string(),
        false => format!("sha1:{digest}"),
    }
}

/// The WARC-Date of a 14-digit CDX timestamp.
fn warc_date_of(ts: &str) -> Option<String> {
    if ts.len() < 14 || !ts.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(format!(
        "{}-{}-{}T{}:{}:{}Z",
        &ts[0..4],
        &ts[4..6],
        &ts[6..8],
        &ts[8..10],
        &ts[10..12],
        &ts[12..14]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn indexed_captures(text: &str) -> Vec<(String, Original)> {
        let mut captures = Vec::new();
        read_index(text.as_bytes(), |d, o| captures.push((d, o))).unwrap();
        captures
    }

    #[test]
    fn reads_full_captures_from_cdxj() {
        let text = concat!(
            "com,a)/ 20261122005234 {\"url\": \"http://a.com/\", \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \"sha1:AAA\", \"length\": \"1\", \"offset\": \"0\", \"filename\": \"f\"}\n",
            "com,a)/r 20261122005235 {\"url\": \"http://a.com/r\", \"mime\": \"warc/revisit\", \"status\": \"200\", \"digest\": \"sha1:BBB\", \"length\": \"1\", \"offset\": \"0\", \"filename\": \"f\"}\n",
            "com,a)/404 20261122005236 {\"url\": \"http://a.com/404\", \"mime\": \"text/html\", \"status\": \"404\", \"digest\": \"sha1:CCC\", \"length\": \"1\", \"offset\": \"0\", \"filename\": \"f\"}\n",
            "garbage\n"
        );
        let captures = indexed_captures(text);
        assert_eq!(captures.len(), 1);
        let (digest, o) = &captures[0];
        assert_eq!(digest, "sha1:AAA");
        assert_eq!(o.target_uri, "http://a.com/");
        assert_eq!(o.date, "2026-11-22T00:52:34Z");
        assert_eq!(o.record_id, None);
    }

    #[test]
    fn reads_wgets_cdx_with_its_record_ids() {
        // As wget 1.21.3 writes it with --warc-cdx (one line per response record).
        let text = concat!(
            " CDX a b a m s k r M V g u\n",
            "http://a.com/ 20261128065054 http://a.com/ text/html 200 U7YNQAI4G6PWQMMUOHHSP5WANQ65FEYT - - 825 w.warc.gz <urn:uuid:f7b6027f-a1e7-4945-abc6-d1d57501011c>\n",
            "http://a.com/robots.txt 20261128065054 http://a.com/robots.txt text/html 404 HZCCVJ3MFQ2E357L5C3HJNMN73564POR - - 27822 w.warc.gz <urn:uuid:7928b69d-7177-429c-8658-303ebadc35c1>\n",
            "http://a.com/a b 20261128065054 http://a.com/a b text/html 200 XXXX - - 1 w.warc.gz <urn:uuid:x>\n",
            // wget writes the header again each time it opens the file to append.
            " CDX a b a m s k r M V g u\n",
        );
        let long = format!(
            "{text}http://a.com/{} 20261128065054\n",
            "x".repeat(MAX_LINE)
        );
        let captures = indexed_captures(&long);
        assert_eq!(captures.len(), 1, "{captures:?}");
        let (digest, o) = &captures[0];
        assert_eq!(digest, "sha1:U7YNQAI4G6PWQMMUOHHSP5WANQ65FEYT");
        assert_eq!(o.target_uri, "http://a.com/");
        assert_eq!(o.date, "2026-11-28T06:50:54Z");
        assert_eq!(
            o.record_id.as_deref(),
            Some("<urn:uuid:f7b6027f-a1e7-4945-abc6-d1d57501011c>")
        );
    }

    #[test]
    fn reads_pywbs_cdx_and_skips_its_revisits() {
        let text = concat!(
            " CDX N b a m s k r M S V g\n",
            "com,a)/ 20261128064606 http://a.com/ text/html 200 GQDJQE6HFMYHD4YCK6AAM3YE76VAQZX5 - - 1652 3091 t.warc.gz\n",
            "com,a)/b 20261128064607 http://a.com/b warc/revisit - GQDJQE6HFMYHD4YCK6AAM3YE76VAQZX5 - - 500 4000 t.warc.gz\n",
        );
        let captures = indexed_captures(text);
        assert_eq!(captures.len(), 1);
        assert_eq!(captures[0].0, "sha1:GQDJQE6HFMYHD4YCK6AAM3YE76VAQZX5");
        assert_eq!(captures[0].1.target_uri, "http://a.com/");
        assert_eq!(captures[0].1.record_id, None);
    }
}
