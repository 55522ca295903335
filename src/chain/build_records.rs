//! Stage 4, record building: the WARC records of one capture, serialized and compressed in the
//! fetching task so the single writer only appends. Request, then response (or a revisit when
//! the content-seen test found the payload), then a metadata record of the 1xx interim
//! responses if there were any, then the page's metadata record if asked for.
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
use crate::spool::Spooled;

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
    /// One gzip member per record, in file order (a long response's in its spool file).
    pub members: Vec<Spooled>,
    /// WARC-Record-ID of the response (or revisit) record.
    pub response_id: String,
}

/// The `dns:` records of name resolutions (`--dns-records`), one gzip member each.
pub fn build_dns_records(options: RecordOptions, lookups: &[DnsLookup]) -> Vec<Spooled> {
    lookups
        .iter()
        .map(|lookup| gzip_member(&dns_record(lookup).bytes, options.gzip_level).into())
        .collect()
}

/// Builds the records of `capture`, whose payload digest is `payload_digest`: a revisit of
/// `original` when the content-seen test found one. `page` is set for pages. A response with a
/// transfer coding other than `chunked` (`gzip, chunked`) states no payload digest, which WARC
/// 1.1 leaves optional: readers disagree on what its payload is (warcio removes no coding,
/// trawl and `warc_check.py` remove chunked, RFC 9112 all of them), and a stated digest one
/// of them computes differently is a record that fails its check. Nor is it a revisit, whose
/// profile is that digest (`content_seen` does not test it).
pub fn build_records(
    options: RecordOptions,
    capture: &Capture,
    payload_digest: &str,
    original: Option<&Original>,
    page: Option<PageFacts<'_>>,
) -> BuiltRecords {
    let payload_digest = (!capture.head.has_other_transfer_coding()).then_some(payload_digest);
    let form = match original {
        Some(original) => ResponseForm::Revisit {
            head_len: capture.head.len,
            original,
        },
        None => ResponseForm::Response,
    };
    let ex = &capture.exchange;
    let identified = capture.identified_type();
    let (request, response) = exchange_records_as(ex, payload_digest, identified, form);
    let level = options.gzip_level;
    let (response_id, response_member) = response.into_member(level, ex.response.spool_dir());
    let mut members = vec![gzip_member(&request.bytes, level).into(), response_member];
    // Interim responses, if any (the empty lines a server may send before its status line
    // make none).
    let interim = interim_fields(&ex.interim);
    if !interim.is_empty() {
        let meta = metadata_record(&ex.target_uri, ex.date, &response_id, &interim);
        members.push(gzip_member(&meta.bytes, level).into());
    }
    if let (true, Some(facts)) = (options.metadata_records, page) {
        let mut fields: Vec<(&str, String)> = vec![
            ("hopsFromSeed", facts.depth.to_string()),
            ("fetchTimeMs", facts.elapsed.as_millis().to_string()),
        ];
        fields.extend(facts.links.iter().map(|l| ("outlink", l.to_string())));
        let meta = metadata_record(&ex.target_uri, ex.date, &response_id, &fields);
        members.push(gzip_member(&meta.bytes, level).into());
    }
    BuiltRecords {
        members,
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
