//! What a checkpoint keeps and a reopened frontier serves: queue, seen set, robots rules,
//! pages in flight, the order of ranked crawls, links found seen only after a restart.

use super::*;

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
        f.robots_result(&r, robots_file(body), t);
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

/// A saved frontier of a.org with `/1` fetched and `/2` queued.
fn one_fetched_one_queued(dir: &std::path::Path, t: Instant) {
    let mut f = reopen(dir, false);
    f.push(cand("http://a.org/1", 0), t);
    f.push(cand("http://a.org/2", 0), t);
    let page = job(f.next(t));
    f.complete(&page.host, t);
    f.checkpoint(&[]).unwrap();
}

/// Links to `/1`, `/2` (both seen before the restart) and a new `/3`, as a page gives them.
fn push_again_and_a_new_one(f: &mut Frontier, t: Instant) -> usize {
    let links =
        ["http://a.org/1", "http://a.org/2", "http://a.org/3"].map(|u| Url::parse(u).unwrap());
    f.push_links("a.org", links, t, |u| Some(cand(u.as_str(), 1)))
}

#[test]
fn links_seen_before_a_restart_are_found_late_fetched_once_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    one_fetched_one_queued(dir.path(), t);
    // After a restart the cache of recent links is empty: links to a fetched and a queued
    // URL are admitted without a read of the seen set and found out before they are served.
    let mut f = reopen(dir.path(), false);
    assert_eq!(push_again_and_a_new_one(&mut f, t), 0);
    assert_eq!(f.queued(), 4);
    let got = drain(&mut f, t + Duration::from_secs(1));
    assert_eq!(got, ["http://a.org/2", "http://a.org/3"]);
    assert_eq!(f.take_late_duplicates(), 2);
    assert_eq!(f.queued(), 0);
}

/// Late duplicates found while a save point writes its batch are off the saved counts: before,
/// each host was saved with them counted, and every resume reported more URLs queued (past the
/// size of the whole site after a few `--time-limit` runs).
#[test]
fn a_save_point_saves_the_counts_without_the_duplicates_its_batch_found() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    one_fetched_one_queued(dir.path(), t);
    {
        let mut f = reopen(dir.path(), false);
        push_again_and_a_new_one(&mut f, t);
        f.checkpoint(&[]).unwrap();
        assert_eq!(f.queued(), 2);
    }
    assert_eq!(reopen(dir.path(), false).queued(), 2);
}

#[test]
fn saved_robots_rules_are_fetched_again_on_resume_and_hold_meanwhile() {
    // A crawl resumed days later: its saved rules may be old, so the origin's robots.txt is
    // fetched again first; if that fails, the saved rules go on holding.
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    {
        let mut f = reopen(dir.path(), true);
        f.push(cand("http://a.org/1", 0), t);
        f.push(cand("http://a.org/private/2", 1), t);
        let r = job(f.next(t));
        f.robots_result(
            &r,
            robots_file(b"User-agent: *\nDisallow: /private/\n".to_vec()),
            t,
        );
        f.checkpoint(&[]).unwrap();
    }
    let mut f = reopen(dir.path(), true);
    let t = Instant::now() + Duration::from_secs(5);
    let again = job(f.next(t));
    assert_eq!(again.url.as_str(), "http://a.org/robots.txt");
    f.robots_result(&again, RobotsOutcome::Unreachable, t);
    let got = drain(&mut f, t + DELAY);
    assert_eq!(got, ["http://a.org/1"]);
    assert_eq!(f.counters().robots_denied, 1);
}

/// A frontier whose host a.org, one URL fetched and one queued, was saved with its next
/// request due an hour ahead (as by a clock an hour fast).
fn saved_an_hour_ahead() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fast = Instant::now() + Duration::from_secs(3600);
    let mut f = reopen(dir.path(), false);
    f.push(cand("http://a.org/1", 0), fast);
    f.push(cand("http://a.org/2", 0), fast);
    let page = job(f.next(fast));
    f.complete(&page.host, fast);
    f.checkpoint(&[]).unwrap();
    dir
}

/// A host's next-allowed time saved ahead of the clock (the clock was an hour fast, then set
/// right before the resume) waits no longer than `--max-delay` after the restart: it waited
/// ten minutes, with nothing fetched (found by an exploratory run with faketime).
#[test]
fn a_wait_saved_ahead_of_the_clock_is_no_longer_than_the_longest_delay() {
    let dir = saved_an_hour_ahead();
    let mut f = reopen(dir.path(), false);
    let max_delay = config(false).max_delay;
    let now = Instant::now();
    let Next::Wait(at) = f.next(now) else {
        panic!("a.org waits after the restart");
    };
    assert!(
        at <= now + max_delay + Duration::from_secs(1),
        "{:?}",
        at - now
    );
    assert_eq!(drain(&mut f, at), ["http://a.org/2"]);
}

/// Saved when the clock was an hour fast (the save point's own time tells): the hosts' times
/// are read an hour earlier, so a host waits its delay, not `--max-delay`.
#[test]
fn a_clock_set_back_since_the_save_is_taken_out_of_the_saved_times() {
    let dir = saved_an_hour_ahead();
    {
        // As if the save point's clock had been an hour fast too.
        let mut db = CrawlDb::open(dir.path()).unwrap();
        let saved = db.meta_get(META_NAME).unwrap().unwrap();
        let mut meta: FrontierMeta = serde_json::from_slice(&saved).unwrap();
        meta.saved_at_ms = meta.saved_at_ms.map(|ms| ms + 3_600_000);
        db.meta_put(META_NAME, &serde_json::to_vec(&meta).unwrap())
            .unwrap();
        db.checkpoint().unwrap();
    }
    let mut f = reopen(dir.path(), false);
    let now = Instant::now();
    let at = match f.next(now) {
        Next::Wait(at) => at,
        _ => now,
    };
    assert!(at <= now + DELAY + Duration::from_secs(1), "{:?}", at - now);
}
