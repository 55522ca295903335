//! Unattended runs: one process per output directory, kill -9 and repair, graceful SIGTERM,
//! disk full, log file and `trawl status`.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::args;
use crate::harness::{run_script, spawn_trawl, text, trawl, warc_files};
use crate::server::{linked_site, Behavior, Host, Route, Web};

async fn wait_for(mut cond: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn open_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".open")
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_process_on_the_same_output_is_refused() {
    let (_web, h) = linked_site("127.0.0.20", 20, 100).await;
    let out = tempfile::tempdir().unwrap();
    let first = spawn_trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.path().display(),
        "--delay",
        "300ms",
        "-q"
    ]);
    let lock = out.path().join(".trawl.lock");
    wait_for(|| lock.exists(), "the first crawl to lock").await;
    let second = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.path().display(),
        "-q"
    ])
    .await;
    assert_eq!(second.status.code(), Some(6), "{}", text(&second));
    assert!(String::from_utf8_lossy(&second.stderr).contains("in use by another trawl process"));
    // Another output directory but the same --state: the state database refuses it.
    let other_out = tempfile::tempdir().unwrap();
    let state = out.path().join(".trawl-state");
    wait_for(
        || state.join("state.redb").exists(),
        "the first crawl to open its state",
    )
    .await;
    let third = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        other_out.path().display(),
        "--state",
        state.display(),
        "-q"
    ])
    .await;
    assert_eq!(third.status.code(), Some(6), "{}", text(&third));
    assert!(String::from_utf8_lossy(&third.stderr).contains("in use by another process"));
    let mut first = first;
    first.kill().unwrap();
    first.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_leaves_an_open_file_that_the_next_run_repairs() {
    let (web, h) = linked_site("127.0.0.21", 40, 20_000).await;
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_path_buf();
    let crawl = args![
        "crawl",
        h.url("/"),
        "--out",
        dir.display(),
        "--delay",
        "50ms",
        "-q"
    ];
    let mut child = spawn_trawl(crawl.clone());
    wait_for(|| web.paths_of(&h).len() >= 10, "ten requests").await;
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(
        open_files(&dir),
        1,
        "a killed crawl leaves its current file open"
    );

    let status = trawl(args!["status", dir.display()]).await;
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("did not stop cleanly"),
        "{}",
        text(&status)
    );
    // The JSON says so too (it said "running": true, found by an exploratory run).
    let json = trawl(args!["status", dir.display(), "--json"]).await;
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["running"], false, "{json}");

    let again = trawl(crawl.clone()).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("repaired"),
        "{}",
        text(&again)
    );
    assert_eq!(open_files(&dir), 0);
    assert!(warc_files(&dir).len() >= 2);
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_within_the_timeout_and_closes_cleanly() {
    // 200 pages: 20 s of delays, so that a stop in seconds is not the crawl's end.
    let (web, h) = linked_site("127.0.0.22", 200, 1000).await;
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_path_buf();
    let child = spawn_trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        dir.display(),
        "--delay",
        "100ms",
        "--shutdown-timeout",
        "2s"
    ]);
    wait_for(|| web.paths_of(&h).len() >= 5, "five requests").await;
    let sent = Instant::now();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    // The 2 s shutdown timeout and room for a loaded machine.
    assert!(
        sent.elapsed() < Duration::from_secs(8),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(output.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&output.stderr).contains("interrupted by a signal"));
    assert_eq!(open_files(&dir), 0);
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
    let status = trawl(args!["status", dir.display()]).await;
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("stopped: interrupted by a signal"),
        "{}",
        text(&status)
    );
}

/// logrotate moves the log file away and sends SIGHUP (`postrotate kill -HUP`): the crawl opens
/// a new file at the path and goes on. Before, SIGHUP's default action ended the crawl as a kill
/// does (exit by signal, WARC files left open).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_opens_the_log_file_again_and_the_crawl_goes_on() {
    let (web, h) = linked_site("127.0.0.227", 30, 500).await;
    let out = tempfile::tempdir().unwrap();
    let log = out.path().join("crawl.log");
    let rotated = out.path().join("crawl.log.1");
    let child = spawn_trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.path().join("w").display(),
        "--log-file",
        log.display(),
        "--progress-interval",
        "0s",
        "--delay",
        "100ms",
        "-v"
    ]);
    wait_for(|| web.paths_of(&h).len() >= 5, "five requests").await;
    std::fs::rename(&log, &rotated).unwrap();
    Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    // The root, its 30 pages, robots.txt and /sitemap.xml.
    assert_eq!(web.paths_of(&h).len(), 33, "the whole site");
    let before = std::fs::read_to_string(&rotated).unwrap();
    let after = std::fs::read_to_string(&log).unwrap();
    assert!(before.contains("archived"), "{before}");
    assert!(after.contains("archived"), "{after}");
    assert!(
        after.contains("all queued URLs done"),
        "the report: {after}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_file_receives_logs_and_status_lines() {
    let (_web, h) = linked_site("127.0.0.23", 5, 100).await;
    let out = tempfile::tempdir().unwrap();
    let log = out.path().join("crawl.log");
    let result = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.path().join("w").display(),
        "--log-file",
        log.display(),
        "--progress-interval",
        "0s",
        "-v"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("archived"), "{text}");
    assert!(
        text.contains("trawl: ") && text.contains("pages="),
        "{text}"
    );
}

/// Disk full: the output is a 1 MiB tmpfs. Needs root (mount), which CI and this machine have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_full_stops_cleanly_with_valid_files() {
    let (_web, h) = linked_site("127.0.0.24", 60, 60_000).await;
    let out = tempfile::tempdir().unwrap();
    let mnt = out.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&mnt)
        .status()
        .expect("run mount");
    assert!(
        mounted.success(),
        "this test needs root to mount a small tmpfs"
    );
    let state = out.path().join("state");
    let stats = out.path().join("stats.json");
    let crawl = || {
        trawl(args![
            "crawl",
            h.url("/"),
            "--out",
            mnt.display(),
            "--delay",
            "0ms",
            "--gzip-level",
            0,
            // The guard off: this test is about a disk that fills mid-crawl (the guard would
            // wait for space instead, see unattended.rs).
            "--min-free",
            0,
            // The crawl's state on another disk, so that its last save point is written.
            "--state",
            state.display(),
            "--stats",
            stats.display(),
            "-q"
        ])
    };
    let result = crawl().await;
    // The report names the files written before the disk filled (before: none, 0 records).
    let report = crate::harness::read_json(&stats);
    let copy = out.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for f in warc_files(&mnt) {
        std::fs::copy(&f, copy.join(f.file_name().unwrap())).unwrap();
    }
    let leftover_open = open_files(&mnt);
    // Space freed (the disk grown): the same command finishes the crawl, and the page whose
    // records the full disk refused is fetched again (before, it was taken for done).
    let grown = Command::new("mount")
        .args(["-o", "remount,size=16m"])
        .arg(&mnt)
        .status()
        .unwrap();
    let resumed = crawl().await;
    let pages = archived_pages(&mnt);
    Command::new("umount").arg(&mnt).status().unwrap();
    assert!(grown.success());
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert_eq!(pages.len(), 61, "every page, after the resume: {pages:?}");
    assert_eq!(result.status.code(), Some(5), "{}", text(&result));
    assert!(
        String::from_utf8_lossy(&result.stderr)
            .to_lowercase()
            .contains("no space"),
        "{}",
        text(&result)
    );
    assert_eq!(leftover_open, 0, "the failed file is cut back and closed");
    assert!(!warc_files(&copy).is_empty());
    let listed = report["warc_files"].as_array().unwrap().len();
    assert_eq!(listed, warc_files(&copy).len(), "{report}");
    assert!(report["records_written"].as_u64() > Some(0), "{report}");
    let check = run_script("warc_check.py", args![copy.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
}

/// A disk filled by the WARCs and the crawl state alike: `trawl status` says the crawl stopped
/// on an output error. Before, the last status could not be written on the full disk, and
/// `trawl status` read the one written while the crawl ran as "killed or crashed".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_after_a_full_disk_says_why_the_crawl_stopped() {
    let (_web, h) = linked_site("127.0.0.226", 40, 60_000).await;
    let small = crate::unattended::Tmpfs::mount("1m");
    let result = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        small.path.display(),
        "--delay",
        "0ms",
        "--gzip-level",
        0,
        "--min-free",
        0,
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(5), "{}", text(&result));
    let status = trawl(args!["status", small.path.display()]).await;
    let said = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(said.contains("stopped: output error"), "{said}");
}

/// A crawl stopped with a fetch in flight and resumed: `trawl status` counts the abandoned fetch
/// as queued (it said 0 left), says where `--finished-dir` took the files (it counted none),
/// and marks its start and bytes as this run's; the report marks its per-run figures, and
/// `--stats` says the crawl was resumed. Before, the whole crawl's pages stood beside this
/// run's files and bytes with nothing to tell them apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_crawl_says_which_figures_are_this_runs() {
    let web = Web::default();
    let h = web.host("127.0.0.237").await;
    let links: String = (0..20).map(|i| format!("<a href=/p{i}>p</a>")).collect();
    h.route("/", Route::html(&format!("{links}<a href=/slow>slow</a>")));
    for i in 0..20 {
        h.route(&format!("/p{i}"), Route::html("<p>a page</p>"));
    }
    h.behave("/slow", Behavior::Hang);
    let dir = tempfile::tempdir().unwrap();
    let (out, finished) = (dir.path().join("out"), dir.path().join("done"));
    let stats = dir.path().join("stats.json");
    let crawl = args![
        "crawl",
        h.url("/"),
        "--out",
        out.display(),
        "--finished-dir",
        finished.display(),
        "--stats",
        stats.display(),
        "--delay",
        "50ms",
        "--shutdown-timeout",
        "1s",
        "--no-sitemaps"
    ];
    let child = spawn_trawl(crawl.clone());
    wait_for(
        || web.paths_of(&h).contains(&"/slow".to_string()),
        "the hanging fetch",
    )
    .await;
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let stopped = child.wait_with_output().unwrap();
    assert_eq!(stopped.status.code(), Some(130), "{}", text(&stopped));
    let status = trawl(args!["status", out.display()]).await;
    let said = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(
        said.contains("queued 1,") || said.contains("queued 2,"),
        "{said}"
    );
    assert!(
        said.contains(&format!("moved to {}", finished.display())),
        "{said}"
    );
    assert!(!said.contains("this run"), "a first run: {said}");
    // The rest, and the hanging URL's retry timing out, in a second run.
    let resumed = trawl(
        crawl
            .into_iter()
            .chain(args!["--timeout", "1s", "--retries", 0])
            .collect(),
    )
    .await;
    let report = String::from_utf8_lossy(&resumed.stderr).to_string();
    assert!(report.contains("records (this run)"), "{report}");
    assert_eq!(crate::harness::read_json(&stats)["resumed"], true);
    let status = trawl(args!["status", out.display()]).await;
    let said = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(said.contains("started this run"), "{said}");
    assert!(said.contains("WARC bytes written this run"), "{said}");
}

/// A `--recrawl --dedup` killed before its first save point and run again: the pages it stored
/// as revisits of the last crawl's captures still give their links (read from the originals
/// in the directory), so the new crawl reaches every page. Before, a replayed revisit gave
/// none, and the crawl ended at its seed, exit 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_recrawl_with_dedup_still_follows_the_links_of_its_revisits() {
    let (web, h) = linked_site("127.0.0.241", 20, 300).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let crawl = |extra: &[&str]| {
        let mut cmd = args![
            "crawl",
            h.url("/"),
            "--out",
            out.display(),
            "--delay",
            "100ms",
            "--dedup",
            "--no-sitemaps",
            "-q"
        ];
        cmd.extend(extra.iter().map(|s| s.to_string()));
        cmd
    };
    let first = trawl(crawl(&[])).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let before = web.paths_of(&h).len();
    // Killed a few pages in, seconds before the first save point.
    let mut child = spawn_trawl(crawl(&["--recrawl"]));
    wait_for(|| web.paths_of(&h).len() >= before + 5, "five requests").await;
    child.kill().unwrap();
    child.wait().unwrap();
    let resumed = trawl(crawl(&["--recrawl"])).await;
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    let asked = web.paths_of(&h);
    for i in 0..20 {
        let path = format!("/p{i}");
        let times = asked.iter().filter(|p| **p == path).count();
        assert!(times >= 2, "{path} asked {times} time(s): {asked:?}");
    }
}

/// Archived 200 responses (URL → count) in a directory.
fn archived_pages(dir: &std::path::Path) -> std::collections::BTreeMap<String, usize> {
    let mut pages = std::collections::BTreeMap::new();
    for r in crate::harness::read_records(dir) {
        if r.warc_type == "response" && r.status() == Some(200) && r.path() != "/robots.txt" {
            *pages.entry(r.target_uri.clone().unwrap()).or_insert(0) += 1;
        }
    }
    pages
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_then_resume_archives_the_same_pages_as_one_run() {
    let (web, h) = linked_site("127.0.0.25", 30, 2000).await;
    let out = tempfile::tempdir().unwrap();
    let whole = out.path().join("whole");
    let once = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        whole.display(),
        "--delay",
        "20ms",
        "-q"
    ])
    .await;
    assert_eq!(once.status.code(), Some(0), "{}", text(&once));
    let expected: Vec<String> = archived_pages(&whole).into_keys().collect();
    assert_eq!(expected.len(), 31);

    let dir = out.path().join("resumed");
    let stats = out.path().join("s.json");
    let crawl = args![
        "crawl",
        h.url("/"),
        "--out",
        dir.display(),
        "--delay",
        "40ms",
        "-q",
        "--stats",
        stats.display()
    ];
    let child = spawn_trawl(crawl.clone());
    // Some pages in (asked for, not slept: a slow start archived none in 400 ms).
    let pages_asked = || {
        web.paths_of(&h)
            .iter()
            .filter(|p| p.starts_with("/p"))
            .count()
    };
    let in_whole = pages_asked();
    wait_for(|| pages_asked() >= in_whole + 3, "three pages").await;
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let stopped = child.wait_with_output().unwrap();
    assert_eq!(stopped.status.code(), Some(130));
    let partial = archived_pages(&dir).len();
    assert!(partial > 0 && partial < 31, "stopped after {partial} pages");

    let rest = trawl(crawl).await;
    assert_eq!(rest.status.code(), Some(0), "{}", text(&rest));
    let pages = archived_pages(&dir);
    assert_eq!(
        pages.keys().cloned().collect::<Vec<_>>(),
        expected,
        "same pages as one run"
    );
    assert!(
        pages.values().all(|&n| n == 1),
        "a graceful stop repeats nothing: {pages:?}"
    );
    assert_eq!(
        crate::harness::read_json(&stats)["pages_archived"],
        31,
        "counters carry over"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_kill_9s_lose_and_corrupt_nothing() {
    let web = Web::default();
    let mut hosts = Vec::new();
    let mut expected = Vec::new();
    for ip in ["127.0.0.26", "127.0.0.27", "127.0.0.28"] {
        let h = web.host(ip).await;
        h.route(
            "/",
            Route::html(
                &(0..50)
                    .map(|i| format!("<a href=/p{i}>p</a>"))
                    .collect::<String>(),
            ),
        );
        expected.push(h.url("/"));
        for i in 0..50 {
            h.route(
                &format!("/p{i}"),
                Route::html(&format!("<p>{}</p>", "page text ".repeat(200 + i))),
            );
            expected.push(h.url(&format!("/p{i}")));
        }
        hosts.push(h);
    }
    expected.sort();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_path_buf();
    let mut crawl = args![
        "crawl",
        "--out",
        dir.display(),
        "--delay",
        "120ms",
        "--records-per-file",
        20,
        "-q"
    ];
    crawl.extend(hosts.iter().map(|h| h.url("/")));
    let mut kills = 0;
    let mut x: u64 = 7;
    loop {
        let mut child = spawn_trawl(crawl.clone());
        if kills < 10 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let wait = Duration::from_millis(150 + (x >> 33) % 450);
            tokio::time::sleep(wait).await;
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap();
                child.wait().unwrap();
                kills += 1;
                continue;
            }
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "the final run completes: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        break;
    }
    assert!(kills >= 10, "only {kills} kills");
    assert_eq!(open_files(&dir), 0);
    let pages = archived_pages(&dir);
    assert_eq!(
        pages.keys().cloned().collect::<Vec<_>>(),
        expected,
        "every page archived"
    );
    // Only fetches in flight at a kill may be repeated: at most one per host per kill.
    let repeats: usize = pages.values().map(|n| n - 1).sum();
    assert!(
        repeats <= kills * hosts.len(),
        "{repeats} repeats after {kills} kills: {pages:?}"
    );
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
}

/// A site whose crawl exercises every counter replay must rebuild: pages, a redirect, a 404,
/// a body cut by `--max-body-size` (truncated: length), a body cut by the server (truncated:
/// disconnect, fault body_incomplete), a gzip body that does not decode (fault
/// invalid_content_encoding), and a type that is not archived.
async fn varied_site(ip: &str) -> (Web, Host) {
    let (web, h) = linked_site(ip, 30, 3_000).await;
    // The odd pages come first, so they are archived before the kill below.
    let mut index: String = [
        "/moved",
        "/missing",
        "/big",
        "/cut",
        "/bad-gzip",
        "/data.bin",
    ]
    .iter()
    .map(|path| format!("<a href={path}>x</a>"))
    .collect();
    index.extend((0..30).map(|i| format!("<a href=/p{i}>p</a>")));
    h.route("/", Route::html(&index));
    h.route("/moved", Route::redirect(301, "/p0"));
    h.route("/missing", Route::typed(404, "text/html", b"<p>gone</p>"));
    h.route("/big", Route::html(&"<p>big page</p>".repeat(2_000)));
    h.behave(
        "/cut",
        crate::server::Behavior::Raw {
            bytes: [
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\n\r\n"
                    .as_slice(),
                b"<p>only the start</p>",
            ]
            .concat(),
            reset: false,
        },
    );
    h.behave(
        "/bad-gzip",
        crate::server::Behavior::Raw {
            bytes: b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: 8\r\n\r\nnot gzip".to_vec(),
            reset: false,
        },
    );
    h.route(
        "/data.bin",
        Route::typed(200, "application/octet-stream", b"01"),
    );
    (web, h)
}

/// The counters a crawl reports, without the ones that measure time or files.
fn counters(stats: &serde_json::Value) -> serde_json::Value {
    let mut v = stats.clone();
    let o = v.as_object_mut().unwrap();
    for timing in [
        "elapsed_secs",
        "pages_per_sec",
        "mean_request_ms",
        "warc_files",
        "bytes_written",
        "records_written",
        "peak_rss_bytes",
        // Which run this is, not what the crawl did.
        "resumed",
    ] {
        o.remove(timing);
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_and_truncation_reasons_after_kill_and_resume_equal_an_uninterrupted_crawl() {
    let crawl = |url: String, dir: &std::path::Path, stats: &std::path::Path| {
        args![
            "crawl",
            url,
            "--out",
            dir.display(),
            "--delay",
            "40ms",
            "--max-body-size",
            "10KiB",
            "--records-per-file",
            4,
            "--stats",
            stats.display(),
            "-q"
        ]
    };
    // Uninterrupted.
    let whole = tempfile::tempdir().unwrap();
    let whole_stats = whole.path().join("stats.json");
    {
        let (_web, h) = varied_site("127.0.0.22").await;
        let run = trawl(crawl(h.url("/"), &whole.path().join("out"), &whole_stats)).await;
        assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    }
    let expected = crate::harness::read_json(&whole_stats);
    assert_eq!(expected["truncated"]["length"], 1, "{expected}");
    assert_eq!(expected["truncated"]["disconnect"], 1, "{expected}");
    assert_eq!(
        expected["errors"]["invalid_content_encoding"], 1,
        "{expected}"
    );

    // Killed with -9 before its first periodic save point (5 s), so everything it archived
    // is recovered by replaying the WARC files, then resumed.
    let (web, h) = varied_site("127.0.0.22").await;
    let parts = tempfile::tempdir().unwrap();
    let out = parts.path().join("out");
    let stats = parts.path().join("stats.json");
    let mut child = spawn_trawl(crawl(h.url("/"), &out, &stats));
    wait_for(|| web.paths_of(&h).len() >= 12, "12 requests").await;
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        warc_files(&out).len() >= 2,
        "the killed crawl archived the odd pages"
    );
    let run = trawl(crawl(h.url("/"), &out, &stats)).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let got = crate::harness::read_json(&stats);
    assert_eq!(counters(&got), counters(&expected));
}

/// A fetch abandoned at `--shutdown-timeout` runs again in the next run, and the report's
/// `queued_at_end` counts it with the URLs still waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetch_abandoned_at_the_stop_is_counted_as_queued_for_the_next_run() {
    let web = Web::default();
    let h = web.host("127.0.0.167").await;
    h.route("/", Route::html("<a href=/hang>h</a><a href=/later>l</a>"));
    h.behave("/hang", crate::server::Behavior::Hang);
    h.route("/later", Route::html("<p>later</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("stats.json");
    let child = spawn_trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.path().join("warcs").display(),
        "--stats",
        stats.display(),
        "-c",
        "1",
        "--delay",
        "10ms",
        "--timeout",
        "60s",
        "--shutdown-timeout",
        "1s"
    ]);
    wait_for(
        || web.paths_of(&h).iter().any(|p| p == "/hang"),
        "the hanging fetch",
    )
    .await;
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", text(&output));
    let report = crate::harness::read_json(&stats);
    let queued = report["queued_at_end"].as_u64().unwrap();
    assert!(queued >= 1, "{report}");
    // Its queue and the abandoned fetch are what the next run fetches.
    let before = web.paths_of(&h).len();
    h.route("/hang", Route::html("<p>answered now</p>"));
    let again = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.path().join("warcs").display(),
        "--stats",
        stats.display(),
        "--delay",
        "10ms"
    ])
    .await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let fetched: Vec<String> = web.paths_of(&h)[before..]
        .iter()
        .filter(|p| !p.starts_with("/robots.txt") && !p.starts_with("/sitemap"))
        .cloned()
        .collect();
    assert_eq!(fetched.len() as u64, queued, "{fetched:?} {report}");
}

/// WARC files in `--out` and no crawl state (deleted, or kept elsewhere by a `--state` the
/// command line lost): the crawl is not started over unasked (it would archive all again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warc_files_without_their_state_are_not_crawled_over_unasked() {
    let (web, h) = linked_site("127.0.0.25", 5, 100).await;
    let out = tempfile::tempdir().unwrap();
    let state = out.path().join("state");
    let run = |extra: &[&str]| {
        let mut a = args![
            "crawl",
            h.url("/"),
            "--out",
            out.path().join("w").display(),
            "--delay",
            "0ms",
            "-q"
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        trawl(a)
    };
    let first = run(&["--state", &state.display().to_string()]).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let fetched = web.hits().len();
    // The cron line lost its --state.
    let lost = run(&[]).await;
    assert_eq!(lost.status.code(), Some(7), "{}", text(&lost));
    assert!(text(&lost).contains("no crawl state"), "{}", text(&lost));
    assert_eq!(web.hits().len(), fetched, "nothing fetched again");
    let fresh = run(&["--fresh"]).await;
    assert_eq!(fresh.status.code(), Some(0), "{}", text(&fresh));
}

/// `--time-limit` stops as the first SIGTERM does, for `--on-close` too: no command starts
/// after it, so the file closed at the stop is left to the next start. Before, every file closed
/// after the limit still got its command, and a backlog of them kept a 3 s run for minutes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_time_limit_starts_no_on_close_command() {
    let (_web, h) = linked_site("127.0.0.240", 60, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let ran = dir.path().join("ran.txt");
    let res = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.display(),
        "--delay",
        "100ms",
        "--records-per-file",
        "2",
        "--time-limit",
        "2s",
        "--on-close",
        format!("echo {{}} >> '{}'", ran.display()),
        "-v"
    ])
    .await;
    assert_eq!(res.status.code(), Some(8), "{}", text(&res));
    let listed = std::fs::read_to_string(&ran).unwrap_or_default();
    let last = warc_files(&out)
        .into_iter()
        .max()
        .expect("files were written");
    let name = last.file_name().unwrap().to_string_lossy().into_owned();
    assert!(!listed.contains(&name), "{name} got its command: {listed}");
    assert!(
        text(&res).contains("left to the next start"),
        "{}",
        text(&res)
    );
}

/// A stop (SIGTERM, then SIGTERM again, as `timeout` and systemd send) does not wait on
/// `--on-close` commands: none starts after the first, and the second stops those running,
/// the shell's own children too. The next run runs the command on every file left without
/// it. Before, the stop waited for every queued command (two minutes of `sleep 60` here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_does_not_wait_on_on_close_commands() {
    let (web, h) = linked_site("127.0.0.215", 60, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let ran = dir.path().join("ran.txt");
    let crawl = |command: String| {
        args![
            "crawl",
            h.url("/"),
            "--out",
            out.display(),
            "--delay",
            "30ms",
            "--records-per-file",
            "4",
            "--on-close",
            command,
            "-q"
        ]
    };
    let started = dir.path().join("started");
    let slow = format!("touch '{}'; sleep 60; : {{}}", started.display());
    let child = spawn_trawl(crawl(slow));
    wait_for(|| started.exists(), "a command started").await;
    let term = || {
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
    };
    term();
    tokio::time::sleep(Duration::from_millis(500)).await;
    term();
    let asked = Instant::now();
    let stopped = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(stopped.status.code(), Some(130), "{}", text(&stopped));
    assert!(
        asked.elapsed() < Duration::from_secs(30),
        "{:?}",
        asked.elapsed()
    );
    // No `sleep 60` of the stopped commands is left running.
    let left = Command::new("pgrep")
        .args(["-f", "sleep 60"])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&left.stdout)
    );

    let rest = trawl(crawl(format!("echo {{}} >> '{}'", ran.display()))).await;
    assert_eq!(rest.status.code(), Some(0), "{}", text(&rest));
    let listed = std::fs::read_to_string(&ran).unwrap();
    for warc in warc_files(&out) {
        let name = warc.file_name().unwrap().to_string_lossy().into_owned();
        assert!(listed.contains(&name), "{name} not handed off: {listed}");
    }
    drop(web);
}
