//! Memory and speed of the frontier with many queued URLs (the bounded-memory goal of the
//! durability issue: 10 million queued URLs under 300 MB RSS). Drives the real `Frontier` on a
//! real on-disk store the way a crawl does:
//!
//! 1. every host gets a robots.txt (~1 KB, with a Crawl-delay) through a robots job;
//! 2. N new URLs are offered over H hosts, each followed by a duplicate offer of a URL seen
//!    earlier (links repeat across pages), with a checkpoint every 100,000 offers (a busy
//!    crawl's 5-second save interval);
//! 3. pages are taken and completed, as fetches would;
//! 4. the store is reopened, as a resumed crawl does.
//!
//! Given a DIR that already holds a store (say one left by `kill -9` of an earlier run),
//! `open_s` is the time to open it, including redb's crash repair.
//!
//! Prints one JSON line: rates, RSS and peak RSS (VmHWM) at each step, the store's size, and
//! where its bytes go (`space`: rows and pages of the queue and the seen set, free bytes).
//!
//! Usage: cargo run --release --example frontier_mem -- [N] [HOSTS] [DIR] [CHECKPOINT]
//! (scripts/bench state); CHECKPOINT is the offers between checkpoints (default 100,000; a
//! crawl admitting 100,000 URLs/s saves every 5 s, about 500,000).

use std::time::{Duration, Instant};

use trawl::crawl_db::CrawlDb;
use trawl::frontier::{Candidate, Frontier, FrontierConfig, JobKind, Next, RobotsOutcome};
use url::Url;

const POPS: u64 = 200_000;

fn status_kb(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0)
}

fn mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

fn config() -> FrontierConfig {
    FrontierConfig {
        delay_factor: 0.0,
        delay: Duration::from_millis(100),
        random_wait: false,
        max_delay: Duration::from_secs(30),
        robots_agent: "trawl".into(),
        obey_robots: true,
        robots_retry: Duration::from_secs(10),
        robots_attempts: 3,
        politeness: trawl::frontier::PolitenessKey::Host,
        sitemaps: false,
        order: trawl::frontier::CrawlOrder::Bfs,
    }
}

fn url_of(i: u64, hosts: u64) -> Url {
    let h = (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) % hosts;
    Url::parse(&format!(
        "http://www.host{h}.example/section/{}/article-{i}/index.html?ref=nav",
        i % 97
    ))
    .expect("valid URL")
}

fn robots_txt(h: u64) -> Vec<u8> {
    let mut body = String::from("User-agent: *\nCrawl-delay: 1\n");
    for i in 0..40 {
        body.push_str(&format!("Disallow: /private-{h}/area-{i}/\n"));
    }
    body.into_bytes()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let hosts: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let tmp;
    let dir = match args.get(3) {
        Some(d) => std::path::PathBuf::from(d),
        None => {
            tmp = tempfile::tempdir().expect("temp dir");
            tmp.path().to_path_buf()
        }
    };
    let checkpoint_every: u64 = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let base_kb = status_kb("VmRSS:");
    // Opening an existing store left by a kill also measures redb's repair.
    let start = Instant::now();
    let store = Box::new(CrawlDb::open(&dir).expect("store"));
    let mut frontier = Frontier::open(config(), store, Instant::now()).expect("frontier");
    let open_s = start.elapsed().as_secs_f64();
    let mut now = Instant::now();

    // 1. A robots.txt per host.
    for h in 0..hosts {
        let url = Url::parse(&format!("http://www.host{h}.example/")).expect("valid URL");
        frontier.push(
            Candidate {
                url,
                depth: 0,
                redirects: 0,
                requisite: 0,
                referer: None,
            },
            now,
        );
    }
    let mut robots = 0u64;
    while let Next::Job(job) = frontier.next(now) {
        if let JobKind::Robots { .. } = job.kind {
            let h: u64 = job.host["www.host".len()..job.host.len() - ".example".len()]
                .parse()
                .expect("host number");
            let body = robots_txt(h);
            frontier.robots_result(
                &job,
                RobotsOutcome::Fetched {
                    status: 200,
                    body,
                    retry_after: None,
                },
                now,
            );
            robots += 1;
        } else {
            frontier.complete(&job.host, now);
        }
    }

    // 2. N new URLs, each with a duplicate offer.
    let start = Instant::now();
    let mut checkpoint_s = Vec::new();
    for i in 0..n {
        for url in [url_of(i, hosts), url_of(i / 2, hosts)] {
            // Found on its section's page, as a crawl's links mostly are.
            let referer = format!("{}/section/{}/", &url[..url::Position::BeforePath], i % 97);
            frontier.push(
                Candidate {
                    url,
                    depth: 1 + (i % 5) as u32,
                    redirects: 0,
                    requisite: 0,
                    referer: Some(referer.into()),
                },
                now,
            );
        }
        if (i + 1) % checkpoint_every == 0 {
            let t = Instant::now();
            frontier.checkpoint(&[]).expect("checkpoint");
            checkpoint_s.push(t.elapsed().as_secs_f64());
        }
    }
    let t = Instant::now();
    frontier.checkpoint(&[]).expect("checkpoint");
    checkpoint_s.push(t.elapsed().as_secs_f64());
    let push_s = start.elapsed().as_secs_f64();
    let queued = frontier.queued();
    let rss_queued_kb = status_kb("VmRSS:");
    checkpoint_s.sort_by(f64::total_cmp);
    let checkpoint_median = checkpoint_s[checkpoint_s.len() / 2];
    let checkpoint_max = checkpoint_s[checkpoint_s.len() - 1];

    // 3. Take and complete pages.
    let start = Instant::now();
    let mut popped = 0u64;
    while popped < POPS {
        match frontier.next(now) {
            Next::Job(job) => {
                frontier.complete(&job.host, now);
                popped += 1;
            }
            Next::Wait(at) => now = at,
            Next::Idle | Next::Exhausted => break,
        }
    }
    let pop_s = start.elapsed().as_secs_f64();
    frontier.checkpoint(&[]).expect("checkpoint");
    let peak_kb = status_kb("VmHWM:");
    drop(frontier);

    // 4. Reopen, as a resumed crawl.
    let start = Instant::now();
    let store = Box::new(CrawlDb::open(&dir).expect("store"));
    let frontier = Frontier::open(config(), store, Instant::now()).expect("frontier");
    let reopen_s = start.elapsed().as_secs_f64();
    let queued_after_reopen = frontier.queued();
    let rss_after_reopen_kb = status_kb("VmRSS:");
    drop(frontier);
    let space = CrawlDb::open(&dir)
        .and_then(|mut db| db.space())
        .map(|s| serde_json::to_string(&s).expect("plain data"))
        .unwrap_or_else(|e| format!("\"{e}\""));
    let disk = state_bytes(&dir);
    println!(
        "{{\"urls\": {n}, \"hosts\": {hosts}, \"open_s\": {open_s:.2}, \"robots\": {robots}, \"queued\": {queued}, \
         \"push_urls_per_s\": {:.0}, \"checkpoint_median_s\": {checkpoint_median:.3}, \
         \"checkpoint_max_s\": {checkpoint_max:.3}, \"rss_queued_mb\": {:.0}, \
         \"pops_per_s\": {:.0}, \"peak_rss_mb\": {:.0}, \"baseline_rss_mb\": {:.0}, \
         \"reopen_s\": {reopen_s:.2}, \"queued_after_reopen\": {}, \"rss_after_reopen_mb\": {:.0}, \
         \"store_mb\": {:.0}, \"space\": {}}}",
        n as f64 / push_s,
        mb(rss_queued_kb),
        popped as f64 / pop_s,
        mb(peak_kb),
        mb(base_kb),
        queued_after_reopen,
        mb(rss_after_reopen_kb),
        disk as f64 / 1e6,
        space,
    );
}

/// Bytes of the crawl state in `dir`: the database file and the seen set's runs.
fn state_bytes(dir: &std::path::Path) -> u64 {
    let size = |p: std::path::PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    let runs: u64 = std::fs::read_dir(dir.join("seen"))
        .map(|entries| entries.flatten().map(|e| size(e.path())).sum())
        .unwrap_or(0);
    size(dir.join(trawl::crawl_db::STORE_FILE)) + runs
}
