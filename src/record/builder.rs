//! Builders for the record types trawl writes: warcinfo, request, response, revisit and
//! metadata.
//!
//! A record is serialized once here (header fields in a fixed, spec-ordered sequence), then
//! compressed by [`super::gzip_member`]. Content-Length is always the exact block length.

use std::io::BufWriter;
use std::time::SystemTime;

use crate::exchange::Exchange;

use super::digest::{payload_of_response, sha1_digest, sha1_digest_pieces};
use super::gzip::{gzip_member, gzip_member_streamed, gzip_member_streamed_to, STREAMED_RECORD};
use crate::spool::{SpoolDir, Spooled};

/// One serialized, uncompressed WARC record.
#[derive(Debug, Clone)]
pub struct WarcRecord {
    /// The WARC-Record-ID, including angle brackets.
    pub id: String,
    /// The full record: version line, header fields, block, and the closing CRLF CRLF.
    pub bytes: Vec<u8>,
}

/// Generates WARC-Record-IDs.
pub struct RecordIds;

impl RecordIds {
    /// A fresh `<urn:uuid:...>` identifier.
    pub fn next() -> String {
        format!("<urn:uuid:{}>", uuid::Uuid::new_v4())
    }
}

/// Formats a time as a WARC-Date: UTC, ISO 8601, whole seconds.
pub fn warc_date(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

/// A WARC/1.1 record of `kind` with these header fields and block.
pub(super) fn serialize(
    kind: &'static str,
    id: String,
    fields: &[(&str, &str)],
    block: &[u8],
) -> WarcRecord {
    serialize_as(b"WARC/1.1", kind, id, fields, block)
}

/// A record of a derivative file (WET, WAT): WARC/1.0, as Common Crawl writes them and as
/// their readers expect; `fields` follow WARC-Type and WARC-Record-ID.
pub fn derived_record(kind: &'static str, fields: &[(&str, &str)], block: &[u8]) -> WarcRecord {
    serialize_as(b"WARC/1.0", kind, RecordIds::next(), fields, block)
}

fn serialize_as(
    version: &[u8],
    kind: &'static str,
    id: String,
    fields: &[(&str, &str)],
    block: &[u8],
) -> WarcRecord {
    let mut bytes = record_head(version, kind, &id, fields, block.len(), block.len());
    bytes.extend_from_slice(block);
    bytes.extend_from_slice(RECORD_END);
    WarcRecord { id, bytes }
}

/// What closes every record after its block.
const RECORD_END: &[u8] = b"\r\n\r\n";
/// Bytes gathered before each write of a member to its spool file.
const SPOOL_WRITES: usize = 256 << 10;

/// A record's head: the version line and header fields, Content-Length (`block_len`) and the
/// blank line; its buffer has room for `room` more bytes.
fn record_head(
    version: &[u8],
    kind: &'static str,
    id: &str,
    fields: &[(&str, &str)],
    block_len: usize,
    room: usize,
) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(room + 512);
    bytes.extend_from_slice(version);
    bytes.extend_from_slice(b"\r\n");
    bytes.extend_from_slice(b"WARC-Type: ");
    bytes.extend_from_slice(kind.as_bytes());
    bytes.extend_from_slice(b"\r\nWARC-Record-ID: ");
    bytes.extend_from_slice(id.as_bytes());
    bytes.extend_from_slice(b"\r\n");
    for (name, value) in fields {
        bytes.extend_from_slice(name.as_bytes());
        bytes.extend_from_slice(b": ");
        bytes.extend_from_slice(value.as_bytes());
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(b"Content-Length: ");
    bytes.extend_from_slice(block_len.to_string().as_bytes());
    bytes.extend_from_slice(b"\r\n\r\n");
    bytes
}

/// A record whose block stays where it is (the exchange's recorded bytes): its head is built,
/// its block borrowed, so a large response is not copied to be compressed.
#[derive(Debug)]
pub struct BorrowedRecord<'a> {
    /// The WARC-Record-ID, including angle brackets.
    pub id: String,
    /// Version line, header fields and the blank line.
    head: Vec<u8>,
    /// The block.
    block: &'a [u8],
    /// What the block is the whole of, when it is a response's recorded bytes: read a window
    /// at a time where it is long (`Spooled::windows`).
    whole: Option<&'a Spooled>,
}

impl BorrowedRecord<'_> {
    /// The record as one buffer.
    pub fn to_record(&self) -> WarcRecord {
        WarcRecord {
            id: self.id.clone(),
            bytes: [&self.head, self.block, RECORD_END].concat(),
        }
    }

    /// The record as one gzip member, with its id. A record under [`STREAMED_RECORD`] bytes
    /// is completed in its head's buffer (made with room for it) and compressed in one call,
    /// as every other record is; a larger one is compressed as a stream from its head and
    /// the borrowed block, which is never copied, into a spool file in `spool` when given
    /// (in memory when none can be made there).
    pub fn into_member(self, level: u32, spool: Option<&SpoolDir>) -> (String, Spooled) {
        let BorrowedRecord {
            id,
            mut head,
            block,
            whole,
        } = self;
        if is_streamed(block) {
            if let (Some(dir), Some(whole)) = (spool, whole) {
                let parts = std::iter::once(&head[..])
                    .chain(whole.windows(0..whole.len()))
                    .chain([RECORD_END]);
                if let Some(member) = spooled_member(parts, level, dir) {
                    return (id, member);
                }
            }
            let parts = [&head[..], block, RECORD_END];
            return (id, gzip_member_streamed(&parts, level).into());
        }
        head.extend_from_slice(block);
        head.extend_from_slice(RECORD_END);
        (id, gzip_member(&head, level).into())
    }
}

/// The gzip member of the record made of `parts`, written to a spool file in `dir`; `None`
/// when it cannot be (a full disk).
fn spooled_member<'p>(
    parts: impl IntoIterator<Item = &'p [u8]>,
    level: u32,
    dir: &SpoolDir,
) -> Option<Spooled> {
    let spool = BufWriter::with_capacity(SPOOL_WRITES, dir.create().ok()?);
    let spool = gzip_member_streamed_to(parts, level, spool).ok()?;
    spool.into_inner().ok()?.finish().ok()
}

/// True when a record with `block` is compressed as a stream ([`STREAMED_RECORD`]; its head
/// is a few hundred bytes).
fn is_streamed(block: &[u8]) -> bool {
    block.len() >= STREAMED_RECORD
}

/// The capture a revisit record refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    /// Its WARC-Target-URI.
    pub target_uri: String,
    /// Its WARC-Date.
    pub date: String,
    /// Its WARC-Record-ID, when known (not from an external CDXJ index).
    pub record_id: Option<String>,
    /// Its body length as recorded, when known (what a revisit of it saves).
    pub body_len: Option<u64>,
    /// The WARC file on this machine that holds it and its record's offset there, when it was
    /// read from one at start-up: replay reads its payload for a revisit's links.
    pub stored: Option<(std::sync::Arc<std::path::Path>, u64)>,
}

/// WARC-Profile of identical-payload-digest revisits in WARC/1.1.
pub const REVISIT_PROFILE: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// How the response side of an exchange is recorded.
#[derive(Debug, Clone, Copy)]
pub enum ResponseForm<'a> {
    /// A full `response` record.
    Response,
    /// A `revisit` record: the HTTP head of `ex.response` (its first `head_len` bytes) only,
    /// referring to `original`, which holds the identical payload.
    Revisit {
        /// Length of the HTTP head.
        head_len: usize,
        /// The capture with the same payload.
        original: &'a Original,
    },
}

/// Builds the request and response records of one exchange, linked by WARC-Concurrent-To and
/// sharing one WARC-Date; computes the payload digest.
pub fn exchange_records(ex: &Exchange) -> (WarcRecord, WarcRecord) {
    let payload_digest = payload_of_response(&ex.response).map(|p| sha1_digest(&p));
    let (request, response) =
        exchange_records_as(ex, payload_digest.as_deref(), None, ResponseForm::Response);
    (request, response.to_record())
}

/// Builds the request record and a response or revisit record, with a payload digest the
/// caller already computed (it is needed for the content-seen test anyway) and, for a payload
/// whose head gave no usable type, the type its bytes identify (`WARC-Identified-Payload-Type`,
/// WARC 1.1 section 5.17). The response's block is borrowed from `ex`.
pub fn exchange_records_as<'a>(
    ex: &'a Exchange,
    payload_digest: Option<&str>,
    identified: Option<&str>,
    form: ResponseForm<'_>,
) -> (WarcRecord, BorrowedRecord<'a>) {
    let date = warc_date(ex.date);
    let request_id = RecordIds::next();
    let response_id = RecordIds::next();
    let ip = ex.ip.map(|ip| ip.to_string());

    let (kind, block, whole) = match form {
        ResponseForm::Response => ("response", &ex.response[..], Some(&ex.response)),
        ResponseForm::Revisit { head_len, .. } => (
            "revisit",
            &ex.response[..head_len.min(ex.response.len())],
            None,
        ),
    };
    let block_digest = match whole {
        Some(whole) => sha1_digest_pieces(whole.windows(0..whole.len())),
        None => sha1_digest(block),
    };
    let mut fields: Vec<(&str, &str)> =
        vec![("WARC-Date", &date), ("WARC-Target-URI", &ex.target_uri)];
    push_connection(&mut fields, ip.as_deref(), ex);
    fields.push(("WARC-Concurrent-To", &request_id));
    if let ResponseForm::Revisit { original, .. } = form {
        fields.push(("WARC-Profile", REVISIT_PROFILE));
        fields.push(("WARC-Refers-To-Target-URI", &original.target_uri));
        fields.push(("WARC-Refers-To-Date", &original.date));
        if let Some(id) = &original.record_id {
            fields.push(("WARC-Refers-To", id));
        }
    }
    fields.push(("WARC-Block-Digest", &block_digest));
    if let Some(pd) = payload_digest {
        fields.push(("WARC-Payload-Digest", pd));
    }
    if let (Some(identified), ResponseForm::Response) = (identified, form) {
        fields.push(("WARC-Identified-Payload-Type", identified));
    }
    if let (Some(t), ResponseForm::Response) = (ex.truncated, form) {
        fields.push(("WARC-Truncated", t.as_warc_value()));
    }
    fields.push(("Content-Type", "application/http;msgtype=response"));
    let response = BorrowedRecord {
        head: record_head(
            b"WARC/1.1",
            kind,
            &response_id,
            &fields,
            block.len(),
            // Room to complete the record in place, unless it is compressed as a stream.
            if is_streamed(block) {
                0
            } else {
                block.len() + RECORD_END.len()
            },
        ),
        id: response_id.clone(),
        block,
        whole,
    };

    let request_digest = sha1_digest(&ex.request);
    let mut fields: Vec<(&str, &str)> =
        vec![("WARC-Date", &date), ("WARC-Target-URI", &ex.target_uri)];
    push_connection(&mut fields, ip.as_deref(), ex);
    fields.push(("WARC-Concurrent-To", &response_id));
    fields.push(("WARC-Block-Digest", &request_digest));
    fields.push(("Content-Type", "application/http;msgtype=request"));
    let request = serialize("request", request_id, &fields, &ex.request);
    (request, response)
}

/// What an exchange went over: `WARC-IP-Address`, and the protocols as the IIPC's
/// WARC-Protocol proposal and Common Crawl write them: one `WARC-Protocol` per layer (the HTTP
/// version as its ALPN name, then `tls/1.x` for https) and the TLS `WARC-Cipher-Suite`.
fn push_connection<'a>(fields: &mut Vec<(&str, &'a str)>, ip: Option<&'a str>, ex: &'a Exchange) {
    if let Some(ip) = ip {
        fields.push(("WARC-IP-Address", ip));
    }
    // The name in any case: a status line is read so too (`http_message::status_line`).
    let http = if ex
        .response
        .get(..9)
        .is_some_and(|v| v.eq_ignore_ascii_case(b"HTTP/1.0 "))
    {
        "http/1.0"
    } else {
        "http/1.1"
    };
    fields.push(("WARC-Protocol", http));
    if let Some(tls) = ex.tls {
        fields.push(("WARC-Protocol", tls.protocol));
        fields.push(("WARC-Cipher-Suite", tls.cipher_suite));
    }
}

/// Builds a `metadata` record about a capture (outlinks, fetch timing), as Heritrix does:
/// `application/warc-fields`, linked to the response by WARC-Concurrent-To.
pub fn metadata_record(
    target_uri: &str,
    date: SystemTime,
    concurrent_to: &str,
    fields: &[(&str, String)],
) -> WarcRecord {
    let block = warc_fields(fields.iter().map(|(k, v)| (*k, v.as_str())));
    let date = warc_date(date);
    let headers = [
        ("WARC-Date", date.as_str()),
        ("WARC-Target-URI", target_uri),
        ("WARC-Concurrent-To", concurrent_to),
        ("WARC-Block-Digest", &sha1_digest(block.as_bytes())),
        ("Content-Type", "application/warc-fields"),
    ];
    serialize("metadata", RecordIds::next(), &headers, block.as_bytes())
}

/// Builds the warcinfo record that opens a WARC file.
pub fn warcinfo_record(filename: &str, date: SystemTime, info: &[(String, String)]) -> WarcRecord {
    let block = warc_fields(info.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let date = warc_date(date);
    // Optional in WARC 1.1, but FastWARC, asked to verify digests, leaves out a record that
    // has none: the file's first record would be lost to its readers.
    let digest = sha1_digest(block.as_bytes());
    let fields = [
        ("WARC-Date", date.as_str()),
        ("WARC-Filename", filename),
        ("WARC-Block-Digest", digest.as_str()),
        ("Content-Type", "application/warc-fields"),
    ];
    serialize("warcinfo", RecordIds::next(), &fields, block.as_bytes())
}

/// An `application/warc-fields` block: `name: value` lines; values must not contain line
/// breaks, so control characters become spaces.
pub fn warc_fields<'a>(fields: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let mut block = String::new();
    for (k, v) in fields {
        block.push_str(k);
        block.push_str(": ");
        block.extend(v.chars().map(|c| if c.is_control() { ' ' } else { c }));
        block.push_str("\r\n");
    }
    block
}

#[cfg(test)]
mod tests;
