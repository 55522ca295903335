//! Fuzz target: reading a recorded HTTP response and framing it as WARC records. Invariants:
//! never panics; the record's Content-Length equals its block; the record ends with CRLF CRLF;
//! the payload digest, when present, is the digest of the de-chunked body; a message length,
//! when found, covers the head (and, for chunked bodies, lies within the bytes); the search
//! for a chunked body's end as it arrives agrees with de-chunking.
#![no_main]

use std::time::UNIX_EPOCH;

use libfuzzer_sys::fuzz_target;
use trawl::exchange::Exchange;
use trawl::http_message::{chunked, decode_content, message_length, parse_response_head};
use trawl::record::{exchange_records, payload_of_response, sha1_digest};

fuzz_target!(|data: &[u8]| {
    if let Some(head) = parse_response_head(data) {
        if let Some(len) = message_length(&head, data) {
            assert!(len >= head.len);
            if head.is_chunked() {
                assert!(len <= data.len());
            }
        }
        let payload = payload_of_response(data).expect("head parsed");
        let encoding = head.header_str("content-encoding");
        let _ = decode_content(encoding.as_deref(), &payload, 1 << 20);
    }
    let ex = Exchange {
        target_uri: "http://example.com/".into(),
        ip: None,
        tls: None,
        date: UNIX_EPOCH,
        request: b"GET / HTTP/1.1\r\n\r\n".to_vec(),
        response: data.to_vec().into(),
        truncated: None,
        interim: Vec::new(),
    };
    let (_, resp) = exchange_records(&ex);
    let bytes = &resp.bytes;
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = std::str::from_utf8(&bytes[..head_end]).unwrap();
    let cl: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(cl, data.len());
    assert_eq!(&bytes[head_end..head_end + cl], data);
    assert_eq!(&bytes[head_end + cl..], b"\r\n\r\n");
    if let Some(pd) = head.lines().find_map(|l| l.strip_prefix("WARC-Payload-Digest: ")) {
        assert_eq!(pd, sha1_digest(&payload_of_response(data).unwrap()));
    }
    chunked_progress_agrees(data);
});

/// The search for a chunked body's end as it arrives finds the end de-chunking finds, and
/// resumed where it stopped on a prefix reads the whole as it would from the start.
fn chunked_progress_agrees(body: &[u8]) {
    let whole = chunked::progress(body, 0);
    let end = chunked::dechunk(body).end;
    match whole {
        chunked::Progress::Ended(e) => assert_eq!(end, Some(e)),
        _ => assert_eq!(end, None),
    }
    let cut = body.first().map_or(0, |&b| b as usize % (body.len() + 1));
    if let chunked::Progress::Arriving(from) = chunked::progress(&body[..cut], 0) {
        assert_eq!(chunked::progress(body, from), whole);
    }
}
