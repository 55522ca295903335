//! The per-request part of the floor: what every archiving crawler does once per request,
//! whatever the page. The client side of one HTTP/1.1 exchange on a kept-alive connection
//! with blocking sockets (the request written, the response head found and its
//! Content-Length read, the body read into a buffer), against the running benchmark web;
//! and a small request record (its WARC head and the request, gzipped as one member, and
//! the SHA-1 of its block).
// Included by path by bench_floor and exchange_cost.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use super::web::{host_ip, Shape};

/// Hosts whose connections the exchanges go round (each opened and used once before the
/// clock starts: keep-alive, not connection setup, is what is measured).
pub const HOSTS: usize = 50;

/// CPU time of this thread, to the nanosecond (the /proc figures tick every 10 ms, too
/// coarse for a few thousand exchanges of ~20 us).
pub fn thread_cpu_precise() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// What the per-request floor measured (us per request).
pub struct PerRequest {
    /// One exchange, client side.
    pub exchange_us: f64,
    /// One request record.
    pub record_us: f64,
    /// Response bytes read per exchange.
    pub bytes: usize,
}

/// Runs `exchanges` exchanges (page requests over the first hosts of the web, round robin)
/// and as many request records, timed on this thread.
pub fn measure(shape: &Shape, level: u32, exchanges: usize) -> std::io::Result<PerRequest> {
    let hosts = shape.hosts.min(HOSTS);
    let mut conns = Vec::with_capacity(hosts);
    let mut buf = Vec::with_capacity(256 * 1024);
    for h in 0..hosts {
        let addr = SocketAddr::from((host_ip(h), shape.port));
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let host = format!("{}:{}", host_ip(h), shape.port);
        exchange(&mut stream, &host, 0, &mut buf)?;
        conns.push((host, stream));
    }
    let start = thread_cpu_precise();
    let mut bytes = 0;
    for i in 0..exchanges {
        let (host, stream) = &mut conns[i % hosts];
        bytes += exchange(stream, host, (i / hosts) % shape.pages, &mut buf)?;
    }
    let exchange_s = (thread_cpu_precise() - start).as_secs_f64();
    let (host, _) = &conns[0];
    let start = thread_cpu_precise();
    let mut sink = 0;
    for i in 0..exchanges {
        sink += request_record(host, i % shape.pages, level);
    }
    let record_s = (thread_cpu_precise() - start).as_secs_f64();
    std::hint::black_box(sink);
    let n = exchanges.max(1) as f64;
    Ok(PerRequest {
        exchange_us: exchange_s * 1e6 / n,
        record_us: record_s * 1e6 / n,
        bytes: bytes / exchanges.max(1),
    })
}

/// The request for page `p`, as a crawler sends it.
pub fn request(host: &str, p: usize) -> String {
    format!(
        "GET /p/{p}.html HTTP/1.1\r\nHost: {host}\r\nUser-Agent: trawl/0.1\r\n\
         Accept: text/html,application/xhtml+xml,*/*;q=0.8\r\nAccept-Encoding: gzip, br\r\n\r\n"
    )
}

/// One exchange on a kept-alive connection; returns the response's length.
pub fn exchange(
    stream: &mut TcpStream,
    host: &str,
    p: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    stream.write_all(request(host, p).as_bytes())?;
    buf.clear();
    let mut chunk = [0u8; 64 * 1024];
    let (head_end, length) = loop {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break (end + 4, content_length(&buf[..end]));
        }
    };
    let total = head_end + length;
    while buf.len() < total {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(total)
}

/// The Content-Length of a response head (0 when it has none).
fn content_length(head: &[u8]) -> usize {
    std::str::from_utf8(head)
        .unwrap_or("")
        .split("\r\n")
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0)
}

/// A request record for page `p`: the WARC head and the request, one gzip member, and the
/// block's SHA-1. Returns the member's length.
fn request_record(host: &str, p: usize, level: u32) -> usize {
    let request = request(host, p);
    let digest = trawl::record::sha1_digest(request.as_bytes());
    let record = format!(
        "WARC/1.1\r\nWARC-Type: request\r\nWARC-Record-ID: <urn:uuid:5d2f1c7e-0d7b-4c4e-9f57-{p:012}>\r\n\
         WARC-Date: 2026-11-25T12:00:00.000000Z\r\nWARC-Target-URI: http://{host}/p/{p}.html\r\n\
         WARC-Concurrent-To: <urn:uuid:6e3a2d8f-1e8c-4d5f-a068-{p:012}>\r\nWARC-IP-Address: 127.1.0.1\r\n\
         WARC-Protocol: http/1.1\r\nWARC-Block-Digest: {digest}\r\n\
         Content-Type: application/http;msgtype=request\r\nContent-Length: {}\r\n\r\n{request}\r\n\r\n",
        request.len()
    );
    trawl::record::gzip_member(record.as_bytes(), level).len()
}
