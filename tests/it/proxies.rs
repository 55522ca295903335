//! `--proxy` through real proxies started on loopback: tinyproxy (absolute form for http,
//! CONNECT for https), microsocks (SOCKS5, names resolved by the proxy) and warcprox (a
//! recording proxy). Every page is archived, the proxy's log shows every request, the WARCs
//! pass the strict checker and replay in pywb; the request records hold the origin form and
//! never the proxy's credentials.

use std::path::Path;

use crate::args;
use crate::daemons::{
    free_port, microsocks, tinyproxy, tinyproxy_on, tinyproxy_with, warcprox, Daemon,
};
use crate::harness::{assert_replays, assert_valid, python, read_records, text, trawl, Rec};
use crate::server::{Host, Route, Web};

/// `/` links to `/a` and `/b`; `/a` to `/b?x=1`.
fn small_site(host: &Host) {
    host.route("/", Route::html(r#"<a href="/a">a</a> <a href="/b">b</a>"#));
    host.route("/a", Route::html(r#"<p>page a</p><a href="/b?x=1">b</a>"#));
    host.route("/b", Route::html("<p>page b</p>"));
    host.route("/b?x=1", Route::html("<p>page b, x</p>"));
}

/// Crawls `seeds` through `proxy` into `out`; the crawl must succeed.
async fn crawl_through(proxy: &str, seeds: &[String], out: &Path) {
    let result = crawl_through_with(proxy, seeds, out, &[]).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
}

/// Crawls `seeds` through `proxy` into `out` with `extra` flags; what trawl did.
async fn crawl_through_with(
    proxy: &str,
    seeds: &[String],
    out: &Path,
    extra: &[String],
) -> std::process::Output {
    let mut args = args!["crawl"];
    args.extend(seeds.iter().cloned());
    args.extend(args![
        "--out",
        out.display(),
        "--proxy",
        proxy,
        "--delay",
        "0ms",
        "--insecure"
    ]);
    args.extend(extra.iter().cloned());
    trawl(args).await
}

/// Paths of the 200 responses archived for `host` (http or https).
fn archived_paths(records: &[Rec], host: &Host) -> Vec<String> {
    let prefix = host.addr.to_string();
    let mut paths: Vec<String> = records
        .iter()
        .filter(|r| r.warc_type == "response" && r.status() == Some(200))
        .filter_map(|r| {
            let uri = r.target_uri.as_deref()?;
            let rest = uri.split_once("://")?.1.strip_prefix(&prefix)?;
            Some(rest.to_string())
        })
        .collect();
    paths.sort();
    paths
}

/// The request records as text.
fn requests(records: &[Rec]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.warc_type == "request")
        .map(|r| String::from_utf8_lossy(&r.block).to_string())
        .collect()
}

const PAGES: [&str; 4] = ["/", "/a", "/b", "/b?x=1"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_tinyproxy_http_in_absolute_form_and_https_through_connect() {
    let proxy = tinyproxy();
    let web = Web::default();
    let plain = web.host("127.0.0.5").await;
    let secure = web.tls_host("127.0.0.6").await;
    small_site(&plain);
    small_site(&secure);
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    let with_password = format!("http://trawl:s3cret%21@127.0.0.1:{}", proxy.port);
    let secure_root = format!("https://{}/", secure.addr);
    crawl_through(&with_password, &[plain.url("/"), secure_root], &dir).await;
    let records = read_records(&dir);
    assert_eq!(archived_paths(&records, &plain), sorted(&PAGES));
    assert_eq!(archived_paths(&records, &secure), sorted(&PAGES));
    // Every http request went to the proxy in absolute form; https through CONNECT.
    let log = proxy.log_text();
    let hits = web.hits();
    for hit in hits.iter().filter(|h| h.host == plain.addr.to_string()) {
        let line = format!("GET http://{}{} HTTP/1.1", plain.addr, hit.path);
        assert!(log.contains(&line), "{line} not in the proxy's log:\n{log}");
    }
    assert!(hits.iter().any(|h| h.host == secure.addr.to_string()));
    assert!(
        log.contains(&format!("CONNECT {} HTTP/1.1", secure.addr)),
        "{log}"
    );
    // The records hold the request as the origin saw it, without the proxy's credentials;
    // the IP-literal origin's address is known.
    for request in requests(&records) {
        assert!(request.starts_with("GET /"), "{request}");
        assert!(
            !request.to_ascii_lowercase().contains("proxy-authorization"),
            "{request}"
        );
    }
    for r in records.iter().filter(|r| r.warc_type == "response") {
        assert!(r.ip_address.is_some(), "{:?}", r.target_uri);
    }
    let info = String::from_utf8_lossy(&records[0].block).to_string();
    assert!(
        info.contains(&format!("proxy: http://127.0.0.1:{}", proxy.port)),
        "{info}"
    );
    assert!(!info.contains("s3cret"), "{info}");
    assert_valid(&dir).await;
    assert_replays(
        &dir,
        &plain.url("/a"),
        r#"<p>page a</p><a href="/b?x=1">b</a>"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_socks5_with_names_resolved_by_the_proxy() {
    let proxy = microsocks();
    let web = Web::default();
    let plain = web.host("127.0.0.7").await;
    let secure = web.tls_host("127.0.0.8").await;
    // Served on 127.0.0.1 and crawled as localhost: a name only the proxy resolves.
    let named = web.host("127.0.0.1").await;
    for host in [&plain, &secure, &named] {
        small_site(host);
    }
    let by_name = format!("http://localhost:{}/", named.addr.port());
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    let secure_root = format!("https://{}/", secure.addr);
    crawl_through(
        &proxy.url("socks5h"),
        &[plain.url("/"), secure_root, by_name.clone()],
        &dir,
    )
    .await;
    let records = read_records(&dir);
    assert_eq!(archived_paths(&records, &plain), sorted(&PAGES));
    assert_eq!(archived_paths(&records, &secure), sorted(&PAGES));
    let named_pages: Vec<&Rec> = records
        .iter()
        .filter(|r| {
            r.warc_type == "response"
                && r.target_uri
                    .as_deref()
                    .is_some_and(|u| u.starts_with(&by_name))
        })
        .collect();
    assert_eq!(
        named_pages
            .iter()
            .filter(|r| r.status() == Some(200))
            .count(),
        4,
        "{named_pages:?}"
    );
    // The proxy resolved localhost: no address is claimed for it.
    assert!(named_pages.iter().all(|r| r.ip_address.is_none()));
    // One tunnel per connection, each in the proxy's log.
    let log = proxy.log_text();
    for host in [&plain, &secure] {
        assert!(
            log.contains(&format!("connected to {}", host.addr)),
            "{log}"
        );
    }
    assert!(log.contains(&format!(":{}", named.addr.port())), "{log}");
    assert_valid(&dir).await;
    assert_replays(&dir, &by_name, r#"<a href="/a">a</a> <a href="/b">b</a>"#).await;
    let secure_b = format!("https://{}/b", secure.addr);
    assert_replays(&dir, &secure_b, "<p>page b</p>").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_warcprox_both_archives_hold_the_same_pages() {
    let mut proxy = warcprox();
    let web = Web::default();
    let site = web.host("127.0.0.9").await;
    small_site(&site);
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    crawl_through(&proxy.url("http"), &[site.url("/")], &dir).await;
    let theirs = stop_warcprox(&mut proxy);
    let ours = read_records(&dir);
    assert_eq!(archived_paths(&ours, &site), sorted(&PAGES));
    assert_valid(&dir).await;
    // warcprox's own WARCs pass `warcio check` (digests), and hold the same pages.
    let check = warcio_check(&theirs);
    assert!(check.status.success(), "warcio check: {}", text(&check));
    for page in PAGES {
        let body = match page {
            "/" => r#"<a href="/a">a</a> <a href="/b">b</a>"#,
            "/a" => r#"<p>page a</p><a href="/b?x=1">b</a>"#,
            "/b" => "<p>page b</p>",
            _ => "<p>page b, x</p>",
        };
        assert_replays(&dir, &site.url(page), body).await;
        assert_replays(&theirs, &site.url(page), body).await;
    }
}

/// Stops warcprox (SIGTERM: it closes its WARC files) and returns its WARC directory.
fn stop_warcprox(proxy: &mut Daemon) -> std::path::PathBuf {
    let dir = proxy.dir.path().join("warcs");
    let said = proxy.terminate();
    let files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(
        files
            .iter()
            .any(|p: &std::path::PathBuf| p.to_string_lossy().ends_with(".warc.gz")),
        "warcprox wrote no WARC: {files:?}\n{said}"
    );
    dir
}

/// `warcio check` on every WARC file in `dir`.
fn warcio_check(dir: &Path) -> std::process::Output {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    std::process::Command::new(python())
        .args(["-m", "warcio.cli", "check", "-v"])
        .args(&files)
        .output()
        .expect("run warcio")
}

fn sorted(paths: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
    v.sort();
    v
}

/// A proxy whose CONNECT answer ends its lines in a bare LF (`HTTP/1.0 200 Connection
/// established\n\n`, as some appliances write it; RFC 9112 2.2 lets a recipient take it):
/// the tunnel is used, as curl and wget use it. Before, trawl waited for CR LF CR LF until
/// its timeout and gave the site up (found by an exploratory crawl).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connect_answer_in_bare_line_feeds_opens_the_tunnel() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let web = Web::default();
    let secure = web.tls_host("127.0.0.19").await;
    small_site(&secure);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let target = head.split(' ').nth(1).unwrap_or_default().to_string();
                let Ok(mut origin) = tokio::net::TcpStream::connect(target).await else {
                    return;
                };
                let answer = b"HTTP/1.0 200 Connection established\nProxy-agent: lf\n\n";
                if client.write_all(answer).await.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut origin).await;
                }
            });
        }
    });
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    let root = format!("https://{}/", secure.addr);
    crawl_through(&format!("http://127.0.0.1:{port}"), &[root], &dir).await;
    assert_eq!(archived_paths(&read_records(&dir), &secure), sorted(&PAGES));
}

/// A proxy that asks for credentials the crawl was not given answers 407 to each http
/// request: the proxy's answer is no capture of the site (RFC 9110 15.5.8), the crawl fails
/// as it does when a CONNECT is answered 407, and the log says what to give. Before, the
/// proxy's page was archived as the site's robots.txt and pages, and the crawl exited 0
/// (found by an exploratory crawl).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_that_asks_for_credentials_is_no_capture_of_the_site() {
    let proxy = tinyproxy_with("BasicAuth trawl s3cret\n");
    let web = Web::default();
    let plain = web.host("127.0.0.134").await;
    small_site(&plain);
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    let proxy_url = format!("http://127.0.0.1:{}", proxy.port);
    let quick = args!["--robots-retry", "50ms"];
    let result = crawl_through_with(&proxy_url, &[plain.url("/")], &dir, &quick).await;
    assert_eq!(result.status.code(), Some(4), "{}", text(&result));
    assert!(
        text(&result).contains("407 Proxy Authentication Required"),
        "{}",
        text(&result)
    );
    let records = read_records(&dir);
    assert!(
        !records.iter().any(|r| r.warc_type == "response"),
        "{:?}",
        records
            .iter()
            .map(|r| (&r.warc_type, r.status()))
            .collect::<Vec<_>>()
    );
    // With the credentials, the same crawl archives the site.
    let with = format!("http://trawl:s3cret@127.0.0.1:{}", proxy.port);
    crawl_through(&with, &[plain.url("/")], &out.path().join("ok")).await;
    let records = read_records(&out.path().join("ok"));
    assert_eq!(archived_paths(&records, &plain), sorted(&PAGES));
}

/// A proxy named by a host name that `--resolve` pins is reached at the pinned address, as
/// curl's `--resolve` applies to a proxy (the system's resolver was asked, and failed, before;
/// found by an exploratory crawl).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxys_name_is_looked_up_as_the_sites_are() {
    let proxy = tinyproxy();
    let web = Web::default();
    let plain = web.host("127.0.0.137").await;
    small_site(&plain);
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    let named = format!("http://myproxy.test:{}", proxy.port);
    let pin = args![
        "--resolve",
        format!("myproxy.test:{}:127.0.0.1", proxy.port)
    ];
    let result = crawl_through_with(&named, &[plain.url("/")], &dir, &pin).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    assert_eq!(archived_paths(&read_records(&dir), &plain), sorted(&PAGES));
}

/// A proxy that is down when the crawl starts and comes up seconds later: every site waits
/// for it, and the crawl archives them all. Before, every host was given up within half a
/// minute (their robots.txt "unreachable") and the crawl was recorded as finished, so the
/// next run exited 7 (found by an exploratory crawl).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_down_at_the_start_is_waited_for() {
    let web = Web::default();
    let plain = web.host("127.0.0.138").await;
    small_site(&plain);
    let port = free_port();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    let crawl = crate::harness::spawn_trawl(args![
        "crawl",
        plain.url("/"),
        "--out",
        dir.display(),
        "--proxy",
        format!("http://127.0.0.1:{port}"),
        "--delay",
        "0ms",
        "--robots-retry",
        "50ms"
    ]);
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let _proxy = tinyproxy_on(port, "");
    let output = tokio::task::spawn_blocking(move || crawl.wait_with_output().unwrap())
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("the proxy is not answering"), "{said}");
    assert!(said.contains("the proxy answers again"), "{said}");
    assert_eq!(archived_paths(&read_records(&dir), &plain), sorted(&PAGES));
}
