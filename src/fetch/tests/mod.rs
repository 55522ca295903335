//! Tests of `fetch/mod.rs`; those of odd responses are in `odd_responses.rs`.

use super::*;

mod odd_responses;

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
