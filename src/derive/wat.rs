//! WAT: one `metadata` record of JSON per record of the WARC, in Common Crawl's layout:
//! `Container` (where the record is stored) and `Envelope` (its WARC header fields, and in
//! `Payload-Metadata` the HTTP message and the HTML head, links and anchor texts). Numbers are
//! strings, as in Common Crawl's files.

use serde_json::{json, Map, Value};

use crate::extract::{Document, HtmlLink};
use crate::record::builder::{derived_record, warc_date, WarcRecord};
use crate::record::sha1_digest;
use crate::warc::reader::{GzipMember, StoredRecord};

use super::message::HttpMessage;

/// Where the record is stored.
pub struct Container<'a> {
    /// The WARC file's name.
    pub filename: &'a str,
    /// The record's gzip member, for a gzipped file.
    pub member: Option<GzipMember>,
}

fn fields_object<'a>(fields: impl Iterator<Item = (&'a str, &'a str)>) -> Map<String, Value> {
    let mut map = Map::new();
    for (name, value) in fields {
        let value = Value::String(value.to_string());
        match map.get_mut(name) {
            // A repeated field keeps every value, in a list as Common Crawl's WAT keeps them
            // (`MetaData.accumulate`): joined with commas, two `Set-Cookie` values, whose dates
            // hold commas, could not be told apart.
            Some(Value::Array(values)) => values.push(value),
            Some(prev) => *prev = Value::Array(vec![prev.take(), value]),
            None => {
                map.insert(name.to_string(), value);
            }
        }
    }
    map
}

fn container(c: &Container, record: &StoredRecord) -> Value {
    let mut out = json!({
        "Filename": c.filename,
        "Compressed": c.member.is_some(),
        "Offset": record.offset.to_string(),
    });
    if let Some(m) = c.member {
        out["Gzip-Metadata"] = json!({
            "Header-Length": m.header_len.to_string(),
            "Deflate-Length": m.deflate_len.to_string(),
            "Footer-Length": "8",
            "Inflated-Length": m.inflated_len.to_string(),
            // Signed, as Common Crawl's (Java) files print it.
            "Inflated-CRC": (m.crc as i32).to_string(),
        });
    }
    out
}

fn link_json(link: &HtmlLink) -> Value {
    let mut out = Map::new();
    out.insert("path".into(), Value::String(link.path.into()));
    out.insert("url".into(), Value::String(link.url.clone()));
    if let Some(text) = &link.text {
        out.insert("text".into(), Value::String(text.clone()));
    }
    for (name, value) in &link.attrs {
        out.insert((*name).into(), Value::String(value.clone()));
    }
    Value::Object(out)
}

fn html_metadata(doc: &Document) -> Value {
    let mut head = Map::new();
    if let Some(title) = &doc.title {
        head.insert("Title".into(), Value::String(title.clone()));
    }
    if let Some(base) = &doc.base {
        head.insert("Base".into(), Value::String(base.clone()));
    }
    if !doc.metas.is_empty() {
        let metas = doc
            .metas
            .iter()
            .map(|attrs| Value::Object(fields_object(attrs.iter().map(|(n, v)| (&**n, &**v)))))
            .collect();
        head.insert("Metas".into(), Value::Array(metas));
    }
    if !doc.head_links.is_empty() {
        head.insert(
            "Link".into(),
            Value::Array(doc.head_links.iter().map(link_json).collect()),
        );
    }
    if !doc.scripts.is_empty() {
        head.insert(
            "Scripts".into(),
            Value::Array(doc.scripts.iter().map(link_json).collect()),
        );
    }
    let mut out = json!({ "Head": Value::Object(head) });
    if !doc.links.is_empty() {
        out["Links"] = Value::Array(doc.links.iter().map(link_json).collect());
    }
    out
}

fn http_metadata(message: &HttpMessage, response: bool, doc: Option<&Document>) -> Value {
    let [a, b, c] = &message.start;
    let start = if response {
        json!({ "Version": a, "Status": b, "Reason": c })
    } else {
        json!({ "Method": a, "Path": b, "Version": c })
    };
    let mut out = json!({
        "Headers-Length": message.head_len.to_string(),
        "Headers": Value::Object(fields_object(
            message.fields.iter().map(|(n, v)| (&**n, &**v)),
        )),
        "Entity-Length": message.entity.len().to_string(),
        "Entity-Digest": sha1_digest(&message.entity),
        "Entity-Trailing-Slop-Length": "0",
    });
    let start_key = if response {
        "Response-Message"
    } else {
        "Request-Message"
    };
    out[start_key] = start;
    if let Some(doc) = doc {
        out["HTML-Metadata"] = html_metadata(doc);
    }
    out
}

fn warc_fields_list(block: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(block)
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The JSON of one record: `message` is its parsed HTTP message (a request's, or a
/// response's or revisit's), `doc` the HTML read from a response.
pub fn wat_json(
    c: &Container,
    record: &StoredRecord,
    message: Option<&HttpMessage>,
    doc: Option<&Document>,
) -> Value {
    let warc_type = record.header("WARC-Type").unwrap_or("");
    let content_type = record.header("Content-Type").unwrap_or("");
    let mut payload = json!({ "Actual-Content-Type": content_type });
    match (warc_type, message) {
        ("request", Some(m)) => payload["HTTP-Request-Metadata"] = http_metadata(m, false, None),
        ("response" | "revisit", Some(m)) => {
            payload["HTTP-Response-Metadata"] = http_metadata(m, true, doc)
        }
        ("warcinfo", _) => {
            let fields = warc_fields_list(&record.block);
            payload["WARC-Info-Metadata"] =
                Value::Object(fields_object(fields.iter().map(|(n, v)| (&**n, &**v))));
        }
        ("metadata", _) if content_type.starts_with("application/warc-fields") => {
            let records: Vec<Value> = warc_fields_list(&record.block)
                .into_iter()
                .map(|(n, v)| json!({ "Name": n, "Value": v }))
                .collect();
            payload["WARC-Metadata-Metadata"] = json!({ "Metadata-Records": records });
        }
        _ => {}
    }
    json!({
        "Container": container(c, record),
        "Envelope": {
            "Format": "WARC",
            "WARC-Header-Length": record.header_len.to_string(),
            "Actual-Content-Length": record.block.len().to_string(),
            "Block-Digest": sha1_digest(&record.block),
            "WARC-Header-Metadata": Value::Object(fields_object(
                record.headers.iter().map(|(n, v)| (&**n, &**v)),
            )),
            "Payload-Metadata": payload,
        },
    })
}

/// The WAT `metadata` record for `record` of the WARC file `c.filename`.
pub fn wat_record(c: &Container, record: &StoredRecord, json: &Value) -> WarcRecord {
    let block = serde_json::to_vec(json).unwrap_or_default();
    let target = match record.target_uri() {
        Some(uri) => uri,
        None => c.filename,
    };
    let date = warc_date(std::time::SystemTime::now());
    let refers_to = record.header("WARC-Record-ID").unwrap_or("");
    let digest = sha1_digest(&block);
    let fields = [
        ("WARC-Target-URI", target),
        ("WARC-Date", date.as_str()),
        ("WARC-Refers-To", refers_to),
        ("WARC-Block-Digest", digest.as_str()),
        ("Content-Type", "application/json"),
    ];
    derived_record("metadata", &fields, &block)
}
