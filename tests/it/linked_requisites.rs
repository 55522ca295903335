//! `--page-requisites` when a page needs a URL the crawl first met as a link: the same image
//! behind `<a href>` and `<img src>` (a thumbnail that links itself, Javadoc's module graphs),
//! or linked from one page and embedded in another. One seen set holds every URL, so the
//! requisite was a duplicate of the link, and the link, a file of a type not archived, left
//! the page without its image.

use crate::args;
use crate::harness::{read_json, read_records, text, trawl};
use crate::server::{Route, Web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requisite_met_first_as_a_link_is_archived() {
    let web = Web::default();
    let h = web.host("127.0.0.126").await;
    h.route(
        "/",
        Route::html(
            r#"<a href="/m/graph.svg"><img src="/m/graph.svg"></a>
<a href="/full/a.jpg">a</a> <a href="/full/b.jpg">b</a> <a href="/full/c.jpg">c</a>
<a href="/photos/">photos</a>"#,
        ),
    );
    h.route("/photos/", Route::html(r#"<a href="/photos/b">b</a>"#));
    // Found one hop after its links, each already fetched or declined unfetched.
    h.route(
        "/photos/b",
        Route::html(r#"<img src="/full/a.jpg"><img src="/full/b.jpg">"#),
    );
    let svg = br#"<svg xmlns="http://www.w3.org/2000/svg"><title>m</title></svg>"#;
    h.route("/m/graph.svg", Route::typed(200, "image/svg+xml", svg));
    for jpg in ["a", "b", "c"] {
        let path = format!("/full/{jpg}.jpg");
        h.route(
            &path,
            Route::typed(200, "image/jpeg", b"\xff\xd8\xff\xe0jfif"),
        );
    }

    for requisites in [true, false] {
        let out = tempfile::tempdir().unwrap();
        let mut args = args![
            "crawl",
            h.url("/"),
            "--out",
            out.path().join("warcs").display(),
            "--stats",
            out.path().join("stats.json").display(),
            "--delay",
            "0ms",
            "--no-sitemaps",
            "-q"
        ];
        if requisites {
            args.push("--page-requisites".into());
        }
        let before = web.paths_of(&h).len();
        let res = trawl(args).await;
        assert_eq!(res.status.code(), Some(0), "{}", text(&res));
        let mut archived: Vec<String> = read_records(&out.path().join("warcs"))
            .iter()
            .filter(|r| r.warc_type == "response" && r.status() == Some(200))
            .map(|r| r.path())
            .filter(|p| p.starts_with("/m/") || p.starts_with("/full/"))
            .collect();
        archived.sort();
        let fetched = web.paths_of(&h)[before..].to_vec();
        let times = |p: &str| fetched.iter().filter(|f| *f == p).count();
        if !requisites {
            // Links to files of a type not archived: the first of a kind is probed.
            assert!(archived.is_empty(), "{archived:?}");
            continue;
        }
        // What pages need, once each; what a page only links, not at all.
        assert_eq!(
            archived,
            ["/full/a.jpg", "/full/b.jpg", "/m/graph.svg"],
            "{fetched:?}"
        );
        // The same page's link and image: one request.
        assert_eq!(times("/m/graph.svg"), 1, "{fetched:?}");
        // A link fetched before a page needed it: once as a link, once as a requisite.
        assert!(times("/full/a.jpg") <= 2, "{fetched:?}");
        assert!(times("/full/b.jpg") <= 2, "{fetched:?}");
        let stats = read_json(&out.path().join("stats.json"));
        // And /favicon.ico, the icon a browser asks for (404 here).
        let r = &stats["requisites"];
        assert_eq!(r["archived"], 4, "{stats}");
        assert_eq!(r["queued"], 4, "{stats}");
        assert_eq!(
            stats["pages_archived"], 3,
            "requisites are not pages: {stats}"
        );
    }
}
