//! `--resolve` (names pinned to addresses) and `--politeness ip` (requests spaced per
//! address), on names served by loopback addresses.

use std::time::Duration;

use crate::args;
use crate::harness::{read_records, text, trawl, Rec};
use crate::server::{Route, Web};

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

/// A wildcard-DNS site whose page links endless subdomains, in the default scope (its
/// domain): links are followed to `--max-hosts-per-site` of its hosts, the rest counted and
/// said. Before, every one became a host of the frontier (6 million and 4.2 GB in a minute).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_of_endless_subdomains_gives_its_share_of_hosts() {
    let web = Web::default();
    let h = web.host("127.0.0.224").await;
    let port = h.addr.port();
    let links: String = (0..40)
        .map(|i| format!(r#"<a href="http://h{i}.farm.test:{port}/">{i}</a>"#))
        .collect();
    h.route("/", Route::html(&links));
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        format!("http://www.farm.test:{port}/"),
        "--resolve",
        format!("*:{port}:127.0.0.224"),
        "--max-hosts-per-site",
        "10",
        "--delay",
        "0ms",
        "--no-sitemaps",
        "--out",
        out.path().display(),
        "--stats",
        out.path().join("stats.json").display()
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let mut hosts: Vec<String> = web
        .hits()
        .iter()
        .filter_map(|hit| {
            hit.head
                .lines()
                .find_map(|l| {
                    l.strip_prefix("host: ")
                        .or_else(|| l.strip_prefix("Host: "))
                })
                .map(str::to_string)
        })
        .collect();
    hosts.sort();
    hosts.dedup();
    // The seed's host and ten more.
    assert_eq!(hosts.len(), 11, "{hosts:?}");
    let stats = crate::harness::read_json(&out.path().join("stats.json"));
    // Each of the 11 pages links the same 40 hosts: 30 of them past the share.
    assert_eq!(
        stats["filtered"]["site_hosts"],
        11 * 30,
        "{}",
        stats["filtered"]
    );
    assert!(
        text(&result).contains("farm.test has more hosts than --max-hosts-per-site"),
        "{}",
        text(&result)
    );
}

/// https hosts whose first label begins or ends with a hyphen (`foo-.wild.test`, as Tumblr's
/// and Blogspot's blogs are named), served under a wildcard certificate: fetched, with the
/// certificate checked and the real name in the Host field. A certificate for one other
/// exact name is refused. Before, rustls refused the name and the site was never fetched
/// (found by an exploratory crawl).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_hosts_with_hyphen_edged_labels_are_fetched_under_a_wildcard_certificate() {
    let web = Web::default();
    let (h, authority, _) = web
        .tls_host_issued_for("127.0.0.135", vec!["*.wild.test".into()])
        .await;
    let port = h.addr.port();
    h.route(
        "/",
        Route::html(&format!(
            r#"<a href="https://-fate-.wild.test:{port}/b">b</a>"#
        )),
    );
    h.route("/b", Route::html("<p>b</p>"));
    let out = tempfile::tempdir().unwrap();
    let ca = out.path().join("ca.pem");
    std::fs::write(&ca, authority).unwrap();
    let crawl = |seed: String, dir: &str| {
        trawl(args![
            "crawl",
            seed,
            "--resolve",
            format!("foo-.wild.test:{port}:127.0.0.135"),
            "--resolve",
            format!("-fate-.wild.test:{port}:127.0.0.135"),
            "--resolve",
            format!("exact-.other.test:{port}:127.0.0.135"),
            "--ca-certificate",
            ca.display(),
            "--scope",
            "any",
            "--out",
            out.path().join(dir).display(),
            "--delay",
            "0ms"
        ])
    };
    let result = crawl(format!("https://foo-.wild.test:{port}/"), "w").await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let uris: Vec<String> = read_records(&out.path().join("w"))
        .iter()
        .filter(|r| r.warc_type == "response" && r.status() == Some(200))
        .filter_map(|r| r.target_uri.clone())
        .collect();
    assert!(
        uris.contains(&format!("https://foo-.wild.test:{port}/")),
        "{uris:?}"
    );
    assert!(
        uris.contains(&format!("https://-fate-.wild.test:{port}/b")),
        "{uris:?}"
    );
    let hosts = web.field_of_requests(&h, "/b", "host");
    assert_eq!(hosts, [Some(format!("-fate-.wild.test:{port}"))]);
    // The wildcard does not cover another domain: refused as a certificate.
    let other = crawl(format!("https://exact-.other.test:{port}/"), "o").await;
    assert_eq!(other.status.code(), Some(4), "{}", text(&other));
    assert!(text(&other).contains("certificate"), "{}", text(&other));
}
