//! The command line: seeds, exit codes, messages.

use crate::args;
use crate::harness::{closed_port, read_json, read_records, text, trawl, warc_files};
use crate::hostile_cases::crawl;
use crate::server::{Route, Web};

#[tokio::test]
async fn no_usable_seed_exits_3_with_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, "# comment\n\nftp://x.org/\nnot a url\n").unwrap();
    let out = trawl(args![
        "crawl",
        "--seeds",
        seeds.display(),
        "--out",
        dir.path().join("o").display()
    ])
    .await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3") && err.contains("line 4"), "{err}");
    assert!(err.contains("no usable seed"), "{err}");
}

#[tokio::test]
async fn bad_arguments_exit_2() {
    for bad in [
        args!["crawl", "http://127.0.0.1:1/", "--delay", "soon"],
        args!["crawl", "http://127.0.0.1:1/", "--include", "("],
        args!["crawl", "http://127.0.0.1:1/", "--concurrency", "0"],
        args!["crawl", "http://127.0.0.1:1/", "--scope", "planet"],
    ] {
        let out = trawl(bad.clone()).await;
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out));
    }
    // A zero that would stop or hollow out the whole crawl is named before it starts.
    for (flag, zero) in [
        ("--fetch-timeout", "0s"),
        ("--timeout", "0ms"),
        ("--max-headers", "0"),
        ("--max-pages", "0"),
        ("--max-pages-per-host", "0"),
        ("--max-links-per-page", "0"),
        // And values that would hang the crawl, take gigabytes or write a broken header
        // line (each was taken before).
        ("--max-body-size", "0"),
        ("--max-path-repeats", "0"),
        ("--max-headers", "100000000"),
        ("--delay", "1000000000s"),
        ("--delay", "10y"),
        ("--warc-prefix", "news\nweekly"),
        ("--warc-prefix", &"x".repeat(300)),
        ("--redis", "not a url"),
    ] {
        let mut cmd = args!["crawl", "http://127.0.0.1:1/", flag, zero];
        if flag == "--redis" {
            cmd.extend(args!["--crawl-id", "x"]);
        }
        let out = trawl(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{flag} {zero}: {}", text(&out));
        assert!(text(&out).contains(flag), "{flag} {zero}: {}", text(&out));
    }
    // The control commands too: a URL that does not parse is no Redis out of reach (exit 9).
    for command in ["stop", "status"] {
        let out = trawl(args![command, "--redis", "not a url", "--crawl-id", "x"]).await;
        assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out));
    }
}

#[tokio::test]
async fn help_lists_every_option_with_defaults() {
    let out = trawl(args!["crawl", "--help"]).await;
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--seeds",
        "--out",
        "--max-pages",
        "--concurrency",
        "--delay",
        "--max-delay",
        "--max-depth",
        "--scope",
        "--include",
        "--exclude",
        "--user-agent",
        "--records-per-file",
        "--warc-max-size",
        "--warc-prefix",
        "--timeout",
        "--max-body-size",
        "--accept",
        "--stats",
        "--quiet",
        "--verbose",
    ] {
        assert!(help.contains(flag), "{flag} missing from --help");
    }
    for default in [
        "[default: 100ms]",
        "[default: 30s]",
        "[default: 1000]",
        "[default: 1GB]",
        "[default: domain]",
    ] {
        assert!(help.contains(default), "{default} missing from --help");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_seed_lines_are_skipped_and_good_ones_crawled() {
    let web = Web::default();
    let host = web.host("127.0.0.5").await;
    host.route("/", Route::html("<p>hi</p>"));
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("bogus seed\n{}\n", host.url("/"))).unwrap();
    let out_dir = dir.path().join("o");
    let out = trawl(args![
        "crawl",
        "--seeds",
        seeds.display(),
        "--out",
        out_dir.display(),
        "-q"
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));
    assert!(read_records(&out_dir)
        .iter()
        .any(|r| r.warc_type == "response" && r.path() == "/"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_fetches_exit_4() {
    // A port nobody listens on: connection refused, retried, then counted.
    let port = closed_port();
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("s.json");
    let out = trawl(args![
        "crawl",
        format!("http://127.0.0.1:{port}/"),
        "--out",
        dir.path().display(),
        "--retries",
        1,
        "--ignore-robots",
        "--stats",
        stats.display(),
        "-q"
    ])
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let s = read_json(&stats);
    assert_eq!(s["errors"]["connect_refused"], 2);
    assert_eq!(s["failed_urls"], 1);
    assert_eq!(s["retries"], 1);
}

#[tokio::test]
async fn unwritable_output_exits_5() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let out = trawl(args![
        "crawl",
        "http://127.0.0.1:1/",
        "--out",
        file.join("sub").display()
    ])
    .await;
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bare_host_falls_back_to_http() {
    let web = Web::default();
    let host = web.host("127.0.0.6").await;
    host.route("/", Route::html("<p>plain http</p>"));
    // The bare host "127.0.0.6:PORT" is tried as https first; the plain-HTTP server fails the
    // TLS handshake, so trawl falls back to http://.
    let dir = tempfile::tempdir().unwrap();
    let out = trawl(args![
        "crawl",
        host.addr,
        "--out",
        dir.path().display(),
        "-q",
        "--retries",
        0
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let records = read_records(dir.path());
    assert!(
        records
            .iter()
            .any(|r| r.warc_type == "response" && r.target_uri.as_deref() == Some(&host.url("/"))),
        "{records:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_robots_txt_is_a_failure_not_a_silent_success() {
    let port = closed_port();
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("s.json");
    // robots.txt is tried 3 times (backoff from --robots-retry), then the origin is given up.
    let out = trawl(args![
        "crawl",
        format!("http://127.0.0.1:{port}/"),
        "--out",
        dir.path().display(),
        "--stats",
        stats.display(),
        "-q",
        "--delay",
        "0ms",
        "--robots-retry",
        "100ms"
    ])
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let s = read_json(&stats);
    assert_eq!(s["filtered"]["robots_unavailable"], 1);
    assert_eq!(s["errors"]["connect_refused"], 3);
}

/// `--header` (repeatable) reaches the server on every request and is in the request
/// records; an Accept replaces trawl's own; names trawl sets itself are refused with exit 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_headers_reach_the_server_and_reserved_ones_are_refused() {
    let web = Web::default();
    let a = web.host("127.0.0.2").await;
    a.route("/", Route::html(r#"<a href="/next">n</a>"#));
    a.route("/next", Route::html("<p>next</p>"));
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        a.url("/"),
        "--out",
        out.path().display(),
        "--delay",
        "0ms",
        "--header",
        "X-Contact: archive-ops@example.org",
        "--header",
        "Accept-Language: de, en;q=0.5",
        "--header",
        "Accept: text/html",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let hits = web.hits();
    assert!(hits.len() >= 3, "{hits:?}");
    for hit in &hits {
        let head = hit.head.to_ascii_lowercase();
        assert!(
            head.contains("x-contact: archive-ops@example.org\r\n"),
            "{head}"
        );
        assert!(head.contains("accept-language: de, en;q=0.5\r\n"), "{head}");
        assert_eq!(head.matches("\r\naccept:").count(), 1, "{head}");
        assert!(head.contains("\r\naccept: text/html\r\n"), "{head}");
    }
    let requests = read_records(out.path())
        .into_iter()
        .filter(|r| r.warc_type == "request")
        .count();
    assert_eq!(requests, hits.len());
    for bad in [
        "Host: evil.example",
        "Connection: close",
        "Content-Length: 5",
        "User-Agent: x",
        "no colon",
    ] {
        let refused = trawl(args![
            "crawl",
            a.url("/"),
            "--out",
            out.path().join("x").display(),
            "--header",
            bad
        ])
        .await;
        assert_eq!(refused.status.code(), Some(2), "{bad}: {}", text(&refused));
        assert!(text(&refused).contains("--header"), "{}", text(&refused));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wget_names_of_the_flags_work_as_trawls() {
    let web = Web::default();
    let host = web.host("127.0.0.106").await;
    host.route(
        "/",
        Route::html(r#"<img src="/logo.png"><a href="/keep">k</a><a href="/skip-me">s</a>"#),
    );
    host.route(
        "/logo.png",
        Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n"),
    );
    host.route("/keep", Route::html("<p>kept</p>"));
    host.route("/skip-me", Route::html("<p>skipped</p>"));
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("urls.txt");
    std::fs::write(&seeds, format!("{}\n", host.url("/"))).unwrap();
    let out = trawl(args![
        "crawl",
        "-i",
        seeds.display(),
        "-p",
        "-U",
        "archive-bot/1.0",
        "--reject-regex",
        "skip",
        "--accept-regex",
        "127\\.0\\.0\\.106",
        "--max-redirect",
        "3",
        "--no-check-certificate",
        "--out",
        dir.path().join("o").display(),
        "-q"
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let paths = web.paths_of(&host);
    assert!(paths.contains(&"/logo.png".to_string()), "{paths:?}");
    assert!(paths.contains(&"/keep".to_string()), "{paths:?}");
    assert!(!paths.contains(&"/skip-me".to_string()), "{paths:?}");
    let agents = web.field_of_requests(&host, "/", "user-agent");
    assert_eq!(agents, [Some("archive-bot/1.0".to_string())]);
}

/// `--warc-max-size 0` is no size rotation, as wget reads its own `--warc-max-size 0` (it
/// rotated after every record batch).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warc_max_size_0_rotates_by_records_only() {
    let web = Web::default();
    let a = web.host("127.0.0.112").await;
    a.route("/", Route::html(r#"<a href="/a">a</a> <a href="/b">b</a>"#));
    a.route("/a", Route::html("<p>a</p>"));
    a.route("/b", Route::html("<p>b</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(a.url("/"), out.path(), &["--warc-max-size", "0"]).await;
    assert_eq!(stats["pages_archived"], 3, "{stats}");
    assert_eq!(warc_files(&out.path().join("warcs")).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bare_host_seed_of_a_host_falls_back_to_http() {
    // Nothing on 443: each of the three bare-host seeds is tried as https, then as http on 80.
    let web = Web::default();
    let host = web.host_on("127.0.0.207", 80).await;
    for path in ["/a/page.html", "/b/page.html", "/c/page.html"] {
        host.route(path, Route::html("<p>plain http</p>"));
    }
    let dir = tempfile::tempdir().unwrap();
    let out = trawl(args![
        "crawl",
        "127.0.0.207/a/page.html",
        "127.0.0.207/b/page.html",
        "127.0.0.207/c/page.html",
        "--out",
        dir.path().display(),
        "--delay",
        "0ms"
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let paths = web.paths_of(&host);
    for path in ["/a/page.html", "/b/page.html", "/c/page.html"] {
        assert!(paths.iter().any(|p| p == path), "{path}: {paths:?}");
    }
    assert!(
        text(&out).contains("and 2 more seed(s) there"),
        "{}",
        text(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wgets_zero_values_and_an_unwritable_cookie_file_are_met_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let seed = format!("http://127.0.0.1:{}/", closed_port());
    let run = |extra: &[&str]| {
        let mut a = args![
            "crawl",
            &seed,
            "--out",
            dir.path().join("w").display(),
            "--ignore-robots",
            "--retries",
            0,
            "--fresh",
            "-q"
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        trawl(a)
    };
    // wget's "never time out" is refused under the flag as written.
    let never = run(&["-T", "0"]).await;
    assert_eq!(never.status.code(), Some(2), "{}", text(&never));
    assert!(
        text(&never).contains("-T 0 (wget: never time out)"),
        "{}",
        text(&never)
    );
    // wget's --limit-rate=0 is no limit: the crawl runs (its one URL refused: exit 4).
    let unlimited = run(&["--limit-rate=0"]).await;
    assert_eq!(unlimited.status.code(), Some(4), "{}", text(&unlimited));
    // A cookie file that cannot be written is said before anything is fetched (exit 5),
    // not after the crawl with exit 0.
    let jar = dir.path().join("no-such-dir").join("c.txt");
    let cookies = run(&["--save-cookies", &jar.display().to_string()]).await;
    assert_eq!(cookies.status.code(), Some(5), "{}", text(&cookies));
    assert!(
        text(&cookies).contains("--save-cookies"),
        "{}",
        text(&cookies)
    );
}

/// A seeds path that is a FIFO is refused at once (exit 2), as a `<(cmd)` pipe is. Before, the
/// crawl waited for a writer forever, saying nothing.
#[tokio::test]
async fn a_fifo_as_the_seeds_file_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("seeds.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let run = trawl(args![
        "crawl",
        "--seeds",
        fifo.display(),
        "--out",
        dir.path().join("out").display()
    ]);
    let res = tokio::time::timeout(std::time::Duration::from_secs(30), run)
        .await
        .expect("trawl waited on the FIFO");
    assert_eq!(res.status.code(), Some(2), "{}", text(&res));
    assert!(
        String::from_utf8_lossy(&res.stderr).contains("not a regular file"),
        "{}",
        text(&res)
    );
}

/// A `--dedup-index` that holds no capture (a WARC or a text given by mistake) is said: the
/// crawl deduplicates against nothing in it. Before, it ran as if deduplicating, silently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dedup_index_with_no_capture_in_it_is_said() {
    let web = Web::default();
    let host = web.host("127.0.0.238").await;
    host.route("/", Route::html("<p>hi</p>"));
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index.cdxj");
    std::fs::write(&index, "this is no index\nnor is this line\n").unwrap();
    let res = trawl(args![
        "crawl",
        host.url("/"),
        "--out",
        dir.path().join("o").display(),
        "--dedup-index",
        index.display(),
        "--delay",
        "0ms"
    ])
    .await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    assert!(
        String::from_utf8_lossy(&res.stderr).contains("no full 2xx capture found"),
        "{}",
        text(&res)
    );
}

/// Past the hundred bad seed lines named one by one, the report gives how many were skipped
/// (only `--stats` had the count); a `--save-cookies` that is a directory is refused before the
/// crawl (exit 5), where it failed at the end with exit 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipped_seed_lines_are_counted_and_a_cookie_file_that_is_a_directory_refused() {
    let web = Web::default();
    let host = web.host("127.0.0.239").await;
    host.route("/", Route::html("<p>hi</p>"));
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    let bad: String = (0..150).map(|i| format!("bogus seed {i}\n")).collect();
    std::fs::write(&seeds, format!("{bad}{}\n", host.url("/"))).unwrap();
    let crawl = |extra: Vec<String>| {
        let mut cmd = args![
            "crawl",
            "--seeds",
            seeds.display(),
            "--out",
            dir.path().join("o").display(),
            "--delay",
            "0ms"
        ];
        cmd.extend(extra);
        trawl(cmd)
    };
    let refused = crawl(args!["--save-cookies", dir.path().display()]).await;
    assert_eq!(refused.status.code(), Some(5), "{}", text(&refused));
    assert!(
        text(&refused).contains("--save-cookies"),
        "{}",
        text(&refused)
    );
    let out = crawl(Vec::new()).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("seed lines skipped     150"), "{err}");
    // Past the hundredth named, one line says the rest are counted.
    assert_eq!(err.matches("skipping seed").count(), 100, "{err}");
    assert!(
        err.contains("further seed lines skipped are counted"),
        "{err}"
    );
}
