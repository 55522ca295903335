//! WET: one `conversion` record of plain text per HTML or plain-text response, in Common
//! Crawl's layout: the title on the first line, then the text; `WARC-Refers-To` names the
//! response, `WARC-Identified-Content-Language` its language when identified.

use crate::record::builder::{derived_record, WarcRecord};
use crate::record::sha1_digest;
use crate::warc::reader::StoredRecord;

/// The block of a WET record: title line (when there is a title), then the text.
pub fn wet_text(title: Option<&str>, text: &str) -> String {
    match title {
        Some(t) if !text.is_empty() => format!("{t}\n{text}"),
        Some(t) => t.to_string(),
        None => text.to_string(),
    }
}

/// The WET record of `response` holding `text`.
pub fn wet_record(response: &StoredRecord, text: &str, language: Option<&str>) -> WarcRecord {
    let target = response.target_uri().unwrap_or("");
    let date = response.header("WARC-Date").unwrap_or("");
    let refers_to = response.header("WARC-Record-ID").unwrap_or("");
    let digest = sha1_digest(text.as_bytes());
    let mut fields = vec![
        ("WARC-Target-URI", target),
        ("WARC-Date", date),
        ("WARC-Refers-To", refers_to),
        ("WARC-Block-Digest", digest.as_str()),
    ];
    if let Some(lang) = language {
        fields.push(("WARC-Identified-Content-Language", lang));
    }
    fields.push(("Content-Type", "text/plain"));
    derived_record("conversion", &fields, text.as_bytes())
}
