//! The lean pipeline: what a crawler with no frontier, no scheduler and no concurrency pays
//! per page for the work every archiving crawler does, measured over a real loopback web.
//!
//! It replays the requests a trawl crawl made (their exact bytes, from the request records of
//! its WARC files, in the order they were written) on one thread with blocking sockets, one
//! kept-alive connection per host at a time, and for each exchange does what trawl does with
//! its bytes: the request and response records (trawl's builder: three SHA-1 digests), one
//! gzip member each (trawl's compressor and levels: small records at level 1), appended to a
//! file through a 1 MiB buffer, and link extraction (trawl's extractor) of every 200 HTML
//! page. It skips what only a crawl needs: deciding what to fetch (robots rules, admission,
//! seen tests, the frontier), politeness, and running many fetches at once. Its CPU per page
//! is therefore close to the least a crawler fetching the same URLs over the network pays
//! (a few us per request could still go on blocking waits), next to the floor
//! (`bench_floor`), which has no network and no small records at all. The benchmark web keeps
//! every connection alive; a server that closes one ends the run with an error.
//!
//! Usage: bench_pipeline --warcs DIR --out FILE [--gzip-level 3] [--no-records] [--no-links]
//! (`--no-records` and `--no-links` leave that work out, to take the cost apart.)
//! Prints one JSON line: pages, requests, cpu_seconds, us_per_page (process CPU, user+sys).

use std::collections::HashMap;
use std::io::{BufWriter, Read, Write};
use std::net::TcpStream;
use std::time::SystemTime;

#[path = "bench/run.rs"]
mod run;

use run::{arg, cpu_time};
use trawl::exchange::Exchange;
use trawl::http_message::parse_response_head;
use trawl::record::{exchange_records, gzip_member};
use trawl::warc::reader::records;
use url::Url;

// The allocator trawl itself runs with (see src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A request to replay: its URL and its bytes as trawl sent them.
type Request = (Url, Vec<u8>);

/// Reads one response with a Content-Length body (the benchmark web always sends one).
fn read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    let mut chunk = [0u8; 65536];
    let mut need = None;
    loop {
        match need {
            Some(total) if buf.len() >= total => return Ok(()),
            Some(_) => {}
            None => {
                need = parse_response_head(buf).map(|h| h.len + h.content_length().unwrap_or(0));
                if need.is_some() {
                    continue;
                }
            }
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let level: u32 = arg(&args, "--gzip-level", "3").parse().unwrap();
    let with_records = !args.iter().any(|a| a == "--no-records");
    let extract = !args.iter().any(|a| a == "--no-links");
    let mut files: Vec<_> = std::fs::read_dir(arg(&args, "--warcs", "."))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    let out = std::fs::File::create(arg(&args, "--out", "pipeline.warc.gz")).unwrap();
    let mut out = BufWriter::with_capacity(1 << 20, out);

    // One host after another, each over one connection, its URLs in the order given.
    let mut hosts: Vec<(String, Vec<Request>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let requests = files
        .iter()
        .flat_map(|f| records(f).unwrap())
        .map(Result::unwrap);
    for (record, _) in requests.filter(|(r, _)| r.header("WARC-Type") == Some("request")) {
        let url = Url::parse(record.header("WARC-Target-URI").unwrap()).unwrap();
        let authority = format!(
            "{}:{}",
            url.host_str().unwrap(),
            url.port_or_known_default().unwrap()
        );
        let i = *index.entry(authority.clone()).or_insert_with(|| {
            hosts.push((authority, Vec::new()));
            hosts.len() - 1
        });
        hosts[i].1.push((url, record.block.into_vec()));
    }

    let start = cpu_time("/proc/self/stat");
    let wall = std::time::Instant::now();
    let (mut pages, mut requests, mut links, mut written) = (0usize, 0usize, 0usize, 0usize);
    let mut response = Vec::with_capacity(1 << 16);
    for (authority, urls) in hosts {
        let mut stream = TcpStream::connect(authority.as_str()).unwrap();
        stream.set_nodelay(true).unwrap();
        let ip = stream.peer_addr().ok().map(|a| a.ip());
        for (url, request) in urls {
            let date = SystemTime::now();
            stream.write_all(&request).unwrap();
            read_response(&mut stream, &mut response).unwrap();
            requests += 1;
            let exchange = Exchange {
                target_uri: url.to_string(),
                ip,
                tls: None,
                date,
                request,
                response: std::mem::take(&mut response).into(),
                interim: Vec::new(),
                truncated: None,
            };
            if with_records {
                let (request_record, response_record) = exchange_records(&exchange);
                for record in [&request_record, &response_record] {
                    let member = gzip_member(&record.bytes, level);
                    written += member.len();
                    out.write_all(&member).unwrap();
                }
            }
            let head = parse_response_head(&exchange.response).unwrap();
            if head.status == 200 && head.media_type().as_deref() == Some("text/html") {
                pages += 1;
                let text = std::str::from_utf8(&exchange.response[head.len..]);
                if let (true, Ok(text)) = (extract, text) {
                    links += trawl::extract::extract_links(text, &url, 5000).urls.len();
                }
            }
            response = exchange.response.into_vec();
        }
    }
    out.flush().unwrap();
    let cpu = (cpu_time("/proc/self/stat") - start).as_secs_f64();
    println!(
        "{{\"pages\": {pages}, \"requests\": {requests}, \"links\": {links}, \"written\": {written}, \"cpu_seconds\": {cpu:.3}, \"wall_seconds\": {:.3}, \"us_per_page\": {:.1}}}",
        wall.elapsed().as_secs_f64(),
        cpu * 1e6 / pages.max(1) as f64
    );
}
