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
