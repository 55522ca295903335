//! One crawl shared by several worker processes through a real Redis (`--redis`): the same
//! pages as one process, each archived once, politeness across workers, a worker killed with
//! -9, an exact `--max-pages`, `trawl status` and `trawl stop`, workers with other options.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::args;
use crate::harness::{text, trawl};
use crate::redis_server::RedisServer;
use crate::server::Web;
use crate::shared_workers::{
    check_warcs, every_page, finish, kill_9, spawn, start_workers, union_pages,
    wait_for_any_output, web_of_hosts, worker, worker_args,
};

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
        let arg = |i: usize| {
            let mut a = worker(&redis.url(), crawl, &dirs, i, &extra, &seed);
            if restart {
                // What is under test is the restart taking back its own hosts: a lease that
                // a slow restart cannot outlive, so that no other worker takes them first.
                let at = a.iter().position(|x| x == "--lease").expect("--lease") + 1;
                a[at] = "10s".to_string();
            }
            a
        };
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
