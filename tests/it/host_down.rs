//! A host that stops answering in the middle of a crawl (its server gone: every connection
//! refused; or hung: connections taken, never answered). Its URLs wait for it rather than failing one by one: an outage shorter than
//! `--host-down-limit` loses nothing, and a longer one drops the host's URLs at once, counted,
//! with exit code 4.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::daemons::dnsmasq_on;
use crate::harness::{assert_valid, crawl_with_report, read_records, text};

const PAGES: usize = 12;

/// Serves the site on `listener`, one request per connection, until `stop_after` pages
/// (`/p…`) were served.
async fn serve(listener: &TcpListener, pages: Arc<AtomicUsize>, stop_after: usize) {
    while pages.load(Ordering::SeqCst) < stop_after {
        let Ok((mut stream, _)) = listener.accept().await else {
            return;
        };
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        let line = String::from_utf8_lossy(&head).into_owned();
        let path = line.split(' ').nth(1).unwrap_or("/").to_string();
        let (status, body) = match path.as_str() {
            "/" => {
                let links: String = (1..=PAGES)
                    .map(|i| format!("<a href=/p{i}>{i}</a>"))
                    .collect();
                ("200 OK", format!("<html><body>{links}</body></html>"))
            }
            p if p.starts_with("/p") => {
                pages.fetch_add(1, Ordering::SeqCst);
                ("200 OK", format!("<html><body>page {p}</body></html>"))
            }
            _ => ("404 Not Found", "no".to_string()),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    }
}

/// A site on `ip` that goes away after `stop_after` pages, and comes back `back_after`
/// later when given. Returns its address and the count of pages served.
async fn site_that_goes_away(
    ip: &str,
    stop_after: usize,
    back_after: Option<Duration>,
) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let pages = Arc::new(AtomicUsize::new(0));
    let served = pages.clone();
    tokio::spawn(async move {
        serve(&listener, served.clone(), stop_after).await;
        drop(listener);
        if let Some(wait) = back_after {
            tokio::time::sleep(wait).await;
            let listener = TcpListener::bind(addr).await.unwrap();
            serve(&listener, served, usize::MAX).await;
        }
    });
    (addr, pages)
}

/// A site on `ip` that hangs after `stop_after` pages: it still takes connections, and reads
/// nothing from them and answers nothing. Returns its address and the count of connections
/// taken while hung.
async fn site_that_hangs(ip: &str, stop_after: usize) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let taken = Arc::new(AtomicUsize::new(0));
    let count = taken.clone();
    tokio::spawn(async move {
        serve(&listener, Arc::new(AtomicUsize::new(0)), stop_after).await;
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            held.push(stream);
        }
    });
    (addr, taken)
}

/// Crawls `addr` with `extra` flags; returns the exit code, the log and the report.
async fn crawl(
    addr: SocketAddr,
    out: &std::path::Path,
    extra: &[&str],
) -> (Option<i32>, String, serde_json::Value) {
    crawl_seed(format!("http://{addr}/"), out, extra).await
}

/// [`crawl`] from `seed`.
async fn crawl_seed(
    seed: String,
    out: &std::path::Path,
    extra: &[&str],
) -> (Option<i32>, String, serde_json::Value) {
    let delay: &[&str] = match extra.contains(&"--delay") {
        true => &[],
        false => &["--delay", "0ms"],
    };
    let flags = [&["--concurrency", "1"], delay, extra].concat();
    let (result, report) = crawl_with_report(seed, out, &flags).await;
    let log = text(&result);
    let report = report.unwrap_or_else(|| panic!("no report: {log}"));
    (result.status.code(), log, report)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_down_for_a_while_loses_none_of_its_urls() {
    // Gone before its last page, back 5 s later: that URL's tries (1 s and 2 s apart) end
    // before it is back, so before, it failed.
    let back = Some(Duration::from_secs(5));
    let (addr, pages) = site_that_goes_away("127.0.0.201", PAGES - 1, back).await;
    let out = tempfile::tempdir().unwrap();
    let (code, log, stats) = crawl(addr, out.path(), &[]).await;
    assert_eq!(code, Some(0), "{log}");
    assert_eq!(stats["failed_urls"], 0, "{stats}");
    assert_eq!(stats["filtered"]["host_down"], 0, "{stats}");
    assert_eq!(stats["pages_archived"], PAGES + 1, "{stats}");
    assert_eq!(pages.load(Ordering::SeqCst), PAGES);
    assert!(log.contains("is not answering"), "{log}");
    assert!(log.contains("answers again"), "{log}");
    let dir = out.path().join("warcs");
    let archived: Vec<String> = read_records(&dir)
        .into_iter()
        .filter(|r| r.warc_type == "response")
        .map(|r| r.path())
        .collect();
    for i in 1..=PAGES {
        assert!(archived.contains(&format!("/p{i}")), "/p{i}: {archived:?}");
    }
    assert_valid(&dir).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_down_past_the_limit_is_given_up_with_its_urls_counted() {
    let (addr, pages) = site_that_goes_away("127.0.0.202", 4, None).await;
    let out = tempfile::tempdir().unwrap();
    let (code, log, stats) = crawl(addr, out.path(), &["--host-down-limit", "2s"]).await;
    assert_eq!(code, Some(4), "{log}");
    assert_eq!(pages.load(Ordering::SeqCst), 4);
    // The URLs left are dropped together, as the host's, not failed one by one.
    assert_eq!(stats["failed_urls"], 0, "{stats}");
    assert_eq!(stats["filtered"]["host_down"], PAGES - 4, "{stats}");
    assert_eq!(stats["hosts_down"], 1, "{stats}");
    assert_eq!(stats["queued_at_end"], 0, "{stats}");
    assert!(log.contains("giving up 127.0.0.202"), "{log}");
    assert_valid(&out.path().join("warcs")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_takes_connections_and_never_answers_is_given_up_at_the_limit() {
    // Hung after 4 pages: 8 URLs left. Before, each was tried 3 times, a timeout each (24
    // requests, 8 failed URLs); now, after three requests in a row unanswered, the next
    // silent URL is not retried, and the host silent for --host-down-limit is given up.
    let (addr, taken) = site_that_hangs("127.0.0.211", 4).await;
    let out = tempfile::tempdir().unwrap();
    let flags = ["--timeout", "1s", "--host-down-limit", "4s"];
    let (code, log, stats) = crawl(addr, out.path(), &flags).await;
    assert_eq!(code, Some(4), "{log}");
    let (failed, dropped) = (&stats["failed_urls"], &stats["filtered"]["host_down"]);
    assert_eq!(
        failed.as_u64().unwrap() + dropped.as_u64().unwrap(),
        8,
        "{stats}"
    );
    assert!(dropped.as_u64() >= Some(3), "{stats}");
    assert_eq!(stats["hosts_down"], 1, "{stats}");
    assert!(log.contains("timeout: no answer"), "{log}");
    assert!(log.contains("giving up 127.0.0.211"), "{log}");
    let tries = taken.load(Ordering::SeqCst);
    assert!(tries <= 8, "{tries} requests to the hung host: {stats}");
    assert_valid(&out.path().join("warcs")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_never_answered_is_not_waited_for() {
    // A seed nobody listens at, robots.txt not asked: no outage of a known host to wait out.
    let port = crate::harness::closed_port();
    let addr: SocketAddr = format!("127.0.0.203:{port}").parse().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (code, log, stats) = crawl(addr, out.path(), &["--ignore-robots"]).await;
    assert_eq!(code, Some(4), "{log}");
    assert_eq!(stats["filtered"]["host_down"], 1, "{stats}");
    assert_eq!(stats["errors"]["connect_refused"], 3, "{stats}");
    assert!(log.contains("giving up 127.0.0.203"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resolver_away_for_a_while_loses_no_url() {
    // The site's name, answered with a TTL of 1 s by a dnsmasq that goes away after 4 pages
    // and is back 8 s later on its port: longer than a URL's three tries (1 s lookups, 1 s
    // and 2 s apart: about 6 s), so the host is found down and waited for (at 5 s the
    // retries alone sometimes outlasted the outage). Before, a lookup that found no resolver
    // failed its URL at once, as a name that does not exist does.
    let dns_port = crate::daemons::free_port();
    let names = [("down.test", "127.0.0.204")];
    let dns = dnsmasq_on(&names, dns_port, 1);
    let (addr, pages) = site_that_goes_away("127.0.0.204", usize::MAX, None).await;
    let served = pages.clone();
    let resolver = tokio::spawn(async move {
        while served.load(Ordering::SeqCst) < 4 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(dns);
        tokio::time::sleep(Duration::from_secs(8)).await;
        tokio::task::spawn_blocking(move || dnsmasq_on(&names, dns_port, 1))
            .await
            .unwrap()
    });
    let out = tempfile::tempdir().unwrap();
    let server = format!("127.0.0.1:{dns_port}");
    let seed = format!("http://down.test:{}/", addr.port());
    let flags = [
        "--dns-server",
        server.as_str(),
        "--dns-timeout",
        "1",
        "--allow-private",
        "--delay",
        "300ms",
    ];
    let (code, log, stats) = crawl_seed(seed, out.path(), &flags).await;
    let _back = resolver.await.unwrap();
    assert_eq!(code, Some(0), "{log}");
    assert_eq!(stats["failed_urls"], 0, "{stats}");
    assert_eq!(stats["pages_archived"], PAGES + 1, "{stats}");
    assert!(
        stats["errors"]["dns_unavailable"].as_u64() > Some(0),
        "{stats}"
    );
    assert!(log.contains("answers again"), "{log}");
    assert_eq!(pages.load(Ordering::SeqCst), PAGES);
}
