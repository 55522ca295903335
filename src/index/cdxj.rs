//! Building CDXJ lines from stored WARC records, matching cdxj-indexer's defaults: records of
//! type response, revisit, resource and metadata (but not `application/warc-fields` metadata),
//! JSON keys in its order, Python `json.dumps` escaping, lines sorted as strings.

use std::path::{Path, PathBuf};

use crate::extract::document::title_of_response;
use crate::http_message::media_type::{is_html, media_type_as_indexed};
use crate::http_message::parse_response_head;
use crate::http_message::sniff;
use crate::record::sha1_digest;
use crate::warc::reader::{each_record, StoredRecord};

use super::surt::surt;

/// Why a file could not be indexed.
#[derive(Debug, thiserror::Error)]
#[error("cannot index {path}: {source}")]
pub struct IndexError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub source: std::io::Error,
}

/// One index line's worth of facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdxjEntry {
    /// SURT key.
    pub urlkey: String,
    /// 14-digit timestamp.
    pub timestamp: String,
    /// WARC-Type of the record.
    pub warc_type: String,
    /// WARC-Target-URI.
    pub url: Option<String>,
    /// Media type (`warc/revisit` for revisits).
    pub mime: Option<String>,
    /// HTTP status code.
    pub status: Option<String>,
    /// Payload digest.
    pub digest: Option<String>,
    /// Compressed length of the record.
    pub length: u64,
    /// Offset of the record in the file.
    pub offset: u64,
    /// File name (no directory).
    pub filename: String,
    /// WARC-Date as written.
    pub date: Option<String>,
    /// WARC-Record-ID.
    pub record_id: Option<String>,
    /// A 2xx HTML response or revisit: a page for pages.jsonl.
    pub page: bool,
    /// The page's `<title>`, when titles were asked for ([`entries_with_titles`]).
    pub title: Option<String>,
}

impl CdxjEntry {
    /// The CDXJ line (without newline).
    pub fn line(&self) -> String {
        let mut fields: Vec<(&str, String)> = Vec::with_capacity(7);
        if let Some(u) = &self.url {
            fields.push(("url", u.clone()));
        }
        if let Some(m) = &self.mime {
            fields.push(("mime", m.clone()));
        }
        if let Some(s) = &self.status {
            fields.push(("status", s.clone()));
        }
        if let Some(d) = &self.digest {
            fields.push(("digest", d.clone()));
        }
        fields.push(("length", self.length.to_string()));
        fields.push(("offset", self.offset.to_string()));
        fields.push(("filename", self.filename.clone()));
        let json: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{}: {}", py_json_string(k), py_json_string(v)))
            .collect();
        format!("{} {} {{{}}}", self.urlkey, self.timestamp, json.join(", "))
    }
}

/// A JSON string literal as Python's `json.dumps` writes it (ensure_ascii).
pub fn py_json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Most decoded bytes of a page read for its title.
const TITLE_DECODE_CAP: usize = 4 << 20;

/// The index entries of one WARC file, in file order.
pub fn entries_of_file(path: &Path) -> Result<Vec<CdxjEntry>, IndexError> {
    entries(path, false)
}

/// The index entries of the records of one WARC file that can be read, with the title of each
/// page (for WACZ pages.jsonl), and the fault that stopped the reading, if one did.
pub fn entries_with_titles(path: &Path) -> (Vec<CdxjEntry>, Option<IndexError>) {
    entries_before_fault(path, true)
}

fn entries(path: &Path, titles: bool) -> Result<Vec<CdxjEntry>, IndexError> {
    match entries_before_fault(path, titles) {
        (entries, None) => Ok(entries),
        (_, Some(e)) => Err(e),
    }
}

/// The entries of the records of `path` that could be read, and the fault that stopped the
/// reading, if one did.
fn entries_before_fault(path: &Path, titles: bool) -> (Vec<CdxjEntry>, Option<IndexError>) {
    let error = |source| IndexError {
        path: path.to_path_buf(),
        source,
    };
    let filename = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    // One record in memory at a time: a 1 GB WARC is indexed in a few MB.
    let mut entries = Vec::new();
    // Where the last whole record ended: an error says where the trouble starts.
    let mut end = 0;
    let records = match each_record(path) {
        Ok(records) => records,
        Err(e) => return (entries, Some(error(e))),
    };
    for record in records {
        let record = match record {
            Ok(record) => record,
            Err(e) => {
                let at = format!("after offset {end} (the end of the last whole record): {e}");
                return (entries, Some(error(std::io::Error::new(e.kind(), at))));
            }
        };
        end = record.offset + record.length;
        if let Some(mut entry) = entry_of(&record, &filename) {
            if titles && entry.page && entry.warc_type == "response" {
                entry.title = title_of_response(&record.block, TITLE_DECODE_CAP);
            }
            entries.push(entry);
        }
    }
    (entries, None)
}

fn entry_of(record: &StoredRecord, filename: &str) -> Option<CdxjEntry> {
    let warc_type = record.header("WARC-Type")?.to_string();
    if !matches!(
        warc_type.as_str(),
        "response" | "revisit" | "resource" | "metadata"
    ) {
        return None;
    }
    let content_type = record.header("Content-Type");
    if matches!(warc_type.as_str(), "resource" | "metadata")
        && content_type == Some("application/warc-fields")
    {
        return None;
    }
    let is_http =
        content_type.is_some_and(|c| c.to_ascii_lowercase().starts_with("application/http"));
    let http = match warc_type.as_str() {
        "response" | "revisit" if is_http => parse_response_head(&record.block),
        _ => None,
    };
    let mime = match (warc_type.as_str(), &http) {
        ("revisit", _) => Some("warc/revisit".to_string()),
        ("response", Some(h)) => h
            .header_str("content-type")
            .map(|v| media_type_as_indexed(&v).to_string()),
        ("response", None) => None,
        _ => content_type.map(|v| media_type_as_indexed(v.trim()).to_string()),
    };
    let status = http.as_ref().map(|h| h.status.to_string());
    // A page: a 2xx of an HTML type, or without a usable type, identified as HTML by its bytes;
    // never a robots.txt or a sitemap file, which a server that answers every path with its
    // app's HTML shell answers with HTML too (a crawl reads them as such; they were listed in
    // pages.jsonl, one as the WACZ's main page).
    let robots = record.target_uri().is_some_and(|u| {
        crate::url_rules::is_robots_txt(u) || crate::url_rules::is_sitemap_name(u)
    });
    let page = !robots
        && http.as_ref().is_some_and(|h| {
            let declared = h.media_type().filter(|m| !sniff::is_unknown(Some(m)));
            let media = declared
                .as_deref()
                .or_else(|| record.header("WARC-Identified-Payload-Type"));
            (200..300).contains(&h.status) && media.is_some_and(|m| is_html(m.trim()))
        });
    let digest = record
        .header("WARC-Payload-Digest")
        .map(str::to_string)
        .or_else(|| {
            let payload = match &http {
                Some(h) => &record.block[h.len..],
                None => &record.block[..],
            };
            Some(sha1_digest(payload))
        });
    // A raw space is no part of a URI: written as `%20`, as cdxj-indexer writes it, so the
    // line's url is one a replay tool can request.
    let url = record.target_uri().map(|u| u.replace(' ', "%20"));
    let date = record.header("WARC-Date").map(str::to_string);
    let timestamp = cdx_timestamp(date.as_deref().unwrap_or(""));
    Some(CdxjEntry {
        urlkey: surt(url.as_deref().unwrap_or("")),
        timestamp,
        warc_type,
        url,
        mime,
        status,
        digest,
        length: record.indexed_length(),
        offset: record.offset,
        filename: filename.to_string(),
        date,
        record_id: record.header("WARC-Record-ID").map(str::to_string),
        page,
        title: None,
    })
}

/// The 14-digit timestamp of a `WARC-Date`. A date to the minute or the day
/// (`2024-01-02T03:04Z`: WARC 1.1 allows less than seconds) gets zeros for what it lacks, as
/// warcio reads it.
fn cdx_timestamp(date: &str) -> String {
    let mut timestamp: String = date.chars().filter(char::is_ascii_digit).take(14).collect();
    if timestamp.len() >= 4 {
        while timestamp.len() < 14 {
            timestamp.push('0');
        }
    }
    timestamp
}

/// Sorted CDXJ lines for the records of `paths` that can be read, and the faults that stopped
/// the reading of a file (its records before the fault are indexed): a file cut short by a
/// killed writer is indexed up to its cut, as cdxj-indexer indexes it.
pub fn index_readable(paths: &[PathBuf]) -> (Vec<String>, Vec<IndexError>) {
    let (mut lines, mut faults) = (Vec::new(), Vec::new());
    for path in paths {
        let (entries, fault) = entries_before_fault(path, false);
        lines.extend(entries.iter().map(CdxjEntry::line));
        faults.extend(fault);
    }
    lines.sort();
    (lines, faults)
}

/// Sorted CDXJ lines for a set of WARC files.
pub fn index_files(paths: &[PathBuf]) -> Result<Vec<String>, IndexError> {
    let mut lines = Vec::new();
    for path in paths {
        lines.extend(entries_of_file(path)?.iter().map(CdxjEntry::line));
    }
    lines.sort();
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_to_the_minute_gets_zero_seconds() {
        assert_eq!(cdx_timestamp("2024-01-02T03:04:05Z"), "20240102030405");
        assert_eq!(
            cdx_timestamp("2024-01-02T03:04:05.123456Z"),
            "20240102030405"
        );
        assert_eq!(cdx_timestamp("2024-01-02T03:04Z"), "20240102030400");
        assert_eq!(cdx_timestamp("2024-01-02"), "20240102000000");
    }

    #[test]
    fn json_strings_are_escaped_like_python() {
        assert_eq!(py_json_string("a\"b\\c/d"), r#""a\"b\\c/d""#);
        assert_eq!(py_json_string("é\u{1F600}\n"), r#""\u00e9\ud83d\ude00\n""#);
        assert_eq!(py_json_string("\u{7f}"), r#""\u007f""#);
    }

    #[test]
    fn line_layout() {
        let e = CdxjEntry {
            urlkey: "com,example)/".into(),
            timestamp: "20261122005234".into(),
            warc_type: "response".into(),
            url: Some("http://example.com/".into()),
            mime: Some("text/html".into()),
            status: Some("200".into()),
            digest: Some("sha1:X".into()),
            length: 10,
            offset: 0,
            filename: "a.warc.gz".into(),
            date: None,
            record_id: None,
            page: true,
            title: None,
        };
        assert_eq!(
            e.line(),
            r#"com,example)/ 20261122005234 {"url": "http://example.com/", "mime": "text/html", "status": "200", "digest": "sha1:X", "length": "10", "offset": "0", "filename": "a.warc.gz"}"#
        );
    }
}
