//! `--limit-rate` (wget's name): the crawl reads no faster than the rate over all its
//! connections, and what it reads is archived whole: the waits the rate makes do not count
//! toward `--fetch-timeout`. (A lower bound on the time a crawl takes: a slow machine only
//! makes it longer.)

use std::time::{Duration, Instant};

use crate::harness::{read_records, text};
use crate::referer::crawl;
use crate::server::{Behavior, Route, Web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_reads_no_faster_than_its_rate_and_archives_everything_whole() {
    let web = Web::default();
    let a = web.host("127.0.0.90").await;
    let b = web.host("127.0.0.91").await;
    // Four pages of 100 KB on two hosts, fetched at once without the limit.
    let big = format!("<html><body>{}</body></html>", "x".repeat(100_000));
    let mut index = String::new();
    for (host, path) in [(&a, "/1"), (&a, "/2"), (&b, "/3"), (&b, "/4")] {
        host.route(path, Route::html(&big));
        index.push_str(&format!(r#"<a href="{}">p</a>"#, host.url(path)));
    }
    a.route("/", Route::html(&index));
    let out = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let flags = ["--scope", "any", "--limit-rate", "160KB", "--no-sitemaps"];
    let result = crawl(&a.url("/"), out.path(), &flags).await;
    let took = started.elapsed();
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    // 400 KB at 160 KB/s, less the quarter second's burst: at least 2.25 s.
    assert!(took >= Duration::from_millis(2250), "took {took:?}");
    let records = read_records(out.path());
    let whole = records
        .iter()
        .filter(|r| r.warc_type == "response" && r.truncated.is_none())
        .filter(|r| r.block.len() > 100_000)
        .count();
    assert_eq!(whole, 4, "{}", text(&result));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_waits_of_the_rate_do_not_count_toward_the_fetch_timeout() {
    let web = Web::default();
    let a = web.host("127.0.0.90").await;
    // 400 KB: half at once, half 2.5 s later. At 100 KB/s the crawl waits ~1.75 s over the
    // first half and ~2 s over the second, so the server's own time is ~0.75 s, inside
    // --fetch-timeout 3s (room for a loaded machine's late wake-ups), and the fetch's ~4.5 s
    // of wall time is not.
    let half = vec![b'x'; 200_000];
    let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 400000\r\nConnection: close\r\n\r\n";
    a.behave(
        "/big",
        Behavior::Parts {
            head: head.to_vec(),
            parts: vec![
                (Duration::ZERO, half.clone()),
                (Duration::from_millis(2500), half),
            ],
        },
    );
    let out = tempfile::tempdir().unwrap();
    let flags = [
        "--limit-rate",
        "100KB",
        "--fetch-timeout",
        "3s",
        "--no-sitemaps",
    ];
    let result = crawl(&a.url("/big"), out.path(), &flags).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(out.path());
    let page = records
        .iter()
        .find(|r| r.warc_type == "response" && r.target_uri.as_deref() == Some(&a.url("/big")))
        .expect("the page's response record");
    assert_eq!(page.truncated, None);
    assert!(page.block.len() > 400_000);
}
