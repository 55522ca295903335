//! Scheduling: deduplication, one fetch per host at a time with its delay, breadth first
//! within a host, hosts in parallel, retries, groups of hosts, the operator's changes.

use super::*;

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
fn a_slow_answer_rests_its_host_in_proportion_with_a_delay_factor() {
    let config = FrontierConfig {
        delay_factor: 4.0,
        ..config(false)
    };
    let mut f = Frontier::open(config, Box::new(CrawlDb::in_memory()), Instant::now()).unwrap();
    let t0 = Instant::now();
    for path in ["/1", "/2", "/3"] {
        f.push(cand(&format!("http://a.org{path}"), 0), t0);
    }
    let wait_after = |f: &mut Frontier, took: Duration, done: Instant| {
        let j = job(f.next(done - took));
        f.answered(&j.host, done, took);
        match f.next(done) {
            Next::Wait(at) => at - done,
            other => panic!("{other:?}"),
        }
    };
    // 4 x 300 ms, then the configured delay when 4 x the time is shorter.
    let t1 = t0 + Duration::from_millis(300);
    assert_eq!(
        wait_after(&mut f, Duration::from_millis(300), t1),
        Duration::from_millis(1200)
    );
    let t2 = t1 + Duration::from_millis(1201);
    assert_eq!(wait_after(&mut f, Duration::from_millis(1), t2), DELAY);
}

/// A frontier with `--random-wait` (`robots`: robots.txt asked first) and a.org/0..40 queued.
fn random_waits(robots: bool, t: Instant) -> Frontier {
    let config = FrontierConfig {
        random_wait: true,
        ..config(robots)
    };
    let mut f = Frontier::open(config, Box::new(CrawlDb::in_memory()), t).unwrap();
    for p in 0..40 {
        f.push(cand(&format!("http://a.org/{p}"), 0), t);
    }
    f
}

/// The waits after `n` answers of a.org, from `t`.
fn waits_after_answers(f: &mut Frontier, mut t: Instant, n: usize) -> Vec<Duration> {
    let mut waits = Vec::new();
    for _ in 0..n {
        let j = job(f.next(t));
        f.answered(&j.host, t, Duration::from_millis(1));
        match f.next(t) {
            Next::Wait(at) => {
                waits.push(at - t);
                t = at;
            }
            other => panic!("{other:?}"),
        }
    }
    waits
}

#[test]
fn a_random_wait_varies_the_delay_from_half_to_one_and_a_half_of_it() {
    let t = Instant::now();
    let mut f = random_waits(false, t);
    let waits = waits_after_answers(&mut f, t, 39);
    assert!(
        waits.iter().all(|w| *w >= DELAY / 2 && *w < DELAY * 3 / 2),
        "{waits:?}"
    );
    // Drawn, not fixed: 39 waits from a continuous range are not all alike.
    assert!(waits.iter().any(|w| *w != waits[0]), "{waits:?}");
}

#[test]
fn a_random_wait_never_undercuts_a_crawl_delay_shorter_than_the_delay() {
    let t = Instant::now();
    let mut f = random_waits(true, t);
    let r = job(f.next(t));
    // 0.08 s: under the 0.1 s delay, above the draw's 0.05 s floor.
    let body = b"User-agent: *\nCrawl-delay: 0.08\n".to_vec();
    f.robots_result(&r, robots_file(body), t);
    let waits = waits_after_answers(&mut f, t + DELAY * 2, 39);
    let floor = Duration::from_micros(79_990); // 0.08 as an f32
    assert!(waits.iter().all(|w| *w >= floor), "{waits:?}");
    assert!(waits.iter().any(|w| *w > floor), "{waits:?}");
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
