//! A shared crawl across a Redis that crashes, restarts within the workers' lease, or is a
//! Redis Cluster: the workers pause and lose nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::redis_server::{RedisCluster, RedisServer};
use crate::shared_workers::{
    check_warcs, every_page, finish, seeded_workers, start_workers, union_pages,
    wait_for_any_output, web_of_hosts,
};

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
