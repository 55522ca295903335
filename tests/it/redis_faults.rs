//! A shared crawl whose Redis fails at the worst moments. A fault proxy on loopback, between
//! the worker and a real redis-server, ends the connection instead of passing on a chosen
//! answer, which Redis has already acted on: a refill's (the host's next batch), a save point's
//! acknowledgement, a claim's, a restarted worker's take-back, or one answer in 15 of a whole
//! crawl. Nothing may be lost, fetched twice or waited for forever; a lost claim costs the
//! host its lease, nothing more. And a worker started while Redis is down waits for it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::redis_server::{cli, RedisServer};
use crate::shared_workers::{
    check_warcs, every_page, finish, kill_9, seeded_workers, spawn, union_pages,
    wait_for_any_output, web_of_hosts, worker_args,
};

/// Which answer from Redis the proxy cuts.
#[derive(Clone, Copy)]
enum Cut {
    /// An answer that holds these bytes.
    AnswerHolding(&'static [u8]),
    /// The first answer after a request that holds these bytes.
    AnswerTo(&'static [u8]),
    /// An answer that holds the second bytes, to a request that holds the first.
    AnswerToHolding(&'static [u8], &'static [u8]),
    /// Every `n`th answer (read), over all connections.
    EveryNth(usize),
}

/// A TCP proxy to Redis that, `cuts` times, ends a connection instead of passing on the answer
/// [`Cut`] names; everything else passes through.
struct CuttingProxy {
    port: u16,
    cut: Arc<AtomicUsize>,
}

impl CuttingProxy {
    async fn start(redis_port: u16, what: Cut, cuts: usize) -> CuttingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicUsize::new(0));
        let counter = cut.clone();
        let answers = Arc::new(AtomicUsize::new(0));
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(("127.0.0.1", redis_port)).await else {
                    continue;
                };
                let counters = (counter.clone(), answers.clone());
                tokio::spawn(relay(client, server, what, cuts, counters));
            }
        });
        CuttingProxy { port, cut }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn cuts_made(&self) -> usize {
        self.cut.load(Ordering::SeqCst)
    }
}

fn holds(bytes: &[u8], marker: &[u8]) -> bool {
    bytes.windows(marker.len()).any(|w| w == marker)
}

/// Passes bytes both ways, and ends the connection at the answer `what` names while fewer
/// than `cuts` have been cut.
async fn relay(
    client: TcpStream,
    server: TcpStream,
    what: Cut,
    cuts: usize,
    (cut, answers): (Arc<AtomicUsize>, Arc<AtomicUsize>),
) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    // Whether the last request (set before it goes on) holds `Cut::AnswerTo`'s bytes.
    let asked = Arc::new(AtomicBool::new(false));
    let asked_up = asked.clone();
    let upstream = tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match client_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if let Cut::AnswerTo(marker) | Cut::AnswerToHolding(marker, _) = what {
                asked_up.store(holds(&buf[..n], marker), Ordering::SeqCst);
            }
            if server_write.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match server_read.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let answer = &buf[..n];
        let chosen = match what {
            Cut::AnswerHolding(marker) => holds(answer, marker),
            // (Not "run the script first": the call that follows is the one to cut.)
            Cut::AnswerTo(_) => asked.load(Ordering::SeqCst) && !answer.starts_with(b"-NOSCRIPT"),
            Cut::AnswerToHolding(_, marker) => {
                asked.load(Ordering::SeqCst) && holds(answer, marker)
            }
            Cut::EveryNth(n) => answers.fetch_add(1, Ordering::SeqCst) % n == n - 1,
        };
        if chosen
            && cut
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |c| {
                    (c < cuts).then_some(c + 1)
                })
                .is_ok()
        {
            break;
        }
        if client_write.write_all(answer).await.is_err() {
            break;
        }
    }
    upstream.abort();
}

/// Issue 30 (found by a Redis crash in a full test run): the answer to a refill, which Redis
/// had already served (the URLs moved "in flight" for the worker), never reached the worker.
/// Asked again, Redis handed over the next batch; the lost one stayed in flight for good, so
/// the host was never done: the worker held it to the end and never ended, and those pages
/// were never fetched. Now a refill says how many entries the worker knows to be in flight;
/// Redis, holding more, returns them all, and the worker takes those it does not have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refill_answer_lost_with_the_connection_loses_no_url_and_does_not_hang() {
    const PAGES: usize = 40;
    let (_web, hosts) = web_of_hosts(132, 3, PAGES).await;
    // Queues are lists under --order bfs, sorted sets under the other orders.
    for order in ["bfs", "backlinks"] {
        let redis = RedisServer::start();
        // A refill's answer starts with "more" (a claim's does not); three of them are cut.
        let proxy = CuttingProxy::start(redis.port, Cut::AnswerHolding(b"$4\r\nmore\r\n"), 3).await;
        let tmp = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = vec![tmp.path().join("w1")];
        let extra = ["--delay", "20ms", "--concurrency", "2", "--order", order];
        let mut args = worker_args(&proxy.url(), "cut", "w1", &dirs[0], &extra);
        args.push(hosts[0].url("/"));
        let (code, err) = finish(spawn(args)).await;
        assert_eq!(code, Some(0), "{order}: {err}");
        assert_eq!(proxy.cuts_made(), 3, "{order}: three refill answers cut");
        let union = union_pages(&dirs);
        assert_eq!(
            union.keys().cloned().collect::<Vec<_>>(),
            every_page(&hosts, PAGES),
            "{order}: no URL lost with the answers"
        );
        let twice: BTreeMap<_, _> = union.iter().filter(|(_, &n)| n > 1).collect();
        assert!(twice.is_empty(), "{order}: archived twice: {twice:?}");
        check_warcs(&dirs[0]).await;
    }
}

/// The same for a save point's acknowledgement: Redis counted the host's pages, and the answer
/// was lost. The worker still counted those pages as its own news, so when it asked for more
/// Redis added them twice, found `--max-pages-per-host` reached, and dropped the host's queue:
/// 64 of 72 pages before the fix. (The acknowledgement, sent again, counted them twice for
/// good.) Now the worker sends the host's total, not an increment, so nothing counts twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acknowledgement_answer_lost_counts_no_page_twice() {
    // Three batches of 32 entries. The first save point (5 s) falls about 45 pages into host
    // 1 (100 ms apart); the third batch is asked for after 64, with the cap not reached.
    const PAGES: usize = 90;
    const CAP: usize = 72;
    let (_web, hosts) = web_of_hosts(136, 2, PAGES).await;
    // The acknowledgement that names /p40 as done (a bare argument, so followed by CRLF; the
    // URL's queue entry, sent when the home's links were, goes on with a tab).
    const MARKER: &[u8] = b"/p40\r\n";
    let redis = RedisServer::start();
    let proxy = CuttingProxy::start(redis.port, Cut::AnswerTo(MARKER), 1).await;
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = vec![tmp.path().join("w1")];
    let cap = CAP.to_string();
    let extra = ["--delay", "100ms", "--max-pages-per-host", &cap];
    let mut args = worker_args(&proxy.url(), "ack", "w1", &dirs[0], &extra);
    args.push(hosts[1].url("/"));
    let (code, err) = finish(spawn(args)).await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(proxy.cuts_made(), 1, "the acknowledgement's answer was cut");
    let host1 = format!("{}/", hosts[1].url("/").trim_end_matches('/'));
    let pages = union_pages(&dirs)
        .keys()
        .filter(|u| u.starts_with(&host1))
        .count();
    assert_eq!(pages, CAP, "host 1 archived up to its cap");
}

/// A claim whose answer was lost: Redis leased the host to the worker, which never heard so.
/// The host waits out its lease and is then taken over like any host whose holder went quiet:
/// a delay, with nothing lost and nothing fetched twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_answer_lost_costs_a_lease_and_loses_nothing() {
    const PAGES: usize = 10;
    let (_web, hosts) = web_of_hosts(146, 3, PAGES).await;
    let redis = RedisServer::start();
    // Host 2's name first comes back from Redis in the answer that hands it over.
    let proxy = CuttingProxy::start(redis.port, Cut::AnswerHolding(b"127.0.0.148"), 1).await;
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = vec![tmp.path().join("w1")];
    let extra = ["--delay", "20ms"];
    let mut args = worker_args(&proxy.url(), "claim", "w1", &dirs[0], &extra);
    args.push(hosts[0].url("/"));
    let (code, err) = finish(spawn(args)).await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(proxy.cuts_made(), 1, "the claim's answer was cut");
    let union = union_pages(&dirs);
    assert_eq!(
        union.keys().cloned().collect::<Vec<_>>(),
        every_page(&hosts, PAGES),
        "no URL lost with the answer"
    );
    let twice: BTreeMap<_, _> = union.iter().filter(|(_, &n)| n > 1).collect();
    assert!(twice.is_empty(), "archived twice: {twice:?}");
}

/// Every kind of call at once: a crawl shared by two workers through a connection that loses
/// one answer in 15 (up to 25 times, whatever the call: claims, refills, acknowledgements,
/// admissions, renewals, heartbeats). Every page is archived, and both workers end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_crawl_through_a_connection_that_loses_answers_loses_no_page() {
    const PAGES: usize = 30;
    let (_web, hosts) = web_of_hosts(150, 6, PAGES).await;
    let redis = RedisServer::start();
    let proxy = CuttingProxy::start(redis.port, Cut::EveryNth(15), 25).await;
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "20ms", "--concurrency", "2"];
    let homes: Vec<String> = hosts.iter().map(|h| h.url("/")).collect();
    let workers = seeded_workers(&proxy.url(), "chaos", &dirs, &extra, "2s", &homes[..1]);
    let mut logs = String::new();
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
        logs.push_str(&err);
    }
    assert!(
        proxy.cuts_made() >= 10,
        "{} cuts: {logs}",
        proxy.cuts_made()
    );
    let union = union_pages(&dirs);
    assert_eq!(
        union.keys().cloned().collect::<Vec<_>>(),
        every_page(&hosts, PAGES),
        "no page lost"
    );
    let twice = union.values().filter(|&&n| n > 1).count();
    eprintln!("{} cuts; pages archived twice: {twice}", proxy.cuts_made());
    for dir in &dirs {
        check_warcs(dir).await;
    }
}

/// A worker restarted with its id takes back the hosts its killed process held; when the
/// answer that hands one back is lost, asking again hands it back again (the host's owner is
/// this process's token by then). Before, the host waited out its lease and came back by a
/// takeover, after the replay of the WARC tail had passed it by: its pages archived since the
/// last acknowledgement were fetched again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_worker_whose_take_back_answer_is_lost_refetches_nothing() {
    const PAGES: usize = 60;
    let (_web, hosts) = web_of_hosts(154, 2, PAGES).await;
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = vec![tmp.path().join("w1")];
    let extra = ["--delay", "100ms"];
    let mut args = worker_args(&redis.url(), "back", "w1", &dirs[0], &extra);
    args.push(hosts[1].url("/"));
    let mut first = spawn(args);
    // Killed between two save points, with pages archived and not acknowledged.
    wait_for_any_output(&dirs, 6_000).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    kill_9(&mut first);
    // The take-back call names the worker (`w1#`, a bare argument); its answer names the host.
    let proxy = CuttingProxy::start(
        redis.port,
        Cut::AnswerToHolding(b"$3\r\nw1#\r\n", b"127.0.0.155"),
        1,
    )
    .await;
    let args = worker_args(&proxy.url(), "back", "w1", &dirs[0], &extra);
    let (code, err) = finish(spawn(args)).await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(proxy.cuts_made(), 1, "the take-back answer was cut: {err}");
    assert!(err.contains("took back"), "{err}");
    let union = union_pages(&dirs);
    assert_eq!(
        union.keys().cloned().collect::<Vec<_>>(),
        every_page(&hosts, PAGES),
        "no page lost"
    );
    let twice: Vec<_> = union.iter().filter(|(_, &n)| n > 1).collect();
    assert!(
        twice.len() <= 1,
        "archived twice (one may have been in flight): {twice:?}"
    );
}

/// A worker started while its Redis is down (a machine booting, Redis restarting) waits for
/// it, saying so, and crawls once it answers, where it exited 9 at the first refused
/// connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_started_before_its_redis_waits_for_it() {
    const PAGES: usize = 5;
    let (_web, hosts) = web_of_hosts(142, 2, PAGES).await;
    let mut redis = RedisServer::start();
    let url = redis.url();
    // Down for 3 s from now, then up again on the same port.
    let outage = tokio::task::spawn_blocking(move || {
        redis.crash_and_restart(Duration::from_secs(3));
        redis
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = vec![tmp.path().join("w1")];
    let mut args = worker_args(&url, "late", "w1", &dirs[0], &["--delay", "20ms"]);
    args.push(hosts[1].url("/"));
    let worker = spawn(args);
    let _redis = outage.await.unwrap();
    let (code, err) = finish(worker).await;
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("trying again"), "{err}");
    assert_eq!(
        union_pages(&dirs).keys().cloned().collect::<Vec<_>>(),
        every_page(&hosts, PAGES)
    );
}

/// A Redis at its `maxmemory` (noeviction refuses writes with `OOM`) pauses the crawl, the log
/// says what to do, and once the limit is raised the crawl goes on and loses no page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_out_of_memory_pauses_the_crawl_until_writes_are_accepted() {
    const PAGES: usize = 30;
    let (_web, hosts) = web_of_hosts(252, 3, PAGES).await;
    let redis = RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let extra = ["--delay", "50ms", "--concurrency", "2"];
    let homes: Vec<String> = hosts.iter().map(|h| h.url("/")).collect();
    let workers = seeded_workers(&redis.url(), "oom", &dirs, &extra, "2s", &homes[..1]);
    wait_for_any_output(&dirs, 6_000).await;
    cli(redis.port, &["CONFIG", "SET", "maxmemory", "1"]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    cli(redis.port, &["CONFIG", "SET", "maxmemory", "0"]);
    let mut logs = String::new();
    for w in workers {
        let (code, err) = finish(w).await;
        assert_eq!(code, Some(0), "{err}");
        logs.push_str(&err);
    }
    assert!(logs.contains("at its maxmemory"), "{logs}");
    assert!(logs.contains("Redis is reachable again after"), "{logs}");
    assert_eq!(
        union_pages(&dirs).keys().cloned().collect::<Vec<_>>(),
        every_page(&hosts, PAGES),
        "no page lost"
    );
    for dir in &dirs {
        check_warcs(dir).await;
    }
}
