//! Tests of `fetch/mod.rs`.

use super::*;

fn fetcher() -> Fetcher {
    Fetcher::new(FetchOptions {
        user_agent: "trawl-test/1".into(),
        headers: Vec::new(),
        connect_timeout: Duration::from_secs(1),
        read_timeout: Duration::from_secs(1),
        total_timeout: Duration::from_secs(1),
        max_head_bytes: 65536,
        max_headers: 100,
        trust: super::tls::Trust::Roots(Vec::new()),
        guard: AddressGuard::new(false),
        pins: Vec::new(),
        proxy: None,
        dns_servers: Vec::new(),
        families: super::Families::Any,
        dns_timeout: None,
        dns_records: false,
        login: None,
        rate: None,
        spool: None,
    })
}

/// A loopback server answering every request on a connection with a 5-byte body (kept
/// alive), and after `answers` responses on a connection, 100 ms later, writing `then` and
/// closing it. Returns its
/// address and the count of connections it accepted.
async fn server(
    answers: usize,
    then: &'static [u8],
) -> (std::net::SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                for _ in 0..answers {
                    let mut got = Vec::new();
                    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                        match sock.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => got.extend_from_slice(&buf[..n]),
                        }
                    }
                    let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
                    if sock.write_all(reply).await.is_err() {
                        return;
                    }
                }
                // Later, once the client has parked the connection: the stray bytes, or (an
                // empty `then`) just the close of dropping the socket.
                tokio::time::sleep(Duration::from_millis(100)).await;
                let _ = sock.write_all(then).await;
            });
        }
    });
    (addr, accepted)
}

fn local_fetcher() -> Fetcher {
    Fetcher::new(FetchOptions {
        guard: AddressGuard::new(true),
        ..fetcher().options
    })
}

/// A loopback fetcher with time for a debug build on a loaded machine to read megabytes, or a
/// response sent a byte per write (a cut for time is not what its tests look for).
fn patient_fetcher() -> Fetcher {
    Fetcher::new(FetchOptions {
        read_timeout: Duration::from_secs(60),
        total_timeout: Duration::from_secs(60),
        ..local_fetcher().options
    })
}

/// [`patient_fetcher`], spooling long bodies in `dir`.
fn spooling_fetcher(dir: &std::path::Path) -> Fetcher {
    Fetcher::new(FetchOptions {
        spool: Some(crate::spool::SpoolDir::new(dir)),
        ..patient_fetcher().options
    })
}

async fn get(
    f: &Fetcher,
    url: &Url,
    idle: Option<Connection>,
) -> (Result<Fetched, FetchError>, Option<Connection>) {
    f.fetch(url, None, idle, |_, _| BodyPlan::Read { max_body: 1 << 20 })
        .await
}

#[tokio::test]
async fn a_kept_alive_connection_is_parked_between_fetches_and_reused() {
    let (addr, accepted) = server(usize::MAX, b"").await;
    let f = local_fetcher();
    let url = Url::parse(&format!("http://{addr}/a")).unwrap();
    let mut idle = None;
    for _ in 0..3 {
        let (result, conn) = get(&f, &url, idle.take()).await;
        let fetched = result.unwrap();
        assert!(fetched.capture.exchange.response.ends_with(b"hello"));
        let mut conn = conn.expect("kept alive");
        assert!(conn.is_idle(), "only the socket is kept between fetches");
        // Not even the tape's room (the idle check reads past it).
        assert!(conn.is_reusable());
        assert_eq!(conn.tape.received_capacity(), 0);
        idle = Some(conn);
    }
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_idle_connection_the_server_closed_or_wrote_to_is_not_reused() {
    for then in [&b""[..], b"HTTP/1.1 200 OK\r\n"] {
        let (addr, accepted) = server(1, then).await;
        let f = local_fetcher();
        let url = Url::parse(&format!("http://{addr}/a")).unwrap();
        let (result, conn) = get(&f, &url, None).await;
        assert!(result.is_ok());
        let mut conn = conn.expect("the response itself was kept-alive");
        // Wait for the close (or the stray bytes) to arrive while the socket sits idle.
        assert!(conn.is_idle());
        for _ in 0..100 {
            if !conn.is_reusable() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(!conn.is_reusable());
        // The next fetch of the host opens a new connection and succeeds.
        let (result, _) = get(&f, &url, Some(conn)).await;
        assert!(result
            .unwrap()
            .capture
            .exchange
            .response
            .ends_with(b"hello"));
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}

/// A loopback server answering the first request of each connection with `reply`, then
/// keeping the connection open.
async fn replying(reply: &'static [u8]) -> std::net::SocketAddr {
    replying_then(reply, Duration::from_secs(5)).await
}

/// [`replying`], closing each connection `hold` after its reply.
async fn replying_then(reply: &'static [u8], hold: Duration) -> std::net::SocketAddr {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                if !read_request_head(&mut sock).await {
                    return;
                }
                let _ = sock.write_all(reply).await;
                tokio::time::sleep(hold).await;
            });
        }
    });
    addr
}

/// Reads a request's head from `sock`; false when the peer closed first.
async fn read_request_head(sock: &mut tokio::net::TcpStream) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 4096];
    let mut got = Vec::new();
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        match sock.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    true
}

#[tokio::test]
async fn bytes_after_the_response_in_the_same_read_are_not_archived_and_end_the_connection() {
    for reply in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA"[..],
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nEXTRA",
    ] {
        let addr = replying(reply).await;
        let url = Url::parse(&format!("http://{addr}/a")).unwrap();
        let (result, conn) = get(&local_fetcher(), &url, None).await;
        let response = result.unwrap().capture.exchange.response;
        let end = reply.len() - b"EXTRA".len();
        assert_eq!(
            &response[..],
            &reply[..end],
            "exactly the response is archived"
        );
        assert!(conn.is_none(), "a connection with stray bytes is not kept");
    }
}

#[tokio::test]
async fn a_long_body_is_recorded_in_a_spool_file_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let f = spooling_fetcher(dir.path());
    let body: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for piece in body.chunks(40_000) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let mut sized =
        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    sized.extend_from_slice(&body);
    let short = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".to_vec();
    // 1-byte chunks: the de-chunked copy is written to its spool file in pieces, not a byte
    // at a time.
    let mut tiny = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for &b in &body[..400_000] {
        tiny.extend_from_slice(&[b'1', b'\r', b'\n', b, b'\r', b'\n']);
    }
    tiny.extend_from_slice(b"0\r\n\r\n");
    let cases = [(sized, true), (chunked, true), (short, false), (tiny, true)];
    for (i, (reply, spooled)) in cases.into_iter().enumerate() {
        let reply: &'static [u8] = reply.leak();
        let addr = replying(reply).await;
        let url = Url::parse(&format!("http://{addr}/a")).unwrap();
        let (result, _) = f
            .fetch(&url, None, None, |_, _| BodyPlan::Read {
                max_body: 1 << 30,
            })
            .await;
        let capture = result.unwrap().capture;
        let response = &capture.exchange.response;
        assert_eq!(&response[..], reply, "exactly the response is archived");
        assert_eq!(response.spool_dir().is_some(), spooled);
        let payload = capture.payload();
        let want: &[u8] = match i {
            2 => b"hello",
            3 => &body[..400_000],
            _ => &body,
        };
        assert!(payload == want, "case {i}");
    }
    // The files have no names: nothing is left in the directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

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

#[tokio::test]
async fn a_long_body_with_no_spool_file_is_cut_where_memory_allows() {
    // A spool directory where no file can be made: the body is held in memory, up to
    // MAX_HELD, though the cap is far above it.
    let dir = tempfile::tempdir().unwrap();
    let f = Fetcher::new(FetchOptions {
        spool: Some(crate::spool::SpoolDir::new(dir.path().join("gone"))),
        total_timeout: Duration::from_secs(20),
        ..local_fetcher().options
    });
    let body = vec![b'x'; tape::MAX_HELD + (5 << 20)];
    let mut reply =
        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    reply.extend_from_slice(&body);
    let addr = replying(reply.leak()).await;
    let url = Url::parse(&format!("http://{addr}/a")).unwrap();
    let plan = |_: &ResponseHead, _: Option<&'static str>| BodyPlan::Read { max_body: 1 << 30 };
    let (result, conn) = f.fetch(&url, None, None, plan).await;
    let fetched = result.unwrap();
    assert_eq!(fetched.capture.exchange.truncated, Some(Truncation::Length));
    assert_eq!(fetched.body_fault, Some(FaultKind::SpoolFile));
    let held = fetched.capture.exchange.response.len();
    assert!(
        held > tape::MAX_HELD && held < tape::MAX_HELD + (2 << 20),
        "{held}"
    );
    assert!(conn.is_none());
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
