//! Sitemaps: robots.txt's `Sitemap:` lines, indexes, gzip sitemaps and `/sitemap.xml`, leading
//! the crawl to pages nothing links to.

use crate::args;
use crate::harness::{read_json, read_records, text, trawl, Rec};
use crate::server::{Host, Route, Web};

/// Sitemaps: robots.txt's `Sitemap:` line leads to an index, a gzip sitemap and a plain one;
/// the pages they list (linked from nowhere) are crawled, robots rules and scope still hold,
/// an index that lists itself is fetched once, a junk file is counted invalid, and every
/// sitemap is archived. `--no-sitemaps` turns it off; without a Sitemap line, /sitemap.xml.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemaps_lead_to_unlinked_pages() {
    use std::io::Write as _;
    async fn site(ip: &str, with_line: bool) -> (Web, Host) {
        let web = Web::default();
        let h = web.host(ip).await;
        let robots = if with_line {
            "User-agent: *\nDisallow: /private/\nSitemap: /sitemap_index.xml\n"
        } else {
            "User-agent: *\nDisallow: /private/\n"
        };
        h.route(
            "/robots.txt",
            Route::typed(200, "text/plain", robots.as_bytes()),
        );
        h.route("/", Route::html("<p>no links at all</p>"));
        let index = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>{0}</loc></sitemap><sitemap><loc>{1}</loc></sitemap>
<sitemap><loc>{2}</loc></sitemap><sitemap><loc>{3}</loc></sitemap>
<sitemap><loc>http://other.invalid/x.xml</loc></sitemap></sitemapindex>"#,
            h.url("/s1.xml.gz"),
            h.url("/s2.xml"),
            h.url("/sitemap_index.xml"),
            h.url("/junk.xml")
        );
        h.route(
            "/sitemap_index.xml",
            Route::typed(200, "application/xml", index.as_bytes()),
        );
        let s1 = format!(
            "<urlset><url><loc>{}</loc></url><url><loc>{}</loc></url></urlset>",
            h.url("/hidden1"),
            h.url("/hidden2")
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(s1.as_bytes()).unwrap();
        h.route(
            "/s1.xml.gz",
            Route::typed(200, "application/x-gzip", &gz.finish().unwrap()),
        );
        let s2 = format!(
            "<urlset><url><loc>{}</loc></url><url><loc>http://elsewhere.invalid/</loc></url><url><loc>{}</loc></url></urlset>",
            h.url("/hidden3"),
            h.url("/private/p")
        );
        h.route("/s2.xml", Route::typed(200, "text/xml", s2.as_bytes()));
        h.route(
            "/junk.xml",
            Route::typed(200, "application/xml", &[0u8, 159, 146, 150, 7, 1]),
        );
        h.route(
            "/sitemap.xml",
            Route::typed(200, "application/xml", s1.as_bytes()),
        );
        for p in ["/hidden1", "/hidden2", "/hidden3", "/private/p"] {
            h.route(p, Route::html("<p>listed in a sitemap</p>"));
        }
        (web, h)
    }
    let crawl = |h: &Host, out: &std::path::Path, extra: &[&str]| {
        let mut a = args![h.url("/"), "--out", out.display(), "--delay", "0ms", "-q"];
        a.insert(0, "crawl".to_string());
        a.extend(extra.iter().map(|s| s.to_string()));
        a.extend(args!["--stats", out.join("stats.json").display()]);
        trawl(a)
    };

    let (web, h) = site("127.0.0.65", true).await;
    let out = tempfile::tempdir().unwrap();
    let res = crawl(&h, out.path(), &[]).await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let paths = web.paths_of(&h);
    for p in ["/hidden1", "/hidden2", "/hidden3"] {
        assert!(paths.iter().any(|x| x == p), "{p} not fetched: {paths:?}");
    }
    assert!(
        !paths.iter().any(|x| x.starts_with("/private/")),
        "{paths:?}"
    );
    let index_fetches = paths.iter().filter(|p| *p == "/sitemap_index.xml").count();
    assert_eq!(index_fetches, 1, "an index listing itself is fetched once");
    assert!(
        !paths.iter().any(|x| x == "/sitemap.xml"),
        "a Sitemap line replaces the guess"
    );
    let stats = read_json(&out.path().join("stats.json"));
    let s = &stats["sitemaps"];
    assert_eq!(
        (s["fetched"].as_u64(), s["invalid"].as_u64()),
        (Some(4), Some(1)),
        "{s}"
    );
    assert_eq!(s["urls"].as_u64(), Some(5), "{s}");
    // The sitemaps are archived, whatever their type.
    let archived: Vec<String> = read_records(out.path())
        .iter()
        .filter(|r| r.warc_type == "response")
        .map(Rec::path)
        .collect();
    for p in ["/sitemap_index.xml", "/s1.xml.gz", "/s2.xml", "/junk.xml"] {
        assert!(
            archived.iter().any(|x| x == p),
            "{p} not archived: {archived:?}"
        );
    }

    let out = tempfile::tempdir().unwrap();
    let (web, h) = site("127.0.0.66", true).await;
    let res = crawl(&h, out.path(), &["--no-sitemaps"]).await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let paths = web.paths_of(&h);
    assert!(
        !paths
            .iter()
            .any(|x| x.contains("sitemap") || x.starts_with("/hidden")),
        "{paths:?}"
    );

    let out = tempfile::tempdir().unwrap();
    let (web, h) = site("127.0.0.67", false).await;
    let res = crawl(&h, out.path(), &[]).await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let paths = web.paths_of(&h);
    assert!(paths.iter().any(|x| x == "/sitemap.xml"), "{paths:?}");
    assert!(paths.iter().any(|x| x == "/hidden1"), "{paths:?}");
}

/// A sitemap file answers to its own origin's robots.txt and to `--exclude`: one that a.org's
/// robots.txt names on b.org, whose robots.txt disallows everything, is not fetched; nor is a
/// sitemap the operator excluded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemap_answers_to_its_hosts_robots_txt_and_to_exclude() {
    let web = Web::default();
    let a = web.host("127.0.0.96").await;
    let b = web.host("127.0.0.97").await;
    let robots = format!(
        "User-agent: *\nDisallow:\nSitemap: {}\nSitemap: {}\n",
        b.url("/sitemap-for-a.xml"),
        a.url("/private-sitemap.xml")
    );
    a.route(
        "/robots.txt",
        Route::typed(200, "text/plain", robots.as_bytes()),
    );
    a.route("/", Route::html("<p>a</p>"));
    let urlset = |url: String| {
        format!("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>{url}</loc></url></urlset>")
    };
    a.route(
        "/private-sitemap.xml",
        Route::typed(200, "application/xml", urlset(a.url("/listed")).as_bytes()),
    );
    b.route(
        "/robots.txt",
        Route::typed(200, "text/plain", b"User-agent: *\nDisallow: /\n"),
    );
    b.route(
        "/sitemap-for-a.xml",
        Route::typed(200, "application/xml", urlset(a.url("/listed")).as_bytes()),
    );
    a.route("/listed", Route::html("<p>listed</p>"));
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        a.url("/"),
        b.url("/"),
        "--out",
        out.path().display(),
        "--delay",
        "10ms",
        "--exclude",
        "private-sitemap",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let on_b = web.paths_of(&b);
    assert_eq!(on_b, ["/robots.txt"], "{on_b:?}");
    let on_a = web.paths_of(&a);
    assert!(
        !on_a.iter().any(|p| p == "/private-sitemap.xml"),
        "{on_a:?}"
    );
    assert!(!on_a.iter().any(|p| p == "/listed"), "{on_a:?}");
}

/// A sitemap answers to the crawl's limits as a link does: a crawl limited in depth (`-r -l 1`,
/// wget's) reads none unless `--sitemaps` asks, where before it crawled every page of every
/// sitemap; a site out of scope reached by a redirect has its sitemaps left alone (before,
/// fetched and archived, their pages then dropped); `-X` keeps a listed sitemap out; an empty
/// `Sitemap:` line names nothing (before, the site's root was fetched as a sitemap); an RSS
/// feed named as a sitemap gives its entries (before: counted invalid).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemap_answers_to_depth_scope_and_lists() {
    let web = Web::default();
    let a = web.host("127.0.0.218").await;
    let b = web.host("127.0.0.219").await;
    let urlset = |urls: &[String]| {
        let entries: String = urls
            .iter()
            .map(|u| format!("<url><loc>{u}</loc></url>"))
            .collect();
        format!("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{entries}</urlset>")
    };
    let robots = "User-agent: *\nDisallow:\nSitemap:\nSitemap: /maps/kept-out.xml\nSitemap: /sitemap-a.xml\nSitemap: /feed.xml\n";
    a.route(
        "/robots.txt",
        Route::typed(200, "text/plain", robots.as_bytes()),
    );
    a.route(
        "/",
        Route::html(&format!(
            "<a href=\"/go\">partner</a><a href=\"{}\">p</a>",
            a.url("/linked")
        )),
    );
    a.route("/go", Route::redirect(302, &b.url("/")));
    a.route("/linked", Route::html("<p>linked</p>"));
    // A feed named as a sitemap, as the protocol allows: its entries are pages.
    let feed = format!(
        "<rss version=\"2.0\"><channel><item><link>{}</link></item></channel></rss>",
        a.url("/from-feed")
    );
    a.route(
        "/feed.xml",
        Route::typed(200, "application/rss+xml", feed.as_bytes()),
    );
    a.route("/from-feed", Route::html("<p>in the feed</p>"));
    for (path, listed) in [
        ("/sitemap-a.xml", "/listed-a"),
        ("/maps/kept-out.xml", "/kept-out"),
    ] {
        a.route(
            path,
            Route::typed(200, "application/xml", urlset(&[a.url(listed)]).as_bytes()),
        );
        a.route(listed, Route::html("<p>listed</p>"));
    }
    b.route(
        "/robots.txt",
        Route::typed(
            200,
            "text/plain",
            b"User-agent: *\nDisallow:\nSitemap: /sitemap-b.xml\n",
        ),
    );
    b.route("/", Route::html("<p>b</p>"));
    b.route(
        "/sitemap-b.xml",
        Route::typed(
            200,
            "application/xml",
            urlset(&[b.url("/listed-b")]).as_bytes(),
        ),
    );
    let crawl = |extra: &[&str]| {
        let out = tempfile::tempdir().unwrap();
        let mut a_args = args![
            "crawl",
            a.url("/"),
            "--out",
            out.path().display(),
            "--delay",
            "0ms",
            "--allow-private",
            "-q"
        ];
        a_args.extend(extra.iter().map(|s| s.to_string()));
        async move {
            let result = trawl(a_args).await;
            assert_eq!(result.status.code(), Some(0), "{}", text(&result));
            out
        }
    };

    // wget's -r -l 1: the page and its links, no sitemap.
    let _out = crawl(&["-r", "-l", "1"]).await;
    let on_a = web.paths_of(&a);
    assert!(on_a.iter().any(|p| p == "/linked"), "{on_a:?}");
    assert!(
        !on_a
            .iter()
            .any(|p| p.contains("sitemap") || p.contains("listed")),
        "{on_a:?}"
    );

    // Asked for, with the limits: a's sitemap and its page; not b's (out of scope, reached by
    // a redirect), not the one under -X, not the root for the empty line.
    web.clear_hits();
    let _out = crawl(&["-l", "1", "--sitemaps", "-X", "/maps"]).await;
    let on_a = web.paths_of(&a);
    for p in ["/sitemap-a.xml", "/listed-a", "/feed.xml", "/from-feed"] {
        assert!(on_a.iter().any(|x| x == p), "{p}: {on_a:?}");
    }
    assert!(!on_a.iter().any(|p| p.contains("kept-out")), "{on_a:?}");
    assert_eq!(on_a.iter().filter(|p| *p == "/").count(), 1, "{on_a:?}");
    let on_b = web.paths_of(&b);
    assert!(
        on_b.iter().any(|p| p == "/"),
        "the redirect's target is fetched: {on_b:?}"
    );
    assert!(
        !on_b
            .iter()
            .any(|p| p.contains("sitemap") || p.contains("listed")),
        "{on_b:?}"
    );
}
