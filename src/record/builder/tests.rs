//! Tests of `record/builder.rs`.

use super::*;
use crate::exchange::{TlsSession, Truncation};
use std::time::{Duration, UNIX_EPOCH};

/// Every value of the WARC header `name`, in order.
fn headers<'a>(record: &'a [u8], name: &str) -> Vec<&'a str> {
    let text = std::str::from_utf8(record).unwrap_or_default();
    let head = text.split("\r\n\r\n").next().unwrap_or_default();
    let prefix = format!("{name}: ");
    head.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .collect()
}

fn header<'a>(record: &'a [u8], name: &str) -> Option<&'a str> {
    headers(record, name).first().copied()
}

fn exchange() -> Exchange {
    Exchange {
        target_uri: "http://a.org/x".into(),
        ip: Some("127.0.0.2".parse().unwrap()),
        tls: None,
        date: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        request: b"GET /x HTTP/1.1\r\nHost: a.org\r\n\r\n".to_vec(),
        response: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n".to_vec().into(),
        truncated: Some(Truncation::Length),
        interim: Vec::new(),
    }
}

#[test]
fn a_response_becomes_one_member_of_its_record_small_or_streamed() {
    use std::io::Read;
    let small = exchange();
    let mut large = exchange();
    let mut response = b"HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n".to_vec();
    response.resize(response.len() + 2_000_000, b'x');
    large.response = response.into();
    let dir = tempfile::tempdir().unwrap();
    let spools = SpoolDir::new(dir.path());
    for (ex, streamed, spool) in [
        (&small, false, None),
        (&large, true, None),
        (&small, false, Some(&spools)),
        (&large, true, Some(&spools)),
    ] {
        let (_, response) = exchange_records_as(ex, None, None, ResponseForm::Response);
        assert_eq!(is_streamed(response.block), streamed);
        let record = response.to_record();
        let (id, member) = response.into_member(3, spool);
        assert_eq!(id, record.id);
        // Only a streamed member goes to a spool file, when there is a directory for it.
        assert_eq!(member.spool_dir().is_some(), streamed && spool.is_some());
        if !streamed {
            // The same bytes as compressing the joined record.
            assert_eq!(&member[..], gzip_member(&record.bytes, 3));
        }
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&member[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, record.bytes);
    }
}

#[test]
fn protocols_and_cipher_suite_on_both_records() {
    let mut ex = exchange();
    let (req, resp) = exchange_records(&ex);
    for r in [&req.bytes, &resp.bytes] {
        assert_eq!(headers(r, "WARC-Protocol"), ["http/1.1"]);
        assert!(headers(r, "WARC-Cipher-Suite").is_empty());
    }
    ex.tls = Some(TlsSession {
        protocol: "tls/1.3",
        cipher_suite: "TLS_AES_256_GCM_SHA384",
    });
    ex.response = b"HTTP/1.0 200 OK\r\n\r\nold".to_vec().into();
    let (req, resp) = exchange_records(&ex);
    for r in [&req.bytes, &resp.bytes] {
        assert_eq!(headers(r, "WARC-Protocol"), ["http/1.0", "tls/1.3"]);
        assert_eq!(headers(r, "WARC-Cipher-Suite"), ["TLS_AES_256_GCM_SHA384"]);
    }
    // A status line in lower case, read as it is (`http_message::status_line`).
    ex.response = b"http/1.0 200 OK\r\n\r\nold".to_vec().into();
    let (_, resp) = exchange_records(&ex);
    assert_eq!(
        headers(&resp.bytes, "WARC-Protocol"),
        ["http/1.0", "tls/1.3"]
    );
}

#[test]
fn response_record_framing_and_digests() {
    let ex = exchange();
    let (req, resp) = exchange_records(&ex);
    let bytes = &resp.bytes;
    assert!(bytes.starts_with(b"WARC/1.1\r\nWARC-Type: response\r\n"));
    assert!(bytes.ends_with(b"\r\n\r\n"));
    assert_eq!(header(bytes, "WARC-Date"), Some("2023-11-14T22:13:20Z"));
    assert_eq!(header(bytes, "WARC-Target-URI"), Some("http://a.org/x"));
    assert_eq!(header(bytes, "WARC-IP-Address"), Some("127.0.0.2"));
    assert_eq!(header(bytes, "WARC-Truncated"), Some("length"));
    assert_eq!(header(bytes, "WARC-Concurrent-To"), Some(req.id.as_str()));
    assert_eq!(
        header(&req.bytes, "WARC-Concurrent-To"),
        Some(resp.id.as_str())
    );
    // Python: base64.b32encode(hashlib.sha1(b"hello world").digest())
    assert_eq!(
        header(bytes, "WARC-Payload-Digest"),
        Some("sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN")
    );
    let len: usize = header(bytes, "Content-Length").unwrap().parse().unwrap();
    assert_eq!(len, ex.response.len());
    let block_start = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert_eq!(&bytes[block_start..block_start + len], &ex.response[..]);
    assert_eq!(&bytes[block_start + len..], b"\r\n\r\n");
    assert_eq!(
        header(bytes, "WARC-Block-Digest").unwrap(),
        sha1_digest(&ex.response)
    );
    assert!(resp.id.starts_with("<urn:uuid:") && resp.id.ends_with('>'));
}

#[test]
fn revisit_keeps_the_head_and_refers_to_the_original() {
    let mut ex = exchange();
    ex.truncated = None;
    let head_len = crate::http_message::parse_response_head(&ex.response)
        .unwrap()
        .len;
    let original = Original {
        target_uri: "http://a.org/first".into(),
        date: "2023-11-14T22:00:00Z".into(),
        record_id: Some("<urn:uuid:1>".into()),
        body_len: None,
        stored: None,
    };
    let digest = sha1_digest(b"hello world");
    let (_, rev) = exchange_records_as(
        &ex,
        Some(&digest),
        None,
        ResponseForm::Revisit {
            head_len,
            original: &original,
        },
    );
    let b = &rev.to_record().bytes;
    assert!(b.starts_with(b"WARC/1.1\r\nWARC-Type: revisit\r\n"));
    assert_eq!(header(b, "WARC-Profile"), Some(REVISIT_PROFILE));
    assert_eq!(
        header(b, "WARC-Refers-To-Target-URI"),
        Some("http://a.org/first")
    );
    assert_eq!(
        header(b, "WARC-Refers-To-Date"),
        Some("2023-11-14T22:00:00Z")
    );
    assert_eq!(header(b, "WARC-Refers-To"), Some("<urn:uuid:1>"));
    assert_eq!(header(b, "WARC-Payload-Digest"), Some(digest.as_str()));
    let len: usize = header(b, "Content-Length").unwrap().parse().unwrap();
    assert_eq!(len, head_len);
    assert_eq!(
        header(b, "WARC-Block-Digest").unwrap(),
        sha1_digest(&ex.response[..head_len])
    );
}

#[test]
fn metadata_record_lists_fields() {
    let rec = metadata_record(
        "http://a.org/",
        UNIX_EPOCH,
        "<urn:uuid:9>",
        &[("outlink", "http://a.org/x".into())],
    );
    assert!(rec
        .bytes
        .starts_with(b"WARC/1.1\r\nWARC-Type: metadata\r\n"));
    assert_eq!(
        header(&rec.bytes, "WARC-Concurrent-To"),
        Some("<urn:uuid:9>")
    );
    assert!(String::from_utf8_lossy(&rec.bytes).contains("\r\n\r\noutlink: http://a.org/x\r\n"));
}

#[test]
fn warcinfo_is_warc_fields() {
    let info = vec![("software".to_string(), "trawl/0.1\nx".to_string())];
    let rec = warcinfo_record("t-1.warc.gz", UNIX_EPOCH, &info);
    assert_eq!(
        header(&rec.bytes, "Content-Type"),
        Some("application/warc-fields")
    );
    assert_eq!(header(&rec.bytes, "WARC-Filename"), Some("t-1.warc.gz"));
    assert!(String::from_utf8_lossy(&rec.bytes).contains("software: trawl/0.1 x\r\n"));
    // A block digest, which FastWARC needs to keep the record when it verifies digests.
    assert_eq!(
        header(&rec.bytes, "WARC-Block-Digest"),
        Some(sha1_digest(b"software: trawl/0.1 x\r\n").as_str())
    );
}
