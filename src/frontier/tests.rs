//! Frontier behaviour with a driven clock.

use super::*;
use std::collections::HashSet;

use crate::crawl_db::CrawlDb;
use crate::frontier::robots_state::{MAX_ROBOTS_ATTEMPTS, MAX_ROBOTS_REDIRECTS};

const DELAY: Duration = Duration::from_millis(100);

fn frontier(obey: bool) -> Frontier {
    Frontier::open(config(obey), Box::new(CrawlDb::in_memory()), Instant::now())
        .unwrap()
        .with_seed(7)
}

fn cand(s: &str, depth: u32) -> Candidate {
    Candidate {
        url: Url::parse(s).unwrap(),
        depth,
        redirects: 0,
        requisite: 0,
    }
}

fn job(n: Next) -> Job {
    match n {
        Next::Job(j) => j,
        other => panic!("expected a job, got {other:?}"),
    }
}

#[test]
fn deduplicates_at_enqueue() {
    let mut f = frontier(false);
    let t = Instant::now();
    assert_eq!(f.push(cand("http://a.org/x", 0), t), Admit::Queued);
    assert_eq!(f.push(cand("http://a.org/x", 1), t), Admit::Seen);
    assert_eq!(f.queued(), 1);
}

#[test]
fn a_pages_links_seen_moments_ago_skip_admission_and_refused_ones_leave_no_trace() {
    let mut f = frontier(false);
    let t = Instant::now();
    let urls =
        |list: &[&str]| -> Vec<Url> { list.iter().map(|s| Url::parse(s).unwrap()).collect() };
    let mut asked = Vec::new();
    let mut admit = |u: Url| {
        asked.push(u.to_string());
        // Admission refuses every link to c.org.
        (u.host_str() != Some("c.org")).then(|| cand(u.as_str(), 1))
    };
    let first = urls(&["http://a.org/1", "http://b.org/1", "http://c.org/1"]);
    assert_eq!(f.push_links("a.org", first, t, &mut admit), 0);
    assert_eq!((f.queued(), f.hosts_seen()), (2, 2), "c.org was refused");
    let again = urls(&[
        "http://a.org/1",
        "http://b.org/1",
        "http://c.org/1",
        "http://b.org/2",
    ]);
    assert_eq!(f.push_links("a.org", again, t, &mut admit), 2);
    // The two queued links were answered by the seen cache; the refused one and the new one
    // went through admission.
    assert_eq!(
        asked,
        [
            "http://a.org/1",
            "http://b.org/1",
            "http://c.org/1",
            "http://c.org/1",
            "http://b.org/2"
        ]
    );
    assert_eq!((f.queued(), f.hosts_seen()), (3, 2));
}

#[test]
fn one_in_flight_per_host_and_delay_between_requests() {
    let mut f = frontier(false);
    let t0 = Instant::now();
    f.push(cand("http://a.org/1", 0), t0);
    f.push(cand("http://a.org/2", 0), t0);
    let j1 = job(f.next(t0));
    assert_eq!(j1.url.path(), "/1");
    // Same host is busy: nothing else to do.
    assert!(matches!(f.next(t0), Next::Idle));
    let done = t0 + Duration::from_millis(30);
    f.complete(&j1.host, done);
    match f.next(done) {
        Next::Wait(at) => assert_eq!(at, done + DELAY),
        other => panic!("{other:?}"),
    }
    let j2 = job(f.next(done + DELAY));
    assert_eq!(j2.url.path(), "/2");
    f.complete(&j2.host, done + DELAY);
    assert!(matches!(f.next(done + DELAY * 5), Next::Exhausted));
}

#[test]
fn breadth_first_within_a_host() {
    let mut f = frontier(false);
    let mut t = Instant::now();
    f.push(cand("http://a.org/deep", 3), t);
    f.push(cand("http://a.org/shallow", 1), t);
    f.push(cand("http://a.org/seed", 0), t);
    f.push(cand("http://a.org/shallow2", 1), t);
    let mut order = Vec::new();
    for _ in 0..4 {
        let j = job(f.next(t));
        order.push(j.url.path().to_string());
        t += DELAY;
        f.complete(&j.host, t);
        t += DELAY;
    }
    assert_eq!(order, ["/seed", "/shallow", "/shallow2", "/deep"]);
}

#[test]
fn hosts_are_served_in_parallel_and_none_dominates() {
    let mut f = frontier(false);
    let t = Instant::now();
    for h in 0..20 {
        for p in 0..50 {
            f.push(cand(&format!("http://h{h}.org/{p}"), 0), t);
        }
    }
    // In one instant, every host gets exactly one job.
    let mut hosts = HashSet::new();
    while let Next::Job(j) = f.next(t) {
        assert!(hosts.insert(j.host.clone()), "host {} twice", j.host);
    }
    assert_eq!(hosts.len(), 20);
}

#[test]
fn robots_first_then_rules_and_crawl_delay() {
    let mut f = frontier(true);
    let t = Instant::now();
    f.push(cand("http://a.org/private/x", 0), t);
    f.push(cand("http://a.org/public", 0), t);
    let r = job(f.next(t));
    assert_eq!(r.url.as_str(), "http://a.org/robots.txt");
    assert!(matches!(r.kind, JobKind::Robots { .. }));
    let body = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n".to_vec();
    f.robots_result(&r, RobotsOutcome::Fetched { status: 200, body }, t);
    assert_eq!(f.host_delay("a.org"), Some(Duration::from_secs(2)));
    assert!(matches!(f.next(t + DELAY), Next::Wait(_)));
    let p = job(f.next(t + Duration::from_secs(2)));
    assert_eq!(p.url.path(), "/public");
    assert_eq!(f.counters().robots_denied, 1);
}

#[test]
fn robots_4xx_allows_all_and_5xx_disallows_then_gives_up() {
    let mut f = frontier(true);
    let t = Instant::now();
    f.push(cand("http://a.org/x", 0), t);
    f.push(cand("http://b.org/y", 0), t);
    let ra = job(f.next(t));
    let rb = job(f.next(t));
    f.robots_result(
        &ra,
        RobotsOutcome::Fetched {
            status: 404,
            body: vec![],
        },
        t,
    );
    f.robots_result(
        &rb,
        RobotsOutcome::Fetched {
            status: 503,
            body: vec![],
        },
        t,
    );
    let p = job(f.next(t + DELAY));
    assert_eq!(p.url.as_str(), "http://a.org/x");
    f.complete(&p.host, t + DELAY);
    // b.org: nothing until the retry time, then robots.txt again.
    assert!(matches!(f.next(t + Duration::from_secs(1)), Next::Wait(_)));
    let mut now = t;
    for _ in 1..MAX_ROBOTS_ATTEMPTS {
        now += Duration::from_secs(600);
        let again = job(f.next(now));
        assert_eq!(again.url.as_str(), "http://b.org/robots.txt");
        f.robots_result(&again, RobotsOutcome::Unreachable, now);
    }
    now += Duration::from_secs(600);
    assert!(matches!(f.next(now), Next::Exhausted));
    assert_eq!(f.counters().robots_unavailable, 1);
}

#[test]
fn robots_redirects_are_followed_a_bounded_number_of_times() {
    let mut f = frontier(true);
    let t = Instant::now();
    f.push(cand("http://a.org/x", 0), t);
    let mut r = job(f.next(t));
    let mut now = t;
    for _ in 0..MAX_ROBOTS_REDIRECTS {
        let to = Url::parse("https://a.org/robots.txt").unwrap();
        f.robots_result(&r, RobotsOutcome::Redirect(to), now);
        now += DELAY;
        r = job(f.next(now));
        assert_eq!(r.url.as_str(), "https://a.org/robots.txt");
    }
    let to = Url::parse("https://a.org/robots.txt").unwrap();
    f.robots_result(&r, RobotsOutcome::Redirect(to), now);
    now += DELAY;
    // Too many hops: treated as unavailable (allow all), the page runs.
    assert_eq!(job(f.next(now)).url.as_str(), "http://a.org/x");
}

#[test]
fn retry_delays_the_host_and_keeps_the_attempt_count() {
    let mut f = frontier(false);
    let t = Instant::now();
    f.push(cand("http://a.org/x", 0), t);
    let j = job(f.next(t));
    f.retry(j, t, Duration::from_secs(2));
    assert!(matches!(f.next(t + Duration::from_secs(1)), Next::Wait(_)));
    let again = job(f.next(t + Duration::from_secs(2)));
    assert_eq!(again.attempt, 1);
}

#[test]
fn a_job_put_back_at_the_page_target_stays_queued_as_it_was() {
    let mut f = frontier(false);
    let t = Instant::now();
    f.push(cand("http://a.org/x", 3), t);
    let j = job(f.next(t));
    assert_eq!(f.queued(), 0);
    f.put_back(j, t);
    assert_eq!(f.queued(), 1);
    // After the host's delay (a request was made), the same URL, depth and attempt count.
    assert!(matches!(f.next(t), Next::Wait(_)));
    let again = job(f.next(t + DELAY));
    assert_eq!(
        (again.url.as_str(), again.depth, again.attempt),
        ("http://a.org/x", 3, 0)
    );
}

#[test]
fn drop_origin_removes_only_that_origin() {
    let mut f = frontier(false);
    let t = Instant::now();
    f.push(cand("https://a.org/1", 0), t);
    f.push(cand("https://a.org/2", 0), t);
    f.push(cand("http://a.org/3", 0), t);
    assert_eq!(f.drop_origin("a.org", "https://a.org"), 2);
    assert_eq!(f.queued(), 1);
    assert_eq!(job(f.next(t)).url.as_str(), "http://a.org/3");
}

#[test]
fn a_refused_robots_fetch_gives_the_origin_up_at_once() {
    let mut f = frontier(true);
    let t = Instant::now();
    f.push(cand("http://a.org/x", 0), t);
    let r = job(f.next(t));
    f.robots_result(&r, RobotsOutcome::Refused, t);
    assert!(matches!(f.next(t + DELAY), Next::Exhausted));
    assert_eq!(f.counters().robots_unavailable, 1);
}

fn config(obey: bool) -> FrontierConfig {
    FrontierConfig {
        delay: DELAY,
        max_delay: Duration::from_secs(30),
        robots_agent: "trawl".into(),
        obey_robots: obey,
        robots_retry: Duration::from_secs(5),
        politeness: PolitenessKey::Host,
        sitemaps: false,
        order: CrawlOrder::Bfs,
    }
}

fn reopen(dir: &std::path::Path, obey: bool) -> Frontier {
    Frontier::open(
        config(obey),
        Box::new(CrawlDb::open(dir).unwrap()),
        Instant::now(),
    )
    .unwrap()
}

/// The frontier saved in `dir`, with `config`.
fn open_with(dir: &std::path::Path, config: FrontierConfig, t: Instant) -> Frontier {
    Frontier::open(config, Box::new(CrawlDb::open(dir).unwrap()), t).unwrap()
}

fn drain(f: &mut Frontier, mut t: Instant) -> Vec<String> {
    let mut urls = Vec::new();
    loop {
        match f.next(t) {
            Next::Job(j) => {
                urls.push(j.url.to_string());
                f.complete(&j.host, t);
            }
            Next::Wait(at) => t = at,
            Next::Idle | Next::Exhausted => return urls,
        }
    }
}

#[test]
fn a_checkpoint_keeps_queue_seen_set_robots_and_in_flight_pages() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    {
        let mut f = reopen(dir.path(), true);
        f.push(cand("http://a.org/private/1", 0), t);
        f.push(cand("http://a.org/2", 1), t);
        f.push(cand("http://a.org/3", 2), t);
        let r = job(f.next(t));
        assert_eq!(r.url.as_str(), "http://a.org/robots.txt");
        let body = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 3\n".to_vec();
        f.robots_result(&r, RobotsOutcome::Fetched { status: 200, body }, t);
        let later = t + Duration::from_secs(3);
        let page = job(f.next(later));
        assert_eq!(page.url.as_str(), "http://a.org/2");
        f.push(cand("http://b.org/1", 0), t);
        // Still being fetched at the save point.
        f.checkpoint(&[("extra", b"x")]).unwrap();
        assert_eq!(f.saved_meta("extra").unwrap().as_deref(), Some(&b"x"[..]));
        // After the save point: done and a new URL, both lost in a crash.
        f.complete(&page.host, later);
        f.push(cand("http://c.org/lost", 0), later);
    }
    let mut f = reopen(dir.path(), false);
    assert_eq!(f.host_delay("a.org"), Some(Duration::from_secs(3)));
    assert_eq!(f.counters().robots_denied, 1);
    // Seen, so not queued again; c.org was never committed.
    assert_eq!(f.push(cand("http://a.org/3", 0), t), Admit::Seen);
    assert_eq!(f.push(cand("http://b.org/1", 0), t), Admit::Seen);
    assert_eq!(f.queued(), 3);
    // The in-flight page comes back; the denied one does not.
    let mut got = drain(&mut f, Instant::now());
    got.sort();
    assert_eq!(got, ["http://a.org/2", "http://a.org/3", "http://b.org/1"]);
    assert_eq!(f.push(cand("http://c.org/lost", 0), t), Admit::Queued);
}

#[test]
fn take_queued_removes_exactly_that_url() {
    let mut f = frontier(false);
    let t = Instant::now();
    f.push(cand("http://a.org/1", 0), t);
    f.push(cand("http://a.org/2", 0), t);
    let taken = f
        .take_queued(&Url::parse("http://a.org/2").unwrap())
        .unwrap();
    assert_eq!((taken.host.as_str(), taken.depth), ("a.org", 0));
    assert!(f
        .take_queued(&Url::parse("http://a.org/2").unwrap())
        .is_none());
    assert!(f
        .take_queued(&Url::parse("http://z.org/").unwrap())
        .is_none());
    assert_eq!(drain(&mut f, t), ["http://a.org/1"]);
    // A retried URL is found under its new queue entry.
    f.push(cand("http://a.org/3", 0), t);
    let j = job(f.next(t + DELAY));
    f.retry(j, t + DELAY, Duration::from_secs(1));
    let again = f
        .take_queued(&Url::parse("http://a.org/3").unwrap())
        .unwrap();
    assert_eq!(again.attempt, 1);
    assert_eq!(f.queued(), 0);
}

fn grouped(key: PolitenessKey) -> Frontier {
    let config = FrontierConfig {
        politeness: key,
        ..config(false)
    };
    Frontier::open(config, Box::new(CrawlDb::in_memory()), Instant::now())
        .unwrap()
        .with_seed(7)
}

#[test]
fn a_domain_group_is_served_as_one_host() {
    let mut f = grouped(PolitenessKey::Domain);
    let t = Instant::now();
    f.push(cand("http://a.example.org/1", 0), t);
    f.push(cand("http://b.example.org/1", 0), t);
    f.push(cand("http://other.org/1", 0), t);
    let first = job(f.next(t));
    // The other host of the group is parked while the first runs; other.org is not.
    let second = job(f.next(t));
    assert_eq!(second.host, "other.org", "{first:?} {second:?}");
    assert!(matches!(f.next(t), Next::Idle));
    f.complete(&first.host, t);
    // The group's next request waits the delay, whichever host it is for.
    assert!(matches!(f.next(t), Next::Wait(at) if at == t + DELAY));
    let third = job(f.next(t + DELAY));
    assert_ne!(third.host, first.host);
    assert!(third.host.ends_with("example.org"));
}

#[test]
fn ip_politeness_resolves_each_name_first() {
    let mut f = grouped(PolitenessKey::Ip);
    let t = Instant::now();
    f.push(cand("http://a.test/1", 0), t);
    f.push(cand("http://b.test/1", 0), t);
    let ra = job(f.next(t));
    let rb = job(f.next(t));
    assert_eq!(
        (ra.kind.clone(), rb.kind.clone()),
        (JobKind::Resolve, JobKind::Resolve)
    );
    let ip: std::net::IpAddr = "127.0.0.5".parse().unwrap();
    f.resolved(&ra.host, Some(ip), t);
    f.resolved(&rb.host, Some(ip), t);
    // Both names are on one address: one request at a time, the delay between them.
    let p1 = job(f.next(t));
    assert_eq!(p1.kind, JobKind::Page);
    assert!(matches!(f.next(t), Next::Idle));
    f.complete(&p1.host, t);
    assert!(matches!(f.next(t), Next::Wait(at) if at == t + DELAY));
    let p2 = job(f.next(t + DELAY));
    assert_ne!(p1.host, p2.host);
    // A name that does not resolve keeps its own clock (its fetch reports the DNS error).
    f.push(cand("http://c.test/1", 0), t);
    let rc = job(f.next(t + DELAY));
    f.resolved(&rc.host, None, t + DELAY);
    assert_eq!(job(f.next(t + DELAY)).host, "c.test");
}

#[test]
fn path_depth_order_serves_shallow_urls_first_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let config = FrontierConfig {
        order: CrawlOrder::PathDepth,
        ..config(false)
    };
    let t = Instant::now();
    {
        let mut f = open_with(dir.path(), config.clone(), t);
        for u in [
            "http://a.org/a/b/c",
            "http://a.org/x",
            "http://a.org/a/b",
            "http://a.org/y/z/",
        ] {
            f.push(cand(u, 1), t);
        }
        f.checkpoint(&[]).unwrap();
    }
    let mut f = open_with(dir.path(), config, t);
    let order = drain(&mut f, t);
    assert_eq!(
        order,
        [
            "http://a.org/x",
            "http://a.org/a/b",
            "http://a.org/y/z/",
            "http://a.org/a/b/c"
        ]
    );
}

#[test]
fn a_host_with_only_a_sitemap_is_resolved_then_served() {
    let config = FrontierConfig {
        politeness: PolitenessKey::Ip,
        sitemaps: true,
        ..config(false)
    };
    let mut f = Frontier::open(config, Box::new(CrawlDb::in_memory()), Instant::now()).unwrap();
    let t = Instant::now();
    f.queue_sitemap(Url::parse("http://maps.test/sitemap.xml").unwrap(), 0, t);
    let r = job(f.next(t));
    assert_eq!(r.kind, JobKind::Resolve);
    assert_eq!(r.url.as_str(), "http://maps.test/sitemap.xml");
    f.resolved(&r.host, Some("127.0.0.9".parse().unwrap()), t);
    let s = job(f.next(t));
    assert_eq!(s.kind, JobKind::Sitemap { nesting: 0 });
    f.complete(&s.host, t);
    assert!(matches!(f.next(t + DELAY), Next::Exhausted));
}

#[test]
fn backlinks_order_serves_linked_urls_and_hosts_first_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let config = FrontierConfig {
        order: CrawlOrder::Backlinks,
        ..config(false)
    };
    let t = Instant::now();
    {
        let mut f = open_with(dir.path(), config.clone(), t);
        // Pages of four other hosts link into a.org and b.org.
        let pages: [(&str, &[&str]); 4] = [
            ("p.org", &["a.org/x", "a.org/y", "a.org/z", "b.org/1"]),
            ("q.org", &["a.org/z", "a.org/y", "b.org/2"]),
            ("r.org", &["a.org/z", "b.org/1"]),
            ("s.org", &["b.org/3"]),
        ];
        for (from, links) in pages {
            let links = links
                .iter()
                .map(|l| Url::parse(&format!("http://{l}")).unwrap());
            f.push_links(from, links, t, |u| Some(cand(u.as_str(), 1)));
        }
        // A page of a.org itself does not raise a.org.
        let z = Url::parse("http://a.org/z").unwrap();
        f.push_links("a.org", [z], t, |u| Some(cand(u.as_str(), 2)));
        f.checkpoint(&[]).unwrap();
    }
    let mut f = open_with(dir.path(), config, t);
    let first = job(f.next(t));
    assert_eq!(
        first.url.as_str(),
        "http://b.org/1",
        "b.org is linked from 4 pages of other hosts, a.org from 3; b.org/1 from 2 pages"
    );
    f.complete("b.org", t);
    let order = drain(&mut f, t);
    let of = |host: &str| -> Vec<String> {
        order.iter().filter(|u| u.contains(host)).cloned().collect()
    };
    // Most backlinks first (z: 4, y: 2, x: 1), then the oldest.
    assert_eq!(
        of("a.org"),
        ["http://a.org/z", "http://a.org/y", "http://a.org/x"]
    );
    assert_eq!(of("b.org"), ["http://b.org/2", "http://b.org/3"]);
}

#[test]
fn operator_overview_delay_and_release() {
    let mut f = frontier(false);
    let t = Instant::now();
    for i in 0..3 {
        f.push(cand(&format!("http://a.org/{i}"), 0), t);
    }
    f.push(cand("http://b.org/", 0), t);
    let first = job(f.next(t));
    let o = f.host_overview(t, 1);
    assert_eq!((o.seen, o.active, o.waiting), (2, 1, 1));
    assert_eq!(o.busiest.len(), 1);
    assert_eq!(o.busiest[0].name, "a.org");
    // Released without a request: the host may run again at once.
    f.release(&first.host, t);
    let (j2, j3) = (job(f.next(t)), job(f.next(t)));
    assert!(j2.host == first.host || j3.host == first.host);
    // A longer delay applies from the next completion.
    f.set_delay(Duration::from_secs(3));
    assert_eq!(f.delay(), Duration::from_secs(3));
    assert_eq!(f.host_delay("a.org"), Some(Duration::from_secs(3)));
    f.complete(&j2.host, t);
    f.complete(&j3.host, t);
    match f.next(t) {
        Next::Wait(at) => assert_eq!(at, t + Duration::from_secs(3)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn requisites_only_serves_requisites_then_ends_without_spinning() {
    let mut f = frontier(false);
    let t = Instant::now();
    f.push(cand("http://a.org/page", 1), t);
    f.push(
        Candidate {
            requisite: 1,
            ..cand("http://a.org/img.png", 2)
        },
        t,
    );
    f.requisites_only();
    // A sitemap found now is not fetched (it would keep the host scheduled for nothing).
    f.queue_sitemap(Url::parse("http://a.org/sitemap.xml").unwrap(), 0, t);
    let r = job(f.next(t));
    assert_eq!(r.kind, JobKind::Requisite { hops: 1 });
    f.complete(&r.host, t);
    assert!(matches!(f.next(t + DELAY), Next::Exhausted));
    assert_eq!(f.queued(), 1, "the page stays queued");
}

#[test]
fn links_seen_before_a_restart_are_found_late_fetched_once_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    {
        let mut f = reopen(dir.path(), false);
        f.push(cand("http://a.org/1", 0), t);
        f.push(cand("http://a.org/2", 0), t);
        let page = job(f.next(t));
        f.complete(&page.host, t);
        f.checkpoint(&[]).unwrap();
    }
    // After a restart the cache of recent links is empty: links to a fetched and a queued
    // URL are admitted without a read of the seen set and found out before they are served.
    let mut f = reopen(dir.path(), false);
    let links =
        ["http://a.org/1", "http://a.org/2", "http://a.org/3"].map(|u| Url::parse(u).unwrap());
    assert_eq!(
        f.push_links("a.org", links, t, |u| Some(cand(u.as_str(), 1))),
        0
    );
    assert_eq!(f.queued(), 4);
    let got = drain(&mut f, t + Duration::from_secs(1));
    assert_eq!(got, ["http://a.org/2", "http://a.org/3"]);
    assert_eq!(f.take_late_duplicates(), 2);
    assert_eq!(f.queued(), 0);
}

/// Runs `f` with `slots` fetches at a time, each taking `took`, until `pages` pages are done;
/// every robots.txt is empty. Returns the jobs in the order they started.
fn run_slots(f: &mut Frontier, slots: usize, took: Duration, pages: usize) -> Vec<Job> {
    let mut t = Instant::now();
    let mut started = Vec::new();
    let mut running: Vec<(Instant, Job)> = Vec::new();
    let mut done = 0;
    while done < pages {
        while running.len() < slots {
            match f.next(t) {
                Next::Job(j) => {
                    started.push(j.clone());
                    running.push((t + took, j));
                }
                _ => break,
            }
        }
        let Some(i) = (0..running.len()).min_by_key(|&i| running[i].0) else {
            match f.next(t) {
                Next::Wait(at) => {
                    t = at;
                    continue;
                }
                other => panic!("nothing running and {other:?}"),
            }
        };
        let (end, j) = running.remove(i);
        t = t.max(end);
        if matches!(j.kind, JobKind::Robots { .. }) {
            let body = Vec::new();
            f.robots_result(&j, RobotsOutcome::Fetched { status: 200, body }, t);
        } else {
            f.complete(&j.host, t);
            done += 1;
        }
    }
    started
}

#[test]
fn hosts_under_way_go_on_before_more_hosts_are_opened_and_each_yields_after_its_turn() {
    let mut f = frontier(true);
    let t = Instant::now();
    for h in 0..50 {
        for p in 0..40 {
            f.push(cand(&format!("http://h{h}.org/{p}"), 0), t);
        }
    }
    // Two slots, 200 ms per fetch, 100 ms delay: a slow server, like most of the web.
    let jobs = run_slots(&mut f, 2, Duration::from_millis(200), 200);
    let robots = |jobs: &[Job]| {
        jobs.iter()
            .filter(|j| matches!(j.kind, JobKind::Robots { .. }))
            .count()
    };
    // The first 40 pages cost the robots.txt of the few hosts that keep both slots busy, not
    // of all 50 hosts (robots.txt first for every host served in turn).
    let upto = jobs
        .iter()
        .enumerate()
        .filter(|(_, j)| j.kind == JobKind::Page)
        .nth(39)
        .map(|(i, _)| i)
        .unwrap();
    assert!(robots(&jobs[..=upto]) <= 4, "{}", robots(&jobs[..=upto]));
    // Every host opened ran at most one turn before the next hosts were opened, so 200 pages
    // reached at least 200 / TURN hosts.
    let hosts: HashSet<&str> = jobs.iter().map(|j| j.host.as_str()).collect();
    assert!(hosts.len() >= 200 / TURN as usize, "{} hosts", hosts.len());
    let mut per_host = std::collections::HashMap::<&str, u32>::new();
    for j in jobs.iter().filter(|j| j.kind == JobKind::Page) {
        *per_host.entry(j.host.as_str()).or_default() += 1;
    }
    assert!(per_host.values().all(|&n| n <= TURN), "{per_host:?}");
}
