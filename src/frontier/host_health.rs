//! Whether a host answers. Connections that fail in a row, whatever the URL, find a host
//! down; its URLs then wait in their queue while one request at a time (a probe, at growing
//! intervals) finds whether it is back, and after `--host-down-limit` without an answer the
//! host is given up for the run: its URLs are dropped and counted. A host that has not
//! answered in this crawl (in this run, or an earlier run of a resumed one) is given up when
//! found down. Without this, a host that
//! died mid-crawl was retried URL by URL, each URL failing on its own (the first hour of an
//! outage lost every URL tried in it, and a silent host cost a connect timeout per try).
//!
//! A host that takes connections and requests but sends nothing back (hung behind a listening
//! socket, or a tarpit) is not parked so, since its silence may be its URLs' (one directory
//! that hangs): after [`DOWN_AFTER`] requests in a row got no byte back, its next silent URLs
//! fail without retries, and when it has been silent for `--host-down-limit` it is given up. Any
//! answer ends the streak.

use std::time::{Duration, Instant};

use super::outcomes::Ended;
use super::politeness::retry_backoff;
use super::{Frontier, Job};

/// Connections in a row, to any of a host's URLs, that fail before the host is taken for
/// down. A connection does not depend on the URL, so three failures are the host's.
pub const DOWN_AFTER: u32 = 3;

/// A host's record of failed connections.
#[derive(Debug, Default, Clone)]
pub struct HostHealth {
    /// Connections that failed since the host last answered.
    failures: u32,
    /// When it was found down (`None`: it is not).
    down_since: Option<Instant>,
    /// Probes that failed since then.
    probes: u32,
    /// Given up for the rest of the run: its URLs are dropped as they come up.
    given_up: bool,
    /// It answered in this run: only then is it waited for when found down.
    answered: bool,
    /// Requests in a row that got no byte back, and since when.
    silent: u32,
    silent_since: Option<Instant>,
}

impl HostHealth {
    /// True once the host was given up for this run.
    pub fn given_up(&self) -> bool {
        self.given_up
    }
}

/// What a request that got no byte back makes of its URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Silence {
    /// Retried as any failed fetch is.
    Retry,
    /// Not retried: URLs before it got no answer either.
    NoRetry,
    /// The host was silent for the limit: given up, its queued URLs (`dropped`, this one
    /// included) dropped.
    GivenUp {
        /// URLs dropped.
        dropped: usize,
    },
}

/// What a failed connection made of a host that is down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostDown {
    /// The URL went back to its queue (its tries given back: the host failed, not the URL),
    /// and the host's next request, a probe, is in `wait`. `first`: the host was just found
    /// down.
    Waiting {
        /// Until the probe.
        wait: Duration,
        /// Found down by this failure.
        first: bool,
    },
    /// Down for `down_for`, past the limit: the host is given up for this run, and its
    /// queued URLs (`dropped`, the failed one included) are dropped.
    GivenUp {
        /// URLs dropped.
        dropped: usize,
        /// How long it was down.
        down_for: Duration,
    },
}

impl Frontier {
    /// Counts a failed connection to `host`. True when the host is (now) down: then
    /// [`Frontier::wait_for_host`] takes the job, instead of a retry of its own.
    pub fn connection_failed(&mut self, host: &str) -> bool {
        let Some(&id) = self.ids.get(host) else {
            return false;
        };
        let health = &mut self.hosts[id as usize].health;
        health.failures = health.failures.saturating_add(1);
        health.failures >= DOWN_AFTER || health.down_since.is_some()
    }

    /// Counts `job`'s request, which its host took and sent nothing back for before the
    /// timeout: after [`DOWN_AFTER`] such requests in a row, a URL's own is not retried, and a
    /// host silent for `limit` is given up, its queued URLs dropped. Whether a URL is slower
    /// than the timeout or its host hangs cannot be told apart, so nothing is parked: the
    /// streak only saves the retries of a host that answers nothing.
    pub fn request_unanswered(&mut self, job: &Job, now: Instant, limit: Duration) -> Silence {
        let Some(&id) = self.ids.get(&job.host) else {
            return Silence::Retry;
        };
        let health = &mut self.hosts[id as usize].health;
        health.silent = health.silent.saturating_add(1);
        let since = *health.silent_since.get_or_insert(now);
        if health.silent <= DOWN_AFTER {
            return Silence::Retry;
        }
        if now.saturating_duration_since(since) < limit {
            return Silence::NoRetry;
        }
        let dropped = self.give_up(id, &job.host, now);
        Silence::GivenUp { dropped }
    }

    /// Gives host `id` (`host`) up for this run, its job in flight ended: its queued URLs are
    /// dropped and counted. Returns how many, the job's included.
    fn give_up(&mut self, id: u32, host: &str, now: Instant) -> usize {
        self.hosts[id as usize].health.given_up = true;
        self.end_job(host, now, Ended::Requeued);
        let dropped = self.drop_host(host) + 1;
        self.counters.host_down += dropped as u64;
        self.counters.hosts_down += 1;
        dropped
    }

    /// A connection to `host` was made: its failures are forgotten. Returns how long it had
    /// been down, if it was.
    pub fn host_reached(&mut self, host: &str, now: Instant) -> Option<Duration> {
        let &id = self.ids.get(host)?;
        self.reached(id, now)
    }

    /// [`Frontier::host_reached`] for host `id`.
    pub(super) fn reached(&mut self, id: u32, now: Instant) -> Option<Duration> {
        let health = &mut self.hosts[id as usize].health;
        health.answered = true;
        (health.silent, health.silent_since) = (0, None);
        if health.failures == 0 {
            return None;
        }
        health.failures = 0;
        health.probes = 0;
        health.down_since.take().map(|since| now - since)
    }

    /// Marks `host` as one that answered in an earlier run of this crawl: found down, it is
    /// waited for (`--host-down-limit`) as one that answered in this run is. Before, a crawl
    /// resumed during a short outage gave its hosts up at once, and ended for good.
    pub fn answered_before(&mut self, host: &str) {
        if let Some(&id) = self.ids.get(host) {
            self.hosts[id as usize].health.answered = true;
        }
    }

    /// Puts `job`, whose host is down (see [`Frontier::connection_failed`]), back in its
    /// queue with its tries given back, the host waiting for its next probe: `base` doubled
    /// once more for each (after the tries that found it down), at most five minutes, and
    /// never past `limit` from when it was found down. A probe that fails past `limit` gives
    /// the host up for this run, and drops its queued URLs; so does finding down a host that
    /// has not answered in this run.
    pub fn wait_for_host(
        &mut self,
        job: Job,
        now: Instant,
        base: Duration,
        limit: Duration,
    ) -> HostDown {
        let Some(&id) = self.ids.get(&job.host) else {
            return HostDown::GivenUp {
                dropped: 0,
                down_for: Duration::ZERO,
            };
        };
        let health = &mut self.hosts[id as usize].health;
        let first = health.down_since.is_none();
        let since = *health.down_since.get_or_insert(now);
        // A host not reached yet in this run is not waited for: it is more likely gone than
        // down a while (as an origin whose robots.txt cannot be fetched is given up).
        let limit = if health.answered {
            limit
        } else {
            Duration::ZERO
        };
        let left = (since + limit).saturating_duration_since(now);
        if left.is_zero() {
            let dropped = self.give_up(id, &job.host, now);
            return HostDown::GivenUp {
                dropped,
                down_for: now - since,
            };
        }
        health.probes += 1;
        // The doubling of the tries that found it down goes on: base x 4, x 8, ...
        let wait = retry_backoff(base, DOWN_AFTER - 1 + health.probes).min(left);
        self.requeue_job(job, 0, now, wait);
        HostDown::Waiting { wait, first }
    }

    /// Drops the URLs of host `id`, given up for this run, that were queued since (links
    /// found on other hosts' pages). Returns how many.
    pub(super) fn drop_given_up(&mut self, id: u32) -> usize {
        let q = &mut self.hosts[id as usize];
        q.sitemaps.clear();
        let name = q.name.clone();
        let dropped = self.drop_host(&name);
        self.counters.host_down += dropped as u64;
        dropped
    }
}
