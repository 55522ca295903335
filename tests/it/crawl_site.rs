//! Crawls of a small multi-host site on 127.0.0.x: what is archived, what is never fetched,
//! rotation, politeness and the page target.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use crate::args;
use crate::harness::{read_json, read_records, text, trawl, warc_files, Rec};
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

/// `--resolve HOST:PORT:ADDR` pins names to addresses (curl's flag): two names served by one
/// loopback address are crawled under their names, the pinned address is allowed by the SSRF
/// guard, an unpinned name is a DNS failure (counted, not a crash), a bad value is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_pins_names_to_addresses() {
    let web = Web::default();
    let h = web.host("127.0.0.63").await;
    let port = h.addr.port();
    h.route(
        "/",
        Route::html(&format!(
            r#"<a href="http://www.site-b.test:{port}/b">b</a><a href="http://unpinned.test:{port}/">u</a>"#
        )),
    );
    h.route("/b", Route::html("<p>b</p>"));
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        format!("http://site-a.test:{port}/"),
        "--resolve",
        format!("site-a.test:{port}:127.0.0.63"),
        "--resolve",
        format!("WWW.Site-B.test:{port}:[::1],127.0.0.63"),
        "--scope",
        "any",
        "--out",
        out.path().display(),
        "--delay",
        "0ms",
        "--retries",
        0,
        "-q"
    ])
    .await;
    // The unpinned name fails (exit 4: some fetches failed); the pinned ones are archived.
    assert_eq!(result.status.code(), Some(4), "{}", text(&result));
    let records = read_records(out.path());
    let responses: Vec<&Rec> = records
        .iter()
        .filter(|r| r.warc_type == "response")
        .collect();
    let uris: Vec<&str> = responses
        .iter()
        .filter_map(|r| r.target_uri.as_deref())
        .collect();
    assert!(
        uris.contains(&format!("http://site-a.test:{port}/").as_str()),
        "{uris:?}"
    );
    assert!(
        uris.contains(&format!("http://www.site-b.test:{port}/b").as_str()),
        "{uris:?}"
    );
    assert!(!uris.iter().any(|u| u.contains("unpinned")));
    assert!(web.paths_of(&h).contains(&"/b".to_string()));

    let bad = trawl(args![
        "crawl",
        "http://a.test/",
        "--resolve",
        "a.test:80:not-an-ip",
        "--out",
        out.path().join("bad").display()
    ])
    .await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad).contains("not an IP address"), "{}", text(&bad));
}

/// `--politeness ip`: 20 host names pinned to one loopback address are served as one server:
/// it never sees two requests closer than the delay. Under `host` (the default) the same crawl
/// sends them much closer, so the test shows the effect, not only that the flag parses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ip_politeness_spaces_requests_to_a_shared_address() {
    async fn crawl(politeness: &str) -> Vec<Duration> {
        let web = Web::default();
        let h = web.host("127.0.0.64").await;
        let port = h.addr.port();
        let links: String = (1..20)
            .map(|i| format!(r#"<a href="http://h{i}.shared.test:{port}/">{i}</a>"#))
            .collect();
        h.route("/", Route::html(&links));
        let out = tempfile::tempdir().unwrap();
        let result = trawl(args![
            "crawl",
            format!("http://h0.shared.test:{port}/"),
            "--resolve",
            format!("*:{port}:127.0.0.64"),
            "--politeness",
            politeness,
            "--scope",
            "any",
            "--delay",
            "100ms",
            "--out",
            out.path().display(),
            "-q"
        ])
        .await;
        assert_eq!(result.status.code(), Some(0), "{}", text(&result));
        let mut times: Vec<_> = web.hits().iter().map(|hit| hit.at).collect();
        times.sort();
        // 20 pages, 20 robots.txt and 20 /sitemap.xml, all on one address.
        assert_eq!(times.len(), 60, "{politeness}");
        times.windows(2).map(|w| w[1] - w[0]).collect()
    }
    let by_ip = crawl("ip").await;
    let smallest = by_ip.iter().min().unwrap();
    assert!(
        *smallest >= Duration::from_millis(99),
        "two requests {smallest:?} apart under --politeness ip"
    );
    let by_host = crawl("host").await;
    assert!(
        by_host.iter().min().unwrap() < &Duration::from_millis(50),
        "per-host politeness should overlap the 20 names"
    );
    // A shared crawl leases hosts one by one: groups are refused there, with the reason.
    let out = tempfile::tempdir().unwrap();
    let refused = trawl(args![
        "crawl",
        "http://a.test/",
        "--redis",
        "redis://127.0.0.1:1/",
        "--crawl-id",
        "x",
        "--politeness",
        "domain",
        "--out",
        out.path().display()
    ])
    .await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("--politeness"),
        "{}",
        text(&refused)
    );
}

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

/// `--order`: under `path-depth` a host's URLs are fetched fewest path segments first; under
/// `bfs` (default) in link order; under `random` in an order of their own. A small
/// `--max-pages` shows which pages each order archives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_order_changes_what_is_fetched_first() {
    async fn crawl(ip: &str, order: &str, max_pages: u32) -> Vec<String> {
        let web = Web::default();
        let h = web.host(ip).await;
        // Deep paths first in the document, shallow ones last.
        let mut links = String::new();
        for i in 0..30 {
            let depth = 6 - (i / 5);
            let path: String =
                (0..depth).map(|d| format!("/s{d}")).collect::<String>() + &format!("/p{i}");
            links.push_str(&format!(r#"<a href="{path}">{i}</a>"#));
            h.route(&path, Route::html("<p>leaf</p>"));
        }
        h.route("/", Route::html(&links));
        let out = tempfile::tempdir().unwrap();
        crawl_in_order(&h, out.path(), order, Duration::ZERO, max_pages).await;
        web.paths_of(&h)
            .into_iter()
            .filter(|p| p != "/" && p != "/robots.txt")
            .collect()
    }
    let segments = |p: &String| p.split('/').filter(|s| !s.is_empty()).count();

    let by_path = crawl("127.0.0.68", "path-depth", 11).await;
    assert_eq!(by_path.len(), 10, "{by_path:?}");
    let counts: Vec<usize> = by_path.iter().map(segments).collect();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    assert!(
        counts.iter().all(|&c| c <= 3),
        "the shallowest pages come first: {counts:?}"
    );

    let by_link = crawl("127.0.0.69", "bfs", 11).await;
    let counts: Vec<usize> = by_link.iter().map(segments).collect();
    assert!(
        counts.iter().all(|&c| c >= 6),
        "bfs follows link order: {counts:?}"
    );

    let sampled = crawl("127.0.0.70", "random", 31).await;
    assert_eq!(sampled.len(), 30);
    let in_link_order: Vec<String> = by_link_order_all();
    assert_ne!(sampled, in_link_order, "random order equals link order");

    fn by_link_order_all() -> Vec<String> {
        (0..30)
            .map(|i| {
                let depth = 6 - (i / 5);
                (0..depth).map(|d| format!("/s{d}")).collect::<String>() + &format!("/p{i}")
            })
            .collect()
    }
}

/// `--order backlinks` on a site whose link graph has known in-degrees: the root links to 60
/// hubs (in-degree 1), every hub links to the same 10 popular pages (in-degree 60) and to two
/// leaves of its own (in-degree 1). With a small `--max-pages`, bfs archives hubs only; under
/// backlinks the popular pages move up once the re-rank pass counts their links, so the mean
/// in-degree of what is archived is far higher. Politeness and robots.txt still hold.
/// A site whose link graph has known in-degrees: the root links to `hubs` hubs (in-degree 1),
/// every hub to the same `popular` pages `/t*` (in-degree `hubs`) and to two leaves of its own
/// (in-degree 1).
pub(crate) fn hub_site(h: &Host, hubs: usize, popular: usize) {
    let home: String = (0..hubs)
        .map(|i| format!(r#"<a href="/h{i}">h</a>"#))
        .collect();
    h.route("/", Route::html(&home));
    for i in 0..hubs {
        let mut links: String = (0..popular)
            .map(|t| format!(r#"<a href="/t{t}">t</a>"#))
            .collect();
        links.push_str(&format!(r#"<a href="/l{i}a">a</a><a href="/l{i}b">b</a>"#));
        h.route(&format!("/h{i}"), Route::html(&links));
        h.route(&format!("/l{i}a"), Route::html("<p>leaf</p>"));
        h.route(&format!("/l{i}b"), Route::html("<p>leaf</p>"));
    }
    for t in 0..popular {
        h.route(&format!("/t{t}"), Route::html("<p>popular</p>"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backlinks_order_archives_the_most_linked_pages_first() {
    const HUBS: usize = 60;
    const POPULAR: usize = 10;
    let delay = Duration::from_millis(40);
    async fn crawl(ip: &str, order: &str, delay: Duration) -> (Vec<String>, Vec<Duration>) {
        let web = Web::default();
        let h = web.host(ip).await;
        h.route(
            "/robots.txt",
            Route::typed(200, "text/plain", b"User-agent: *\nDisallow: /t9\n"),
        );
        hub_site(&h, HUBS, POPULAR);
        let out = tempfile::tempdir().unwrap();
        crawl_in_order(&h, out.path(), order, delay, 45).await;
        let label = h.addr.to_string();
        let times: Vec<_> = web
            .hits()
            .iter()
            .filter(|x| x.host == label)
            .map(|x| x.at)
            .collect();
        let gaps = times
            .windows(2)
            .map(|p| p[1].duration_since(p[0]))
            .collect();
        let archived = read_records(out.path())
            .into_iter()
            .filter(|r| r.warc_type == "response")
            .filter_map(|r| r.target_uri)
            .filter(|u| !u.ends_with("/robots.txt"))
            .collect();
        (archived, gaps)
    }
    let in_degree = |url: &String| -> usize {
        let path = url.rsplit('/').next().unwrap_or("");
        match path.chars().next() {
            Some('t') => HUBS,
            Some('h' | 'l') => 1,
            _ => 0,
        }
    };
    let mean =
        |pages: &[String]| pages.iter().map(in_degree).sum::<usize>() as f64 / pages.len() as f64;

    let (bfs, _) = crawl("127.0.0.75", "bfs", delay).await;
    let (ranked, gaps) = crawl("127.0.0.76", "backlinks", delay).await;
    assert_eq!(bfs.len(), 45);
    assert_eq!(ranked.len(), 45);
    let (m_bfs, m_ranked) = (mean(&bfs), mean(&ranked));
    eprintln!("mean in-degree of the archived pages: bfs {m_bfs:.2}, backlinks {m_ranked:.2}");
    assert!(
        m_ranked > 5.0 * m_bfs.max(1.0),
        "mean in-degree {m_ranked:.1} under backlinks, {m_bfs:.1} under bfs: {ranked:?}"
    );
    let popular = ranked.iter().filter(|u| in_degree(u) == HUBS).count();
    assert_eq!(
        popular,
        POPULAR - 1,
        "every allowed popular page: {ranked:?}"
    );
    assert!(
        !ranked.iter().any(|u| u.ends_with("/t9")),
        "robots.txt still applies"
    );
    assert!(
        gaps.iter().all(|&g| g >= delay),
        "politeness still applies: {gaps:?}"
    );
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
        let archived: Vec<String> = read_records(out.path())
            .into_iter()
            .filter(|r| r.warc_type == "response")
            .filter_map(|r| r.target_uri)
            .collect();
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
    let archived: Vec<String> = read_records(out.path())
        .into_iter()
        .filter(|r| r.warc_type == "response")
        .filter_map(|r| r.target_uri)
        .collect();
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
    let archived: Vec<String> = read_records(out.path())
        .into_iter()
        .filter(|r| r.warc_type == "response")
        .filter_map(|r| r.target_uri)
        .collect();
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

/// Crawls `h` from `/` in `order`, without sitemaps, up to `max_pages`; asserts success.
async fn crawl_in_order(
    h: &Host,
    out: &std::path::Path,
    order: &str,
    delay: Duration,
    max_pages: u32,
) {
    let res = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.display(),
        "--delay",
        format!("{}ms", delay.as_millis()),
        "-q",
        "--order",
        order,
        "--max-pages",
        max_pages,
        "--no-sitemaps"
    ])
    .await;
    assert!(res.status.success(), "{}", text(&res));
}

/// `trawl crawl URL --out OUT --delay 0ms -q EXTRA...`.
pub async fn crawl_without_delay(
    url: String,
    out: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    let mut a = args!["crawl", url, "--out", out.display(), "--delay", "0ms", "-q"];
    a.extend(extra.iter().map(|s| s.to_string()));
    trawl(a).await
}
