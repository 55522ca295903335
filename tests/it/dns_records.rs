//! `--dns-records --dns-server`: a crawl of two named sites whose names only a real dnsmasq on
//! loopback answers. Each name's lookup is archived once as a `dns:` record in Heritrix's
//! form, the server's log shows the lookups, warcio and the strict checker read the files,
//! `trawl index` indexes them as cdxj-indexer does, and pywb replays the pages as before.

use std::path::Path;

use crate::args;
use crate::daemons::{dnsmasq, free_port};
use crate::harness::{assert_replays, assert_valid, python, read_records, text, trawl};
use crate::server::{Route, Web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_lookup_is_archived_once_as_a_dns_record() {
    // The other name is internationalized: its record is written as the wire has it (it was
    // written in Unicode, found by an exploratory crawl).
    let dns = dnsmasq(&[
        ("site.test", "127.0.0.10"),
        ("xn--bcher-kva.test", "127.0.0.11"),
    ]);
    let web = Web::default();
    let site = web.host("127.0.0.10").await;
    let other = web.host("127.0.0.11").await;
    let other_root = format!("http://bücher.test:{}/", other.addr.port());
    site.route(
        "/",
        Route::html(&format!(
            r#"<a href="/a">a</a> <a href="/b">b</a> <a href="{other_root}">other</a>"#
        )),
    );
    site.route("/a", Route::html(r#"<p>a</p><a href="/b">b</a>"#));
    site.route("/b", Route::html("<p>b</p>"));
    other.route("/", Route::html(r#"<p>other</p><a href="/x">x</a>"#));
    other.route("/x", Route::html("<p>x</p>"));
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    let seed = format!("http://site.test:{}/", site.addr.port());
    let result = trawl(args![
        "crawl",
        &seed,
        "--out",
        dir.display(),
        "--dns-records",
        "--dns-server",
        format!("127.0.0.1:{}", dns.port),
        "--allow-private",
        "--scope",
        "any",
        "--delay",
        "0ms",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(&dir);
    let pages = records
        .iter()
        .filter(|r| r.warc_type == "response" && r.status() == Some(200))
        .count();
    assert_eq!(pages, 5, "every page, on both names");
    for (name, addr) in [
        ("site.test", "127.0.0.10"),
        ("xn--bcher-kva.test", "127.0.0.11"),
    ] {
        let target = format!("dns:{name}");
        let found: Vec<_> = records
            .iter()
            .filter(|r| r.target_uri.as_deref() == Some(target.as_str()))
            .collect();
        assert_eq!(found.len(), 1, "one record per name and TTL: {found:?}");
        let record = found[0];
        assert_eq!(record.warc_type, "response");
        assert_eq!(record.ip_address.as_deref(), Some("127.0.0.1"));
        let block = String::from_utf8_lossy(&record.block).to_string();
        let mut lines = block.lines();
        let stamp = lines.next().unwrap_or_default();
        assert!(
            stamp.len() == 14 && stamp.bytes().all(|b| b.is_ascii_digit()),
            "{block}"
        );
        assert_eq!(
            lines.next(),
            Some(format!("{name}.\t300\tIN\tA\t{addr}").as_str()),
            "{block}"
        );
        // The server was asked for the name (it logs each query).
        let log = dns.output();
        assert!(
            log.contains(&format!("query[A] {name} from 127.0.0.1")),
            "{log}"
        );
    }
    // The DNS records come before the first capture of their name.
    let position = |f: &dyn Fn(&crate::harness::Rec) -> bool| records.iter().position(f);
    let dns_at = position(&|r| r.target_uri.as_deref() == Some("dns:site.test"));
    let page_at = position(&|r| {
        r.warc_type == "response"
            && r.target_uri
                .as_deref()
                .is_some_and(|u| u.starts_with(&seed))
    });
    assert!(dns_at < page_at, "{dns_at:?} {page_at:?}");
    assert_valid(&dir).await;
    assert_same_index_as_cdxj_indexer(&dir).await;
    assert_replays(&dir, &format!("{seed}a"), r#"<p>a</p><a href="/b">b</a>"#).await;
    // Without the flag, no DNS record.
    let plain = out.path().join("plain");
    let result = trawl(args![
        "crawl",
        &seed,
        "--out",
        plain.display(),
        "--dns-server",
        format!("127.0.0.1:{}", dns.port),
        "--allow-private",
        "--delay",
        "0ms",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(&plain);
    assert!(records.iter().any(|r| r.status() == Some(200)));
    assert!(!records.iter().any(|r| r
        .target_uri
        .as_deref()
        .is_some_and(|u| u.starts_with("dns:"))));
}

#[tokio::test]
async fn a_resolver_that_does_not_answer_fails_the_names_not_the_crawl() {
    let web = Web::default();
    let site = web.host("127.0.0.12").await;
    site.route("/", Route::html("<p>by address</p>"));
    let out = tempfile::tempdir().unwrap();
    // Nothing listens there: the named seed fails with a DNS error, the IP seed is crawled.
    let silent = format!("127.0.0.1:{}", free_port());
    let result = trawl(args![
        "crawl",
        site.url("/"),
        format!("http://nowhere.test:{}/", site.addr.port()),
        "--out",
        out.path().display(),
        "--dns-records",
        "--dns-server",
        silent,
        "--delay",
        "0ms",
        "--retries",
        "0",
        // A silent resolver is a passing fault: robots.txt is tried again before its origin
        // is given up. Kept short here.
        "--dns-timeout",
        "1",
        "--robots-retry",
        "100ms",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(4), "{}", text(&result));
    let records = read_records(out.path());
    assert!(records.iter().any(|r| r.status() == Some(200)));
    assert!(!records.iter().any(|r| r
        .target_uri
        .as_deref()
        .is_some_and(|u| u.starts_with("dns:"))));
}

/// `trawl index` and cdxj-indexer write the same CDXJ for `dir`, DNS records included.
async fn assert_same_index_as_cdxj_indexer(dir: &Path) {
    let warcs: Vec<String> = crate::harness::warc_files(dir)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let indexer = python().with_file_name("cdxj-indexer");
    let theirs = std::process::Command::new(indexer)
        .arg("-s")
        .args(&warcs)
        .output()
        .unwrap();
    assert!(theirs.status.success(), "{}", text(&theirs));
    let ours = trawl(args!["index", dir.display()]).await;
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&theirs.stdout),
        "CDXJ differs from cdxj-indexer"
    );
}
