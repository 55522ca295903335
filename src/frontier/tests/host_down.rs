//! A host whose connections fail: found down after three in a row, its URLs kept while
//! probes at doubling waits look for it, given up past the limit.

use super::*;
use crate::frontier::host_health::{Silence, DOWN_AFTER};

const S: Duration = Duration::from_secs(1);
const LIMIT: Duration = Duration::from_secs(60);

/// A frontier with `a.org/1` .. `a.org/n` queued, no robots.txt, and a.org answered once
/// (its seed, fetched).
fn site(n: usize, t: Instant) -> Frontier {
    let mut f = unreached_site(n, t);
    let seed = job(f.next(t));
    assert_eq!(f.host_reached(&seed.host, t), None);
    f.answered(&seed.host, t - DELAY, Duration::ZERO);
    f
}

/// [`site`] before any answer from a.org.
fn unreached_site(n: usize, t: Instant) -> Frontier {
    let mut f = frontier(false);
    for i in 0..=n {
        f.push(cand(&format!("http://a.org/{i}"), 1), t);
    }
    f
}

/// Fails connections to the next job's host until the host is down; returns the job that
/// found it down, and when.
fn fail_until_down(f: &mut Frontier, mut t: Instant) -> (Job, Instant) {
    for n in 1..=DOWN_AFTER {
        let j = job(f.next(t));
        if f.connection_failed(&j.host) {
            assert_eq!(n, DOWN_AFTER);
            return (j, t);
        }
        f.retry(j, t, S);
        t += S;
    }
    unreachable!("down after {DOWN_AFTER}")
}

#[test]
fn three_failed_connections_in_a_row_find_a_host_down_and_keep_its_urls() {
    let t = Instant::now();
    let mut f = site(5, t);
    let (j, t) = fail_until_down(&mut f, t);
    let down = f.wait_for_host(j, t, S, LIMIT);
    assert_eq!(
        down,
        HostDown::Waiting {
            wait: 4 * S,
            first: true
        }
    );
    assert_eq!(f.queued(), 5, "nothing is lost while the host is down");
    // Nothing runs before the probe.
    assert!(matches!(f.next(t + 3 * S), Next::Wait(_)));
    let probe = job(f.next(t + 4 * S));
    assert_eq!(probe.attempt, 0, "the tries the host spent are given back");
    // A second failure waits twice as long, and is not the first.
    assert!(f.connection_failed(&probe.host));
    let down = f.wait_for_host(probe, t + 4 * S, S, LIMIT);
    assert_eq!(
        down,
        HostDown::Waiting {
            wait: 8 * S,
            first: false
        }
    );
}

#[test]
fn an_answer_ends_the_outage_and_the_count() {
    let t = Instant::now();
    let mut f = site(3, t);
    let (j, t) = fail_until_down(&mut f, t);
    f.wait_for_host(j, t, S, LIMIT);
    let probe = job(f.next(t + 4 * S));
    assert_eq!(f.host_reached(&probe.host, t + 4 * S), Some(4 * S));
    f.answered(&probe.host, t + 4 * S, Duration::ZERO);
    // Counting starts again: two failures are not enough.
    let j = job(f.next(t + 5 * S));
    assert!(!f.connection_failed(&j.host));
    assert_eq!(f.host_reached(&j.host, t + 5 * S), None);
}

#[test]
fn probes_stop_at_the_limit_and_the_host_is_given_up_with_its_urls() {
    let t = Instant::now();
    let mut f = site(4, t);
    let limit = 10 * S;
    let (j, t0) = fail_until_down(&mut f, t);
    let mut t = t0;
    let mut down = f.wait_for_host(j, t, S, limit);
    let mut waits = Vec::new();
    while let HostDown::Waiting { wait, .. } = down {
        waits.push(wait);
        t += wait;
        let probe = job(f.next(t));
        assert!(f.connection_failed(&probe.host));
        down = f.wait_for_host(probe, t, S, limit);
    }
    // 4 s, then the 8 s cut to what is left of the limit.
    assert_eq!(waits, vec![4 * S, 6 * S]);
    assert_eq!(
        down,
        HostDown::GivenUp {
            dropped: 4,
            down_for: limit
        }
    );
    assert_eq!(f.queued(), 0);
    assert_eq!(f.counters().host_down, 4);
    assert_eq!(f.counters().hosts_down, 1);
    // A link to it found later is dropped too, and counted; the crawl ends.
    f.push(cand("http://a.org/later", 2), t);
    assert!(matches!(f.next(t + limit), Next::Exhausted));
    assert_eq!(f.counters().host_down, 5);
}

#[test]
fn a_limit_of_zero_gives_the_host_up_when_it_is_found_down() {
    let t = Instant::now();
    let mut f = site(3, t);
    let (j, t) = fail_until_down(&mut f, t);
    assert!(matches!(
        f.wait_for_host(j, t, S, Duration::ZERO),
        HostDown::GivenUp { dropped: 3, .. }
    ));
}

#[test]
fn other_hosts_are_not_held_by_one_that_is_down() {
    let t = Instant::now();
    let mut f = site(2, t);
    let (j, t) = fail_until_down(&mut f, t);
    f.wait_for_host(j, t, S, LIMIT);
    f.push(cand("http://b.org/1", 1), t);
    assert_eq!(job(f.next(t)).host, "b.org");
}

#[test]
fn a_host_that_never_answered_is_given_up_when_found_down() {
    let t = Instant::now();
    let mut f = unreached_site(2, t);
    let (j, t) = fail_until_down(&mut f, t);
    assert!(matches!(
        f.wait_for_host(j, t, S, LIMIT),
        HostDown::GivenUp { dropped: 3, .. }
    ));
}

/// A crawl resumed during a short outage: its host answered in an earlier run, so it is waited
/// for, not given up with its URLs (which ended the crawl for good).
#[test]
fn a_host_that_answered_in_an_earlier_run_is_waited_for() {
    let t = Instant::now();
    let mut f = unreached_site(2, t);
    f.answered_before("a.org");
    let (j, t) = fail_until_down(&mut f, t);
    assert!(matches!(
        f.wait_for_host(j, t, S, LIMIT),
        HostDown::Waiting { first: true, .. }
    ));
    assert_eq!(f.queued(), 3);
}

#[test]
fn requests_a_host_leaves_unanswered_lose_their_retries_then_the_host_is_given_up() {
    let t = Instant::now();
    let mut f = site(5, t);
    let j = job(f.next(t));
    // Three in a row keep their retries (one URL slower than the timeout, tried three times).
    for n in 0..DOWN_AFTER {
        let at = t + n * S;
        assert_eq!(f.request_unanswered(&j, at, LIMIT), Silence::Retry);
    }
    // Then none, while nothing answers; any answer ends the streak.
    assert_eq!(f.request_unanswered(&j, t + 4 * S, LIMIT), Silence::NoRetry);
    f.host_reached(&j.host, t + 5 * S);
    for n in 0..DOWN_AFTER {
        let at = t + (6 + n) * S;
        assert_eq!(f.request_unanswered(&j, at, LIMIT), Silence::Retry);
    }
    // Silent for the limit: given up, its queued URLs dropped.
    let late = t + 6 * S + LIMIT;
    assert!(matches!(
        f.request_unanswered(&j, late, LIMIT),
        Silence::GivenUp { .. }
    ));
    assert_eq!(f.queued(), 0);
    assert_eq!(f.counters().hosts_down, 1);
}
