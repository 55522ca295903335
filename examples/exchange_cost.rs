//! A diagnostic of the per-request floor: what one HTTP/1.1 exchange on a kept-alive
//! connection costs the client, by client and by what the thread does between exchanges.
//!
//! The floor's per-request part (`bench_floor --requests`) times exchanges back to back, so
//! the client's code and data stay in the CPU's caches; a crawler processes a page between
//! two exchanges. This runs the exchanges one after another over 50 hosts of the running
//! benchmark web and times only the exchanges (thread CPU clock), with `--between`:
//! `none` (the floor's conditions), `page` (the last response gzipped at level 3, as the
//! response record is, and a 700-byte record at the small-record level, then tokenized for
//! links: a crawler's work per page), `gzip` or `tokenize` (one of the two).
//!
//! `--client blocking` is the floor's client (blocking sockets, the head found and its
//! Content-Length read); `hyper` is trawl's use of hyper (a connection handshake per request
//! on the kept-alive socket, taken back with `into_parts`, on a current-thread runtime);
//! `hyper-kept` keeps one hyper connection per host; `trawl` is trawl's fetcher itself
//! (`Fetcher::fetch` with the connection kept per host: the recorder's tape, the timeouts,
//! the request template, the cookie jar, the head parsed for the capture; it opens its own
//! connections, so 50 of the exchanges include a connect).
//!
//! Usage: exchange_cost --port 8080 --requests 20000 [--pages 30]
//!        --client blocking|hyper|hyper-kept|trawl --between none|page|gzip|tokenize
//! The pages are those of the web `bench_web` serves on --port (`--profile small` for the
//! figures in docs/PERFORMANCE.md). Prints one JSON line. Run it beside a busy core (as in a
//! crawl): on an idle machine each wake-up costs several times more (docs/PERFORMANCE.md).

#[path = "bench/requests.rs"]
mod requests;
#[path = "bench/run.rs"]
mod run;
#[path = "bench/web.rs"]
mod web;

use std::net::{SocketAddr, TcpStream};

use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use requests::{thread_cpu_precise, HOSTS};
use run::arg;
use std::time::Duration;
use trawl::fetch::{AddressGuard, BodyPlan, Connection, FetchOptions, Fetcher};
use url::Url;
use web::host_ip;

/// What runs between two exchanges.
#[derive(Clone, Copy, PartialEq)]
enum Between {
    Nothing,
    Page,
    Gzip,
    Tokenize,
}

/// The work a crawler does on `response` before its next exchange.
fn work_between(between: Between, response: &[u8]) {
    if response.is_empty() || between == Between::Nothing {
        return;
    }
    if matches!(between, Between::Page | Between::Gzip) {
        std::hint::black_box(trawl::record::gzip_member(response, 3).len());
        let small = &response[..response.len().min(700)];
        std::hint::black_box(trawl::record::gzip_member(small, 3).len());
    }
    if matches!(between, Between::Page | Between::Tokenize) {
        let text = String::from_utf8_lossy(response);
        let base = Url::parse("http://127.1.0.1:8080/p/1.html").expect("a valid URL");
        std::hint::black_box(trawl::extract::extract_links(&text, &base, 5000).urls.len());
    }
}

/// The hyper request for page `p` of `host`: the floor's own request, header for header.
fn hyper_request(host: &str, p: usize) -> http::Request<Empty<bytes::Bytes>> {
    let text = requests::request(host, p);
    let mut lines = text.lines();
    let target = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .expect("a request line");
    let mut request = http::Request::get(target);
    for line in lines.take_while(|line| !line.is_empty()) {
        let (name, value) = line.split_once(": ").expect("a header field");
        request = request.header(name, value);
    }
    request.body(Empty::new()).expect("a valid request")
}

/// Sends the request for page `p` of `host` on `sender` and reads the whole body.
async fn send(
    sender: &mut http1::SendRequest<Empty<bytes::Bytes>>,
    host: &str,
    p: usize,
) -> Vec<u8> {
    let response = sender.send_request(hyper_request(host, p)).await;
    let body = response.expect("the benchmark web answers").into_body();
    let body = body.collect().await.expect("a whole body");
    body.to_bytes().to_vec()
}

/// One exchange as trawl makes it: a handshake on the kept-alive socket, the request, the
/// body read whole, and the socket taken back. Returns the body and the socket.
async fn hyper_exchange(
    stream: tokio::net::TcpStream,
    host: &str,
    p: usize,
) -> (Vec<u8>, tokio::net::TcpStream) {
    let (mut sender, mut conn) = http1::handshake::<_, Empty<bytes::Bytes>>(TokioIo::new(stream))
        .await
        .expect("a handshake on an open socket");
    let exchange = send(&mut sender, host, p);
    let mut exchange = std::pin::pin!(exchange);
    // The connection is driven only until the body is in: it then waits for a next request
    // that never comes, and is taken apart.
    let body = tokio::select! {
        body = &mut exchange => body,
        _ = std::future::poll_fn(|cx| conn.poll_without_shutdown(cx)) => {
            panic!("the connection ended before the response")
        }
    };
    let parts = conn.into_parts();
    (body, parts.io.into_inner())
}

/// trawl's fetcher with the crawl's defaults, loopback allowed.
fn trawl_fetcher() -> Fetcher {
    let jar = std::sync::Arc::new(trawl::fetch::CookieJar::new());
    Fetcher::new(FetchOptions {
        user_agent: "trawl/0.1".into(),
        headers: Vec::new(),
        connect_timeout: Duration::from_secs(10),
        read_timeout: Duration::from_secs(30),
        total_timeout: Duration::from_secs(120),
        max_head_bytes: 64 << 10,
        max_headers: 200,
        trust: trawl::fetch::tls::Trust::Roots(Vec::new()),
        guard: AddressGuard::new(true),
        pins: Vec::new(),
        proxy: None,
        dns_servers: Vec::new(),
        families: trawl::fetch::Families::Any,
        dns_timeout: None,
        dns_records: false,
        login: None,
        rate: None,
        spool: None,
    })
    .with_cookies(jar)
}

/// One exchange by trawl's fetcher on `idle` (kept per host); returns the response bytes as
/// recorded and the connection to keep.
async fn trawl_exchange(
    fetcher: &Fetcher,
    host: &str,
    p: usize,
    idle: Option<Connection>,
) -> (Vec<u8>, Option<Connection>) {
    let url = Url::parse(&format!("http://{host}/p/{p}.html")).expect("a valid URL");
    let (fetched, conn) = fetcher
        .fetch(&url, None, idle, |_, _| BodyPlan::Read {
            max_body: 10 << 20,
        })
        .await;
    let fetched = fetched.expect("the benchmark web answers");
    (fetched.capture.exchange.response.into_vec(), conn)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let port: u16 = arg(&args, "--port", "8080").parse().expect("--port N");
    let requests: usize = arg(&args, "--requests", "20000")
        .parse()
        .expect("--requests N");
    let pages: usize = arg(&args, "--pages", "30").parse().expect("--pages N");
    let client = arg(&args, "--client", "blocking");
    let between = match arg(&args, "--between", "none").as_str() {
        "none" => Between::Nothing,
        "page" => Between::Page,
        "gzip" => Between::Gzip,
        "tokenize" => Between::Tokenize,
        other => panic!("--between {other}: none, page, gzip or tokenize"),
    };
    let hosts: Vec<(String, SocketAddr)> = (0..HOSTS)
        .map(|h| {
            let addr = SocketAddr::from((host_ip(h), port));
            (addr.to_string(), addr)
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (spent, bytes) = runtime.block_on(async {
        let mut streams = Vec::with_capacity(HOSTS);
        // trawl's fetcher opens its own connections.
        for (_, addr) in hosts.iter().filter(|_| client != "trawl") {
            let stream = tokio::net::TcpStream::connect(addr)
                .await
                .expect("the benchmark web on --port");
            stream.set_nodelay(true).expect("a TCP socket");
            streams.push(Some(stream));
        }
        let mut blocking: Vec<TcpStream> = Vec::new();
        let mut kept = Vec::new();
        match client.as_str() {
            "blocking" => {
                for stream in &mut streams {
                    let stream = stream.take().expect("opened above").into_std();
                    let stream = stream.expect("a tokio socket converts");
                    stream.set_nonblocking(false).expect("a TCP socket");
                    blocking.push(stream);
                }
            }
            "hyper-kept" => {
                for stream in &mut streams {
                    let io = TokioIo::new(stream.take().expect("opened above"));
                    let (sender, conn) = http1::handshake::<_, Empty<bytes::Bytes>>(io)
                        .await
                        .expect("a handshake on an open socket");
                    tokio::spawn(conn);
                    kept.push(sender);
                }
            }
            "hyper" | "trawl" => {}
            other => panic!("--client {other}: blocking, hyper, hyper-kept or trawl"),
        }
        let fetcher = (client == "trawl").then(trawl_fetcher);
        let mut idle: Vec<Option<Connection>> = (0..HOSTS).map(|_| None).collect();
        let (mut spent, mut bytes) = (0.0, 0);
        let mut last: Vec<u8> = Vec::new();
        for i in 0..requests {
            work_between(between, &last);
            let (h, p) = (i % HOSTS, (i / HOSTS) % pages);
            let host = &hosts[h].0;
            let start = thread_cpu_precise();
            last = match client.as_str() {
                "blocking" => {
                    // Read into the last response's buffer (worked on above): no allocation
                    // per exchange, as in the floor's loop.
                    let mut response = std::mem::take(&mut last);
                    let total = requests::exchange(&mut blocking[h], host, p, &mut response)
                        .expect("the benchmark web answers");
                    response.truncate(total);
                    response
                }
                "hyper-kept" => send(&mut kept[h], host, p).await,
                "trawl" => {
                    let fetcher = fetcher.as_ref().expect("made for --client trawl");
                    let (response, conn) = trawl_exchange(fetcher, host, p, idle[h].take()).await;
                    idle[h] = conn;
                    response
                }
                _ => {
                    let stream = streams[h].take().expect("put back after each exchange");
                    let (body, stream) = hyper_exchange(stream, host, p).await;
                    streams[h] = Some(stream);
                    body
                }
            };
            spent += (thread_cpu_precise() - start).as_secs_f64();
            bytes += last.len();
        }
        (spent, bytes)
    });
    println!(
        "{{\"client\": \"{client}\", \"between\": \"{}\", \"requests\": {requests}, \"exchange_us\": {:.2}, \"bytes\": {}}}",
        arg(&args, "--between", "none"),
        spent * 1e6 / requests.max(1) as f64,
        bytes / requests.max(1)
    );
}
