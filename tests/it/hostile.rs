//! A crawl over a hostile site: one endpoint per fault. The crawl must finish, keep its WARCs
//! valid, count every fault by kind, stay small in memory, and still collect the well-behaved
//! part completely.

use std::io::{Read, Write};
use std::time::Duration;

use crate::args;
use crate::harness::{
    closed_port, read_json, read_records, run_script, text, trawl, warc_files, Rec,
};
use crate::server::{Behavior, Host, Route, Web};

fn raw(bytes: &[u8]) -> Behavior {
    Behavior::Raw {
        bytes: bytes.to_vec(),
        reset: false,
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

fn links(urls: &[String]) -> String {
    urls.iter()
        .map(|u| format!("<a href=\"{u}\">x</a>\n"))
        .collect()
}

struct Hostile {
    web: Web,
    main: Host,
    robots_hosts: Vec<Host>,
    tls: Host,
    seeds: Vec<String>,
}

async fn hostile_site() -> Hostile {
    let web = Web::default();
    let main = web.host("127.0.0.7").await;
    let hang = web.host("127.0.0.13").await;
    let slow_head = web.host("127.0.0.14").await;
    let slow_body = web.host("127.0.0.15").await;
    let tls = web.tls_host("127.0.0.12").await;
    let mut robots_hosts = Vec::new();
    for ip in ["127.0.0.8", "127.0.0.9", "127.0.0.10", "127.0.0.11"] {
        let h = web.host(ip).await;
        h.route("/", Route::html("<p>behind a strange robots.txt</p>"));
        robots_hosts.push(h);
    }

    // robots.txt faults: huge (rules past 512 KiB ignored), binary, redirect loop, 503.
    let mut huge = b"User-agent: *\nDisallow: /nothing-here\n".to_vec();
    huge.resize(2 * 1024 * 1024, b'#');
    huge.extend_from_slice(b"\nDisallow: /\n");
    robots_hosts[0].route("/robots.txt", Route::typed(200, "text/plain", &huge));
    robots_hosts[1].route(
        "/robots.txt",
        Route::typed(200, "text/plain", &[0xff, 0, 0xfe, 7, 0x80, b'\n', 0]),
    );
    robots_hosts[2].route("/robots.txt", Route::redirect(302, "/robots.txt?again"));
    robots_hosts[2].route("/robots.txt?again", Route::redirect(302, "/robots.txt"));
    robots_hosts[3].route("/robots.txt", Route::typed(503, "text/plain", b"busy"));

    hang.behave("/never-answers", Behavior::Hang);
    slow_head.behave(
        "/slow-head",
        Behavior::Drip {
            head: Vec::new(),
            body: Route::html("<p>slow</p>").wire_bytes(),
            every: Duration::from_millis(300),
        },
    );
    let body = "<p>slow body</p>".repeat(50);
    slow_body.behave(
        "/slow-body",
        Behavior::Drip {
            head: format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes(),
            body: body.into_bytes(),
            // Far below the idle timeout (2 s), so that only the whole-fetch deadline can end
            // it, even on a loaded machine (a 200 ms drip against 1 s once read as idle).
            every: Duration::from_millis(50),
        },
    );
    tls.route("/", Route::html("<p>self-signed</p>"));

    let m = |p: &str| main.url(p);
    main.route(
        "/robots.txt",
        Route::typed(200, "text/plain", b"User-agent: *\nAllow: /\n"),
    );
    main.behave(
        "/reset-mid-body",
        Behavior::Raw {
            bytes: [
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n"
                    .as_slice(),
                &[b'x'; 3000],
            ]
            .concat(),
            reset: true,
        },
    );
    main.behave(
        "/short-body",
        raw(&[
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\n"
                .as_slice(),
            b"<p>only this</p>",
        ]
        .concat()),
    );
    main.behave("/long-body", Behavior::RawKeepAlive(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10\r\n\r\n<p>ok</p>\nTHIS IS NOT PART OF IT".to_vec()));
    main.behave(
        "/bad-status",
        raw(b"HTTP/1.1 abc Bogus\r\nContent-Length: 0\r\n\r\n"),
    );
    main.behave("/dup-content-length", raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello!!"));
    main.behave("/bad-chunked", raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nmore\r\n0\r\n\r\n"));
    main.behave(
        "/http09",
        raw(b"<html><body>no status line at all</body></html>\n"),
    );
    main.behave(
        "/garbage",
        raw(&[0u8, 1, 2, 0xff, 0xfe, b'\r', b'\n', b'\r', b'\n', 9, 9, 9]),
    );
    main.behave(
        "/huge-header",
        raw(&[
            b"HTTP/1.1 200 OK\r\nX-Big: ".as_slice(),
            &[b'a'; 40_000],
            b"\r\nContent-Length: 0\r\n\r\n",
        ]
        .concat()),
    );
    main.behave(
        "/many-headers",
        raw(&[
            b"HTTP/1.1 200 OK\r\n".as_slice(),
            &b"X-A: b\r\n".repeat(500),
            b"Content-Length: 0\r\n\r\n",
        ]
        .concat()),
    );
    let mut bad_gzip = Route::html("");
    bad_gzip
        .headers
        .push(("Content-Encoding".into(), "gzip".into()));
    bad_gzip.body = b"this is not gzip at all".to_vec();
    main.route("/bad-encoding", bad_gzip);
    let mut bomb = Route::html("");
    bomb.headers
        .push(("Content-Encoding".into(), "gzip".into()));
    bomb.body = gzip(&vec![b' '; 50 * 1024 * 1024]);
    main.route("/gzip-bomb", bomb);
    // 100 MB of page, past the body cap.
    let mut huge = b"<html><body><p>".to_vec();
    huge.resize(100 * 1024 * 1024, b'x');
    main.route("/huge-body", Route::typed(200, "text/html", &huge));
    main.route("/redirect-loop-a", Route::redirect(302, "/redirect-loop-b"));
    main.route("/redirect-loop-b", Route::redirect(302, "/redirect-loop-a"));
    for i in 0..20 {
        main.route(
            &format!("/chain/{i}"),
            Route::redirect(301, &format!("/chain/{}", i + 1)),
        );
    }
    main.route("/trap/", Route::html(r#"<a href="a/">deeper</a>"#));
    for depth in 1..12 {
        main.route(
            &format!("/trap/{}", "a/".repeat(depth)),
            Route::html(r#"<a href="a/">deeper</a>"#),
        );
    }
    main.route("/weird-links", Route::html(&format!(
        "<a href=\"/ok%20space\">s</a><a href=\"http://[::1\">bad</a><a href=\"/{}\">long</a><a href=\"/bücher/ü\">u</a>{}",
        "x".repeat(5000),
        "<div>".repeat(20_000)
    )));
    main.route("/ok%20space", Route::html("<p>space</p>"));
    main.route("/b%C3%BCcher/%C3%BC", Route::html("<p>unicode</p>"));
    for i in 1..=5 {
        main.route(
            &format!("/good/{i}"),
            Route::html(&format!(
                "<p>good page {i}</p><a href=\"/good/{}\">n</a>",
                i % 5 + 1
            )),
        );
    }

    let elsewhere: Vec<String> = [
        hang.url("/never-answers"),
        slow_head.url("/slow-head"),
        slow_body.url("/slow-body"),
        format!("http://127.0.0.7:{}/refused", closed_port()),
        format!("https://{}/", tls.addr),
    ]
    .into_iter()
    .chain(robots_hosts.iter().map(|h| h.url("/")))
    .collect();
    let faults: Vec<String> = [
        "/reset-mid-body",
        "/short-body",
        "/long-body",
        "/bad-status",
        "/dup-content-length",
        "/bad-chunked",
        "/http09",
        "/garbage",
        "/huge-header",
        "/many-headers",
        "/bad-encoding",
        "/gzip-bomb",
        "/huge-body",
        "/redirect-loop-a",
        "/chain/0",
        "/trap/",
        "/weird-links",
        "/good/1",
    ]
    .iter()
    .map(|p| m(p))
    .chain(elsewhere.iter().cloned())
    .chain([
        "http://nonexistent.invalid/".to_string(),
        "http://169.254.169.254/latest/meta-data/".to_string(),
    ])
    .collect();
    main.route("/", Route::html(&links(&faults)));
    // The other loopback hosts are seeds too: an IP-literal seed unlocks only its own address
    // and port, and these hosts must be reached to show their faults. 169.254.169.254 is not a
    // seed: it must stay blocked.
    let seeds = std::iter::once(m("/")).chain(elsewhere).collect();
    Hostile {
        seeds,
        web,
        main,
        robots_hosts,
        tls,
    }
}

fn responses(records: &[Rec]) -> Vec<&Rec> {
    records
        .iter()
        .filter(|r| r.warc_type == "response")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_survives_every_fault_and_counts_it() {
    let site = hostile_site().await;
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    let stats_path = out.path().join("stats.json");
    let mut args = args![
        "crawl",
        "--out",
        dir.display(),
        "--stats",
        stats_path.display(),
        "--scope",
        "any",
        "--delay",
        "0ms",
        "--timeout",
        "2s",
        "--connect-timeout",
        "1s",
        "--fetch-timeout",
        "4s",
        "--retries",
        1,
        "--robots-retry",
        "100ms",
        "--max-header-size",
        "16KiB",
        "--max-headers",
        100,
        "--max-decoded-size",
        "1MiB",
        "--max-redirects",
        3,
        "--max-url-length",
        1000,
        "--max-path-repeats",
        4,
        "-q"
    ];
    args.extend(site.seeds.clone());
    let result = trawl(args).await;
    // Some URLs fail for good (that is the point): exit code 4, not a crash.
    assert_eq!(result.status.code(), Some(4), "{}", text(&result));
    let stats = read_json(&stats_path);
    let errors = &stats["errors"];
    for kind in [
        "body_reset",
        "body_incomplete",
        "bad_chunked",
        "invalid_status_line",
        "invalid_content_length",
        "not_http",
        "header_too_large",
        "invalid_content_encoding",
        "decoded_size_capped",
        "timeout",
        "fetch_timeout",
        "connect_refused",
        "dns",
        "tls_certificate",
    ] {
        assert!(
            errors[kind].as_u64().unwrap_or(0) >= 1,
            "fault {kind} not counted: {errors}"
        );
    }
    let filtered = &stats["filtered"];
    // The link to 169.254.169.254 is refused as it is met (the guard's policy, filtered).
    assert!(
        filtered["blocked_address"].as_u64().unwrap() >= 1,
        "{filtered}"
    );
    assert!(filtered["redirects"].as_u64().unwrap() >= 1, "{filtered}");
    assert!(filtered["path_trap"].as_u64().unwrap() >= 1, "{filtered}");
    assert!(filtered["url_length"].as_u64().unwrap() >= 1, "{filtered}");
    assert!(
        filtered["robots_unavailable"].as_u64().unwrap() >= 1,
        "{filtered}"
    );
    // A 100 MB body capped at 20 MiB, a 50 MiB gzip bomb and the rest: each large body is
    // held about once (the tape), not copied for its record or for the tokenizer, nor left
    // behind by the tape's doublings (101 MB before, 59 MB after, on the debug build).
    assert!(
        stats["peak_rss_bytes"].as_u64().unwrap() < 85 * 1024 * 1024,
        "{}",
        stats["peak_rss_bytes"]
    );

    // The WARCs are valid for strict readers.
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(
        check.status.success(),
        "warc_check failed:\n{}",
        text(&check)
    );

    let records = read_records(&dir);
    let archived = |url: &str| {
        responses(&records)
            .into_iter()
            .find(|r| r.target_uri.as_deref() == Some(url))
            .cloned()
    };
    // The well-behaved part is complete.
    for i in 1..=5 {
        assert!(
            archived(&site.main.url(&format!("/good/{i}"))).is_some(),
            "good page {i} missing"
        );
    }
    assert!(archived(&site.main.url("/ok%20space")).is_some());
    assert!(archived(&site.main.url("/b%C3%BCcher/%C3%BC")).is_some());
    // Broken bodies are archived, truncated, and say why.
    assert_eq!(
        archived(&site.main.url("/reset-mid-body"))
            .unwrap()
            .truncated
            .as_deref(),
        Some("disconnect")
    );
    assert_eq!(
        archived(&site.main.url("/short-body"))
            .unwrap()
            .truncated
            .as_deref(),
        Some("disconnect")
    );
    assert_eq!(
        archived(&site.main.url("/bad-chunked"))
            .unwrap()
            .truncated
            .as_deref(),
        Some("disconnect")
    );
    // A body longer than its Content-Length is stored as exactly the declared message.
    let long = archived(&site.main.url("/long-body")).unwrap();
    assert!(
        long.block.ends_with(b"\r\n\r\n<p>ok</p>\n"),
        "{:?}",
        String::from_utf8_lossy(&long.block)
    );
    // Unparseable responses archive nothing.
    for p in [
        "/bad-status",
        "/dup-content-length",
        "/http09",
        "/garbage",
        "/huge-header",
        "/many-headers",
    ] {
        assert!(archived(&site.main.url(p)).is_none(), "{p} archived");
    }
    // Robots faults: huge (tail rules ignored) and binary robots.txt allow; a redirect loop is
    // "unavailable" = allow; 503 three times = the origin is given up, its page never fetched.
    for h in &site.robots_hosts[..3] {
        assert!(archived(&h.url("/")).is_some(), "{} page missing", h.addr);
    }
    assert!(!site
        .web
        .paths_of(&site.robots_hosts[3])
        .contains(&"/".to_string()));
    // Bad certificate: nothing archived, nothing requested over TLS.
    assert!(site.web.paths_of(&site.tls).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insecure_accepts_a_self_signed_certificate() {
    let web = Web::default();
    let tls = web.tls_host("127.0.0.16").await;
    tls.route("/", Route::html("<p>self-signed but archived</p>"));
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        format!("https://{}/", tls.addr),
        "--out",
        out.path().display(),
        "--insecure",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(out.path());
    let page = records
        .iter()
        .find(|r| r.warc_type == "response" && r.path() == "/")
        .expect("archived over TLS");
    assert_eq!(
        page.block,
        tls.wire_bytes("/"),
        "plaintext HTTP bytes recorded inside TLS"
    );
    // Each request and response record says what it went over (WARC-Protocol, one field per
    // layer, and WARC-Cipher-Suite), and warcio reads them with every digest valid.
    let mut heads = String::new();
    for file in warc_files(out.path()) {
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(file).unwrap())
            .read_to_end(&mut text)
            .unwrap();
        heads.push_str(&String::from_utf8_lossy(&text));
    }
    let exchanges = records
        .iter()
        .filter(|r| matches!(r.warc_type.as_str(), "request" | "response"))
        .count();
    let stack = "WARC-Protocol: http/1.1\r\nWARC-Protocol: tls/1.3\r\nWARC-Cipher-Suite: TLS_";
    assert_eq!(heads.matches(stack).count(), exchanges, "{heads}");
    let check = run_script("warc_check.py", args![out.path().display()]).await;
    assert!(check.status.success(), "{}", text(&check));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssrf_guard_refuses_a_name_that_resolves_to_loopback() {
    let web = Web::default();
    let host = web.host("127.0.0.1").await;
    host.route("/", Route::html("<p>internal</p>"));
    let seed = format!("http://localhost:{}/", host.addr.port());
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("s.json");
    let refused = trawl(args![
        "crawl",
        &seed,
        "--out",
        out.path().join("a").display(),
        "--stats",
        stats.display(),
        "-q",
        "--robots-retry",
        "50ms"
    ])
    .await;
    assert_eq!(refused.status.code(), Some(4), "{}", text(&refused));
    assert!(
        web.hits().is_empty(),
        "the guard let a request through: {:?}",
        web.hits()
    );
    assert!(
        read_json(&stats)["errors"]["blocked_address"]
            .as_u64()
            .unwrap()
            >= 1
    );

    let allowed = trawl(args![
        "crawl",
        &seed,
        "--out",
        out.path().join("b").display(),
        "--allow-private",
        "-q"
    ])
    .await;
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed));
    assert!(web.paths_of(&host).contains(&"/".to_string()));
}

/// A TLS 1.3 server that requires a client certificate says so in an alert after the
/// handshake: the fetch fails as a TLS refusal that names it, not retried. Before, it read as
/// a closed connection, retried for half a minute, and a bare-host seed did not fall back to
/// http (found by an exploratory crawl).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_requires_a_client_certificate_is_a_tls_refusal_not_a_dropped_connection() {
    let web = Web::default();
    let h = web
        .tls_host_requiring_client_certificates("127.0.0.133")
        .await;
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("s.json");
    let result = trawl(args![
        "crawl",
        format!("https://{}/", h.addr),
        "--out",
        out.path().join("w").display(),
        "--stats",
        stats.display(),
        "--insecure"
    ])
    .await;
    let report = read_json(&stats);
    assert_eq!(
        report["errors"]["closed"],
        serde_json::Value::Null,
        "{report}"
    );
    assert_eq!(report["retries"].as_u64(), Some(0), "{report}");
    assert!(
        report["errors"]["tls_certificate"].as_u64() >= Some(1),
        "{report}"
    );
    assert!(
        text(&result).contains("requires a client certificate"),
        "{}",
        text(&result)
    );
}

/// A page at an IP-literal seed links to another port of its address (an intranet app on
/// :8080 linking to its site on :80): the guard refuses it as the crawl's own policy, counted
/// as filtered, said once, and the crawl exits 0. Before, its robots.txt was "given up" as
/// unreachable and every run exited 4 (found by an exploratory crawl).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_to_another_port_of_a_seeds_address_is_filtered_not_a_failure() {
    let web = Web::default();
    let app = web.host("127.0.0.132").await;
    let main = web.host_on("127.0.0.132", 0).await;
    let elsewhere = format!("{}main", main.url("/"));
    app.route(
        "/",
        Route::html(&format!(
            r#"<a href="{elsewhere}">site</a> <a href="/b">b</a>"#
        )),
    );
    app.route("/b", Route::html("<p>b</p>"));
    main.route("/main", Route::html("<p>main</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("s.json");
    let result = trawl(args![
        "crawl",
        app.url("/"),
        "--out",
        out.path().join("w").display(),
        "--stats",
        stats.display(),
        "--delay",
        "0ms"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let report = read_json(&stats);
    assert_eq!(
        report["filtered"]["blocked_address"].as_u64(),
        Some(1),
        "{report}"
    );
    assert_eq!(
        report["filtered"]["robots_unavailable"].as_u64(),
        Some(0),
        "{report}"
    );
    assert!(web.paths_of(&main).is_empty(), "{:?}", web.hits());
    assert!(
        text(&result).contains("are not followed"),
        "{}",
        text(&result)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_per_host_limit_is_exact() {
    let web = Web::default();
    let host = web.host("127.0.0.17").await;
    host.route(
        "/",
        Route::html(
            &(1..=20)
                .map(|i| format!("<a href=/p{i}>p</a>"))
                .collect::<String>(),
        ),
    );
    for i in 1..=20 {
        host.route(&format!("/p{i}"), Route::html("<p>p</p>"));
    }
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        host.url("/"),
        "--out",
        out.path().display(),
        "--max-pages-per-host",
        7,
        "--delay",
        "0ms",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let pages = read_records(out.path())
        .into_iter()
        .filter(|r| {
            r.warc_type == "response" && r.status() == Some(200) && r.path() != "/robots.txt"
        })
        .count();
    assert_eq!(pages, 7);
}

/// An https body read to the close (no length, not chunked) whose connection is cut inside a
/// TLS record: archived as cut (`WARC-Truncated: disconnect`), as wget reports the packet it
/// could not decode. A close at a record boundary without close_notify stays the body's end,
/// as browsers read it. Before, the cut page was archived as whole (found by an exploratory
/// crawl).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_body_cut_inside_a_tls_record_is_archived_as_cut() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const CUT: usize = 40_000;
    let web = Web::default();
    let h = web.tls_host("127.0.0.136").await;
    let mut page =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n".to_vec();
    page.extend(std::iter::repeat_n(b'a', 200_000));
    h.behave(
        "/",
        Behavior::Raw {
            bytes: page,
            reset: false,
        },
    );
    // A relay that passes the first CUT bytes of what the server sends, then closes.
    let relay = tokio::net::TcpListener::bind("127.0.0.136:0")
        .await
        .unwrap();
    let relay_addr = relay.local_addr().unwrap();
    let server = h.addr;
    tokio::spawn(async move {
        while let Ok((client, _)) = relay.accept().await {
            tokio::spawn(async move {
                let Ok(origin) = tokio::net::TcpStream::connect(server).await else {
                    return;
                };
                let (mut from_client, mut to_client) = client.into_split();
                let (mut from_origin, mut to_origin) = origin.into_split();
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut from_client, &mut to_origin).await;
                });
                let (mut sent, mut buf) = (0, vec![0u8; 4096]);
                while let Ok(n @ 1..) = from_origin.read(&mut buf).await {
                    let n = n.min(CUT - sent);
                    if to_client.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                    sent += n;
                    if sent == CUT {
                        break;
                    }
                }
                let _ = to_client.shutdown().await;
            });
        }
    });
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        format!("https://{relay_addr}/"),
        "--out",
        out.path().display(),
        "--insecure",
        "--no-sitemaps",
        "--ignore-robots"
    ])
    .await;
    let records = read_records(out.path());
    let page = records
        .iter()
        .find(|r| r.warc_type == "response")
        .unwrap_or_else(|| panic!("{}", text(&result)));
    assert_eq!(
        page.truncated.as_deref(),
        Some("disconnect"),
        "{}",
        text(&result)
    );
    assert!(page.block.len() < 200_000);
}
