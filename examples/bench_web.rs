//! The benchmark web server: thousands of hosts on 127.1.x.y, pages generated once into memory
//! (per-page heads plus a shared filler pool), HTTP/1.1 keep-alive, one write per response.
//!
//! Usage: bench_web --hosts 2000 --pages 30 --port 8080 [--profile standard|small] [--seed 1]
//!        [--seeds-out FILE] [--latency-ms 0]
//! `--latency-ms` delays every response (a slow server: crawlers bound by latency, not CPU).
//! Prints `ready` when every host listens. On SIGINT/SIGTERM prints a JSON line to stdout with
//! requests served by kind, robots.txt violations, the smallest gap seen between two
//! requests to one host (politeness check), and the rate over the middle half of the requests
//! (requests/s between the first and third quartile of their arrival times: a crawl's steady
//! rate, without its start and its tail).

#[path = "bench/run.rs"]
mod run;
#[path = "bench/web.rs"]
mod web;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use run::arg;
use web::{fillers, host_ip, page_head, Profile, Shape};

#[derive(Default)]
struct Counters {
    pages: AtomicU64,
    robots: AtomicU64,
    redirects: AtomicU64,
    not_found: AtomicU64,
    other: AtomicU64,
    private_violations: AtomicU64,
}

struct Site {
    shape: Shape,
    /// Added before every response.
    latency: std::time::Duration,
    heads: Vec<Vec<(Vec<u8>, usize)>>,
    fillers: (Vec<Vec<u8>>, Vec<Vec<u8>>),
    counters: Counters,
    /// Per host: last request time (µs since start) and the smallest gap seen.
    last_seen: Vec<AtomicU64>,
    min_gap: Vec<AtomicU64>,
    /// Arrival time of every request (µs since start).
    arrivals: Mutex<Vec<u64>>,
    start: Instant,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let shape = Shape {
        hosts: arg(&args, "--hosts", "2000").parse().expect("--hosts"),
        pages: arg(&args, "--pages", "30").parse().expect("--pages"),
        seed: arg(&args, "--seed", "1").parse().expect("--seed"),
        port: arg(&args, "--port", "8080").parse().expect("--port"),
        profile: Profile::parse(&arg(&args, "--profile", "standard")),
    };
    let seeds_out = arg(&args, "--seeds-out", "");
    let threads: usize = arg(&args, "--threads", "1").parse().expect("--threads");
    let latency_ms: u64 = arg(&args, "--latency-ms", "0")
        .parse()
        .expect("--latency-ms");
    let (small, large) = fillers(shape.seed, shape.profile);
    let heads = (0..shape.hosts)
        .map(|h| {
            (0..shape.pages)
                .map(|p| {
                    let (head, is_large, f) = page_head(&shape, h, p);
                    (
                        head.into_bytes(),
                        if is_large { FILLER_LARGE | f } else { f },
                    )
                })
                .collect()
        })
        .collect();
    if !seeds_out.is_empty() {
        let seeds: String = (0..shape.hosts)
            .map(|h| format!("http://{}:{}/p/0.html\n", host_ip(h), shape.port))
            .collect();
        std::fs::write(&seeds_out, seeds).expect("write seeds");
    }
    let site = Arc::new(Site {
        shape,
        latency: std::time::Duration::from_millis(latency_ms),
        heads,
        fillers: (
            small.into_iter().map(String::into_bytes).collect(),
            large.into_iter().map(String::into_bytes).collect(),
        ),
        counters: Counters::default(),
        last_seen: (0..shape.hosts).map(|_| AtomicU64::new(0)).collect(),
        min_gap: (0..shape.hosts).map(|_| AtomicU64::new(u64::MAX)).collect(),
        arrivals: Mutex::new(Vec::with_capacity(1 << 20)),
        start: Instant::now(),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        for h in 0..shape.hosts {
            let listener = TcpListener::bind((host_ip(h), shape.port)).await.expect("bind");
            let site = site.clone();
            tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(serve(stream, site.clone(), h));
                }
            });
        }
        println!("ready");
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("signal");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        let c = &site.counters;
        let min_gap_us = site.min_gap.iter().map(|g| g.load(Ordering::Relaxed)).min().unwrap_or(u64::MAX);
        let middle_rate = middle_half_rate(&site.arrivals.lock().expect("arrivals"));
        println!(
            "{{\"pages\": {}, \"robots\": {}, \"redirects\": {}, \"not_found\": {}, \"other\": {}, \"private_violations\": {}, \"min_gap_ms\": {}, \"middle_rate\": {:.1}}}",
            c.pages.load(Ordering::Relaxed),
            c.robots.load(Ordering::Relaxed),
            c.redirects.load(Ordering::Relaxed),
            c.not_found.load(Ordering::Relaxed),
            c.other.load(Ordering::Relaxed),
            c.private_violations.load(Ordering::Relaxed),
            if min_gap_us == u64::MAX { -1.0 } else { min_gap_us as f64 / 1000.0 },
            middle_rate
        );
    });
}

const FILLER_LARGE: usize = 1 << 20;

async fn serve(mut stream: tokio::net::TcpStream, site: Arc<Site>, host: usize) {
    let mut buf = Vec::with_capacity(4096);
    let mut out = Vec::with_capacity(80 * 1024);
    let mut chunk = [0u8; 4096];
    loop {
        let end = loop {
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let path = {
            let line = &buf[..end];
            let text = std::str::from_utf8(line).unwrap_or("");
            text.split_whitespace().nth(1).unwrap_or("/").to_string()
        };
        buf.drain(..end);
        note_gap(&site, host);
        out.clear();
        respond(&site, host, &path, &mut out);
        if !site.latency.is_zero() {
            tokio::time::sleep(site.latency).await;
        }
        if stream.write_all(&out).await.is_err() {
            return;
        }
    }
}

/// Requests per second between the first and the third quartile of `arrivals` (µs).
fn middle_half_rate(arrivals: &[u64]) -> f64 {
    let mut times = arrivals.to_vec();
    times.sort_unstable();
    let (q1, q3) = (times.len() / 4, times.len() * 3 / 4);
    if q3 <= q1 || times[q3] <= times[q1] {
        return 0.0;
    }
    (q3 - q1) as f64 / ((times[q3] - times[q1]) as f64 / 1e6)
}

fn note_gap(site: &Site, host: usize) {
    let now = site.start.elapsed().as_micros() as u64 + 1;
    if let Ok(mut arrivals) = site.arrivals.lock() {
        arrivals.push(now);
    }
    let last = site.last_seen[host].swap(now, Ordering::Relaxed);
    if last > 0 {
        site.min_gap[host].fetch_min(now.saturating_sub(last), Ordering::Relaxed);
    }
}

fn simple(out: &mut Vec<u8>, status: &str, content_type: &str, extra: &str, body: &[u8]) {
    out.extend_from_slice(
        format!(
            "HTTP/1.1 {status}\r\nServer: bench-web\r\nContent-Type: {content_type}\r\n{extra}Content-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(body);
}

fn respond(site: &Site, host: usize, path: &str, out: &mut Vec<u8>) {
    let c = &site.counters;
    if let Some(n) = path
        .strip_prefix("/p/")
        .and_then(|p| p.strip_suffix(".html"))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n < site.shape.pages)
    {
        let (head, filler) = &site.heads[host][n];
        let body_filler = if filler & FILLER_LARGE != 0 {
            &site.fillers.1[filler & !FILLER_LARGE]
        } else {
            &site.fillers.0[*filler]
        };
        out.extend_from_slice(
            format!(
                "HTTP/1.1 200 OK\r\nServer: bench-web\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
                head.len() + body_filler.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(head);
        out.extend_from_slice(body_filler);
        c.pages.fetch_add(1, Ordering::Relaxed);
    } else if path == "/robots.txt" {
        simple(
            out,
            "200 OK",
            "text/plain",
            "",
            b"User-agent: *\nDisallow: /private/\n",
        );
        c.robots.fetch_add(1, Ordering::Relaxed);
    } else if let Some(n) = path.strip_prefix("/r/") {
        simple(
            out,
            "301 Moved Permanently",
            "text/html",
            &format!("Location: /p/{n}.html\r\n"),
            b"<a href=moved>moved</a>",
        );
        c.redirects.fetch_add(1, Ordering::Relaxed);
    } else if path.starts_with("/files/") {
        simple(out, "200 OK", "application/pdf", "", &[b'%'; 2048]);
        c.other.fetch_add(1, Ordering::Relaxed);
    } else if path.starts_with("/data/") {
        simple(out, "200 OK", "application/octet-stream", "", &[0u8; 5000]);
        c.other.fetch_add(1, Ordering::Relaxed);
    } else {
        if path.starts_with("/private/") {
            c.private_violations.fetch_add(1, Ordering::Relaxed);
        }
        simple(
            out,
            "404 Not Found",
            "text/html",
            "",
            b"<html><body>not found</body></html>",
        );
        c.not_found.fetch_add(1, Ordering::Relaxed);
    }
}
