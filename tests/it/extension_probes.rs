//! The extension pre-filter's probes: a link ending in `.png` or `.js` may be an HTML page
//! (MediaWiki's `File:` pages, a repository browser's files, an article named `Node.js`), so
//! the first link of each kind (host, directory, extension) is fetched, and its answer decides
//! for the rest: pages are all archived, files cost one request per directory, and links that
//! answer without content or never answer three.

use crate::args;
use crate::harness::{read_json, read_records, text, trawl};
use crate::server::{Behavior, Route, Web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_behind_file_extensions_are_archived_and_files_cost_a_probe_per_directory() {
    let web = Web::default();
    let h = web.host("127.0.0.122").await;
    let links = |hrefs: &[&str]| -> String {
        hrefs
            .iter()
            .map(|h| format!("<a href=\"{h}\">l</a>"))
            .collect()
    };
    h.route(
        "/",
        Route::html(&links(&[
            "/wiki/File:Logo.png",
            "/wiki/Node.js",
            "/images/a/Logo.png",
            "/images/a/Photo.png",
            "/images/a/Third.png",
            "/repo/blob/main/app.js",
            "/repo/raw/main/app.js",
            "/repo/raw/main/lib.js",
            "/gone/a.zip",
            "/gone/b.zip",
            "/gone/c.zip",
            "/gone/d.zip",
            "/stuck/a.zip",
            "/stuck/b.zip",
            "/stuck/c.zip",
            "/stuck/d.zip",
        ])),
    );
    for zip in ["a", "b", "c", "d"] {
        h.behave(&format!("/stuck/{zip}.zip"), Behavior::Hang);
    }
    // A file's description page links the file and another page of its own kind.
    h.route(
        "/wiki/File:Logo.png",
        Route::html(&links(&["/images/a/Logo.png", "/wiki/File:Photo.png"])),
    );
    h.route("/wiki/File:Photo.png", Route::html("<p>a photo</p>"));
    h.route("/wiki/Node.js", Route::html("<p>an article</p>"));
    h.route("/repo/blob/main/app.js", Route::html("<pre>app</pre>"));
    for png in ["Logo", "Photo", "Third"] {
        h.route(
            &format!("/images/a/{png}.png"),
            Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n"),
        );
    }
    for js in ["app", "lib"] {
        h.route(
            &format!("/repo/raw/main/{js}.js"),
            Route::typed(200, "text/javascript", b"let x = 1;"),
        );
    }
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("stats.json");
    let result = crawl(
        &h.url("/"),
        out.path(),
        // Long enough that a good page of a loaded debug build is not taken for a hung one.
        &["--timeout", "3s", "--retries", "0"],
    )
    .await;
    // Exit code 4: the links that never answered failed.
    assert_eq!(result.status.code(), Some(4), "{}", text(&result));

    let pages = archived_200s(&out.path().join("warcs"));
    assert_eq!(
        pages,
        [
            "/",
            "/repo/blob/main/app.js",
            "/wiki/File:Logo.png",
            "/wiki/File:Photo.png",
            "/wiki/Node.js"
        ]
    );
    let paths = web.paths_of(&h);
    let under = |dir: &str| paths.iter().filter(|p| p.starts_with(dir)).count();
    assert_eq!(under("/images/a/"), 1, "one probe of the images: {paths:?}");
    assert_eq!(
        under("/repo/raw/main/"),
        1,
        "one probe of the raw files: {paths:?}"
    );
    // Links that answer without content (404s), or never answer, get three tries as a kind.
    assert_eq!(under("/gone/"), 3, "{paths:?}");
    assert_eq!(under("/stuck/"), 3, "{paths:?}");
    let stats = read_json(&stats);
    assert_eq!(stats["pages_archived"], 5, "{stats}");
    // The two images and the raw file not fetched, and the fourth links that would 404 and
    // hang.
    assert_eq!(stats["filtered"]["extension"], 5, "{stats}");
    assert_eq!(stats["failed_urls"], 3, "{stats}");
    assert_eq!(stats["filtered"]["content_type"], 2, "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_types_by_content_does_not_lose_pages_to_its_first_file() {
    // Debian's dwww: a package's `.gz` documents are served as what they hold, a man page,
    // reStructuredText, or an HTML rendering of a changelog; tarballs elsewhere as gzip.
    let web = Web::default();
    let h = web.host("127.0.0.125").await;
    let hrefs = [
        "/doc/pkg/ChangeLog.1.gz",
        "/doc/pkg/README.rst.gz",
        "/doc/pkg/changelog.gz",
        "/doc/pkg/NEWS.gz",
        "/dist/a.tar.gz",
        "/dist/b.tar.gz",
        "/dist/c.tar.gz",
    ];
    let index: String = hrefs
        .iter()
        .map(|h| format!("<a href=\"{h}\">l</a>"))
        .collect();
    h.route("/", Route::html(&index));
    h.route(
        "/doc/pkg/ChangeLog.1.gz",
        Route::typed(200, "application/vnd.ieee.1905", b".TH CHANGELOG 1"),
    );
    h.route(
        "/doc/pkg/README.rst.gz",
        Route::typed(200, "text/prs.fallenstein.rst", b"Title\n====="),
    );
    h.route(
        "/doc/pkg/changelog.gz",
        Route::html("<pre>changes</pre><a href=/doc/reached>r</a>"),
    );
    h.route("/doc/pkg/NEWS.gz", Route::html("<pre>news</pre>"));
    h.route("/doc/reached", Route::html("<p>reached</p>"));
    for tarball in ["a", "b", "c"] {
        h.route(
            &format!("/dist/{tarball}.tar.gz"),
            Route::typed(200, "application/x-gzip", b"\x1f\x8b\x08\x00"),
        );
    }
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("stats.json");
    let result = crawl(&h.url("/"), out.path(), &[]).await;
    assert!(result.status.success(), "{}", text(&result));
    let pages = archived_200s(&out.path().join("warcs"));
    assert_eq!(
        pages,
        [
            "/",
            "/doc/pkg/NEWS.gz",
            "/doc/pkg/changelog.gz",
            "/doc/reached"
        ]
    );
    // A tarball served as gzip settles its kind at once.
    let paths = web.paths_of(&h);
    let under = |dir: &str| paths.iter().filter(|p| p.starts_with(dir)).count();
    assert_eq!(under("/dist/"), 1, "{paths:?}");
    let stats = read_json(&stats);
    assert_eq!(stats["filtered"]["extension"], 2, "{stats}");
}

/// Crawls from `url` with no delay and no sitemaps into `out`/warcs, with its stats in
/// `out`/stats.json, and `extra` flags.
async fn crawl(url: &str, out: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut args = args![
        "crawl",
        url,
        "--out",
        out.join("warcs").display(),
        "--stats",
        out.join("stats.json").display(),
        "--delay",
        "0ms",
        "--no-sitemaps",
        "-q"
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    trawl(args).await
}

/// The sorted paths of the 200 responses archived in `dir`, robots.txt aside.
fn archived_200s(dir: &std::path::Path) -> Vec<String> {
    let mut pages: Vec<String> = read_records(dir)
        .iter()
        .filter(|r| r.warc_type == "response" && r.status() == Some(200))
        .map(|r| r.path())
        .filter(|p| p != "/robots.txt")
        .collect();
    pages.sort();
    pages
}
