//! Worker processes of a shared crawl (`--redis`) for the tests: a web of linked hosts, the
//! workers' command lines, starting, killing and finishing them, and what they archived
//! together.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::args;
use crate::harness::{read_records, run_script, text};
use crate::server::{Host, Route, Web};

/// `hosts` hosts on 127.0.0.(base+i). Host 0 asks for `Crawl-delay: 1` and has 3 pages; the
/// others have `pages` pages. Every home links to its pages and to the next host's home; every
/// page links home and to a page of the next host, so all hosts are found from one seed.
pub(crate) async fn web_of_hosts(base: u8, hosts: usize, pages: usize) -> (Web, Vec<Host>) {
    let web = Web::default();
    let mut all = Vec::new();
    for i in 0..hosts {
        all.push(web.host(&format!("127.0.0.{}", base as usize + i)).await);
    }
    for (i, h) in all.iter().enumerate() {
        let next = &all[(i + 1) % hosts];
        let n = if i == 0 { 3 } else { pages };
        let mut home = String::new();
        for p in 0..n {
            home.push_str(&format!("<a href=/p{p}>p{p}</a> "));
        }
        home.push_str(&format!("<a href={}>next</a>", next.url("/")));
        h.route("/", Route::html(&home));
        for p in 0..n {
            h.route(
                &format!("/p{p}"),
                Route::html(&format!(
                    "<p>host {i} page {p}</p><a href=/>home</a> <a href={}>there</a>",
                    next.url("/p0")
                )),
            );
        }
        if i == 0 {
            h.route(
                "/robots.txt",
                Route::typed(200, "text/plain", b"User-agent: *\nCrawl-delay: 1\n"),
            );
        }
    }
    (web, all)
}

/// Every page URL of a web made by [`web_of_hosts`].
pub(crate) fn every_page(hosts: &[Host], pages: usize) -> Vec<String> {
    let mut urls = Vec::new();
    for (i, h) in hosts.iter().enumerate() {
        urls.push(h.url("/"));
        for p in 0..(if i == 0 { 3 } else { pages }) {
            urls.push(h.url(&format!("/p{p}")));
        }
    }
    urls.sort();
    urls
}

pub(crate) fn worker_args(
    redis: &str,
    crawl: &str,
    worker: &str,
    out: &Path,
    extra: &[&str],
) -> Vec<String> {
    let mut a = args![
        "crawl",
        "--redis",
        redis,
        "--crawl-id",
        crawl,
        "--worker-id",
        worker,
        "--out",
        out.display(),
        "--lease",
        "2s",
        "--scope",
        "any",
        "--allow-private",
        "-q"
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Starts one worker per directory; the first brings `seed`.
pub(crate) fn start_workers(
    redis: &str,
    crawl: &str,
    dirs: &[PathBuf],
    extra: &[&str],
    seed: &str,
) -> Vec<Child> {
    (0..dirs.len())
        .map(|i| spawn(worker(redis, crawl, dirs, i, extra, seed)))
        .collect()
}

/// The arguments of worker `i` (named `w<i+1>`, writing to `dirs[i]`; worker 0 brings `seed`).
pub(crate) fn worker(
    redis: &str,
    crawl: &str,
    dirs: &[PathBuf],
    i: usize,
    extra: &[&str],
    seed: &str,
) -> Vec<String> {
    let mut a = worker_args(redis, crawl, &format!("w{}", i + 1), &dirs[i], extra);
    if i == 0 {
        a.push(seed.to_string());
    }
    a
}

/// One worker per directory with lease `lease`; the first brings every seed in `seeds`.
pub(crate) fn seeded_workers(
    redis: &str,
    crawl: &str,
    dirs: &[PathBuf],
    extra: &[&str],
    lease: &str,
    seeds: &[String],
) -> Vec<Child> {
    (0..dirs.len())
        .map(|i| {
            let mut a = worker_args(redis, crawl, &format!("w{}", i + 1), &dirs[i], extra);
            let at = a.iter().position(|x| x == "--lease").expect("--lease") + 1;
            a[at] = lease.to_string();
            if i == 0 {
                a.extend(seeds.iter().cloned());
            }
            spawn(a)
        })
        .collect()
}

pub(crate) fn spawn(args: Vec<String>) -> Child {
    Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(args)
        .env("TRAWL_LOG", worker_log_filter())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn trawl")
}

/// The workers' log filter: warnings, or `TRAWL_TEST_WORKER_LOG` when set (to diagnose a
/// failing run with `trawl=debug`).
fn worker_log_filter() -> String {
    std::env::var("TRAWL_TEST_WORKER_LOG").unwrap_or_else(|_| "trawl=warn".to_string())
}

/// Waits for a worker to exit (killed after two minutes: a hang fails the test); its exit
/// code and stderr. Stderr is read while the worker runs, so that a full pipe never stops it.
pub(crate) async fn finish(mut child: Child) -> (Option<i32>, String) {
    tokio::task::spawn_blocking(move || {
        let mut pipe = child.stderr.take().expect("stderr piped");
        let reader = std::thread::spawn(move || {
            let mut err = Vec::new();
            let _ = std::io::Read::read_to_end(&mut pipe, &mut err);
            String::from_utf8_lossy(&err).to_string()
        });
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut hung = false;
        while child.try_wait().expect("wait for trawl").is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                hung = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let status = child.wait().expect("wait for trawl");
        let err = reader.join().expect("stderr reader");
        assert!(!hung, "worker still running after 2 minutes: {err}");
        (status.code(), err)
    })
    .await
    .unwrap()
}

/// Archived pages (200 responses other than robots.txt) by URL, over several directories;
/// WARC files a killed worker left open are repaired first, as its next start would.
pub(crate) fn union_pages(dirs: &[PathBuf]) -> BTreeMap<String, usize> {
    let mut pages = BTreeMap::new();
    for dir in dirs {
        trawl::warc::recovery::repair_open_files(dir).expect("repair");
        for r in read_records(dir) {
            if r.warc_type == "response" && r.status() == Some(200) && r.path() != "/robots.txt" {
                *pages.entry(r.target_uri.clone().unwrap()).or_insert(0) += 1;
            }
        }
    }
    pages
}

/// The project's checker (strict, and warcio) on a worker's files; a worker that got no host
/// has none.
pub(crate) async fn check_warcs(dir: &Path) {
    if !dir.exists() || crate::harness::warc_files(dir).is_empty() {
        return;
    }
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
}

/// Waits until one of the workers has written at least `bytes` of WARC data; returns which
/// (how hosts spread over workers depends on timing).
pub(crate) async fn wait_for_any_output(dirs: &[PathBuf], bytes: u64) -> usize {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(i) = dirs.iter().position(|d| written(d) >= bytes) {
            return i;
        }
        assert!(Instant::now() < deadline, "no output in {dirs:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// WARC bytes in a directory (open files included).
fn written(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().contains(".warc.gz"))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

pub(crate) fn kill_9(child: &mut Child) {
    let pid = child.id().to_string();
    Command::new("kill").args(["-9", &pid]).status().unwrap();
    let _ = child.wait();
}
