//! Servers configured by hand, as the real web has many: a Content-Type that forgot its `;`, a
//! robots.txt labelled gzip but sent plain, Content-Encoding given in two fields, a Location
//! on answers that send no one anywhere, and a transfer coding beside chunked. Each is read as
//! browsers and wget read it, and archived in records the checkers accept.

use std::io::Write;

use crate::harness::{assert_valid, read_records};
use crate::hostile_cases::{crawl, raw, responses};
use crate::server::{Route, Web};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

/// A raw response with `head_fields` (each ending in CRLF) and `body`, framed by its length.
fn response(head_fields: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\n{head_fields}Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_content_type_written_by_hand_still_names_a_page() {
    let web = Web::default();
    let h = web.host("127.0.0.30").await;
    h.route(
        "/",
        Route::html("<a href=/no-semicolon>1</a><a href=/comment>2</a><a href=/bare-cr>3</a>"),
    );
    // As PHP and CGI scripts write it by hand: the `;` forgotten, a comment, a bare CR.
    for (path, field, next) in [
        (
            "/no-semicolon",
            "Content-Type: text/html charset=UTF-8\r\n",
            "/n1",
        ),
        ("/comment", "Content-Type: text/html (legacy)\r\n", "/n2"),
        ("/bare-cr", "Content-Type: text/html\rX-Odd: 1\r\n", "/n3"),
    ] {
        let body = format!("<p>by hand</p><a href={next}>next</a>");
        h.behave(path, raw(&response(field, body.as_bytes())));
        h.route(next, Route::html("<p>reached</p>"));
    }
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(stats["pages_archived"], 7, "{stats}");
    assert_eq!(stats["filtered"]["content_type"], 0, "{stats}");
    let dir = out.path().join("warcs");
    let records = read_records(&dir);
    for path in ["/no-semicolon", "/comment", "/bare-cr", "/n1", "/n2", "/n3"] {
        assert_eq!(responses(&records, path).len(), 1, "{path}");
    }
    assert_valid(&dir).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_labelled_gzip_but_sent_plain_is_obeyed() {
    let web = Web::default();
    let h = web.host("127.0.0.31").await;
    let rules = b"User-agent: *\nDisallow: /secret\n";
    h.behave(
        "/robots.txt",
        raw(&response(
            "Content-Type: text/plain\r\nContent-Encoding: gzip\r\n",
            rules,
        )),
    );
    h.route("/", Route::html("<a href=/secret>s</a><a href=/open>o</a>"));
    h.route("/secret", Route::html("<p>not for robots</p>"));
    h.route("/open", Route::html("<p>open</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    let paths = web.paths_of(&h);
    assert!(!paths.iter().any(|p| p == "/secret"), "{paths:?}");
    assert!(paths.iter().any(|p| p == "/open"), "{paths:?}");
    assert_eq!(stats["pages_archived"], 2, "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_codings_in_two_fields_are_both_removed() {
    let web = Web::default();
    let h = web.host("127.0.0.32").await;
    h.route("/", Route::html("<a href=/twice>t</a>"));
    // `Content-Encoding: gzip` twice is `gzip, gzip` (RFC 9110 section 5.3): gzipped twice.
    let page = gzip(&gzip(b"<p>twice</p><a href=/inside>in</a>"));
    h.behave(
        "/twice",
        raw(&response(
            "Content-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Encoding: gzip\r\n",
            &page,
        )),
    );
    h.route("/inside", Route::html("<p>reached</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(stats["pages_archived"], 3, "{stats}");
    assert!(
        stats["errors"].get("invalid_content_encoding").is_none(),
        "{stats}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_location_on_a_304_or_305_sends_no_one_there() {
    let web = Web::default();
    let h = web.host("127.0.0.33").await;
    h.route(
        "/",
        Route::html("<a href=/not-modified>a</a><a href=/use-proxy>b</a><a href=/moved>c</a>"),
    );
    h.behave(
        "/not-modified",
        raw(b"HTTP/1.1 304 Not Modified\r\nLocation: /target-304\r\n\r\n"),
    );
    h.behave(
        "/use-proxy",
        raw(b"HTTP/1.1 305 Use Proxy\r\nLocation: /target-305\r\nContent-Length: 0\r\n\r\n"),
    );
    h.route("/moved", Route::redirect(308, "/target-308"));
    for path in ["/target-304", "/target-305", "/target-308"] {
        h.route(path, Route::html("<p>target</p>"));
    }
    let out = tempfile::tempdir().unwrap();
    crawl(h.url("/"), out.path(), &[]).await;
    let paths = web.paths_of(&h);
    assert!(paths.iter().any(|p| p == "/target-308"), "{paths:?}");
    for path in ["/target-304", "/target-305"] {
        assert!(!paths.iter().any(|p| p == path), "{path}: {paths:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_coding_beside_chunked_is_archived_without_a_payload_digest() {
    let web = Web::default();
    let h = web.host("127.0.0.34").await;
    h.route(
        "/",
        Route::html("<a href=/gz-te>g</a><a href=/twice-chunked>t</a>"),
    );
    let gz = gzip(b"<p>gzip transfer coding</p>");
    let mut body = format!("{:x}\r\n", gz.len()).into_bytes();
    body.extend_from_slice(&gz);
    body.extend_from_slice(b"\r\n0\r\n\r\n");
    let mut gz_te =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
            .to_vec();
    gz_te.extend_from_slice(&body);
    h.behave("/gz-te", raw(&gz_te));
    h.behave(
        "/twice-chunked",
        raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n<p>x<\r\n0\r\n\r\n"),
    );
    let out = tempfile::tempdir().unwrap();
    crawl(h.url("/"), out.path(), &["--dedup"]).await;
    let dir = out.path().join("warcs");
    let records = read_records(&dir);
    for path in ["/gz-te", "/twice-chunked"] {
        let found = responses(&records, path);
        assert_eq!(found.len(), 1, "{path}");
        assert_eq!(found[0].payload_digest, None, "{path}");
    }
    assert!(responses(&records, "/")[0].payload_digest.is_some());
    assert_valid(&dir).await;
}

/// A server whose keep-alive is broken: it answers the first request on a connection, reads
/// the next one and closes without a byte. Each request that meets the close is sent again
/// on a fresh connection (the race with an idle timeout, RFC 9112 9.3.1); from the first
/// such close on, each request gets a connection of its own. Before, every request after the
/// first reached the server twice, 1 ms apart, and nothing counted it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_closes_kept_alive_connections_gets_each_request_once() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(("127.0.0.213", 0))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                for answered in [true, false] {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&head).into_owned();
                    let path = text.split(' ').nth(1).unwrap_or("/").to_string();
                    log.lock().unwrap().push(path.clone());
                    if !answered {
                        return; // closed with the request read, nothing answered
                    }
                    let body = match path.as_str() {
                        "/" => (1..=5).map(|i| format!("<a href=/p{i}>{i}</a>")).collect(),
                        _ => format!("<p>{path}</p>"),
                    };
                    let response = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                }
            });
        }
    });
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(format!("http://{addr}/"), out.path(), &["--no-sitemaps"]).await;
    assert_eq!(stats["pages_archived"], 6, "{stats}");
    let hits = hits.lock().unwrap().clone();
    let twice: Vec<&String> = hits
        .iter()
        .filter(|p| hits.iter().filter(|q| q == p).count() > 1)
        .collect();
    // The first close, sent again once; none after it.
    assert!(twice.len() <= 2, "{hits:?}");
    assert_valid(&out.path().join("warcs")).await;
}
