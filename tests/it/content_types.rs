//! Content-Types as servers send them: none at all (the page judged by its first bytes), the
//! field twice or as a comma-separated list (read as browsers read it: the last valid type),
//! the bodiless 204 answer and error answers, archived whatever their type, and a feed archived
//! as a page, whose posts are followed.

use crate::args;
use crate::harness::{assert_replays, assert_replays_as, read_records, run_script, text};
use crate::hostile_cases::{crawl, raw, responses};
use crate::server::{Route, Web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_without_a_content_type_is_judged_by_its_first_bytes() {
    let web = Web::default();
    let h = web.host("127.0.0.49").await;
    h.route(
        "/",
        Route::html("<a href=/bare>b</a><a href=/unknown>u</a><a href=/blob>x</a>"),
    );
    // As an Apache server sends a file without a known extension: no Content-Type at all.
    let page = "\n<!DOCTYPE html><title>bare</title><a href=/from-bare>next</a>";
    let bare = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{page}",
        page.len()
    );
    h.behave("/bare", raw(bare.as_bytes()));
    let unknown = "<p>unknown</p><a href=/from-unknown>n</a>";
    let typed = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: unknown/unknown\r\nContent-Length: {}\r\n\r\n{unknown}",
        unknown.len()
    );
    h.behave("/unknown", raw(typed.as_bytes()));
    // A large binary body without a type: judged by its first bytes, the rest never read.
    let mut blob = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", 16 << 20).into_bytes();
    blob.extend(std::iter::repeat_n(0u8, 16 << 20));
    h.behave("/blob", raw(&blob));
    h.route("/from-bare", Route::html("<p>reached</p>"));
    h.route("/from-unknown", Route::html("<p>reached</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(stats["pages_archived"], 5, "{stats}");
    assert_eq!(
        stats["filtered"]["content_type"], 1,
        "the binary one: {stats}"
    );
    let downloaded = stats["bytes_downloaded"].as_u64().unwrap();
    // About 16 KiB is read before the judgement; what a loaded machine's socket buffer
    // brought in by then may add a few megabytes, not the 16 MiB.
    assert!(downloaded < 4 << 20, "the blob was read whole: {stats}");
    let dir = out.path().join("warcs");
    let records = read_records(&dir);
    for path in ["/bare", "/unknown"] {
        let rec = responses(&records, path);
        assert_eq!(rec[0].identified.as_deref(), Some("text/html"), "{path}");
    }
    assert_eq!(responses(&records, "/")[0].identified, None);
    assert!(responses(&records, "/blob").is_empty());
    assert_eq!(responses(&records, "/from-bare").len(), 1);
    assert_eq!(responses(&records, "/from-unknown").len(), 1);
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
    assert_replays(&dir, &h.url("/bare"), page).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_content_types_are_read_as_browsers_read_them() {
    let web = Web::default();
    let h = web.host("127.0.0.54").await;
    h.route(
        "/",
        Route::html("<a href=/twice>t</a><a href=/listed>l</a><a href=/beacon>b</a>"),
    );
    // A framework and a server each adding the field, and a proxy joining repeated fields:
    // Chromium renders both as HTML (the last valid type wins, WHATWG Fetch).
    let mut pages = Vec::new();
    for (path, fields) in [
        (
            "/twice",
            "Content-Type: text/plain\r\nContent-Type: text/html",
        ),
        (
            "/listed",
            "Content-Type: text/html, text/html; charset=utf-8",
        ),
    ] {
        let page = format!("<p>{path}</p><a href=/from{path}>next</a>");
        let response = format!(
            "HTTP/1.1 200 OK\r\n{fields}\r\nContent-Length: {}\r\n\r\n{page}",
            page.len()
        );
        h.behave(path, raw(response.as_bytes()));
        h.route(&format!("/from{path}"), Route::html("<p>reached</p>"));
        pages.push((path, page));
    }
    h.behave("/beacon", raw(b"HTTP/1.1 204 No Content\r\n\r\n"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(stats["pages_archived"], 5, "{stats}");
    assert_eq!(stats["filtered"]["content_type"], 0, "{stats}");
    let dir = out.path().join("warcs");
    let records = read_records(&dir);
    for path in ["/from/twice", "/from/listed", "/beacon"] {
        assert_eq!(responses(&records, path).len(), 1, "{path}: {stats}");
    }
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
    for (path, page) in pages {
        assert_replays(&dir, &h.url(path), &page).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_answers_are_archived_whatever_their_type() {
    let web = Web::default();
    let h = web.host("127.0.0.124").await;
    h.route(
        "/",
        Route::html(
            "<a href=/gone>g</a><a href=/missing>m</a><a href=/api>a</a><a href=/notes>n</a>",
        ),
    );
    // Caddy's 404: no Content-Type, no body. Go's `http.NotFound`: text/plain. An API's 500.
    h.behave(
        "/gone",
        raw(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
    );
    h.behave(
        "/missing",
        raw(b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 19\r\n\r\n404 page not found\n"),
    );
    h.behave(
        "/api",
        raw(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"error\":\"boom\"}"),
    );
    // A 2xx of a type not accepted stays out, as before.
    h.behave(
        "/notes",
        raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nnotes"),
    );
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(stats["pages_archived"], 1, "{stats}");
    assert_eq!(stats["filtered"]["content_type"], 1, "/notes: {stats}");
    let dir = out.path().join("warcs");
    let records = read_records(&dir);
    for (path, status_line, payload) in [
        ("/gone", "HTTP/1.1 404 Not Found", &b""[..]),
        (
            "/missing",
            "HTTP/1.1 404 Not Found",
            &b"404 page not found\n"[..],
        ),
        (
            "/api",
            "HTTP/1.1 500 Internal Server Error",
            &b"{\"error\":\"boom\"}"[..],
        ),
    ] {
        let rec = responses(&records, path);
        assert_eq!(rec.len(), 1, "{path}: {stats}");
        assert!(rec[0].block.starts_with(status_line.as_bytes()), "{path}");
        assert!(rec[0].block.ends_with(payload), "{path}");
    }
    assert!(responses(&records, "/notes").is_empty());
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
    // pywb replays the dead link as the server answered it: a 404 with no body.
    assert_replays_as(&dir, &h.url("/gone"), 404, "").await;
}

/// Links that declare a type `--accept` does not take, as WordPress writes them in every page
/// (`<link rel=alternate type=application/rss+xml>`, oEmbed and JSON views, the same in `Link`
/// fields), are not fetched only to be dropped by their Content-Type: on a WordPress site that
/// was half of all requests. A type `--accept` takes, or a page an anchor also links to, is
/// still fetched; with `--accept '*/*'` all of them are, and archived.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_that_declare_a_type_not_archived_are_not_fetched() {
    let web = Web::default();
    let h = web.host("127.0.0.141").await;
    let mut home = Route::html(concat!(
        "<link rel=alternate type=application/rss+xml href=/feed/>",
        "<link rel=alternate type='application/json+oembed' href='/oembed?url=%2F'>",
        "<link rel=alternate type=application/atom+xml href=/atom>",
        "<link rel=alternate type=text/html hreflang=de href=/de/>",
        "<a href=/atom>Atom</a> <a href=/post>a post</a>",
    ));
    home.headers.push((
        "Link".into(),
        r#"</wp-json/wp/v2/pages/2>; rel="alternate"; type="application/json""#.into(),
    ));
    h.route("/", home);
    h.route(
        "/feed/",
        Route::typed(200, "application/rss+xml", b"<rss/>"),
    );
    h.route(
        "/oembed",
        Route::typed(200, "application/json+oembed", b"{}"),
    );
    h.route(
        "/atom",
        Route::typed(200, "application/atom+xml", b"<feed/>"),
    );
    h.route(
        "/wp-json/wp/v2/pages/2",
        Route::typed(200, "application/json", b"{}"),
    );
    for page in ["/de/", "/post"] {
        h.route(page, Route::html("<p>a page</p>"));
    }
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &["--no-sitemaps"]).await;
    let mut paths = web.paths_of(&h);
    paths.sort();
    assert_eq!(
        paths,
        ["/", "/atom", "/de/", "/post", "/robots.txt"],
        "{stats}"
    );
    assert_eq!(stats["filtered"]["declared_type"], 3, "{stats}");
    assert_eq!(stats["pages_archived"], 3, "{stats}");

    let all = tempfile::tempdir().unwrap();
    let stats = crawl(
        h.url("/"),
        all.path(),
        &["--no-sitemaps", "--accept", "*/*"],
    )
    .await;
    assert_eq!(stats["filtered"]["declared_type"], 0, "{stats}");
    let records = read_records(&all.path().join("warcs"));
    for path in ["/feed/", "/oembed", "/wp-json/wp/v2/pages/2"] {
        assert_eq!(responses(&records, path).len(), 1, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_archived_as_a_page_gives_the_posts_it_lists() {
    // A crawl seeded with a blog's feeds and told to keep them: the posts they list are
    // followed, RSS's `<link>` text and Atom's `href` against its `xml:base`.
    let web = Web::default();
    let h = web.host("127.0.0.36").await;
    let base = h.url("/");
    let rss = format!(
        "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title><link>{base}</link>\
         <item><title>p</title><link>{base}2009/old-post.html</link></item></channel></rss>"
    );
    h.route(
        "/feed.rss",
        Route::typed(200, "application/rss+xml", rss.as_bytes()),
    );
    let atom =
        "<?xml version=\"1.0\"?><feed xmlns=\"http://www.w3.org/2005/Atom\" xml:base=\"/blog/\">\
                <entry><link href=\"atom-entry.html\"/></entry></feed>";
    h.route("/feed.atom", Route::typed(200, "text/xml", atom.as_bytes()));
    h.route("/", Route::html("<p>home</p>"));
    h.route("/2009/old-post.html", Route::html("<p>old post</p>"));
    h.route("/blog/atom-entry.html", Route::html("<p>entry</p>"));
    let out = tempfile::tempdir().unwrap();
    let atom_seed = h.url("/feed.atom");
    let accept = "--accept=text/html,application/rss+xml,text/xml";
    let stats = crawl(h.url("/feed.rss"), out.path(), &[&atom_seed, accept]).await;
    assert_eq!(stats["pages_archived"], 5, "{stats}");
    let records = read_records(&out.path().join("warcs"));
    for path in ["/", "/2009/old-post.html", "/blog/atom-entry.html"] {
        assert_eq!(responses(&records, path).len(), 1, "{path}");
    }
}
