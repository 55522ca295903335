//! `--no-parent` (wget's name): on a seed's host, links stay inside the seed's directory, as
//! `wget -r -np` keeps them; page requisites, sitemaps and other hosts are not limited, and a
//! seed that redirects brings its target's directory; where a seed redirects is not held to
//! `--include` or `-I` either.

use crate::args;
use crate::harness::{read_json, text, trawl};
use crate::server::{Route, Web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_stay_inside_the_seeds_directories() {
    let web = Web::default();
    let a = web.host("127.0.0.81").await;
    let b = web.host("127.0.0.82").await;
    let links = |hrefs: &[&str]| -> String {
        let mut html: String = hrefs
            .iter()
            .map(|h| format!("<a href=\"{h}\">l</a>"))
            .collect();
        html.push_str("<img src=\"/static/logo.png\">");
        html
    };
    let other_host = b.url("/other/d.html");
    a.route(
        "/docs/v2/index.html",
        Route::html(&links(&[
            "a.html",
            "sub/b.html",
            "/docs/other.html",
            "/docs/v2",
            "/docs/v2x/c.html",
            &other_host,
        ])),
    );
    a.route("/start/", Route::redirect(301, "/moved/"));
    a.route(
        "/moved/",
        Route::html(&links(&["in.html", "/elsewhere.html"])),
    );
    let listed = format!(
        "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>{}</loc></url><url><loc>{}</loc></url></urlset>",
        a.url("/docs/v2/from-sitemap.html"),
        a.url("/outside-sitemap.html")
    );
    a.route(
        "/sitemap.xml",
        Route::typed(200, "application/xml", listed.as_bytes()),
    );
    a.route(
        "/static/logo.png",
        Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n"),
    );
    for path in [
        "/docs/v2/a.html",
        "/docs/v2/sub/b.html",
        "/docs/v2/from-sitemap.html",
        "/moved/in.html",
        "/docs/other.html",
        "/docs/v2",
        "/docs/v2x/c.html",
        "/elsewhere.html",
        "/outside-sitemap.html",
    ] {
        a.route(path, Route::html("<p>page</p>"));
    }
    b.route("/other/d.html", Route::html("<a href=\"/up.html\">up</a>"));
    b.route("/up.html", Route::html("<p>b's root</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("stats.json");
    let result = trawl(args![
        "crawl",
        a.url("/docs/v2/index.html"),
        a.url("/start/"),
        "--no-parent",
        "--allow-private",
        "--page-requisites",
        "--scope",
        "any",
        "--out",
        out.path().join("warcs").display(),
        "--stats",
        stats.display(),
        "--delay",
        "0ms",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let stats = read_json(&stats);
    let mut fetched = web.paths_of(&a);
    fetched.sort();
    fetched.dedup();
    let expected = [
        "/docs/v2/a.html",
        "/docs/v2/from-sitemap.html",
        "/docs/v2/index.html",
        "/docs/v2/sub/b.html",
        // A page that names no icon brings the origin's (a requisite, not limited).
        "/favicon.ico",
        "/moved/",
        "/moved/in.html",
        "/robots.txt",
        "/sitemap.xml",
        "/start/",
        "/static/logo.png",
    ];
    assert_eq!(fetched, expected, "{stats}");
    // Another host is not limited by a seed's directory.
    let mut on_b = web.paths_of(&b);
    on_b.retain(|p| p != "/robots.txt" && p != "/sitemap.xml");
    on_b.sort();
    assert_eq!(
        on_b,
        ["/favicon.ico", "/other/d.html", "/up.html"],
        "{stats}"
    );
    assert_eq!(stats["filtered"]["scope"], 5, "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_a_seed_redirects_is_crawled_under_include_patterns() {
    // `/` redirects to `/en/`, whose links lead to `/en/blog/`: `--include /blog/` (and wget's
    // `-I /en/blog`) keeps the crawl to the blog, from the seed's own redirect, as wget does.
    let web = crate::server::Web::default();
    let h = web.host("127.0.0.94").await;
    h.route("/", crate::server::Route::redirect(302, "/en/"));
    h.route(
        "/en/",
        crate::server::Route::html("<a href=/en/blog/1>1</a><a href=/en/about>a</a>"),
    );
    h.route("/en/blog/1", crate::server::Route::html("<p>post</p>"));
    h.route("/en/about", crate::server::Route::html("<p>about</p>"));
    for flags in [&["--include", "/blog/"][..], &["-r", "-I", "/en/blog"][..]] {
        let out = tempfile::tempdir().unwrap();
        let stats = crate::hostile_cases::crawl(h.url("/"), out.path(), flags).await;
        let records = crate::harness::read_records(&out.path().join("warcs"));
        let got = |path: &str| crate::hostile_cases::responses(&records, path).len();
        assert_eq!(
            (got("/en/"), got("/en/blog/1")),
            (1, 1),
            "{flags:?} {stats}"
        );
        assert_eq!(got("/en/about"), 0, "{flags:?} {stats}");
    }
}
