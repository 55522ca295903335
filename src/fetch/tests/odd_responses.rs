//! Tests of `fetch/mod.rs` with responses as odd servers send them: read whole however the
//! server's writes split them, and read on where hyper refuses a length or a chunk line.

use super::*;

#[tokio::test]
async fn a_content_length_that_is_no_number_leaves_the_body_to_the_close() {
    let dir = tempfile::tempdir().unwrap();
    let f = spooling_fetcher(dir.path());
    let long: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut spooled = b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n".to_vec();
    spooled.extend_from_slice(&long);
    let cases: [&[u8]; 6] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n<p>whole page</p>",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length:\r\n\r\nall of it",
        b"HTTP/1.0 404 Not Found\r\nContent-Length: -1, x\r\n\r\n",
        spooled.leak(),
        // No body, whatever the head says (hyper reads no length for a 304): done at the head,
        // though the server does not close, and the connection is kept.
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: x\r\n\r\n",
        // A sign: no number to hyper, though Rust's integer parsing takes it.
        b"HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nsigned, read to the close",
    ];
    for reply in cases {
        let hold = match reply.starts_with(b"HTTP/1.1 304") {
            true => Duration::from_secs(5),
            false => Duration::ZERO,
        };
        let addr = replying_then(reply, hold).await;
        let url = Url::parse(&format!("http://{addr}/a")).unwrap();
        let (result, conn) = f
            .fetch(&url, None, None, |_, _| BodyPlan::Read {
                max_body: 1 << 30,
            })
            .await;
        let fetched = result.unwrap_or_else(|e| panic!("{e}"));
        let response = &fetched.capture.exchange.response;
        let received = [&fetched.capture.exchange.interim[..], &response[..]].concat();
        assert!(received == reply, "exactly the response, to the close");
        assert_eq!(fetched.capture.exchange.truncated, None);
        assert_eq!(fetched.body_fault, None);
        assert_eq!(conn.is_some(), reply.starts_with(b"HTTP/1.1 304"));
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Capped like any body.
    let addr = replying_then(cases[3], Duration::ZERO).await;
    let url = Url::parse(&format!("http://{addr}/a")).unwrap();
    let plan = |_: &ResponseHead, _: Option<&'static str>| BodyPlan::Read { max_body: 1000 };
    let (result, _) = f.fetch(&url, None, None, plan).await;
    let capture = result.unwrap().capture;
    assert_eq!(capture.exchange.truncated, Some(Truncation::Length));
    assert_eq!(capture.payload().len(), 1000);
    // A server that keeps the connection open: the body is what came before the read timeout.
    let open = b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n<p>so far</p>";
    let addr = replying(open).await;
    let url = Url::parse(&format!("http://{addr}/a")).unwrap();
    let (result, _) = get(&local_fetcher(), &url, None).await;
    let fetched = result.unwrap();
    assert_eq!(&fetched.capture.exchange.response[..], &open[..]);
    assert_eq!(fetched.capture.exchange.truncated, Some(Truncation::Time));
    // Lengths that are numbers and differ still refuse the head, as does a number beside
    // one that is not.
    for reply in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"[..],
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: x\r\n\r\nabc",
    ] {
        let addr = replying_then(reply, Duration::ZERO).await;
        let url = Url::parse(&format!("http://{addr}/a")).unwrap();
        let (result, _) = get(&local_fetcher(), &url, None).await;
        let kind = result.map(|_| ()).unwrap_err().kind();
        assert_eq!(kind, FaultKind::InvalidContentLength);
    }
}

/// A head's CR as the last byte of one read, the byte after it in the next: held back until
/// that byte says whether it ends a line, so that a CR that ends none is a space to hyper, as
/// it is inside one read (a line's CRLF split between reads stays a line end).
#[tokio::test]
async fn a_heads_cr_that_ends_a_read_waits_for_the_byte_after_it() {
    let cases: [[&'static [u8]; 2]; 3] = [
        [
            b"HTTP/1.1 200 OK\r\nX-A: a\r",
            b"b\r\nContent-Length: 2\r\n\r\nok",
        ],
        [
            b"HTTP/1.1 200 OK\r\nX-A: a\r",
            b"\r\nContent-Length: 2\r\n\r\nok",
        ],
        [b"HTTP/1.1 200 OK\r", b"\nContent-Length: 2\r\n\r\nok"],
    ];
    for parts in cases {
        let addr = replying_in(parts.to_vec(), Duration::from_millis(150)).await;
        let url = Url::parse(&format!("http://{addr}/a")).unwrap();
        let (result, _) = get(&patient_fetcher(), &url, None).await;
        let fetched = result.unwrap_or_else(|e| panic!("{:?}: {e}", parts[0]));
        let response = &fetched.capture.exchange.response;
        assert_eq!(&response[..], &parts.concat()[..], "as received");
        assert_eq!(fetched.capture.payload(), b"ok");
    }
}

/// A loopback server answering one request with `parts`, one write each and `gap` after each
/// (each its own read for a client that keeps up); it closes the connection after.
async fn replying_in(parts: Vec<&'static [u8]>, gap: Duration) -> std::net::SocketAddr {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let _ = sock.set_nodelay(true);
        if !read_request_head(&mut sock).await {
            return;
        }
        for part in parts {
            if sock.write_all(part).await.is_err() {
                return;
            }
            tokio::time::sleep(gap).await;
        }
    });
    addr
}

/// Every form of response trawl reads, sent a byte at a time, is read as it is when it
/// arrives whole: where a server's writes split a head decides nothing (the rewrites hyper is
/// handed, of a status line, an HTTP/1.0 version, a CR that ends no line, look at bytes that
/// may not have arrived yet).
#[tokio::test]
async fn every_head_reads_the_same_a_byte_at_a_time() {
    let cases: [&'static [u8]; 18] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        b"http/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1  200  OK\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nX-A: ab\r\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        b"\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\nok",
        b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=1\r\nok\r\n0\r\nX-T: 1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\n0\n\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\n\r\nok",
        b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 2\r\n\r\nok",
    ];
    for reply in cases {
        let mut seen = Vec::new();
        for drip in [false, true] {
            let parts = match drip {
                true => reply.chunks(1).collect(),
                false => vec![reply],
            };
            let addr = replying_in(parts, Duration::from_millis(1)).await;
            let url = Url::parse(&format!("http://{addr}/a")).unwrap();
            let (result, _) = get(&patient_fetcher(), &url, None).await;
            let shown = String::from_utf8_lossy(reply);
            let fetched = result.unwrap_or_else(|e| panic!("{shown:?}, drip {drip}: {e}"));
            let exchange = &fetched.capture.exchange;
            let received = [&exchange.interim[..], &exchange.response[..]].concat();
            let payload = fetched.capture.payload().to_vec();
            seen.push((exchange.truncated, received, payload));
        }
        assert!(seen[0] == seen[1], "{:?}", String::from_utf8_lossy(reply));
        assert_eq!(seen[0].2, b"ok");
        // Bare LF chunk lines too: hyper refuses them, and the fetch reads on as trawl frames
        // chunks.
        assert_eq!(seen[0].0, None);
    }
}

/// Chunk lines that end in a bare LF, which hyper refuses where it meets the first: the fetch
/// reads on from the socket as trawl frames chunks (as Chromium, curl, wget and warcio read them),
/// to the last chunk, without waiting for a close; a body that closes before its last chunk,
/// or whose next size line is no size, is still cut.
#[tokio::test]
async fn a_chunked_body_hyper_refuses_part_way_is_read_on_to_its_last_chunk() {
    let head: &'static [u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    // Kept open after the last chunk: the end is found in the bytes, not at a close.
    let whole: &'static [u8] = b"2\r\nok\r\n3\nabc\n4\r\ndefg\n0\nX-T: 1\n\nGARBAGE";
    let addr = replying(&[head, whole].concat().leak()[..]).await;
    let url = Url::parse(&format!("http://{addr}/a")).unwrap();
    let (result, conn) = get(&patient_fetcher(), &url, None).await;
    let fetched = result.unwrap();
    let exchange = &fetched.capture.exchange;
    assert_eq!(exchange.truncated, None);
    assert_eq!(fetched.body_fault, None);
    let sent = [head, &whole[..whole.len() - 7]].concat();
    assert_eq!(
        &exchange.response[..],
        &sent[..],
        "to the end of the message"
    );
    assert_eq!(fetched.capture.payload(), b"okabcdefg");
    assert!(conn.is_none(), "a connection hyper gave up on is not kept");
    // Cut short: closed before the last chunk, or a size line that is no size.
    for (rest, fault) in [
        (
            &b"2\r\nok\r\n3\nabc\n4\r\nde"[..],
            FaultKind::BodyIncomplete,
        ),
        (b"2\r\nok\r\n3\nabc\nzz\r\n", FaultKind::BadChunked),
    ] {
        let reply: &'static [u8] = [head, rest].concat().leak();
        let addr = replying_then(reply, Duration::ZERO).await;
        let url = Url::parse(&format!("http://{addr}/a")).unwrap();
        let (result, _) = get(&patient_fetcher(), &url, None).await;
        let fetched = result.unwrap();
        assert_eq!(
            fetched.capture.exchange.truncated,
            Some(Truncation::Disconnect)
        );
        assert_eq!(fetched.body_fault, Some(fault));
        assert_eq!(&fetched.capture.exchange.response[..], reply);
    }
}

/// Bytes that cannot become a status line are handed to hyper at once and refused, not held
/// back for a line end that may never come: the fault says what they are, not a timeout.
#[tokio::test]
async fn a_reply_that_starts_no_status_line_is_refused_at_once() {
    let addr = replying(b"<html>no status line and no line end").await;
    let url = Url::parse(&format!("http://{addr}/a")).unwrap();
    let (result, _) = get(&local_fetcher(), &url, None).await;
    let error = result.expect_err("refused");
    assert_eq!(error.kind(), FaultKind::NotHttp, "{error}");
}
