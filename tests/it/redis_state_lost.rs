//! A Redis that loses a shared crawl's state: restarted without persistence (all of it gone), or
//! one shard's keys gone (a cluster node restarted empty). Every worker stops with exit 9 and
//! valid WARC files, writes nothing more to Redis, and no worker joins the crawl again.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::redis_server::{cli, RedisServer};
use crate::shared_workers::{
    check_warcs, finish, spawn, start_workers, union_pages, wait_for_any_output, web_of_hosts,
    worker_args,
};

/// Redis restarted with no RDB or AOF mid-crawl: before, the workers went on against an empty
/// Redis and never ended (the crawl no longer marked seeded), saying their leases were "lost
/// to another worker". (The connection is made again by itself, often with no call failing,
/// so what a worker sent in the second before its heartbeat round found the loss may be in
/// the empty Redis.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_back_without_its_data_stops_every_worker_with_exit_9() {
    let (_web, hosts) = web_of_hosts(242, 5, 40).await;
    let mut redis = RedisServer::start_with(&["--appendonly", "no"]);
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "100ms", "--concurrency", "2"];
    let workers = start_workers(&redis.url(), "gone", &dirs, &extra, &hosts[1].url("/"));
    wait_for_any_output(&dirs, 6_000).await;
    tokio::task::block_in_place(|| redis.crash_and_restart(Duration::from_millis(500)));
    let restarted = Instant::now();
    let mut logs = String::new();
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(9), "{err}");
        logs.push_str(&err);
    }
    assert!(
        restarted.elapsed() < Duration::from_secs(30),
        "the workers stopped {:?} after the restart",
        restarted.elapsed()
    );
    assert_eq!(
        logs.matches("state in Redis is lost").count(),
        2,
        "each worker says why: {logs}"
    );
    assert!(!logs.contains("lost to another worker"), "{logs}");
    // The crawl's record was not made again in the empty Redis (a worker joining later
    // starts a new crawl).
    assert_eq!(
        cli(redis.port, &["EXISTS", "trawl:{gone}:meta"]),
        "0",
        "{}",
        cli(redis.port, &["KEYS", "*"])
    );
    assert!(!union_pages(&dirs).is_empty());
    for dir in &dirs {
        check_warcs(dir).await;
    }
    // The same command line again (a supervisor's restart): Redis, empty, would take the
    // crawl as new under the same id and the pages would be archived a second time into the
    // same directory. Refused with exit 9, saying why.
    let again = start_workers(&redis.url(), "gone", &dirs[..1], &extra, &hosts[1].url("/"));
    for w in again {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(9), "{err}");
        assert!(
            err.contains("would archive its pages a second time"),
            "{err}"
        );
    }
}

/// One shard's keys gone while a worker holds its host (a cluster node restarted empty): the
/// worker finds the host's record gone at its next renewal and marks the crawl lost; the
/// other worker stops too, and a worker that comes later is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_lost_from_redis_stops_the_crawl_and_it_is_not_joined_again() {
    let (_web, hosts) = web_of_hosts(247, 5, 40).await;
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "100ms", "--concurrency", "2"];
    let workers = start_workers(&redis.url(), "part", &dirs, &extra, &hosts[1].url("/"));
    wait_for_any_output(&dirs, 6_000).await;
    // A shard that holds a leased host, emptied.
    let deadline = Instant::now() + Duration::from_secs(30);
    let shard = loop {
        let owners = cli(redis.port, &["KEYS", "trawl:{part/*}:owner"]);
        let held = owners
            .lines()
            .find(|key| cli(redis.port, &["HLEN", key]) != "0")
            .map(|key| key.trim_end_matches(":owner").to_string());
        if let Some(shard) = held {
            break shard;
        }
        assert!(Instant::now() < deadline, "no host was ever held");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    for key in cli(redis.port, &["KEYS", &format!("{shard}:*")]).lines() {
        cli(redis.port, &["DEL", key]);
    }
    let mut logs = String::new();
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(9), "{err}");
        logs.push_str(&err);
    }
    assert!(logs.contains("is gone"), "{logs}");
    for dir in &dirs {
        check_warcs(dir).await;
    }
    // `trawl status` says so, and a worker joining the crawl afterwards is refused, with the
    // reason.
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(["status", "--redis", &redis.url(), "--crawl-id", "part"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(shown.contains("state lost"), "{shown}");
    let late = tmp.path().join("w3");
    let mut args = worker_args(&redis.url(), "part", "w3", &late, &extra);
    args.push(hosts[1].url("/"));
    let (code, err) = finish(spawn(args)).await;
    assert_eq!(code, Some(9), "{err}");
    assert!(err.contains("lost part of its state"), "{err}");
}
