//! Redis memory per URL of a shared crawl: admits N URLs (seen set + queue) through the same
//! `admit` script the workers use, spread over H hosts, and reads `used_memory` before and
//! after. Then hands half of them to a worker (in flight) to show that state too.
//!
//! Usage: shared_memory --redis redis://127.0.0.1:6379/ [--urls 1000000] [--hosts 10000]
//! [--ranked 0|1|2] (the queues' kind: lists for bfs, sorted sets for path-depth and random,
//! sorted sets with their URL index for backlinks). Prints one JSON line.

#[path = "bench/run.rs"]
mod run;

use trawl::frontier::storage::{fingerprint, QueuedUrl};
use trawl::redis_crawl::connection::Redis;
use trawl::redis_crawl::keys::Keys;
use trawl::redis_crawl::lease_book::encode_entry;
use trawl::redis_crawl::scripts::Scripts;

use run::arg;

async fn used_memory(redis: &mut Redis) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query_async(redis)
        .await
        .expect("INFO");
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let url = arg(&args, "--redis", "redis://127.0.0.1:6379/");
    let urls: usize = arg(&args, "--urls", "1000000").parse().expect("--urls");
    let hosts: usize = arg(&args, "--hosts", "10000").parse().expect("--hosts");
    let ranked: u32 = arg(&args, "--ranked", "0").parse().expect("--ranked");
    let mut redis = Redis::connect(&url).await.expect("connect");
    let keys = Keys::new("memory-bench", 64);
    let scripts = Scripts::new();
    let before = used_memory(&mut redis).await;
    let per_host = urls.div_ceil(hosts);
    let mut url_bytes = 0usize;
    // One admit call per host and 100 URLs, like a worker sending a page's links.
    for h in 0..hosts {
        let host = format!("www.host{h:05}.example.org");
        let k = keys.shard_of(&host);
        for start in (0..per_host).step_by(100) {
            let mut call = scripts.admit.key(keys.ready(k));
            call.arg(keys.shard(k)).arg(ranked);
            for i in start..(start + 100).min(per_host) {
                let u = format!("http://{host}/section-{}/article-{i:06}.html", i % 17);
                url_bytes += u.len();
                let entry = QueuedUrl {
                    url: u.clone(),
                    depth: 3,
                    rank: 3,
                    requisite: 0,
                    redirects: 0,
                    attempt: 0,
                    sitemap: 0,
                    // Found on the section's index page, as most links are.
                    referer: Some(format!("http://{host}/section-{}/", i % 17).into()),
                };
                call.arg(&host)
                    .arg(&fingerprint(&u)[..])
                    .arg(encode_entry(&entry))
                    .arg(entry.rank);
            }
            let _: Vec<i64> = call.invoke_async(&mut redis).await.expect("admit");
        }
    }
    let after = used_memory(&mut redis).await;
    let n = (per_host * hosts) as f64;
    println!(
        "{{\"urls\": {}, \"hosts\": {hosts}, \"ranked\": {ranked}, \"mean_url_bytes\": {:.1}, \"used_memory_delta\": {}, \"bytes_per_url\": {:.1}}}",
        per_host * hosts,
        url_bytes as f64 / n,
        after - before,
        (after - before) as f64 / n
    );
}
