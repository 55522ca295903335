//! Crawls of a small multi-host site on 127.0.0.x: what is archived, what is never fetched,
//! rotation, politeness and the page target.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use crate::args;
use crate::harness::{crawl_without_delay, read_json, read_records, text, trawl, warc_files, Rec};
use crate::server::{Host, Route, Web};

pub struct Site {
    pub web: Web,
    pub a: Host,
    pub b: Host,
    pub c: Host,
}

/// Three hosts. A and B are seeds; C is only linked from B (out of scope for `--scope domain`,
/// since every IP is its own domain).
pub async fn site() -> Site {
    let web = Web::default();
    let a = web.host("127.0.0.2").await;
    let b = web.host("127.0.0.3").await;
    let c = web.host("127.0.0.4").await;
    a.route(
        "/robots.txt",
        Route::typed(200, "text/plain", b"User-agent: *\nDisallow: /private/\n"),
    );
    a.route(
        "/",
        Route::html(&format!(
            r#"<html><head><title>A</title></head><body>
            <a href="/page1">1</a> <a href="page2">2</a> <a href="/gz">gz</a>
            <a href="/base/">base</a> <a href="/redirect">r</a> <a href="/missing">m</a>
            <a href="/file.pdf">pdf</a> <a href="/file2.pdf">pdf</a> <a href="/data">data</a>
            <a href="/private/secret">s</a>
            <a href="/script-page">script</a> <a href="{}">b</a>
            </body></html>"#,
            b.url("/")
        )),
    );
    a.route(
        "/page1",
        Route::html(r#"<a href="/page2">2</a><a href="/deep/1">d</a><a href="/#frag">home</a>"#),
    );
    a.route(
        "/page2",
        Route::html(&"<p>chunked page</p>".repeat(20)).chunked(),
    );
    a.route(
        "/gz",
        Route::html(r#"<html><a href="/from-gzip">g</a></html>"#).gzip(),
    );
    a.route(
        "/from-gzip",
        Route::html("<p>found through a gzip page</p>"),
    );
    a.route(
        "/base/",
        Route::html(r#"<html><head><base href="/target/"></head><a href="rel">rel</a></html>"#),
    );
    a.route(
        "/target/rel",
        Route::html("<p>resolved against base href</p>"),
    );
    a.route("/redirect", Route::redirect(301, "/page3"));
    a.route("/page3", Route::html("<p>redirect target</p>"));
    for pdf in ["/file.pdf", "/file2.pdf"] {
        a.route(pdf, Route::typed(200, "application/pdf", b"%PDF-1.4 fake"));
    }
    a.route(
        "/data",
        Route::typed(200, "application/octet-stream", &[0u8; 5000]),
    );
    a.route(
        "/private/secret",
        Route::html("<p>must never be fetched</p>"),
    );
    a.route(
        "/script-page",
        Route::html(r#"<script>var u = "/from-script"; document.write('<a href="/from-script2">');</script><a href="/deep/1">d</a>"#),
    );
    a.route("/deep/1", Route::html(r#"<a href="/deep/2">2</a>"#));
    a.route("/deep/2", Route::html(r#"<a href="/deep/3">3</a>"#));
    a.route("/deep/3", Route::html("<p>bottom</p>"));
    b.route(
        "/",
        Route::html(&format!(
            r#"<a href="/b1">b1</a><a href="/b2">b2</a><a href="{}">c</a>"#,
            c.url("/")
        )),
    );
    b.route(
        "/b1",
        Route::html(r#"<a href="/b2">b2</a>"#).gzip().chunked(),
    );
    b.route("/b2", Route::html("<p>b2</p>"));
    c.route("/", Route::html("<p>out of scope</p>"));
    Site { web, a, b, c }
}

fn responses(records: &[Rec]) -> Vec<&Rec> {
    records
        .iter()
        .filter(|r| r.warc_type == "response")
        .collect()
}

/// Pages: 2xx responses (what --max-pages counts).
fn page_uris(records: &[Rec]) -> Vec<String> {
    responses(records)
        .into_iter()
        .filter(|r| {
            r.status().is_some_and(|s| (200..300).contains(&s)) && !r.path().ends_with("robots.txt")
        })
        .map(|r| r.target_uri.clone().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_crawl_archives_each_page_once_and_obeys_rules() {
    let site = site().await;
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("warcs");
    let stats = out.path().join("stats.json");
    let delay = Duration::from_millis(150);
    let result = trawl(args![
        "crawl",
        site.a.url("/"),
        site.b.url("/"),
        "--out",
        dir.display(),
        "--stats",
        stats.display(),
        "--delay",
        "150ms",
        "--records-per-file",
        6,
        "--concurrency",
        4,
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));

    let records = read_records(&dir);
    let mut pages = page_uris(&records);
    pages.sort();
    let mut expected: Vec<String> = [
        "/",
        "/page1",
        "/page2",
        "/gz",
        "/from-gzip",
        "/base/",
        "/target/rel",
        "/page3",
        "/script-page",
        "/deep/1",
        "/deep/2",
        "/deep/3",
    ]
    .iter()
    .map(|p| site.a.url(p))
    .chain(["/", "/b1", "/b2"].iter().map(|p| site.b.url(p)))
    .collect();
    expected.sort();
    assert_eq!(pages, expected, "each expected page archived exactly once");

    // Archived but not pages: robots.txt of both hosts, the redirect, the 404.
    let other: HashMap<String, u16> = responses(&records)
        .into_iter()
        .filter(|r| {
            !r.status().is_some_and(|s| (200..300).contains(&s)) || r.path().ends_with("robots.txt")
        })
        .map(|r| (r.target_uri.clone().unwrap(), r.status().unwrap()))
        .collect();
    assert_eq!(other.get(&site.a.url("/robots.txt")), Some(&200));
    assert_eq!(other.get(&site.b.url("/robots.txt")), Some(&404));
    assert_eq!(other.get(&site.a.url("/redirect")), Some(&301));
    assert_eq!(other.get(&site.a.url("/missing")), Some(&404));
    // Neither robots.txt lists a sitemap, so each origin's /sitemap.xml is tried (--sitemaps).
    assert_eq!(other.get(&site.a.url("/sitemap.xml")), Some(&404));
    assert_eq!(other.get(&site.b.url("/sitemap.xml")), Some(&404));
    assert_eq!(other.len(), 6, "{other:?}");

    // Never requested: robots-disallowed, script text, out of scope.
    let a_paths = site.web.paths_of(&site.a);
    for never in ["/private/secret", "/from-script", "/from-script2"] {
        assert!(!a_paths.contains(&never.to_string()), "{never} was fetched");
    }
    // Of two links ending in `.pdf` in one directory, the first to run is a probe: it found a
    // file, so the other was never requested.
    let pdfs = ["/file.pdf", "/file2.pdf"].map(|p| a_paths.iter().filter(|a| *a == p).count());
    assert_eq!(pdfs.iter().sum::<usize>(), 1, "{a_paths:?}");
    assert!(
        site.web.paths_of(&site.c).is_empty(),
        "out-of-scope host was contacted"
    );
    // Requested once, body not archived: the octet-stream response.
    assert_eq!(a_paths.iter().filter(|p| *p == "/data").count(), 1);
    assert!(responses(&records).iter().all(|r| r.path() != "/data"));
    // Every archived 2xx body is HTML (robots.txt aside).
    for r in responses(&records) {
        if r.status() == Some(200) && !r.path().ends_with("robots.txt") {
            assert!(
                r.http_header("content-type")
                    .unwrap()
                    .starts_with("text/html"),
                "{:?}",
                r.target_uri
            );
        }
    }
    // Each host: robots.txt first, each URL once.
    for host in [&site.a, &site.b] {
        let paths = site.web.paths_of(host);
        assert_eq!(paths.first().map(String::as_str), Some("/robots.txt"));
        let mut dedup = paths.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(
            dedup.len(),
            paths.len(),
            "a URL was fetched twice: {paths:?}"
        );
    }

    // Politeness: no two requests to one host closer than the delay.
    let hits = site.web.hits();
    for host in [&site.a, &site.b] {
        let label = host.addr.to_string();
        let times: Vec<_> = hits
            .iter()
            .filter(|h| h.host == label)
            .map(|h| h.at)
            .collect();
        for pair in times.windows(2) {
            let gap = pair[1].duration_since(pair[0]);
            assert!(gap >= delay, "requests to {label} only {gap:?} apart");
        }
    }

    // Rotation: at most 6 content records per file, pairs never split, warcinfo first.
    let files = warc_files(&dir);
    let total_content = records.iter().filter(|r| r.warc_type != "warcinfo").count();
    assert_eq!(files.len(), total_content.div_ceil(6));
    for f in &files {
        let in_file: Vec<&Rec> = records.iter().filter(|r| &r.file == f).collect();
        assert_eq!(in_file[0].warc_type, "warcinfo");
        assert!(in_file.len() - 1 <= 6);
        for r in &in_file {
            if r.warc_type == "request" {
                let partner = r.concurrent_to.as_ref().unwrap();
                assert!(
                    in_file.iter().any(|o| &o.id == partner),
                    "pair split across files"
                );
            }
        }
    }
    assert!(std::fs::read_dir(&dir).unwrap().all(|e| !e
        .unwrap()
        .path()
        .to_string_lossy()
        .ends_with(".open")));

    // The JSON report agrees.
    let stats = read_json(&stats);
    assert_eq!(stats["pages_archived"], 15);
    assert_eq!(stats["filtered"]["robots"], 1);
    // `/data` and the probe of `.pdf`, each not archived for its type.
    assert_eq!(stats["filtered"]["content_type"], 2);
    assert!(stats["filtered"]["scope"].as_u64().unwrap() >= 1);
    assert!(stats["filtered"]["extension"].as_u64().unwrap() >= 1);
    assert_eq!(stats["status_codes"]["301"], 1);
    assert_eq!(stats["stop_reason"], "frontier_exhausted");
    assert_eq!(stats["warc_files"].as_array().unwrap().len(), files.len());
    // Each response record under its declared media type, with the bytes received for it.
    let mut types: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for r in responses(&records) {
        let media = r.http_header("content-type").map_or("none".into(), |t| {
            t.split(';').next().unwrap().trim().to_ascii_lowercase()
        });
        let entry = types.entry(media).or_default();
        *entry = (entry.0 + 1, entry.1 + r.block.len() as u64);
    }
    assert!(types.len() >= 2, "{types:?}");
    let reported: BTreeMap<String, (u64, u64)> = stats["content_types"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let n = |f: &str| v[f].as_u64().unwrap();
            (k.clone(), (n("responses"), n("bytes")))
        })
        .collect();
    assert_eq!(reported, types);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_hold_the_exact_wire_bytes() {
    let site = site().await;
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        site.b.url("/"),
        "--out",
        out.path().display(),
        "--delay",
        "10ms",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(out.path());
    let b1 = responses(&records)
        .into_iter()
        .find(|r| r.path() == "/b1")
        .expect("b1 archived");
    assert_eq!(
        b1.block,
        site.b.wire_bytes("/b1"),
        "gzip+chunked response stored byte for byte"
    );
    let request = records
        .iter()
        .find(|r| r.warc_type == "request" && r.path() == "/b1")
        .unwrap();
    let req = String::from_utf8_lossy(&request.block);
    assert!(req.starts_with("GET /b1 HTTP/1.1\r\n"), "{req}");
    assert!(req.contains(&format!("Host: {}\r\n", site.b.addr)), "{req}");
    assert!(req.contains("User-Agent: trawl/"), "{req}");
    assert!(req.ends_with("\r\n\r\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_is_exact_under_concurrency() {
    let site = site().await;
    for (target, concurrency) in [(1u64, 4), (5, 8), (9, 3)] {
        let out = tempfile::tempdir().unwrap();
        let result = trawl(args![
            "crawl",
            site.a.url("/"),
            site.b.url("/"),
            "--out",
            out.path().display(),
            "--delay",
            "0ms",
            "--max-pages",
            target,
            "--concurrency",
            concurrency,
            "-q"
        ])
        .await;
        assert_eq!(result.status.code(), Some(0), "{}", text(&result));
        let pages = page_uris(&read_records(out.path()));
        assert_eq!(pages.len() as u64, target, "target {target}: {pages:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_depth_and_host_scope() {
    let site = site().await;
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        site.a.url("/"),
        "--out",
        out.path().display(),
        "--delay",
        "0ms",
        "--max-depth",
        1,
        "--scope",
        "host",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let paths: Vec<String> = site.web.paths_of(&site.a);
    assert!(paths.contains(&"/page1".to_string()));
    assert!(
        !paths.contains(&"/deep/1".to_string()),
        "depth 2 fetched: {paths:?}"
    );
    assert!(
        site.web.paths_of(&site.b).is_empty(),
        "host scope left the seed host"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capped_bodies_are_archived_truncated() {
    let site = site().await;
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        site.a.url("/page2"),
        "--out",
        out.path().display(),
        "--max-body-size",
        100,
        "--max-depth",
        0,
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(out.path());
    let page = responses(&records)
        .into_iter()
        .find(|r| r.path() == "/page2")
        .expect("archived");
    assert_eq!(page.truncated.as_deref(), Some("length"));
    assert!(page.block.len() < site.a.wire_bytes("/page2").len());
}

/// Links that HTML and HTTP hide: each target is reachable only one way, and each is fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_links_are_followed() {
    let web = Web::default();
    let h = web.host("127.0.0.62").await;
    h.route(
        "/",
        Route::html(
            r#"<html><head>
<meta http-equiv="refresh" content="0; url=/via-refresh">
<link rel="canonical" href="/via-canonical"><link rel="alternate" hreflang="de" href="/via-alternate">
<link rel="next" href="/via-next"><link rel="prev" href="/via-prev"></head>
<body><map name="m"><area shape="rect" coords="0,0,1,1" href="/via-area"></map>
<iframe src="/via-iframe"></iframe><a href="/frames">frames</a><a href="/headers">h</a>
<a href="/created">c</a></body></html>"#,
        ),
    );
    h.route(
        "/frames",
        Route::html(r#"<frameset><frame src="/via-frame"></frameset>"#),
    );
    let mut headers = Route::html("<p>links in headers only</p>");
    headers.headers.push((
        "Link".into(),
        r#"</via-link-header>; rel="next", <https://cdn.invalid/>; rel=preconnect"#.into(),
    ));
    headers
        .headers
        .push(("Content-Location".into(), "/via-content-location".into()));
    h.route("/headers", headers);
    let mut created = Route::typed(201, "text/html", b"<p>made</p>");
    created
        .headers
        .push(("Location".into(), "/via-location-201".into()));
    h.route("/created", created);
    let targets = [
        "/via-refresh",
        "/via-canonical",
        "/via-alternate",
        "/via-next",
        "/via-prev",
        "/via-area",
        "/via-iframe",
        "/via-frame",
        "/via-link-header",
        "/via-content-location",
        "/via-location-201",
    ];
    for t in targets {
        h.route(t, Route::html("<p>found</p>"));
    }
    let out = tempfile::tempdir().unwrap();
    let result = crawl_without_delay(h.url("/"), out.path(), &[]).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let paths = web.paths_of(&h);
    for t in targets {
        assert!(paths.iter().any(|p| p == t), "{t} not fetched: {paths:?}");
    }
}
