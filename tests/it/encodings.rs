//! Encodings servers get wrong or that a crawler must write as a browser does: gzip bodies with
//! bytes after them or cut short, the query of a link in a Shift_JIS page, a Location holding
//! Latin-1 bytes, a page in Latin-1 that declares no charset, a charset declared past the first
//! kilobyte, a commented-out meta charset. Each case is one server on its own loopback address (helpers from
//! `hostile_cases.rs`).

use crate::harness::read_records;
use crate::hostile_cases::{crawl, raw, responses};
use crate::server::{Behavior, Route, Web};

fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_body_with_bytes_after_it_still_gives_its_links() {
    // A script that appends a newline after its compressed output: Chromium and wget show the
    // page; its links were lost as an invalid content encoding.
    let web = Web::default();
    let h = web.host("127.0.0.45").await;
    let mut body = gzip(b"<a href=/behind-gzip>next</a>");
    body.extend_from_slice(b"\n\n");
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let response = [head.as_bytes(), &body].concat();
    h.route("/", Route::html("<a href=/gz>g</a>"));
    h.behave("/gz", Behavior::RawKeepAlive(response.clone()));
    h.route("/behind-gzip", Route::html("<p>reached</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(stats["errors"], serde_json::json!({}), "{stats}");
    let records = read_records(&out.path().join("warcs"));
    assert_eq!(responses(&records, "/gz")[0].block, response, "as received");
    assert_eq!(responses(&records, "/behind-gzip").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_page_cut_short_still_gives_the_links_of_what_arrived() {
    // The server closes halfway through a compressed page: the part that arrived is archived
    // as truncated, and the links in what decodes of it are followed (they were all lost).
    let web = Web::default();
    let h = web.host("127.0.0.47").await;
    let text: String = (0..2000)
        .map(|i| format!("<p>line {i} of the page</p>\n"))
        .collect();
    let page = format!("<a href=/p0>first</a><a href=/p1>second</a>\n{text}<a href=/p2>end</a>");
    let body = gzip(page.as_bytes());
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let sent = [head.as_bytes(), &body[..body.len() / 2]].concat();
    h.route("/", Route::html("<a href=/cut>c</a>"));
    h.behave("/cut", raw(&sent));
    h.route("/p0", Route::html("<p>first</p>"));
    h.route("/p1", Route::html("<p>second</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(
        stats["truncated"],
        serde_json::json!({"disconnect": 1}),
        "{stats}"
    );
    assert!(
        stats["errors"].get("invalid_content_encoding").is_none(),
        "{stats}"
    );
    let records = read_records(&out.path().join("warcs"));
    assert_eq!(responses(&records, "/cut")[0].block, sent, "as received");
    assert_eq!(responses(&records, "/p0").len(), 1);
    assert_eq!(responses(&records, "/p1").len(), 1);
    // The link past the cut never arrived.
    assert!(!web.paths_of(&h).iter().any(|p| p == "/p2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_location_in_latin1_is_followed_where_a_browser_goes() {
    // A redirect whose Location holds a raw Latin-1 `é`: headless Chromium requested
    // `/caf%E9?q=%E9`; read as lossy UTF-8 it was `/caf%EF%BF%BD...`, a page that is not there.
    let web = Web::default();
    let h = web.host("127.0.0.48").await;
    h.behave(
        "/moved",
        raw(b"HTTP/1.1 302 Found\r\nLocation: /caf\xe9?q=\xe9\r\nContent-Length: 0\r\n\r\n"),
    );
    h.route("/caf%E9?q=%E9", Route::html("<p>arrived</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/moved"), out.path(), &[]).await;
    assert_eq!(stats["status_codes"]["200"], 1, "{stats}");
    let paths = web.paths_of(&h);
    assert!(paths.iter().any(|p| p == "/caf%E9?q=%E9"), "{paths:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_charset_page_has_its_query_links_requested_as_browsers_request_them() {
    // A Shift_JIS page (by its meta tag): the query of a link goes out in Shift_JIS, its path in
    // UTF-8, a character Shift_JIS lacks as an escaped character reference; the two targets
    // below are what headless Chromium requested for the same page, but for the trail byte
    // 0x7B of 本, which Chromium sends bare (`{`) and trawl escapes (no URI holds a `{`).
    let web = Web::default();
    let h = web.host("127.0.0.46").await;
    let page =
        "<meta charset=shift_jis><a href=\"/search?q=日本\">s</a><a href=\"/日本?e=€\">e</a>";
    // The euro sign goes into the page as `&#8364;`, as a Shift_JIS page writes it.
    let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(page);
    h.route("/", Route::typed(200, "text/html", &bytes));
    let search = "/search?q=%93%FA%96%7B";
    let euro = "/%E6%97%A5%E6%9C%AC?e=%26%238364%3B";
    h.route(search, Route::html("<p>results</p>"));
    h.route(euro, Route::html("<p>euro</p>"));
    let out = tempfile::tempdir().unwrap();
    crawl(h.url("/"), out.path(), &[]).await;
    let paths = web.paths_of(&h);
    assert!(paths.iter().any(|p| p == search), "{paths:?}");
    assert!(paths.iter().any(|p| p == euro), "{paths:?}");
    let records = read_records(&out.path().join("warcs"));
    for target in [search, euro] {
        let uri = h.url(target);
        let archived = records
            .iter()
            .filter(|r| r.warc_type == "response" && r.target_uri.as_deref() == Some(&uri))
            .count();
        assert_eq!(archived, 1, "{target}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_latin1_page_is_read_as_windows_1252() {
    // No charset anywhere and bytes that are not UTF-8: headless Chromium read the same page as
    // windows-1252 and went to the path in UTF-8 and the query in the page's encoding.
    let page = b"<p>Caf\xe9 cr\xe8me</p><a href=\"/caf\xe9.html?q=\xe9\">caf\xe9</a>";
    undeclared_page_read_as_chromium_reads_it(
        "127.0.0.58",
        page,
        "/caf%C3%A9.html?q=%E9",
        "Café crème",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undeclared_legacy_cjk_and_ascii_pages_are_read_as_chromium_reads_them() {
    // Shift_JIS with no charset anywhere: Chromium detects it and asks for the path in UTF-8,
    // the query in Shift_JIS. Before, trawl read it as UTF-8 (UTF-8 sequences occur in such
    // bytes by chance): its text was U+FFFD and its link asked for `%EF%BF%BD...`.
    let text = "北海道の天気は晴れです。東京都は日本の首都です。";
    let page = format!("<p>{text}</p><a href=\"/x/日本語.html?q=東京\">東京</a>");
    let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode(&page);
    undeclared_page_read_as_chromium_reads_it(
        "127.0.0.220",
        &sjis,
        "/x/%E6%97%A5%E6%9C%AC%E8%AA%9E.html?q=%93%8C%8B%9E",
        text,
    )
    .await;
    // An ASCII page that declares nothing is windows-1252 in Chromium: `&eacute;` in a query
    // is `%E9` (it was `%C3%A9`).
    let page = b"<p>Search</p><a href=\"/search?q=caf&eacute;\">caf&eacute;</a>";
    undeclared_page_read_as_chromium_reads_it("127.0.0.221", page, "/search?q=caf%E9", "Search")
        .await;
}

/// Serves `page` (no charset declared) at `/` of `ip`, crawls it with `--wet`, and asserts that
/// its link was requested as `target` and that its WET text holds `text`.
async fn undeclared_page_read_as_chromium_reads_it(
    ip: &str,
    page: &[u8],
    target: &str,
    text: &str,
) {
    let web = Web::default();
    let h = web.host(ip).await;
    h.route("/", Route::typed(200, "text/html", page));
    h.route(target, Route::html("<p>reached</p>"));
    let out = tempfile::tempdir().unwrap();
    crawl(h.url("/"), out.path(), &["--wet"]).await;
    let paths = web.paths_of(&h);
    assert!(paths.iter().any(|p| p == target), "{paths:?}");
    // The page's text as WET has it: the letters, not replacement characters.
    let wet = std::fs::read_dir(out.path().join("warcs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".wet.gz"))
        .expect("a WET file");
    let mut wet_text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(wet).unwrap()),
        &mut wet_text,
    )
    .unwrap();
    assert!(wet_text.contains(text), "{wet_text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_meta_charset_past_the_first_kilobyte_is_obeyed() {
    // The page headless Chromium read as windows-1251 and went to `/%D0%BF?q=%EF` from.
    let web = Web::default();
    let h = web.host("127.0.0.59").await;
    let mut page = b"<html><head><!-- ".to_vec();
    page.extend(std::iter::repeat_n(b'x', 3000));
    page.extend_from_slice(
        b" --><meta charset=\"windows-1251\"></head><body><a href=\"/\xef?q=\xef\">x</a>",
    );
    h.route("/", Route::typed(200, "text/html", &page));
    let target = "/%D0%BF?q=%EF";
    h.route(target, Route::html("<p>reached</p>"));
    let out = tempfile::tempdir().unwrap();
    crawl(h.url("/"), out.path(), &[]).await;
    let paths = web.paths_of(&h);
    assert!(paths.iter().any(|p| p == target), "{paths:?}");
}

/// A link with a `%` that starts no escape (Boost's `operator%.html`) is requested with it
/// escaped, `%25`, as wget requests it: sent bare, as a browser sends it, nginx and Apache
/// answer 400 and the file is never archived.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stray_percent_in_a_link_is_requested_escaped() {
    let web = Web::default();
    let h = web.host("127.0.0.143").await;
    h.route(
        "/",
        Route::html(r#"<a href="yap/operator%.html">%</a> <a href="q?off=50%">q</a>"#),
    );
    h.route("/yap/operator%25.html", Route::html("<p>operator %</p>"));
    h.route("/q?off=50%25", Route::html("<p>half off</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    let paths = web.paths_of(&h);
    assert!(
        paths.iter().any(|p| p == "/yap/operator%25.html"),
        "{paths:?}"
    );
    assert!(paths.iter().any(|p| p == "/q?off=50%25"), "{paths:?}");
    assert_eq!(stats["status_codes"]["200"], 3, "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn characters_no_uri_may_hold_are_requested_escaped() {
    // Haddock's Cabal docs link `|`; a browser sends `|`, `^`, `[`, `]` bare (and `{`, `}` in
    // a query), which Tomcat answers with 400. wget escapes them; so do we, and the
    // WARC-Target-URI is then a URI. robots.txt rules are read in the same form.
    let web = Web::default();
    let h = web.host("127.0.0.144").await;
    h.route(
        "/",
        Route::html(
            r#"<a href="a|b.html">|</a> <a href="c[1]^2.html">[]</a>
               <a href="q?x={1}|2&y=[a]">q</a> <a href="private|x.html">robots</a>"#,
        ),
    );
    h.route(
        "/robots.txt",
        Route::typed(200, "text/plain", b"User-agent: *\nDisallow: /private|\n"),
    );
    for path in [
        "/a%7Cb.html",
        "/c%5B1%5D%5E2.html",
        "/q?x=%7B1%7D%7C2&y=%5Ba%5D",
    ] {
        h.route(path, Route::html("<p>found</p>"));
    }
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(stats["status_codes"]["200"], 5, "{stats}");
    let paths = web.paths_of(&h);
    assert!(!paths.iter().any(|p| p.contains("private")), "{paths:?}");
    let records = read_records(&out.path().join("warcs"));
    let uri = &responses(&records, "/a%7Cb.html")[0].target_uri;
    assert_eq!(uri.as_deref(), Some(h.url("/a%7Cb.html").as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commented_out_meta_charset_declares_nothing() {
    // UTF-8 pages sent as `text/html` with no charset (Apache's and nginx's default), whose
    // old Latin-1 meta was commented out, or whose description mentions a charset: their
    // links are UTF-8, as a browser's prescan reads them.
    let web = Web::default();
    let h = web.host("127.0.0.35").await;
    let pages = [
        (
            "/",
            r#"<!-- <meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"> --><meta charset="utf-8"><a href="/café.html">c</a><a href="/desc">d</a>"#,
        ),
        (
            "/desc",
            r#"<meta name="description" content="How to set charset=koi8-r"><a href="/naïve.html">n</a>"#,
        ),
    ];
    for (path, page) in pages {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
            page.len()
        );
        h.behave(path, raw(&[head.as_bytes(), page.as_bytes()].concat()));
    }
    h.route("/caf%C3%A9.html", Route::html("<p>café</p>"));
    h.route("/na%C3%AFve.html", Route::html("<p>naïve</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    let paths = web.paths_of(&h);
    assert_eq!(stats["status_codes"]["200"], 4, "{paths:?} {stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stylesheet_is_read_in_its_charset_rule() {
    // `@charset "Shift_JIS"` in a stylesheet: Chromium asks for the image's path in UTF-8 and
    // its query in Shift_JIS. Before, the sheet was read as UTF-8: `%EF%BF%BD...`.
    let web = Web::default();
    let h = web.host("127.0.0.222").await;
    let (sheet, _, _) = encoding_rs::SHIFT_JIS
        .encode("@charset \"Shift_JIS\";\nbody{background:url(/img/画像.png?q=画像)}");
    h.route(
        "/",
        Route::html("<link rel=stylesheet href=/s.css><p>page</p>"),
    );
    h.route("/s.css", Route::typed(200, "text/css", &sheet));
    let target = "/img/%E7%94%BB%E5%83%8F.png?q=%89%E6%91%9C";
    h.route(target, Route::typed(200, "image/png", b"\x89PNG"));
    let out = tempfile::tempdir().unwrap();
    crawl(h.url("/"), out.path(), &["-p"]).await;
    let paths = web.paths_of(&h);
    assert!(paths.iter().any(|p| p == target), "{paths:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_is_read_in_its_declared_encoding() {
    // An RSS feed in windows-1251, as its XML declaration says (older Russian blogs), archived
    // as --accept asks: its posts are asked for as Python's XML reader and a browser read them. Before, it was read
    // as UTF-8: `%EF%BF%BD...`.
    let web = Web::default();
    let h = web.host("127.0.0.223").await;
    let (feed, _, _) = encoding_rs::WINDOWS_1251.encode(
        "<?xml version=\"1.0\" encoding=\"windows-1251\"?><rss version=\"2.0\"><channel>\
         <title>Блог</title><item><title>Москва</title><link>/статья</link></item></channel></rss>",
    );
    h.route("/", Route::html("<a href=/feed.rss>feed</a>"));
    h.route("/feed.rss", Route::typed(200, "application/rss+xml", &feed));
    let target = "/%D1%81%D1%82%D0%B0%D1%82%D1%8C%D1%8F";
    h.route(target, Route::html("<p>post</p>"));
    let out = tempfile::tempdir().unwrap();
    crawl(
        h.url("/"),
        out.path(),
        &["--accept", "text/html,application/rss+xml"],
    )
    .await;
    let paths = web.paths_of(&h);
    assert!(paths.iter().any(|p| p == target), "{paths:?}");
}
