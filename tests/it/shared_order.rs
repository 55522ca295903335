//! `--order` in a shared crawl: each host's queue in Redis served in the order asked, and under
//! `backlinks` URLs and hosts ranked by the links to them, crawl-wide (issue 28).

use std::collections::BTreeMap;
use std::path::PathBuf;

use trawl::redis_crawl::keys::Keys;
use trawl::redis_crawl::scripts::Scripts;

use crate::crawl_orders::hub_site;
use crate::harness::read_records;
use crate::redis_server::RedisServer;
use crate::server::{Route, Web};
use crate::shared_workers::{finish, seeded_workers};

/// Issue 28: `--order` in a shared crawl. A home page links first to 20 deep URLs, then to 20
/// shallow ones: under `path-depth` both workers serve every shallow URL before any deep one,
/// as one process does; under `bfs` the order is the page's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_crawl_serves_each_host_in_the_order_asked() {
    let web = Web::default();
    let h = web.host("127.0.45.1").await;
    let mut links = String::new();
    for i in 0..20 {
        links.push_str(&format!(r#"<a href="/deep/a/b/{i}">d</a>"#));
        h.route(&format!("/deep/a/b/{i}"), Route::html("<p>deep</p>"));
    }
    for i in 0..20 {
        links.push_str(&format!(r#"<a href="/top{i}">s</a>"#));
        h.route(&format!("/top{i}"), Route::html("<p>shallow</p>"));
    }
    h.route("/", Route::html(&links));
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    for order in ["path-depth", "bfs"] {
        let from = web.hits().len();
        let dirs: Vec<PathBuf> = (1..=2)
            .map(|i| tmp.path().join(format!("{order}{i}")))
            .collect();
        let extra = ["--delay", "20ms", "--order", order];
        let workers = seeded_workers(&redis.url(), order, &dirs, &extra, "2s", &[h.url("/")]);
        for w in workers {
            let (code, err) = finish(w).await;
            assert_eq!(code, Some(0), "{err}");
        }
        let paths: Vec<String> = web.hits()[from..]
            .iter()
            .map(|h| h.path.clone())
            .filter(|p| p.starts_with("/top") || p.starts_with("/deep/"))
            .collect();
        assert_eq!(paths.len(), 40, "{order}: {paths:?}");
        let first_deep = paths.iter().position(|p| p.starts_with("/deep/")).unwrap();
        let last_shallow = paths.iter().rposition(|p| p.starts_with("/top")).unwrap();
        if order == "path-depth" {
            assert!(last_shallow < first_deep, "{order}: {paths:?}");
        } else {
            assert!(first_deep < last_shallow, "{order}: {paths:?}");
        }
    }
}

/// Issue 28: `--order backlinks` in a shared crawl, on the site of the one-process test
/// (`crawl_orders::backlinks_order_archives_the_most_linked_pages_first`): the root links to 60
/// hubs, every hub to the same 10 popular pages and to two leaves of its own. Under bfs the
/// crawl's 45 pages are the root and hubs; under backlinks the popular pages, whose links a
/// worker counts from its cache of recent links and Redis from its seen set, move up in the
/// host's queue in Redis and are served before the remaining hubs and leaves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_crawl_ranks_by_backlinks_as_one_process_does() {
    const HUBS: usize = 60;
    const POPULAR: usize = 10;
    let web = Web::default();
    let h = web.host("127.0.45.3").await;
    hub_site(&h, HUBS, POPULAR);
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let mut popular = BTreeMap::new();
    for order in ["bfs", "backlinks"] {
        let dirs: Vec<PathBuf> = (1..=2)
            .map(|i| tmp.path().join(format!("{order}{i}")))
            .collect();
        let extra = ["--delay", "30ms", "--order", order, "--max-pages", "45"];
        let workers = seeded_workers(&redis.url(), order, &dirs, &extra, "2s", &[h.url("/")]);
        for w in workers {
            let (code, err) = finish(w).await;
            assert_eq!(code, Some(0), "{order}: {err}");
        }
        let mut archived = Vec::new();
        for dir in &dirs {
            archived.extend(
                read_records(dir)
                    .into_iter()
                    .filter(|r| r.warc_type == "response")
                    .filter_map(|r| r.target_uri)
                    .filter(|u| !u.ends_with("/robots.txt") && !u.ends_with("/sitemap.xml")),
            );
        }
        assert_eq!(archived.len(), 45, "{order}: {archived:?}");
        let n = archived
            .iter()
            .filter(|u| u.rsplit('/').next().is_some_and(|p| p.starts_with('t')))
            .count();
        popular.insert(order, n);
    }
    assert!(popular["bfs"] <= 1, "{popular:?}");
    assert_eq!(
        popular["backlinks"], POPULAR,
        "every popular page: {popular:?}"
    );
}

/// The Redis side of `--order backlinks`, script by script: a URL linked again (Redis's seen
/// set answers "duplicate") or counted by a worker's cache of recent links moves up in its
/// host's queue, keeping its arrival order among equals; a claim takes the due hosts that
/// other hosts' pages link to most first.
#[test]
fn redis_moves_urls_and_hosts_up_by_their_backlinks() {
    let redis = RedisServer::start();
    let mut con = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let keys = Keys::new("bl", 1);
    let scripts = Scripts::new();
    let (p, ready) = (keys.shard(0), keys.ready(0));
    let one_backlink = u32::MAX - 1;
    let entry = |host: &str, path: &str| format!("http://{host}/{path}\t1\t0\t0");
    // One `admit` call (backlinks order) of host/fingerprint/entry/rank items.
    let admit = |con: &mut redis::Connection, items: &[(&str, String, String, u32)]| {
        let mut call = scripts.admit.key(&ready);
        call.arg(&p).arg(2);
        for (host, fp, entry, rank) in items {
            call.arg(*host).arg(fp).arg(entry).arg(*rank);
        }
        call.invoke::<Vec<i64>>(con).unwrap()
    };
    let mut items = Vec::new();
    for host in ["a", "b", "c"] {
        for path in ["x", "y", "z"] {
            let fp = format!("{host}{path}-fingerprint");
            items.push((host, fp, entry(host, path), one_backlink));
        }
    }
    assert_eq!(admit(&mut con, &items), vec![1; 9]);
    let order = |con: &mut redis::Connection, host: &str| -> Vec<String> {
        let z: Vec<String> = redis::cmd("ZRANGE")
            .arg(format!("{p}:z:{host}"))
            .arg(0)
            .arg(-1)
            .query(con)
            .unwrap();
        z.iter()
            .map(|e| {
                e.split('\t')
                    .next()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(order(&mut con, "a"), ["x", "y", "z"]);
    // a/z linked again from a page whose worker did not know it: one more backlink; a/y
    // three more, counted by a worker's own cache; host c gains 5 pages of other hosts
    // linking to it, b one.
    let replies = admit(
        &mut con,
        &[
            ("a", "az-fingerprint".into(), entry("a", "z"), one_backlink),
            ("a", "u".into(), "http://a/y".into(), 3),
            ("c", "h".into(), String::new(), 5),
            ("b", "h".into(), String::new(), 1),
        ],
    );
    assert_eq!(replies, vec![0, -1, -1, -1]);
    assert_eq!(order(&mut con, "a"), ["y", "z", "x"]);
    // All three hosts are due at the same moment (by name: a, b, c); one is claimed: c.
    let claimed: redis::Value = scripts
        .claim
        .key(&ready)
        .arg(&p)
        .arg("token-1")
        .arg(1)
        .arg(30_000)
        .arg(32)
        .arg(-1)
        .arg(0)
        .arg(2)
        .invoke(&mut con)
        .unwrap();
    let owners: BTreeMap<String, String> = redis::cmd("HGETALL")
        .arg(format!("{p}:owner"))
        .query(&mut con)
        .unwrap();
    assert_eq!(
        owners.keys().map(String::as_str).collect::<Vec<_>>(),
        ["c"],
        "{claimed:?}"
    );
    // A backlink to a URL handed out (in flight) does not put it back in the queue.
    admit(&mut con, &[("c", "u".into(), "http://c/x".into(), 9)]);
    let left: i64 = redis::cmd("ZCARD")
        .arg(format!("{p}:z:c"))
        .query(&mut con)
        .unwrap();
    assert_eq!(left, 0, "c's URLs are all in flight");
    // Given back (a worker stopped), they are queued again where they were, and movable.
    let released: i64 = scripts
        .release
        .key(&ready)
        .arg(&p)
        .arg("token-1")
        .arg("c")
        .arg(0)
        .arg(2)
        .invoke(&mut con)
        .unwrap();
    assert_eq!(released, 1);
    assert_eq!(order(&mut con, "c"), ["x", "y", "z"]);
    admit(&mut con, &[("c", "u".into(), "http://c/z".into(), 2)]);
    assert_eq!(order(&mut con, "c"), ["z", "x", "y"]);
}
