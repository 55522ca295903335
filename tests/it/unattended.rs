//! Unattended crawls: `--accept` and the extension pre-filter, back-off on 429/503 with
//! Retry-After, the hand-off of finished files, and the disk guard.

use crate::args;
use crate::harness::{read_records, text, trawl};
use crate::server::{Route, Web};

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
