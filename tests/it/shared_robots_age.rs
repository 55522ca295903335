//! A shared crawl keeps when each robots.txt was fetched: the worker that takes a host over
//! fetches its robots.txt again once it is a day old (RFC 9309 2.4), as one process does,
//! and not before.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::args;
use crate::harness::{text, trawl};
use crate::redis_server::{cli, RedisServer};
use crate::server::{Host, Route, Web};
use crate::shared_workers::{finish, spawn, wait_for_any_output, worker_args};

const PAGES: usize = 40;

fn site(h: &Host) {
    h.route("/robots.txt", robots("/private/"));
    let links: String = (1..=PAGES)
        .map(|i| format!("<a href=/p/{i}>{i}</a>"))
        .collect();
    h.route("/", Route::html(&links));
    for i in 1..=PAGES {
        h.route(&format!("/p/{i}"), Route::html(&format!("<p>page {i}</p>")));
    }
}

fn robots(disallow: &str) -> Route {
    let body = format!("User-agent: *\nDisallow: {disallow}\n");
    Route::typed(200, "text/plain", body.as_bytes())
}

/// The paths `host` was asked for, in order.
fn asked(web: &Web, host: &Host) -> Vec<String> {
    let mut hits: Vec<_> = web
        .hits()
        .into_iter()
        .filter(|h| h.host == host.addr.to_string())
        .collect();
    hits.sort_by_key(|h| h.at);
    hits.into_iter().map(|h| h.path).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_a_day_old_is_fetched_again_by_the_next_worker_and_a_fresh_one_is_not() {
    let web = Web::default();
    let (old, fresh) = (web.host("127.0.0.205").await, web.host("127.0.0.206").await);
    site(&old);
    site(&fresh);
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = vec![tmp.path().join("w1")];
    let extra = ["--delay", "200ms"];
    let mut first = worker_args(&redis.url(), "aged", "w1", &dirs[0], &extra);
    first.extend([old.url("/"), fresh.url("/")]);
    let worker = spawn(first);
    wait_for_any_output(&dirs, 3_000).await;
    let stop = trawl(args!["stop", "--redis", redis.url(), "--crawl-id", "aged"]).await;
    assert_eq!(stop.status.code(), Some(0), "{}", text(&stop));
    let (code, err) = finish(worker).await;
    assert_eq!(code, Some(130), "{err}");
    let before = (asked(&web, &old).len(), asked(&web, &fresh).len());
    // Both sites now forbid /p/. The first one's robots.txt was fetched a day and an hour ago.
    old.route("/robots.txt", robots("/p/"));
    fresh.route("/robots.txt", robots("/p/"));
    let keys = cli(redis.port, &["--scan", "--pattern", "*:host:127.0.0.205"]);
    let key = keys.lines().next().expect("the host's record in Redis");
    let field = format!("rt:http://{}", old.addr);
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let aged = now_ms - Duration::from_secs(25 * 3600).as_millis();
    assert_eq!(
        cli(redis.port, &["HEXISTS", key, &field]),
        "1",
        "the fetch time is kept"
    );
    cli(redis.port, &["HSET", key, &field, &aged.to_string()]);
    let worker = spawn(worker_args(&redis.url(), "aged", "w1", &dirs[0], &extra));
    let (code, err) = finish(worker).await;
    assert_eq!(code, Some(0), "{err}");

    let (old_paths, fresh_paths) = (asked(&web, &old), asked(&web, &fresh));
    let after_old = &old_paths[before.0..];
    assert_eq!(
        after_old.first().map(String::as_str),
        Some("/robots.txt"),
        "{old_paths:?}"
    );
    assert!(
        !after_old.iter().any(|p| p.starts_with("/p/")),
        "fetched against the new rules: {old_paths:?}"
    );
    // A day has not passed for the other one: its rules hold, and its pages are fetched.
    let after_fresh = &fresh_paths[before.1..];
    assert!(
        !after_fresh.iter().any(|p| p == "/robots.txt"),
        "{fresh_paths:?}"
    );
    assert!(
        after_fresh.iter().any(|p| p.starts_with("/p/")),
        "{fresh_paths:?}"
    );
}
