//! The console's pause and live excludes reach every host, whatever state it is in: hosts whose
//! robots.txt sets a Crawl-delay, a host still waiting for its robots.txt, a host whose pages
//! fail and are retried, and a host whose robots.txt answered 503 (parked for a retry).

use std::time::{Duration, Instant};

use crate::args;
use crate::console::{post, start, status, stop_from_console, wait_for, TOKEN};
use crate::server::{Behavior, Host, Route, Web};

/// Hosts whose robots.txt says `Crawl-delay: 1`.
const SLOW_HOSTS: usize = 8;
/// Hosts with nothing special.
const PLAIN_HOSTS: usize = 8;

/// A page linking to 30 pages under /p/ and 30 under /s2/ of its own host.
fn pages(h: &Host) {
    let mut links = String::new();
    for i in 0..30 {
        for dir in ["p", "s2"] {
            let path = format!("/{dir}/{i}");
            links.push_str(&format!(r#"<a href="{path}">{i}</a>"#));
            h.route(&path, Route::html("<p>a page</p>"));
        }
    }
    h.route("/", Route::html(&links));
}

struct Site {
    web: Web,
    seeds: Vec<String>,
    /// `addr` of every host whose robots.txt sets a Crawl-delay.
    slow: Vec<String>,
}

async fn site() -> Site {
    let web = Web::default();
    let mut seeds = Vec::new();
    let mut slow = Vec::new();
    for i in 0..SLOW_HOSTS + PLAIN_HOSTS {
        let h = web.host(&format!("127.0.41.{}", i + 1)).await;
        pages(&h);
        if i < SLOW_HOSTS {
            h.route(
                "/robots.txt",
                Route::typed(200, "text/plain", b"User-agent: *\nCrawl-delay: 1\n"),
            );
            slow.push(h.addr.to_string());
        }
        seeds.push(h.url("/"));
    }
    // Waiting for its robots.txt: one byte of it every 2 s.
    let waiting = web.host("127.0.41.100").await;
    pages(&waiting);
    waiting.behave(
        "/robots.txt",
        Behavior::Drip {
            head: Vec::new(),
            body: Route::typed(200, "text/plain", b"User-agent: *\nCrawl-delay: 1\n").wire_bytes(),
            every: Duration::from_secs(2),
        },
    );
    seeds.push(waiting.url("/"));
    // Its pages fail (500) and are retried.
    let failing = web.host("127.0.41.101").await;
    let mut links = String::new();
    for i in 0..30 {
        let path = format!("/s2/fail/{i}");
        links.push_str(&format!(r#"<a href="{path}">{i}</a>"#));
        failing.route(&path, Route::typed(500, "text/html", b"<p>oops</p>"));
    }
    failing.route("/", Route::html(&links));
    seeds.push(failing.url("/"));
    // robots.txt answers 503: the host is parked and asks again later.
    let parked = web.host("127.0.41.102").await;
    pages(&parked);
    parked.route("/robots.txt", Route::typed(503, "text/plain", b"busy"));
    seeds.push(parked.url("/"));
    Site { web, seeds, slow }
}

/// Requests that started at or after `from` (host and path).
fn started_since(web: &Web, from: Instant) -> Vec<(String, String)> {
    web.hits()
        .into_iter()
        .filter(|h| h.at >= from)
        .map(|h| (h.host, h.path))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_and_live_excludes_reach_crawl_delay_retrying_and_waiting_hosts() {
    let site = site().await;
    let out = tempfile::tempdir().unwrap();
    let mut crawl_args = args![
        "crawl",
        "--out",
        out.path().display(),
        "--delay",
        "300ms",
        "-c",
        16,
        "--retries",
        5,
        "--robots-retry",
        "500ms",
        "--timeout",
        "30s",
        "--shutdown-timeout",
        "1s",
        "-q",
        "--console-token",
        TOKEN
    ];
    crawl_args.extend(site.seeds.clone());
    let crawl = start(crawl_args);
    let c = crawl.console.clone();
    // Every Crawl-delay host is past its robots.txt and fetching pages.
    wait_for(
        || {
            let hits = site.web.hits();
            site.slow.iter().all(|host| {
                hits.iter()
                    .filter(|h| &h.host == host && h.path.starts_with("/p/"))
                    .count()
                    >= 1
            })
        },
        "pages of every Crawl-delay host",
    )
    .await;

    // Pause: within a second, no request starts on any host.
    let (code, answer) = post(&c, "/api/pause", Some(TOKEN), "");
    assert_eq!(code, 200, "{answer}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    wait_for(
        || {
            let view = status(&c);
            // All but the waiting host's robots.txt, which drips on through the pause.
            view["state"] == "paused" && view["in_flight"].as_u64() <= Some(1)
        },
        "the fetches under way to end",
    )
    .await;
    let quiet_from = Instant::now();
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let during_pause = started_since(&site.web, quiet_from);
    assert!(
        during_pause.is_empty(),
        "{} request(s) started while paused: {during_pause:?}",
        during_pause.len()
    );
    assert_eq!(status(&c)["state"], "paused");

    // Resumed, then an exclude added while running: within a second, no queued URL it matches
    // starts, on any host.
    let (code, _) = post(&c, "/api/resume", Some(TOKEN), "");
    assert_eq!(code, 200);
    let resumed = Instant::now();
    wait_for(
        || {
            started_since(&site.web, resumed)
                .iter()
                .any(|(host, _)| site.slow.contains(host))
        },
        "a Crawl-delay host to be fetched again",
    )
    .await;
    let (code, answer) = post(
        &c,
        "/api/excludes/add",
        Some(TOKEN),
        r#"{"pattern":"/s2/"}"#,
    );
    assert_eq!(code, 200, "{answer}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let excluded_from = Instant::now();
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let after = started_since(&site.web, excluded_from);
    assert!(
        after.iter().any(|(_, path)| path.starts_with("/p/")),
        "the crawl goes on: {after:?}"
    );
    let excluded: Vec<_> = after
        .iter()
        .filter(|(_, path)| path.starts_with("/s2/"))
        .collect();
    assert!(
        excluded.is_empty(),
        "{} excluded URL(s) fetched: {excluded:?}",
        excluded.len()
    );
    stop_from_console(&c, TOKEN, crawl).await;
}
