//! The floor: the CPU a crawler cannot avoid per page of the benchmark web, measured without
//! any networking. For each page: gzip the response record at the given level (one gzip
//! member, as trawl writes), SHA-1 the block and the payload (WARC-Block-Digest and
//! WARC-Payload-Digest), and tokenize it for links (trawl's extractor, html5ever tokenizer).
//!
//! Usage: bench_floor --hosts 2000 --pages 30 --port 8080 --gzip-level 6 [--sample N]
//!        [--profile standard|small]
//! Prints one JSON line: pages, bytes, cpu_seconds, us_per_page (thread CPU time).

#[path = "bench/web.rs"]
mod web;

use std::time::Duration;

use url::Url;
use web::{fillers, host_ip, page_response, Profile, Shape};

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_string())
}

/// CPU time of this thread (Linux: /proc/thread-self/stat utime+stime, in clock ticks).
fn thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields.get(11).and_then(|u| u.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|s| s.parse().ok()).unwrap_or(0);
    Duration::from_secs_f64(ticks as f64 / 100.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let shape = Shape {
        hosts: arg(&args, "--hosts", "2000").parse().unwrap(),
        pages: arg(&args, "--pages", "30").parse().unwrap(),
        seed: arg(&args, "--seed", "1").parse().unwrap(),
        port: arg(&args, "--port", "8080").parse().unwrap(),
        profile: Profile::parse(&arg(&args, "--profile", "standard")),
    };
    let level: u32 = arg(&args, "--gzip-level", "6").parse().unwrap();
    let sample: usize = arg(&args, "--sample", "6000").parse().unwrap();
    let fill = fillers(shape.seed, shape.profile);
    let total = shape.hosts * shape.pages;
    // A spread sample over hosts and both size classes (7919 is prime, so the stride visits
    // every residue of the page index).
    let pages: Vec<(Url, Vec<u8>)> = (0..sample.min(total))
        .map(|k| (k * 7919) % total)
        .map(|i| {
            let (h, p) = (i / shape.pages, i % shape.pages);
            let url =
                Url::parse(&format!("http://{}:{}/p/{p}.html", host_ip(h), shape.port)).unwrap();
            (url, page_response(&shape, &fill, h, p))
        })
        .collect();
    let bytes: usize = pages.iter().map(|(_, r)| r.len()).sum();
    let start = thread_cpu();
    let wall = std::time::Instant::now();
    let mut sink = 0usize;
    let (mut t_gzip, mut t_sha1, mut t_links) = (0.0, 0.0, 0.0);
    let mut compressed = 0usize;
    for (url, response) in &pages {
        let head_end = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let payload = &response[head_end..];
        let t = std::time::Instant::now();
        compressed += trawl::record::gzip_member(response, level).len();
        let t1 = std::time::Instant::now();
        sink += trawl::record::sha1_digest(response).len();
        sink += trawl::record::sha1_digest(payload).len();
        let t2 = std::time::Instant::now();
        let text = std::str::from_utf8(payload).unwrap();
        sink += trawl::extract::extract_links(text, url, 5000).urls.len();
        let t3 = std::time::Instant::now();
        t_gzip += (t1 - t).as_secs_f64();
        t_sha1 += (t2 - t1).as_secs_f64();
        t_links += (t3 - t2).as_secs_f64();
    }
    let cpu = (thread_cpu() - start).as_secs_f64();
    let n = pages.len() as f64;
    eprintln!(
        "floor parts (wall, us/page): gzip {:.0}, sha1 {:.0}, links {:.0}; compression ratio {:.2}",
        t_gzip * 1e6 / n,
        t_sha1 * 1e6 / n,
        t_links * 1e6 / n,
        bytes as f64 / compressed as f64
    );
    sink += compressed;
    println!(
        "{{\"pages\": {}, \"bytes\": {}, \"gzip_level\": {}, \"cpu_seconds\": {:.3}, \"wall_seconds\": {:.3}, \"us_per_page\": {:.1}, \"sink\": {}}}",
        pages.len(),
        bytes,
        level,
        cpu,
        wall.elapsed().as_secs_f64(),
        cpu * 1e6 / pages.len() as f64,
        sink
    );
}
