//! Unattended crawls: `--accept` and the extension pre-filter, back-off on 429/503 with
//! Retry-After, the hand-off of finished files, and the disk guard.

use std::time::Duration;

use crate::args;
use crate::harness::{read_json, read_records, text, trawl};
use crate::server::{Behavior, Route, Web};

/// `--accept application/pdf`: links ending in `.pdf` are fetched (the extension pre-filter
/// lets through the extensions of accepted types), the HTML pages that link to them are read
/// for links but not archived, and other non-HTML extensions stay unfetched.
#[tokio::test]
async fn accept_pdf_archives_linked_pdfs_and_reads_html_for_links_only() {
    let web = Web::default();
    let a = web.host("127.0.0.2").await;
    a.route(
        "/",
        Route::html(
            r#"<a href="/report.pdf">r</a> <a href="/docs/">d</a> <a href="/pic.jpg">p</a>"#,
        ),
    );
    a.route(
        "/docs/",
        Route::html(r#"<a href="/docs/Manual.PDF">m</a> <a href="/docs/get-file">g</a>"#),
    );
    a.route(
        "/report.pdf",
        Route::typed(200, "application/pdf", b"%PDF-1.4 report"),
    );
    a.route(
        "/docs/Manual.PDF",
        Route::typed(200, "application/pdf", b"%PDF-1.4 manual"),
    );
    // A PDF behind a URL without the extension is still found by its Content-Type.
    a.route(
        "/docs/get-file",
        Route::typed(200, "application/pdf", b"%PDF-1.4 hidden"),
    );
    a.route("/pic.jpg", Route::typed(200, "image/jpeg", b"jpeg"));
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        a.url("/"),
        "--out",
        out.path().display(),
        "--delay",
        "0ms",
        "--accept",
        "application/pdf",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(out.path());
    let mut archived: Vec<String> = records
        .iter()
        .filter(|r| {
            r.warc_type == "response" && r.status() == Some(200) && r.path() != "/robots.txt"
        })
        .map(|r| r.path())
        .collect();
    archived.sort();
    assert_eq!(
        archived,
        ["/docs/Manual.PDF", "/docs/get-file", "/report.pdf"]
    );
    let fetched: Vec<String> = web.hits().into_iter().map(|h| h.path).collect();
    assert!(fetched.contains(&"/docs/".to_string()), "{fetched:?}");
    assert!(!fetched.contains(&"/pic.jpg".to_string()), "{fetched:?}");
}

fn slow_down(status: u16, retry_after: &str) -> Route {
    let mut route = Route::typed(status, "text/html", b"<html>slow down</html>");
    route
        .headers
        .push(("Retry-After".into(), retry_after.into()));
    route
}

/// A server that answers 429 with `Retry-After: 2` twice and then 200: the page is archived
/// once (the 200), each retry waits at least the 2 s asked for, the whole host waits with it,
/// and the answers are counted. A URL that stays 503 is archived once, its last answer.
#[tokio::test]
async fn a_429_with_retry_after_slows_the_host_and_only_the_last_answer_is_archived() {
    let web = Web::default();
    let a = web.host("127.0.0.2").await;
    a.route(
        "/",
        Route::html(r#"<a href="/limited">l</a> <a href="/down">d</a> <a href="/p1">1</a> <a href="/p2">2</a>"#),
    );
    a.behave(
        "/limited",
        Behavior::Answers(vec![
            slow_down(429, "2"),
            slow_down(429, "2"),
            Route::html("<p>finally</p>"),
        ]),
    );
    a.route("/down", slow_down(503, "1"));
    a.route("/p1", Route::html("<p>1</p>"));
    a.route("/p2", Route::html("<p>2</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("stats.json");
    let result = trawl(args![
        "crawl",
        a.url("/"),
        "--out",
        out.path().display(),
        "--stats",
        stats.display(),
        "--delay",
        "0ms",
        "--no-sitemaps",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let responses: Vec<(String, Option<u16>)> = read_records(out.path())
        .into_iter()
        .filter(|r| r.warc_type == "response")
        .map(|r| (r.path(), r.status()))
        .collect();
    let of = |path: &str| -> Vec<Option<u16>> {
        responses
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, s)| *s)
            .collect()
    };
    assert_eq!(of("/limited"), [Some(200)], "{responses:?}");
    // Still 503 after --retries (2): its last answer is what happened.
    assert_eq!(of("/down"), [Some(503)], "{responses:?}");
    let hits = web.hits();
    let limited: Vec<_> = hits.iter().filter(|h| h.path == "/limited").collect();
    assert_eq!(limited.len(), 3);
    assert_eq!(hits.iter().filter(|h| h.path == "/down").count(), 3);
    for pair in limited.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(gap >= Duration::from_millis(1950), "retried after {gap:?}");
    }
    // The whole host waited: nothing was asked of it in the 2 s after the first 429.
    let first = limited[0].at;
    for h in hits.iter().filter(|h| h.at > first) {
        assert!(
            h.at - first >= Duration::from_millis(1950),
            "{} after {:?}",
            h.path,
            h.at - first
        );
    }
    let stats = read_json(&stats);
    assert_eq!(stats["slowed_down"], 4, "{stats}");
    assert_eq!(stats["errors"]["http_429"], 2, "{stats}");
    assert_eq!(stats["errors"]["http_503"], 2, "{stats}");
    assert_eq!(stats["status_codes"]["200"], 4, "{stats}");
}
