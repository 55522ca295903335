//! robots.txt before a host's pages: its rules and Crawl-delay, failures, redirects, and a host
//! with only a sitemap.

use super::*;

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
    f.robots_result(&r, robots_file(body), t);
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
            retry_after: None,
        },
        t,
    );
    f.robots_result(
        &rb,
        RobotsOutcome::Fetched {
            status: 503,
            body: vec![],
            retry_after: None,
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
fn a_refused_robots_fetch_gives_the_origin_up_at_once() {
    let mut f = frontier(true);
    let t = Instant::now();
    f.push(cand("http://a.org/x", 0), t);
    let r = job(f.next(t));
    f.robots_result(&r, RobotsOutcome::Refused, t);
    assert!(matches!(f.next(t + DELAY), Next::Exhausted));
    assert_eq!(f.counters().robots_unavailable, 1);
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
fn a_robots_redirect_to_a_file_read_before_takes_its_rules_without_a_fetch() {
    let mut f = frontier(true);
    let t = Instant::now();
    f.push(cand("http://a.org/x", 0), t);
    let r = job(f.next(t));
    let body = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 1\n".to_vec();
    f.robots_result(&r, robots_file(body), t);
    f.push(cand("http://www.a.org/private/y", 0), t);
    f.push(cand("http://www.a.org/z", 0), t);
    let mut now = t;
    let mut fetched = Vec::new();
    while fetched.len() < 10 {
        match f.next(now) {
            Next::Job(j) if j.url.as_str() == "http://www.a.org/robots.txt" => {
                // www.a.org's robots.txt moves to a.org's, read already.
                let to = Url::parse("http://a.org/robots.txt").unwrap();
                f.robots_result(&j, RobotsOutcome::Redirect(to), now);
            }
            Next::Job(j) => {
                fetched.push(j.url.to_string());
                match j.kind {
                    JobKind::Robots { .. } => {
                        f.robots_result(&j, robots_file(b"User-agent: *\n".to_vec()), now);
                    }
                    _ => f.complete(&j.host, now),
                }
            }
            Next::Wait(at) => now = at,
            Next::Idle | Next::Exhausted => break,
        }
    }
    fetched.sort();
    assert_eq!(fetched, ["http://a.org/x", "http://www.a.org/z"]);
    assert_eq!(f.counters().robots_denied, 1);
    assert_eq!(f.host_delay("www.a.org"), Some(Duration::from_secs(1)));
}

#[test]
fn names_whose_robots_txt_moves_to_one_file_fetch_it_once_and_one_at_a_time() {
    let mut f = frontier(true);
    let t = Instant::now();
    for name in ["a1.org", "a2.org", "a3.org"] {
        f.push(cand(&format!("http://{name}/x"), 0), t);
    }
    let target = "http://canon.org/robots.txt";
    let mut now = t;
    let (mut target_fetches, mut in_flight, mut pages) = (0, Vec::new(), Vec::new());
    loop {
        match f.next(now) {
            Next::Job(j) if j.url.as_str() == target => {
                target_fetches += 1;
                in_flight.push(j);
            }
            Next::Job(j) if j.url.path() == "/robots.txt" => {
                let to = Url::parse(target).unwrap();
                f.robots_result(&j, RobotsOutcome::Redirect(to), now);
            }
            Next::Job(j) => {
                pages.push(j.url.to_string());
                f.complete(&j.host, now);
            }
            // Nothing else is ready while the one fetch of the target is in flight: it ends.
            Next::Wait(_) | Next::Idle if !in_flight.is_empty() => {
                assert_eq!(in_flight.len(), 1, "{in_flight:?}");
                let j = in_flight.pop().unwrap();
                let body = b"User-agent: *\nDisallow: /x\n".to_vec();
                f.robots_result(&j, robots_file(body), now);
            }
            Next::Wait(at) => now = at,
            Next::Idle | Next::Exhausted => break,
        }
    }
    // Before, each name fetched the file itself, all three at once.
    assert_eq!(target_fetches, 1);
    assert!(pages.is_empty(), "{pages:?}");
    assert_eq!(f.counters().robots_denied, 3);
}

#[test]
fn a_host_that_only_serves_what_pages_need_gets_no_sitemap_read() {
    let config = FrontierConfig {
        sitemaps: true,
        ..config(true)
    };
    let mut f = Frontier::open(config, Box::new(CrawlDb::in_memory()), Instant::now()).unwrap();
    let t = Instant::now();
    f.push(cand("http://site.org/", 0), t);
    f.push(
        Candidate {
            requisite: 1,
            ..cand("http://cdn.org/logo.png", 1)
        },
        t,
    );
    let mut now = t;
    let mut fetched = Vec::new();
    loop {
        match f.next(now) {
            Next::Job(j) => {
                fetched.push(j.url.to_string());
                match j.kind {
                    JobKind::Robots { .. } => {
                        let body = b"User-agent: *\nSitemap: /map.xml\n".to_vec();
                        f.robots_result(&j, robots_file(body), now);
                    }
                    _ => f.complete(&j.host, now),
                }
            }
            Next::Wait(at) => now = at,
            Next::Idle | Next::Exhausted => break,
        }
    }
    // Before, cdn.org's sitemap was fetched too, and every URL it listed dropped as out of
    // scope.
    assert!(
        fetched.contains(&"http://site.org/map.xml".to_string()),
        "{fetched:?}"
    );
    assert!(
        !fetched.contains(&"http://cdn.org/map.xml".to_string()),
        "{fetched:?}"
    );
    assert!(
        fetched.contains(&"http://cdn.org/logo.png".to_string()),
        "{fetched:?}"
    );
}

#[test]
fn two_names_whose_robots_txt_moves_to_each_others_keep_each_hosts_delay() {
    let mut f = frontier(true);
    let t = Instant::now();
    for p in 0..3 {
        f.push(cand(&format!("http://a.org/{p}"), 0), t);
        f.push(cand(&format!("http://b.org/{p}"), 0), t);
    }
    let mut now = t;
    // When each server (the URL's host, whoever asked) was last asked.
    let mut last: HashMap<String, Instant> = HashMap::new();
    let mut asked = 0;
    loop {
        match f.next(now) {
            Next::Job(j) => {
                asked += 1;
                let server = j.url.host_str().unwrap().to_string();
                if let Some(before) = last.insert(server.clone(), now) {
                    assert!(
                        now - before >= DELAY,
                        "{server} asked again after {:?}",
                        now - before
                    );
                }
                match (&j.kind, server.as_str()) {
                    (JobKind::Robots { hops: 0, .. }, "a.org") => {
                        let to = Url::parse("http://b.org/robots.txt").unwrap();
                        f.robots_result(&j, RobotsOutcome::Redirect(to), now);
                    }
                    (JobKind::Robots { hops: 0, .. }, "b.org") => {
                        let to = Url::parse("http://a.org/robots.txt").unwrap();
                        f.robots_result(&j, RobotsOutcome::Redirect(to), now);
                    }
                    (JobKind::Robots { .. }, _) => {
                        f.robots_result(&j, robots_file(b"User-agent: *\n".to_vec()), now);
                    }
                    _ => f.complete(&j.host, now),
                }
            }
            Next::Wait(at) => now = at,
            Next::Idle | Next::Exhausted => break,
        }
    }
    assert!(asked >= 8, "{asked}");
}

#[test]
fn one_host_takes_no_more_than_its_share_of_the_runs_sitemaps() {
    let config = FrontierConfig {
        sitemaps: true,
        ..config(false)
    };
    let mut f = Frontier::open(config, Box::new(CrawlDb::in_memory()), Instant::now()).unwrap();
    let t = Instant::now();
    let extra = 5;
    use crate::frontier::sitemaps::MAX_SITEMAPS_PER_HOST;
    for i in 0..MAX_SITEMAPS_PER_HOST + extra {
        f.queue_sitemap(
            Url::parse(&format!("http://spam.test/s{i}.xml")).unwrap(),
            0,
            t,
        );
    }
    // Another site's sitemap, named after them, is still fetched (it was not, past 10,000).
    f.queue_sitemap(Url::parse("http://good.test/sitemap.xml").unwrap(), 0, t);
    let queued = |name: &str| {
        f.hosts
            .iter()
            .find(|q| &*q.name == name)
            .map_or(0, |q| q.sitemaps.len())
    };
    assert_eq!(queued("spam.test"), MAX_SITEMAPS_PER_HOST as usize);
    assert_eq!(queued("good.test"), 1);
    assert_eq!(f.counters().sitemaps_over_budget, u64::from(extra));
}
