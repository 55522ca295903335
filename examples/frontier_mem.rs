//! Memory of the frontier with many queued URLs (the baseline for the bounded-memory work in
//! the durability issue). Pushes N canonical URLs over H hosts into a real `Frontier`, then
//! reports RSS per queued URL and the time and size of a state snapshot.
//!
//! Usage: cargo run --release --example frontier_mem -- [N] [HOSTS]   (scripts/bench-state)

use std::time::{Duration, Instant};

use trawl::frontier::{Candidate, Frontier, FrontierConfig};
use url::Url;

fn rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let hosts: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let mut frontier = Frontier::new(FrontierConfig {
        delay: Duration::from_millis(100),
        max_delay: Duration::from_secs(30),
        robots_agent: "trawl".into(),
        obey_robots: true,
        robots_retry: Duration::from_secs(10),
    });
    let before = rss();
    let start = Instant::now();
    let now = Instant::now();
    for i in 0..n {
        let h = (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) % hosts;
        let url = Url::parse(&format!(
            "http://host{h}.example/section/{}/page-{i}.html",
            i % 97
        ))
        .unwrap();
        frontier.push(
            Candidate {
                url,
                depth: (i % 5) as u32,
                redirects: 0,
            },
            now,
        );
    }
    let push_s = start.elapsed().as_secs_f64();
    let after = rss();
    let t = Instant::now();
    let snapshot = frontier.snapshot(std::iter::empty());
    let json = serde_json::to_vec(&snapshot).unwrap();
    println!(
        "{{\"queued\": {}, \"hosts\": {hosts}, \"push_s\": {push_s:.2}, \"rss_mb\": {:.0}, \"bytes_per_url\": {:.0}, \"snapshot_s\": {:.2}, \"snapshot_mb\": {:.0}}}",
        frontier.queued(),
        after as f64 / 1e6,
        (after - before) as f64 / n as f64,
        t.elapsed().as_secs_f64(),
        json.len() as f64 / 1e6
    );
}
