//! A shared crawl shares its hosts out: a worker that starts after another has taken every
//! host still gets a share (the first gives hosts back as they run dry and their pages are
//! acknowledged), and no page is fetched twice for it.

use std::time::Duration;

use crate::redis_server::RedisServer;
use crate::shared_workers::{
    check_warcs, every_page, finish, spawn, union_pages, web_of_hosts, worker_args,
};

const HOSTS: usize = 8;
const PAGES: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_starts_late_gets_a_share_of_the_hosts_and_nothing_is_fetched_twice() {
    let (web, hosts) = web_of_hosts(150, HOSTS, PAGES).await;
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs = [tmp.path().join("w1"), tmp.path().join("w2")];
    // -c 2: a worker holds up to 8 hosts, every host of this web; w1 brings them all as seeds.
    let extra = ["--delay", "100ms", "-c", "2"];
    let mut a1 = worker_args(&redis.url(), "share", "w1", &dirs[0], &extra);
    a1.extend(hosts.iter().map(|h| h.url("/")));
    let w1 = spawn(a1);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let w2 = spawn(worker_args(&redis.url(), "share", "w2", &dirs[1], &extra));
    let (c1, e1) = finish(w1).await;
    let (c2, e2) = finish(w2).await;
    assert_eq!(c1, Some(0), "{e1}");
    assert_eq!(c2, Some(0), "{e2}");

    let pages = union_pages(&dirs);
    let twice: Vec<_> = pages.iter().filter(|(_, &n)| n > 1).collect();
    assert!(twice.is_empty(), "archived twice: {twice:?}");
    let got: Vec<String> = pages.keys().cloned().collect();
    assert_eq!(got, every_page(&hosts, PAGES));
    let by_w2 = union_pages(&dirs[1..]).len();
    assert!(
        by_w2 >= PAGES / 2,
        "the late worker archived {by_w2} of {} pages",
        pages.len()
    );
    // Nothing requested twice either (robots.txt aside).
    let mut requested = std::collections::BTreeMap::new();
    for hit in web.hits() {
        if hit.path != "/robots.txt" {
            *requested.entry((hit.host, hit.path)).or_insert(0) += 1;
        }
    }
    let again: Vec<_> = requested.iter().filter(|(_, &n)| n > 1).collect();
    assert!(again.is_empty(), "requested twice: {again:?}");
    for dir in &dirs {
        check_warcs(dir).await;
    }
}
