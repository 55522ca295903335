//! `-p`/`--page-requisites`: what a page needs to be shown (images, stylesheets, scripts,
//! frames, the favicon) archived with it, and replayed by pywb from the archive.

use crate::args;
use crate::harness::{crawl_without_delay, read_json, read_records, text, trawl};
use crate::server::{Route, Web};

/// The target URIs of the response records in `dir`.
fn responses(dir: &std::path::Path) -> Vec<String> {
    read_records(dir)
        .into_iter()
        .filter(|r| r.warc_type == "response")
        .filter_map(|r| r.target_uri)
        .collect()
}

/// A page that names no icon gets its origin's `/favicon.ico` with `-p`, as a browser asks
/// for it: once per origin however many pages lack one, and not without `-p`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_names_no_icon_brings_its_origins_favicon() {
    let web = Web::default();
    let h = web.host("127.0.0.121").await;
    h.route(
        "/",
        Route::html(r#"<p>no icon here</p><a href="/b">b</a><a href="/c">c</a>"#),
    );
    h.route("/b", Route::html("<p>none here either</p>"));
    h.route(
        "/c",
        Route::html(r#"<link rel="shortcut icon" href="/i.png"><p>an icon</p>"#),
    );
    h.route(
        "/favicon.ico",
        Route::typed(200, "image/x-icon", b"\0\0\x01\0"),
    );
    h.route(
        "/i.png",
        Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n"),
    );
    for requisites in [true, false] {
        let out = tempfile::tempdir().unwrap();
        let extra: &[&str] = match requisites {
            true => &["--page-requisites", "--no-sitemaps"],
            false => &["--no-sitemaps"],
        };
        let before = web.paths_of(&h).len();
        let res = crawl_without_delay(h.url("/"), out.path(), extra).await;
        assert_eq!(res.status.code(), Some(0), "{}", text(&res));
        let asked = web.paths_of(&h)[before..].to_vec();
        let icons = asked.iter().filter(|p| *p == "/favicon.ico").count();
        assert_eq!(
            icons,
            usize::from(requisites),
            "requisites {requisites}: {asked:?}"
        );
        let archived = responses(out.path());
        assert_eq!(
            archived.contains(&h.url("/favicon.ico")),
            requisites,
            "{archived:?}"
        );
    }
}

/// `--page-requisites`: a page's images (src, srcset, a lazy loader's data-src), stylesheet
/// (and what it imports and url()s), icon, script and video poster are archived, from another host too (one hop beyond
/// scope), under robots.txt; they are not pages; nothing of the kind without the flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_requisites_are_archived() {
    let web = Web::default();
    let h = web.host("127.0.0.71").await;
    let cdn = web.host("127.0.0.72").await;
    h.route(
        "/robots.txt",
        Route::typed(200, "text/plain", b"User-agent: *\nDisallow: /secret/\n"),
    );
    h.route(
        "/",
        Route::html(&format!(
            r#"<html><head><link rel=stylesheet href="/s.css"><link rel=icon href="/favicon.ico">
<script src="{}"></script></head><body style="background:url(/body.png)">
<img src="/a.png" srcset="/a-2x.png 2x"><img src="/secret/no.png"><img data-src="/lazy.png">
<video poster="/poster.jpg"></video><a href="/next">next</a></body></html>"#,
            cdn.url("/lib.js")
        )),
    );
    h.route("/next", Route::html("<p>a page</p>"));
    h.route(
        "/s.css",
        Route::typed(
            200,
            "text/css",
            br#"@import "/base.css"; h1 { background: url(img/h1.png) }"#,
        ),
    );
    h.route(
        "/base.css",
        Route::typed(
            200,
            "text/css",
            b"body { background: url('/from-base.png') }",
        ),
    );
    let png: &[u8] = b"\x89PNG\r\n\x1a\nfake";
    for p in [
        "/a.png",
        "/a-2x.png",
        "/img/h1.png",
        "/from-base.png",
        "/body.png",
        "/poster.jpg",
        "/favicon.ico",
        "/secret/no.png",
        "/lazy.png",
    ] {
        h.route(p, Route::typed(200, "image/png", png));
    }
    cdn.route(
        "/lib.js",
        Route::typed(200, "application/javascript", b"var x = 1;"),
    );

    let out = tempfile::tempdir().unwrap();
    let res = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.path().display(),
        "--delay",
        "0ms",
        "-q",
        "--page-requisites",
        // The second loopback host stands for a CDN on the public web.
        "--allow-private",
        "--no-sitemaps",
        "--stats",
        out.path().join("s.json").display()
    ])
    .await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let records = read_records(out.path());
    let archived: Vec<(String, Vec<u8>)> = records
        .iter()
        .filter(|r| r.warc_type == "response")
        .map(|r| (r.target_uri.clone().unwrap(), r.block.clone()))
        .collect();
    let has = |url: &str| archived.iter().any(|(u, _)| u == url);
    for p in [
        "/s.css",
        "/base.css",
        "/img/h1.png",
        "/from-base.png",
        "/a.png",
        "/a-2x.png",
        "/body.png",
        "/poster.jpg",
        "/favicon.ico",
        "/lazy.png",
    ] {
        assert!(has(&h.url(p)), "{p} not archived");
    }
    assert!(
        has(&cdn.url("/lib.js")),
        "a requisite on another host is archived"
    );
    assert!(!has(&h.url("/secret/no.png")), "robots.txt still applies");
    // The image is archived byte for byte.
    let (_, block) = archived
        .iter()
        .find(|(u, _)| *u == h.url("/a.png"))
        .unwrap();
    assert!(block.ends_with(png));
    let stats = read_json(&out.path().join("s.json"));
    assert_eq!(
        stats["pages_archived"].as_u64(),
        Some(2),
        "requisites are not pages"
    );
    // Replayed in pywb as a browser loads it: the rewritten page (and its rewritten
    // stylesheet) point into the archive for each image, and those give the original bytes.
    let requisites: Vec<(String, &[u8])> = [
        "/a.png",
        "/a-2x.png",
        "/body.png",
        "/poster.jpg",
        "/img/h1.png",
    ]
    .iter()
    .map(|p| (h.url(p), png))
    .collect();
    assert_replays_with(out.path(), &h.url("/"), &requisites).await;
    assert_eq!(
        stats["requisites"]["archived"].as_u64(),
        Some(11),
        "{}",
        stats["requisites"]
    );

    let web2 = Web::default();
    let h2 = web2.host("127.0.0.73").await;
    h2.route(
        "/",
        Route::html(r#"<img src="/a.png"><link rel=stylesheet href="/s.css">"#),
    );
    let out = tempfile::tempdir().unwrap();
    let res = crawl_without_delay(h2.url("/"), out.path(), &["--no-sitemaps"]).await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let paths = web2.paths_of(&h2);
    assert!(!paths.iter().any(|p| p == "/a.png"), "{paths:?}");
}

/// `--page-requisites` with frames: an iframe's document is part of the page (wget's inline
/// link, Heritrix's embed), so it is archived whatever its type or host (Doxygen's SVG call
/// graphs, another site's embedded page), and a frame's HTML or SVG document is read as a
/// page is: its script and images are taken and its links followed under the crawl's scope. Replayed in pywb, the page's
/// iframe points into the archive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_are_requisites() {
    let web = Web::default();
    let h = web.host("127.0.0.113").await;
    let other = web.host("127.0.0.114").await;
    h.route(
        "/",
        Route::html(&format!(
            r#"<iframe src="/graph.svg"></iframe><iframe src="{}"></iframe>
<a href="/next">next</a>"#,
            other.url("/embed.html")
        )),
    );
    h.route("/next", Route::html("<p>a page</p>"));
    h.route("/from-frame", Route::html("<p>linked from a frame</p>"));
    let svg: &[u8] =
        br#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
<script xlink:href="svgpan.js"/><a xlink:href="/next"><image xlink:href="/node.png"/></a></svg>"#;
    h.route("/graph.svg", Route::typed(200, "image/svg+xml", svg));
    h.route(
        "/svgpan.js",
        Route::typed(200, "application/javascript", b"var pan;"),
    );
    h.route(
        "/node.png",
        Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n"),
    );
    other.route(
        "/embed.html",
        Route::html(&format!(
            r#"<img src="/e.png"><a href="{}">in scope</a><a href="/elsewhere">not</a>"#,
            h.url("/from-frame")
        )),
    );
    other.route(
        "/e.png",
        Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n"),
    );
    other.route("/elsewhere", Route::html("<p>out of scope</p>"));

    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("s.json");
    let stats_arg = stats.display().to_string();
    let res = crawl_without_delay(
        h.url("/"),
        out.path(),
        &[
            "--page-requisites",
            "--allow-private",
            "--no-sitemaps",
            "--stats",
            &stats_arg,
        ],
    )
    .await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let archived = responses(out.path());
    for url in [
        h.url("/graph.svg"),
        h.url("/svgpan.js"),
        h.url("/node.png"),
        other.url("/embed.html"),
        other.url("/e.png"),
        h.url("/from-frame"),
    ] {
        assert!(archived.contains(&url), "{url} not archived: {archived:?}");
    }
    assert!(
        !web.paths_of(&other).iter().any(|p| p == "/elsewhere"),
        "a frame's links stay within scope"
    );
    let stats = read_json(&stats);
    assert_eq!(
        stats["pages_archived"].as_u64(),
        Some(3),
        "/, /next and /from-frame are pages; the frames are requisites"
    );

    assert_replays_with(out.path(), &h.url("/"), &[(h.url("/graph.svg"), svg)]).await;
}

/// A chain of stylesheets, each importing the next, is followed eight transclusion hops from
/// the page and no further, and on a host outside the scope three: hostile stylesheets
/// cannot lead the crawl on for ever, nor across the web.
#[tokio::test]
async fn requisites_of_requisites_stop_eight_hops_from_the_page() {
    let web = Web::default();
    let h = web.host("127.0.0.117").await;
    let elsewhere = web.host("127.0.0.118").await;
    h.route(
        "/",
        Route::html(&format!(
            r#"<link rel=stylesheet href="/c1.css"><link rel=stylesheet href="{}">"#,
            elsewhere.url("/c1.css")
        )),
    );
    for n in 1..=11 {
        let css = format!("@import \"/c{}.css\";", n + 1);
        for host in [&h, &elsewhere] {
            host.route(
                &format!("/c{n}.css"),
                Route::typed(200, "text/css", css.as_bytes()),
            );
        }
    }
    let out = tempfile::tempdir().unwrap();
    let res = crawl_without_delay(
        h.url("/"),
        out.path(),
        &["--no-sitemaps", "--page-requisites", "--allow-private"],
    )
    .await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let paths = web.paths_of(&h);
    for n in 1..=8 {
        assert!(paths.contains(&format!("/c{n}.css")), "{paths:?}");
    }
    assert!(!paths.iter().any(|p| p == "/c9.css"), "{paths:?}");
    let paths = web.paths_of(&elsewhere);
    for n in 1..=3 {
        assert!(paths.contains(&format!("/c{n}.css")), "{paths:?}");
    }
    assert!(!paths.iter().any(|p| p == "/c4.css"), "{paths:?}");
}

/// With `--max-pages`, the pages archived last still get their requisites (which rank
/// before pages in each host's queue), and no page beyond the target is fetched.
#[tokio::test]
async fn requisites_of_the_last_pages_are_fetched_after_the_page_target() {
    let web = Web::default();
    let h = web.host("127.0.0.74").await;
    h.route(
        "/",
        Route::html(r#"<a href="/p2">2</a><a href="/p3">3</a><img src="/a.png">"#),
    );
    h.route(
        "/p2",
        Route::html(r#"<link rel=stylesheet href="/s.css"><a href="/p4">4</a>"#),
    );
    h.route("/p3", Route::html(r#"<img src="/c.png">"#));
    h.route("/p4", Route::html("<p>four</p>"));
    h.route(
        "/s.css",
        Route::typed(200, "text/css", b"p { background: url(/b.png) }"),
    );
    for p in ["/a.png", "/b.png", "/c.png"] {
        h.route(p, Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n"));
    }
    let out = tempfile::tempdir().unwrap();
    let res = crawl_without_delay(
        h.url("/"),
        out.path(),
        &["--no-sitemaps", "--page-requisites", "--max-pages", "2"],
    )
    .await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let archived = responses(out.path());
    let has = |p: &str| archived.contains(&h.url(p));
    assert!(has("/") && has("/p2"), "{archived:?}");
    for p in ["/a.png", "/s.css", "/b.png"] {
        assert!(
            has(p),
            "{p}, needed by an archived page, is archived: {archived:?}"
        );
    }
    let paths = web.paths_of(&h);
    for p in ["/p3", "/p4", "/c.png"] {
        assert!(
            !paths.iter().any(|x| x == p),
            "{p} is beyond the page target: {paths:?}"
        );
    }
}

/// Asserts that pywb, replaying the WARCs in `out` in rewriting mode (as a browser loads
/// `page`), refers to each of `requisites` (original URL, expected bytes) through the
/// collection, and that each gives its original bytes.
async fn assert_replays_with(out: &std::path::Path, page: &str, requisites: &[(String, &[u8])]) {
    let mut expected = serde_json::Map::new();
    for (n, (url, bytes)) in requisites.iter().enumerate() {
        let file = out.join(format!("expected-{n}.bin"));
        std::fs::write(&file, bytes).unwrap();
        expected.insert(url.clone(), serde_json::json!(file.display().to_string()));
    }
    let manifest = out.join("manifest.json");
    let check = serde_json::json!([{"url": page, "expect_status": 200, "requisites": expected}]);
    std::fs::write(&manifest, check.to_string()).unwrap();
    let replay = crate::harness::run_script(
        "pywb_replay.py",
        args!["--warcs", out.display(), "--manifest", manifest.display()],
    )
    .await;
    assert!(replay.status.success(), "pywb: {}", text(&replay));
}

/// A themed error page (a 404 with its stylesheet and images) is archived with what it needs to
/// render, as a browser shows it and pywb replays it; its links are still not followed. Before,
/// the 404 replayed unstyled, its stylesheet and images missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_page_is_archived_with_its_requisites_not_its_links() {
    let web = Web::default();
    let h = web.host("127.0.0.235").await;
    h.route(
        "/",
        Route::html(r#"<link rel=icon href=/i.png><a href="/gone">a broken link</a>"#),
    );
    let mut missing = Route::html(
        r#"<link rel=stylesheet href=/error.css><link rel=icon href=/i.png><img src=/lost.png><a href="/sitemap-page">site map</a>"#,
    );
    missing.status = 404;
    h.route("/gone", missing);
    h.route(
        "/error.css",
        Route::typed(200, "text/css", b"body{background:url(/bg.png)}"),
    );
    for path in ["/lost.png", "/bg.png", "/i.png"] {
        h.route(path, Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n"));
    }
    h.route("/sitemap-page", Route::html("<p>not to be reached</p>"));
    let out = tempfile::tempdir().unwrap();
    let flags = ["--page-requisites", "--no-sitemaps"];
    let res = crawl_without_delay(h.url("/"), out.path(), &flags).await;
    // The broken link's 404 is data, not a failure.
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let archived = responses(out.path());
    for path in ["/gone", "/error.css", "/lost.png", "/bg.png"] {
        assert!(archived.contains(&h.url(path)), "{path} in {archived:?}");
    }
    assert!(!web.paths_of(&h).contains(&"/sitemap-page".to_string()));
}

/// A manifest served as a download (`application/octet-stream`: stock nginx has no type for
/// `.webmanifest`) still gives its icons, as Chromium reads a manifest whatever its type; a
/// stylesheet served with no Content-Type still gives its imports and images, as wget reads it.
/// Before, both were archived and what they name was not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untyped_stylesheet_and_a_manifest_served_as_a_download_give_their_requisites() {
    let web = Web::default();
    let h = web.host("127.0.0.236").await;
    h.route(
        "/",
        Route::html(
            r#"<link rel=icon href=/i.png><link rel=manifest href=/site.webmanifest><link rel=stylesheet href=/untyped.css>"#,
        ),
    );
    h.route(
        "/site.webmanifest",
        Route::typed(
            200,
            "application/octet-stream",
            br#"{"name":"x","icons":[{"src":"/android-192.png","sizes":"192x192"}]}"#,
        ),
    );
    h.route(
        "/untyped.css",
        Route {
            status: 200,
            headers: Vec::new(),
            body: b"@import url(more.css); body{background:url(/bg.png)}".to_vec(),
            chunked: false,
            gzip: false,
        },
    );
    h.route("/more.css", Route::typed(200, "text/css", b"p{color:red}"));
    for path in ["/i.png", "/android-192.png", "/bg.png"] {
        h.route(path, Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n"));
    }
    let out = tempfile::tempdir().unwrap();
    let flags = ["--page-requisites", "--no-sitemaps"];
    let res = crawl_without_delay(h.url("/"), out.path(), &flags).await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let archived = responses(out.path());
    for path in ["/android-192.png", "/more.css", "/bg.png"] {
        assert!(archived.contains(&h.url(path)), "{path} in {archived:?}");
    }
}
