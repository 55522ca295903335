//! Stage 4, record building: the WARC records of one capture, serialized in the fetching task.
//! Request, then response (or a revisit when the content-seen test found the payload), then a
//! metadata record of the 1xx interim responses if there were any, then the page's metadata
//! record if asked for.
//!
//! The records are left uncompressed unless one of them is large (a response of
//! [`STREAMED_RECORD`](crate::record::STREAMED_RECORD) bytes or more, compressed here as a stream from the recorded bytes): the
//! crawl then has them compressed by the writer thread while it keeps up, back to back, or
//! here when it does not ([`BuiltRecords::into_members`], `warc/deferral.rs`).
//!
//! The response record holds the final response only: warcio, pywb and cdxj-indexer read the
//! first status line of the block as the response, so interim heads there would replace the
//! real status and headers. The interim heads are kept, line by line, in an
//! `application/warc-fields` metadata record, which those readers skip (docs/DESIGN.md).

use std::time::Duration;

use url::Url;

use crate::capture::Capture;
use crate::exchange::DnsLookup;
use crate::record::{
    dns_record, exchange_records_as, gzip_member, metadata_record, Original, ResponseForm,
};

/// The stage's options.
#[derive(Debug, Clone, Copy)]
pub struct RecordOptions {
    /// gzip level of each record's member.
    pub gzip_level: u32,
    /// Write a metadata record (outlinks, fetch time) per page.
    pub metadata_records: bool,
}

/// What a page's metadata record says.
#[derive(Debug)]
pub struct PageFacts<'a> {
    /// Link hops from a seed.
    pub depth: u32,
    /// Fetch time.
    pub elapsed: Duration,
    /// The page's outlinks.
    pub links: &'a [Url],
}

/// The records of one capture.
#[derive(Debug)]
pub struct BuiltRecords {
    /// The records in file order: each a whole uncompressed record when `raw`, else each one
    /// gzip member.
    pub records: Vec<Vec<u8>>,
    /// Whether `records` are uncompressed.
    pub raw: bool,
    /// WARC-Record-ID of the response (or revisit) record.
    pub response_id: String,
}

impl BuiltRecords {
    /// Bytes of `records` as they are.
    pub fn bytes(&self) -> usize {
        self.records.iter().map(Vec::len).sum()
    }

    /// The records as gzip members at `level`, compressed here if they are raw.
    pub fn into_members(self, level: u32) -> Vec<Vec<u8>> {
        match self.raw {
            true => self
                .records
                .iter()
                .map(|record| gzip_member(record, level))
                .collect(),
            false => self.records,
        }
    }
}

/// The `dns:` records of name resolutions (`--dns-records`), one gzip member each.
pub fn build_dns_records(options: RecordOptions, lookups: &[DnsLookup]) -> Vec<Vec<u8>> {
    lookups
        .iter()
        .map(|lookup| gzip_member(&dns_record(lookup).bytes, options.gzip_level))
        .collect()
}

/// Builds the records of `capture`, whose payload digest is `payload_digest`: a revisit of
/// `original` when the content-seen test found one. `page` is set for pages.
pub fn build_records(
    options: RecordOptions,
    capture: &Capture,
    payload_digest: &str,
    original: Option<&Original>,
    page: Option<PageFacts<'_>>,
) -> BuiltRecords {
    let form = match original {
        Some(original) => ResponseForm::Revisit {
            head_len: capture.head.len,
            original,
        },
        None => ResponseForm::Response,
    };
    let ex = &capture.exchange;
    let (request, response) = exchange_records_as(ex, Some(payload_digest), form);
    let level = options.gzip_level;
    // Each record as it is, or every one compressed if the response is too large to be
    // copied whole (a record's text is compressed, not the whole exchange's, and the small
    // ones would not be worth a trip to the writer on their own).
    let (raw, response_id, response_record) = match response.into_bytes() {
        Ok((id, record)) => (true, id, record),
        Err(streamed) => {
            let (id, member) = streamed.into_member(level);
            (false, id, member)
        }
    };
    let finish = |record: Vec<u8>| match raw {
        true => record,
        false => gzip_member(&record, level),
    };
    let mut records = vec![finish(request.bytes), response_record];
    if !ex.interim.is_empty() {
        let meta = metadata_record(
            &ex.target_uri,
            ex.date,
            &response_id,
            &interim_fields(&ex.interim),
        );
        records.push(finish(meta.bytes));
    }
    if let (true, Some(facts)) = (options.metadata_records, page) {
        let mut fields: Vec<(&str, String)> = vec![
            ("hopsFromSeed", facts.depth.to_string()),
            ("fetchTimeMs", facts.elapsed.as_millis().to_string()),
        ];
        fields.extend(facts.links.iter().map(|l| ("outlink", l.to_string())));
        let meta = metadata_record(&ex.target_uri, ex.date, &response_id, &fields);
        records.push(finish(meta.bytes));
    }
    BuiltRecords {
        records,
        raw,
        response_id,
    }
}

/// The interim responses as warc-fields: each status line as `interimResponse`, each header
/// line after it as `interimHeader`, in received order.
fn interim_fields(interim: &[u8]) -> Vec<(&'static str, String)> {
    String::from_utf8_lossy(interim)
        .split('\n')
        .map(|line| line.trim_end_matches('\r'))
        .filter(|line| !line.is_empty())
        .map(|line| {
            let name = if line.starts_with("HTTP/") {
                "interimResponse"
            } else {
                "interimHeader"
            };
            (name, line.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interim_heads_become_fields() {
        let fields = interim_fields(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n");
        assert_eq!(
            fields,
            [
                ("interimResponse", "HTTP/1.1 100 Continue".to_string()),
                ("interimResponse", "HTTP/1.1 103 Early Hints".to_string()),
                ("interimHeader", "Link: </s.css>; rel=preload".to_string()),
            ]
        );
    }
}
