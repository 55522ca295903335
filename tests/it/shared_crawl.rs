//! One crawl shared by several worker processes through a real Redis (`--redis`): the same
//! pages as one process, each archived once, politeness across workers, a worker killed with
//! -9, an exact `--max-pages`, a Redis crash, a Redis Cluster, `trawl status` and `trawl stop`,
//! a first worker whose seeds are in a file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::args;
use crate::harness::{read_records, run_script, text, trawl};
use crate::redis_server::{RedisCluster, RedisServer};
use crate::referer::referer;
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
fn worker(
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

/// The smallest time between two requests to one host, by host.
fn smallest_gaps(web: &Web) -> BTreeMap<String, Duration> {
    let mut times: BTreeMap<String, Vec<Instant>> = BTreeMap::new();
    for hit in web.hits() {
        times.entry(hit.host).or_default().push(hit.at);
    }
    times
        .into_iter()
        .filter_map(|(host, mut t)| {
            t.sort();
            let gap = t.windows(2).map(|w| w[1] - w[0]).min()?;
            Some((host, gap))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_archive_what_one_process_does_once_each_and_politely() {
    let (web, hosts) = web_of_hosts(60, 9, 8).await;
    // Every host's home page is a seed, so the hosts are there to share from the start: a
    // worker takes at most a quarter of its capacity per look and the others take the rest.
    // From one seed the chain reveals one host at a time, and whether an idle worker (looking
    // every few seconds) came by before the busy one took the next host was timing: in about
    // one run in seven, one worker took them all.
    let seeds: Vec<String> = hosts.iter().map(|h| h.url("/")).collect();
    let tmp = tempfile::tempdir().unwrap();

    let single = tmp.path().join("single");
    let mut single_args = args![
        "crawl",
        "--out",
        single.display(),
        "--scope",
        "any",
        "--allow-private",
        "--delay",
        "200ms",
        "-q"
    ];
    single_args.extend(seeds.iter().cloned());
    let out = trawl(single_args).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let alone = union_pages(std::slice::from_ref(&single));
    assert_eq!(
        alone.keys().cloned().collect::<Vec<_>>(),
        every_page(&hosts, 8)
    );
    web.log.lock().unwrap().clear();

    let redis = RedisServer::start();
    let dirs: Vec<PathBuf> = (1..=3).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "200ms", "--concurrency", "2"];
    let workers: Vec<Child> = (0..dirs.len())
        .map(|i| {
            let mut a = worker(&redis.url(), "three", &dirs, i, &extra, &seeds[0]);
            if i == 0 {
                a.extend(seeds[1..].iter().cloned());
            }
            spawn(a)
        })
        .collect();
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
    }

    let union = union_pages(&dirs);
    assert_eq!(
        union.keys().collect::<Vec<_>>(),
        alone.keys().collect::<Vec<_>>(),
        "the workers together archive what one process does"
    );
    let twice: Vec<_> = union.iter().filter(|(_, &n)| n > 1).collect();
    assert!(twice.is_empty(), "archived more than once: {twice:?}");
    let busy = dirs
        .iter()
        .filter(|d| !union_pages(std::slice::from_ref(d)).is_empty())
        .count();
    assert!(
        busy >= 2,
        "the hosts were spread over the workers ({busy} busy)"
    );
    for dir in &dirs {
        check_warcs(dir).await;
    }

    // Politeness held across workers: the delay on every host, Crawl-delay on host 0.
    let gaps = smallest_gaps(&web);
    let slow = hosts[0].addr.to_string();
    for (host, gap) in &gaps {
        let floor = if *host == slow {
            Duration::from_millis(980)
        } else {
            Duration::from_millis(195)
        };
        assert!(gap >= &floor, "{host}: two requests {gap:?} apart");
    }

    // The union: one CDXJ and one WACZ for the crawl, from the workers' directories.
    let mut index_args = args!["index"];
    index_args.extend(dirs.iter().map(|d| d.display().to_string()));
    let index = trawl(index_args).await;
    assert_eq!(index.status.code(), Some(0), "{}", text(&index));
    let cdxj = String::from_utf8_lossy(&index.stdout).to_string();
    for url in alone.keys() {
        assert!(
            cdxj.contains(&format!("\"url\": \"{url}\"")),
            "{url} not indexed"
        );
    }
    let lines: Vec<&str> = cdxj.lines().collect();
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "one sorted index");
    let wacz = tmp.path().join("crawl.wacz");
    let mut wacz_args = args!["wacz", wacz.display()];
    wacz_args.extend(dirs.iter().map(|d| d.display().to_string()));
    let packed = trawl(wacz_args).await;
    assert_eq!(packed.status.code(), Some(0), "{}", text(&packed));
    let wacz_bin = crate::harness::python().with_file_name("wacz");
    let valid = tokio::task::spawn_blocking(move || {
        Command::new(wacz_bin)
            .args(["validate", "-f"])
            .arg(&wacz)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        String::from_utf8_lossy(&valid.stdout).contains("Validation succeeded"),
        "{}",
        text(&valid)
    );

    // trawl status reads the crawl as a whole.
    let status = trawl(args![
        "status",
        "--redis",
        redis.url(),
        "--crawl-id",
        "three",
        "--json"
    ])
    .await;
    assert_eq!(status.status.code(), Some(0), "{}", text(&status));
    let s: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(s["pages"].as_u64(), Some(alone.len() as u64));
    assert_eq!(s["queued"].as_i64(), Some(0));
    assert_eq!(s["stop_reason"], "finished");
    assert_eq!(s["workers"].as_object().unwrap().len(), 3);

    // A finished crawl is not joined again.
    let again = trawl(worker_args(
        &redis.url(),
        "three",
        "w9",
        &tmp.path().join("w9"),
        &extra,
    ))
    .await;
    assert_eq!(again.status.code(), Some(7), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_with_9_loses_nothing_and_a_restart_with_its_id_duplicates_nothing() {
    let (_web, hosts) = web_of_hosts(80, 7, 25).await;
    let seed = hosts[1].url("/");
    let expected = every_page(&hosts, 25);
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let extra = ["--delay", "200ms", "--concurrency", "2"];

    for restart in [false, true] {
        let crawl = if restart { "restarted" } else { "killed" };
        let dirs: Vec<PathBuf> = (1..=3)
            .map(|i| tmp.path().join(format!("{crawl}{i}")))
            .collect();
        let arg = |i: usize| worker(&redis.url(), crawl, &dirs, i, &extra, &seed);
        let mut workers: Vec<Child> = (0..3).map(|i| spawn(arg(i))).collect();
        // The first to have archived a few pages is killed, some of them not yet acknowledged.
        let v = wait_for_any_output(&dirs, 6_000).await;
        tokio::time::sleep(Duration::from_millis(700)).await;
        let mut victim = workers.remove(v);
        kill_9(&mut victim);
        let others = workers;
        let revived = restart.then(|| spawn(arg(v)));
        for w in others {
            let (code, err) = finish(w).await;
            assert_eq!(code, Some(0), "{err}");
        }
        if let Some(w) = revived {
            let (code, err) = finish(w).await;
            assert_eq!(code, Some(0), "{err}");
            assert!(err.contains("took back"), "{err}");
        }
        let union = union_pages(&dirs);
        assert_eq!(
            union.keys().cloned().collect::<Vec<_>>(),
            expected,
            "recall 1.0 ({crawl})"
        );
        let twice = union.values().filter(|&&n| n > 1).count();
        if restart {
            assert_eq!(twice, 0, "a restart with the same id refetches nothing");
        } else {
            let by_victim = union_pages(std::slice::from_ref(&dirs[v])).len();
            assert!(
                twice <= by_victim,
                "{twice} duplicates, more than the {by_victim} pages the killed worker archived"
            );
        }
        for dir in &dirs {
            check_warcs(dir).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_is_exact_for_the_crawl_also_with_a_worker_killed() {
    let (_web, hosts) = web_of_hosts(100, 9, 80).await;
    let seed = hosts[1].url("/");
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let extra = [
        "--delay",
        "20ms",
        "--concurrency",
        "3",
        "--max-pages",
        "500",
    ];
    for kill in [false, true] {
        let crawl = if kill { "budget-kill" } else { "budget" };
        let dirs: Vec<PathBuf> = (1..=3)
            .map(|i| tmp.path().join(format!("{crawl}{i}")))
            .collect();
        let mut workers = start_workers(&redis.url(), crawl, &dirs, &extra, &seed);
        if kill {
            let v = wait_for_any_output(&dirs, 30_000).await;
            let mut victim = workers.remove(v);
            kill_9(&mut victim);
        }
        for w in workers {
            let (code, err) = finish(w).await;
            assert_eq!(code, Some(0), "{err}");
        }
        let union = union_pages(&dirs);
        assert_eq!(union.len(), 500, "distinct pages archived ({crawl})");
    }
}

/// With `-p`, a worker past the crawl's page target fetches the requisites of its pages and
/// ends. Before, it waited for the shared crawl to be over, which a crawl with URLs left in
/// Redis never is: every worker ran until killed. A worker that archives none of the pages
/// learns that the target is met from the heartbeat round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_with_requisites_ends_every_worker() {
    let (_web, hosts) = web_of_hosts(170, 4, 60).await;
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = [
        "--delay",
        "20ms",
        "--concurrency",
        "2",
        "--max-pages",
        "40",
        "-p",
    ];
    let workers = start_workers(&redis.url(), "drain", &dirs, &extra, &hosts[1].url("/"));
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
    }
    assert_eq!(union_pages(&dirs).len(), 40, "distinct pages archived");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_crash_mid_crawl_pauses_the_workers_and_loses_nothing() {
    let (_web, hosts) = web_of_hosts(120, 6, 30).await;
    let seed = hosts[1].url("/");
    let mut redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "150ms", "--concurrency", "2"];
    let workers = start_workers(&redis.url(), "crash", &dirs, &extra, &seed);
    wait_for_any_output(&dirs, 6_000).await;
    let started = Instant::now();
    tokio::task::block_in_place(|| redis.crash_and_restart(Duration::from_secs(2)));
    let mut logs = String::new();
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
        logs.push_str(&err);
    }
    assert!(started.elapsed() > Duration::from_secs(2));
    assert!(logs.contains("Redis unreachable"), "{logs}");
    assert!(logs.contains("Redis is reachable again"), "{logs}");
    let union = union_pages(&dirs);
    assert_eq!(
        union.keys().cloned().collect::<Vec<_>>(),
        every_page(&hosts, 30),
        "recall 1.0 after the crash"
    );
    for dir in &dirs {
        check_warcs(dir).await;
    }
}

/// Issue 28: Redis killed with -9 and restarted from its append-only file within `--lease`
/// (2 workers, 200 hosts, `--lease 3s`, 3 s down). Each worker acknowledges what its WARC files
/// hold before anyone takes hosts over: pages fetched twice are no more than the pages archived
/// in the 2 s before the kill (before, about a quarter of the crawl was fetched again), and
/// none is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_within_the_lease_refetches_at_most_the_last_two_seconds() {
    const HOSTS: usize = 200;
    const PAGES: usize = 15;
    let (web, hosts) = web_of_hosts(40, HOSTS, PAGES).await;
    let mut redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "100ms", "--concurrency", "8"];
    let homes: Vec<String> = hosts.iter().map(|h| h.url("/")).collect();
    let workers = seeded_workers(&redis.url(), "outage", &dirs, &extra, "3s", &homes);
    let is_page = |path: &str| path != "/robots.txt";
    // Killed once the crawl is well under way (about a fifth of its pages).
    let deadline = Instant::now() + Duration::from_secs(60);
    while web.hits().iter().filter(|h| is_page(&h.path)).count() < 600 {
        assert!(Instant::now() < deadline, "the crawl did not get going");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let killed = Instant::now();
    tokio::task::block_in_place(|| redis.crash_and_restart(Duration::from_secs(3)));
    let mut logs = String::new();
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
        logs.push_str(&err);
    }
    assert!(logs.contains("Redis is reachable again"), "{logs}");
    let union = union_pages(&dirs);
    assert_eq!(
        union.keys().cloned().collect::<Vec<_>>(),
        every_page(&hosts, PAGES),
        "none lost"
    );
    let mut requests: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut before_kill = 0;
    for hit in web.hits().into_iter().filter(|h| is_page(&h.path)) {
        if hit.at < killed && hit.at + Duration::from_secs(2) >= killed {
            before_kill += 1;
        }
        *requests.entry((hit.host, hit.path)).or_default() += 1;
    }
    let twice: usize = requests.values().map(|n| n - 1).sum();
    let archived_twice = union.values().filter(|&&n| n > 1).count();
    eprintln!(
        "Redis restart: {twice} page requests repeated, {archived_twice} pages archived twice, \
         {before_kill} pages fetched in the 2 s before the kill, {} pages",
        union.len()
    );
    assert!(
        twice <= before_kill,
        "{twice} page requests repeated ({archived_twice} pages archived twice), more than the \
         {before_kill} pages fetched in the 2 s before the kill\n{logs}"
    );
    for dir in &dirs {
        check_warcs(dir).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_cluster_runs_the_same_crawl() {
    let (_web, hosts) = web_of_hosts(140, 6, 10).await;
    let seed = hosts[1].url("/");
    let cluster = tokio::task::block_in_place(RedisCluster::start);
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "50ms", "--concurrency", "2", "--max-pages", "40"];
    let workers = start_workers(&cluster.url(), "cluster", &dirs, &extra, &seed);
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
    }
    let union = union_pages(&dirs);
    assert_eq!(union.len(), 40);
    assert!(union.values().all(|&n| n == 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_every_worker_gracefully_and_the_crawl_resumes() {
    let (_web, hosts) = web_of_hosts(160, 5, 40).await;
    let seed = hosts[1].url("/");
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "200ms", "--concurrency", "2"];
    let arg = |i: usize| worker(&redis.url(), "stopped", &dirs, i, &extra, &seed);
    let workers = [spawn(arg(0)), spawn(arg(1))];
    wait_for_any_output(&dirs, 5_000).await;
    let stop = trawl(args![
        "stop",
        "--redis",
        redis.url(),
        "--crawl-id",
        "stopped"
    ])
    .await;
    assert_eq!(stop.status.code(), Some(0), "{}", text(&stop));
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(130), "stopped, resumable: {err}");
    }
    let part = union_pages(&dirs);
    assert!(part.len() < every_page(&hosts, 40).len());
    // Both workers run again: the crawl continues where it stopped and completes.
    let workers = [spawn(arg(0)), spawn(arg(1))];
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
    }
    let union = union_pages(&dirs);
    assert_eq!(
        union.keys().cloned().collect::<Vec<_>>(),
        every_page(&hosts, 40)
    );
    assert!(union.values().all(|&n| n == 1), "nothing archived twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_with_other_options_or_an_evicting_redis_is_refused() {
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let (_web, hosts) = web_of_hosts(180, 2, 2).await;
    let seed = hosts[1].url("/");
    let mut first = worker_args(
        &redis.url(),
        "opts",
        "a",
        &tmp.path().join("a"),
        &["--delay", "1s"],
    );
    first.push(seed);
    // A worker without seeds that joins first waits for one that brings them.
    let early = spawn(worker_args(
        &redis.url(),
        "opts",
        "early",
        &tmp.path().join("e"),
        &["--delay", "1s"],
    ));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let a = spawn(first);
    // The crawl has started (either worker may have the hosts).
    wait_for_any_output(&[tmp.path().join("a"), tmp.path().join("e")], 1_000).await;
    // Same crawl, another delay: refused, nothing changes.
    let b = trawl(worker_args(
        &redis.url(),
        "opts",
        "b",
        &tmp.path().join("b"),
        &["--delay", "2s"],
    ))
    .await;
    assert_eq!(b.status.code(), Some(2), "{}", text(&b));
    assert!(text(&b).contains("delay"), "{}", text(&b));
    // wget's -D, which no option of the crawl's said: refused too.
    let d = trawl(worker_args(
        &redis.url(),
        "opts",
        "d",
        &tmp.path().join("d"),
        &["--delay", "1s", "-D", "example.org"],
    ))
    .await;
    assert_eq!(d.status.code(), Some(2), "{}", text(&d));
    assert!(text(&d).contains("domains"), "{}", text(&d));
    for w in [early, a] {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
    }

    let evicting = RedisServer::start_with(&["--maxmemory-policy", "allkeys-lru"]);
    let c = trawl(worker_args(
        &evicting.url(),
        "lru",
        "c",
        &tmp.path().join("c"),
        &[],
    ))
    .await;
    assert_eq!(c.status.code(), Some(9), "{}", text(&c));
    assert!(text(&c).contains("noeviction"), "{}", text(&c));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_per_host_is_exact_per_host_across_workers() {
    let (_web, hosts) = web_of_hosts(200, 6, 30).await;
    let seed = hosts[1].url("/");
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=3).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = [
        "--delay",
        "20ms",
        "--concurrency",
        "2",
        "--max-pages-per-host",
        "7",
    ];
    for w in start_workers(&redis.url(), "per-host", &dirs, &extra, &seed) {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
    }
    let mut per_host: BTreeMap<String, usize> = BTreeMap::new();
    for (url, n) in union_pages(&dirs) {
        assert_eq!(n, 1, "{url} archived {n} times");
        let host = url::Url::parse(&url)
            .unwrap()
            .host_str()
            .unwrap()
            .to_string();
        *per_host.entry(host).or_default() += 1;
    }
    // Host 0 has 4 pages (home and 3); the others 31, capped at 7.
    let expected: BTreeMap<String, usize> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.addr.ip().to_string(), if i == 0 { 4 } else { 7 }))
        .collect();
    assert_eq!(per_host, expected);
}

/// Issue 28: sitemaps in a shared crawl. Each host's robots.txt lists a sitemap index on the
/// host, which lists a sitemap of pages linked from nowhere; two workers archive all of them,
/// each sitemap and each page once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_crawl_follows_sitemaps_to_unlinked_pages() {
    const HOSTS: usize = 6;
    let web = Web::default();
    let mut hosts = Vec::new();
    for i in 0..HOSTS {
        let h = web.host(&format!("127.0.44.{}", i + 1)).await;
        h.route(
            "/robots.txt",
            Route::typed(200, "text/plain", b"User-agent: *\nSitemap: /index.xml\n"),
        );
        h.route("/", Route::html("<p>no links</p>"));
        let index = format!(
            "<sitemapindex><sitemap><loc>{}</loc></sitemap></sitemapindex>",
            h.url("/pages.xml")
        );
        h.route(
            "/index.xml",
            Route::typed(200, "application/xml", index.as_bytes()),
        );
        let mut urlset = String::from("<urlset>");
        for p in 0..5 {
            let path = format!("/hidden{p}");
            urlset.push_str(&format!("<url><loc>{}</loc></url>", h.url(&path)));
            h.route(&path, Route::html("<p>only in a sitemap</p>"));
        }
        urlset.push_str("</urlset>");
        h.route(
            "/pages.xml",
            Route::typed(200, "application/xml", urlset.as_bytes()),
        );
        hosts.push(h);
    }
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "50ms", "--concurrency", "4"];
    let homes: Vec<String> = hosts.iter().map(|h| h.url("/")).collect();
    let workers = seeded_workers(&redis.url(), "maps", &dirs, &extra, "2s", &homes);
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
    }
    let union = union_pages(&dirs);
    let mut expected = Vec::new();
    for h in &hosts {
        for p in ["/", "/index.xml", "/pages.xml"] {
            expected.push(h.url(p));
        }
        for p in 0..5 {
            expected.push(h.url(&format!("/hidden{p}")));
        }
    }
    expected.sort();
    assert_eq!(union.keys().cloned().collect::<Vec<_>>(), expected);
    assert!(union.values().all(|&n| n == 1), "{union:?}");
    for dir in &dirs {
        check_warcs(dir).await;
    }
}

/// Issue 28: `--page-requisites` in a shared crawl. The queue entries in Redis keep the
/// requisite mark, so whichever worker fetches a page's stylesheet, images and script (on
/// another host too) archives them whatever their type, and they are not pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_crawl_archives_page_requisites() {
    let web = Web::default();
    let h = web.host("127.0.45.2").await;
    let cdn = web.host("127.0.45.3").await;
    h.route(
        "/",
        Route::html(&format!(
            r#"<html><head><link rel=stylesheet href="/s.css"><script src="{}"></script></head>
<body><img src="/a.png"><a href="/next">next</a></body></html>"#,
            cdn.url("/lib.js")
        )),
    );
    h.route("/next", Route::html("<p>a page</p><img src=/b.png>"));
    h.route(
        "/s.css",
        Route::typed(200, "text/css", b"h1 { background: url(/h1.png) }"),
    );
    for p in ["/a.png", "/b.png", "/h1.png"] {
        h.route(p, Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\nfake"));
    }
    cdn.route(
        "/lib.js",
        Route::typed(200, "application/javascript", b"var x = 1;"),
    );
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "20ms", "--page-requisites"];
    let workers = seeded_workers(
        &redis.url(),
        "requisites",
        &dirs,
        &extra,
        "2s",
        &[h.url("/")],
    );
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
    }
    let archived = union_pages(&dirs);
    let mut expected: Vec<String> = ["/", "/next", "/s.css", "/a.png", "/b.png", "/h1.png"]
        .iter()
        .map(|p| h.url(p))
        .collect();
    expected.push(cdn.url("/lib.js"));
    expected.sort();
    let got: Vec<String> = archived
        .keys()
        .filter(|u| !u.ends_with("/sitemap.xml"))
        .cloned()
        .collect();
    assert_eq!(got, expected);
    assert!(archived.values().all(|&n| n == 1), "{archived:?}");
    // The Referer each URL was queued with went through Redis to whichever worker fetched it.
    assert_eq!(referer(&web, &h, "/next"), Some(h.url("/")));
    assert_eq!(referer(&web, &h, "/h1.png"), Some(h.url("/s.css")));
    assert_eq!(referer(&web, &h, "/b.png"), Some(h.url("/next")));
    assert_eq!(referer(&web, &cdn, "/lib.js"), Some(h.url("/")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_reads_a_seeds_file_starts_the_crawl_alone() {
    // The first worker of a crawl, with its seeds in a file (`--seeds`), no seed on the command
    // line: it waited at join for a worker that brings seeds, forever.
    let (_web, hosts) = web_of_hosts(190, 3, 5).await;
    let tmp = tempfile::tempdir().unwrap();
    let seeds = tmp.path().join("seeds.txt");
    let lines: Vec<String> = hosts.iter().map(|h| h.url("/")).collect();
    std::fs::write(&seeds, lines.join("\n") + "\n").unwrap();
    let redis = RedisServer::start();
    let dir = tmp.path().join("w1");
    let mut a = worker_args(&redis.url(), "from-file", "w1", &dir, &["--delay", "50ms"]);
    a.extend(["--seeds".to_string(), seeds.display().to_string()]);
    let (code, err) = finish(spawn(a)).await;
    assert_eq!(code, Some(0), "{err}");
    let got: Vec<String> = union_pages(std::slice::from_ref(&dir))
        .into_keys()
        .collect();
    assert_eq!(got, every_page(&hosts, 5));
    check_warcs(&dir).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_with_more_queued_than_one_batch_is_refilled_as_it_runs_dry() {
    // One host whose home links to 150 pages: all are queued in Redis at once, and the worker
    // takes them 32 at a time. A batch's pages find nothing new, so nothing said "more waits"
    // and each next batch came only with the next save point (every 5 s): 200 pages of one
    // site took 27-33 s in a shared crawl against 4.8 s in one process.
    let web = Web::default();
    let host = web.host("127.0.0.210").await;
    let mut home = String::new();
    for p in 0..150 {
        home.push_str(&format!("<a href=/p{p}>p{p}</a> "));
    }
    host.route("/", Route::html(&home));
    for p in 0..150 {
        host.route(&format!("/p{p}"), Route::html("<a href=/>home</a>"));
    }
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("w1");
    let mut a = worker_args(&redis.url(), "one-site", "w1", &dir, &["--delay", "0ms"]);
    a.push(host.url("/"));
    let (code, err) = finish(spawn(a)).await;
    assert_eq!(code, Some(0), "{err}");
    let mut at: Vec<Instant> = web
        .hits()
        .into_iter()
        .filter(|h| h.path.starts_with("/p"))
        .map(|h| h.at)
        .collect();
    assert_eq!(at.len(), 150);
    at.sort();
    let longest = at.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    // A batch runs dry in milliseconds here; waiting for a save point takes seconds.
    assert!(longest < Duration::from_secs(2), "a gap of {longest:?}");
}
