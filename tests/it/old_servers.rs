//! Servers of older habits. HTTP/1.0 ones: a `chunked` body (which hyper refuses in a 1.0
//! response) archived as received and read de-chunked, as GNU wget and warcio read it,
//! robots.txt included; a 1.0 connection kept for the next request only when the server says
//! `Connection: keep-alive`. And TLS servers that close without `close_notify`: a body that
//! ends at the close is whole, as Chromium and curl read it.

use crate::args;
use crate::harness::{assert_replays, read_records, run_script, text};
use crate::hostile_cases::{crawl, only_cut_is_cut, raw, responses};
use crate::server::{Behavior, Route, Web};

/// An HTTP/1.0 response of `body` in one chunk and a last, empty one.
fn chunked_10(content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.0 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    )
}

/// An HTTP/1.0 page of `body` with a Content-Length and the `extra` fields.
fn sized_10(extra: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http10_servers_are_read_as_wget_reads_them() {
    let web = Web::default();
    let h = web.host("127.0.0.100").await;
    let robots = chunked_10("text/plain", "User-agent: *\nDisallow: /private/\n");
    h.behave("/robots.txt", raw(robots.as_bytes()));
    let home = "<p>an old server</p><a href=/next>n</a><a href=/private/x>p</a><a href=/kept>k</a><a href=/plain>c</a>";
    let home_bytes = chunked_10("text/html", home);
    h.behave("/", raw(home_bytes.as_bytes()));
    h.route("/next", Route::html("<p>reached</p>"));
    h.route("/private/x", Route::html("<p>disallowed</p>"));
    // Both keep the socket open; only the first says the connection may be used again.
    let kept = sized_10("Connection: keep-alive\r\n", "<a href=/after-kept>a</a>");
    h.behave("/kept", Behavior::RawKeepAlive(kept));
    let plain = sized_10("", "<a href=/after-plain>a</a>");
    h.behave("/plain", Behavior::RawKeepAlive(plain));
    h.route("/after-kept", Route::html("<p>after kept</p>"));
    h.route("/after-plain", Route::html("<p>after plain</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &["--timeout", "3s"]).await;

    assert_eq!(stats["errors"], serde_json::json!({}), "{stats}");
    assert_eq!(stats["truncated"], serde_json::json!({}), "{stats}");
    let paths = web.paths_of(&h);
    for wanted in ["/next", "/kept", "/plain", "/after-kept", "/after-plain"] {
        assert!(paths.iter().any(|p| p == wanted), "{wanted}: {paths:?}");
    }
    // The chunked robots.txt was read: its rule held.
    assert!(!paths.iter().any(|p| p == "/private/x"), "{paths:?}");

    // The next request after each 1.0 page: on the same connection only after keep-alive.
    let hits = web.hits();
    let next_after = |path: &str| {
        let i = hits.iter().position(|x| x.path == path).unwrap();
        assert!(i + 1 < hits.len(), "nothing after {path}: {paths:?}");
        (hits[i].conn, hits[i + 1].conn)
    };
    let (page, next) = next_after("/kept");
    assert_eq!(page, next, "a keep-alive 1.0 connection is used again");
    let (page, next) = next_after("/plain");
    assert_ne!(page, next, "a 1.0 connection without keep-alive is not");

    // Archived as received; the digest and readers see the de-chunked page.
    let dir = out.path().join("warcs");
    let records = read_records(&dir);
    let home_rec = responses(&records, "/");
    assert_eq!(home_rec.len(), 1);
    assert_eq!(home_rec[0].block, home_bytes.as_bytes());
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
    assert_replays(&dir, &h.url("/"), home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_close_without_close_notify_ends_a_body_read_to_the_close() {
    // The test server drops its TLS streams without close_notify, as many servers do.
    let web = Web::default();
    let tls = web.tls_host("127.0.0.101").await;
    let page = "<p>to the close</p><a href=/next>n</a><a href=/cut>c</a>";
    let to_close = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{page}");
    tls.behave("/", raw(to_close.as_bytes()));
    tls.route("/next", Route::html("<p>reached</p>"));
    // A body framed by its length that stops at the close is still cut.
    let cut =
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\n<p>only</p>";
    tls.behave("/cut", raw(cut.as_bytes()));
    let out = tempfile::tempdir().unwrap();
    let seed = format!("https://{}/", tls.addr);
    let stats = crawl(seed, out.path(), &["--insecure"]).await;
    only_cut_is_cut(out.path(), &stats, ("/", to_close.as_bytes())).await;
}
