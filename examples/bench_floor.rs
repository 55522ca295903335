//! The floor: the CPU a crawler cannot avoid per page of the benchmark web, measured without
//! any networking. For each page: gzip the response record at the given level (one gzip
//! member, as trawl writes), SHA-1 the block and the payload (WARC-Block-Digest and
//! WARC-Payload-Digest), and tokenize it for links (trawl's extractor, html5ever tokenizer).
//!
//! With `--requests N` (the benchmark web must be running on --port), also the per-request
//! floor: N HTTP/1.1 exchanges on kept-alive blocking connections, client side, and N small
//! request records (examples/bench/requests.rs). A crawl's floor per page is then
//! `us_per_page + requests per page x (exchange_us + record_us)`, the requests per page read
//! from the crawl's own count (scripts/benchmarks/bench.py).
//!
//! Usage: bench_floor --hosts 2000 --pages 30 --port 8080 --gzip-level 6 [--sample N]
//!        [--profile standard|small] [--threads N] [--requests N]
//! Prints one JSON line: pages, bytes, cpu_seconds, us_per_page (thread CPU time), and with
//! --requests: exchange_us, record_us, exchange_bytes.

#[path = "bench/requests.rs"]
mod requests;
#[path = "bench/run.rs"]
mod run;
#[path = "bench/web.rs"]
mod web;

use std::time::Duration;

use run::{arg, cpu_time};
use url::Url;
use web::{fillers, host_ip, page_response, Profile, Shape};

/// CPU time of this thread.
fn thread_cpu() -> Duration {
    cpu_time("/proc/thread-self/stat")
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
    // With --threads N the sample is split over N threads that run at the same time: the
    // floor of a machine whose cores are all busy, as they are in a crawl (shared caches and
    // memory bandwidth). CPU is summed over the threads; the parts are summed wall times.
    let threads: usize = arg(&args, "--threads", "1").parse().unwrap();
    let wall = std::time::Instant::now();
    let shares: Vec<Measured> = std::thread::scope(|scope| {
        let chunk = pages.len().div_ceil(threads.max(1));
        let workers: Vec<_> = pages
            .chunks(chunk.max(1))
            .map(|share| scope.spawn(move || measure(share, level)))
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let total = shares.iter().fold(Measured::default(), |a, m| Measured {
        cpu: a.cpu + m.cpu,
        gzip: a.gzip + m.gzip,
        sha1: a.sha1 + m.sha1,
        links: a.links + m.links,
        compressed: a.compressed + m.compressed,
        sink: a.sink + m.sink,
    });
    let (cpu, compressed, mut sink) = (total.cpu, total.compressed, total.sink);
    let n = pages.len() as f64;
    eprintln!(
        "floor parts (wall, us/page): gzip {:.0}, sha1 {:.0}, links {:.0}; compression ratio {:.2}",
        total.gzip * 1e6 / n,
        total.sha1 * 1e6 / n,
        total.links * 1e6 / n,
        bytes as f64 / compressed as f64
    );
    sink += compressed;
    let wall = wall.elapsed().as_secs_f64();
    let exchanges: usize = arg(&args, "--requests", "0").parse().unwrap();
    let per_request = if exchanges > 0 {
        let r = requests::measure(&shape, level, exchanges).expect("the benchmark web on --port");
        format!(
            ", \"exchange_us\": {:.2}, \"record_us\": {:.2}, \"exchange_bytes\": {}",
            r.exchange_us, r.record_us, r.bytes
        )
    } else {
        String::new()
    };
    println!(
        "{{\"pages\": {}, \"threads\": {}, \"bytes\": {}, \"gzip_level\": {}, \"cpu_seconds\": {:.3}, \"wall_seconds\": {:.3}, \"us_per_page\": {:.1}, \"sink\": {}{}}}",
        pages.len(),
        threads,
        bytes,
        level,
        cpu,
        wall,
        cpu * 1e6 / pages.len() as f64,
        sink,
        per_request
    );
}

/// What one thread measured over its share of the sample (seconds; compressed bytes).
#[derive(Default)]
struct Measured {
    cpu: f64,
    gzip: f64,
    sha1: f64,
    links: f64,
    compressed: usize,
    sink: usize,
}

/// The floor's work for each page of `pages`, timed on this thread.
fn measure(pages: &[(Url, Vec<u8>)], level: u32) -> Measured {
    let start = thread_cpu();
    let mut m = Measured::default();
    for (url, response) in pages {
        let head_end = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let payload = &response[head_end..];
        let t = std::time::Instant::now();
        m.compressed += trawl::record::gzip_member(response, level).len();
        let t1 = std::time::Instant::now();
        m.sink += trawl::record::sha1_digest(response).len();
        m.sink += trawl::record::sha1_digest(payload).len();
        let t2 = std::time::Instant::now();
        let text = std::str::from_utf8(payload).unwrap();
        m.sink += trawl::extract::extract_links(text, url, 5000).urls.len();
        let t3 = std::time::Instant::now();
        m.gzip += (t1 - t).as_secs_f64();
        m.sha1 += (t2 - t1).as_secs_f64();
        m.links += (t3 - t2).as_secs_f64();
    }
    m.cpu = (thread_cpu() - start).as_secs_f64();
    m
}
