//! What finished jobs change in the frontier: a fetch completed (the host rests for its
//! delay), a failure queued for a retry, a host slowed down by a 429/503 answer, a robots.txt
//! result applied, a page requisite queued again, and queues dropped
//! (an origin given up, a host at its quota or dropped by the operator).

use std::time::{Duration, Instant};

use url::Url;

use super::robots_state::{transition, RobotsRetry, ROBOTS_REFRESH_RETRY};
use super::storage::{QueuedUrl, StoreError};
use super::{
    politeness, Candidate, Frontier, Job, JobKind, PendingRobots, RobotsOutcome, RobotsState,
};

/// How a job ended, for its host's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    /// A request was answered after the time given: the host rests for its delay (or
    /// back-off, which shrinks; or `--delay-factor` times that time).
    Answered(Duration),
    /// Its URL was queued again (a retry, a slow-down, the page target): the host rests,
    /// its back-off kept.
    Requeued,
    /// No request was made: the host may run again at once.
    NoRequest,
}

impl Frontier {
    /// Records that a fetch for `host` finished at `now`; the host may run again after its delay.
    pub fn complete(&mut self, host: &str, now: Instant) {
        self.end_job(host, now, Ended::Answered(Duration::ZERO));
    }

    /// As [`Frontier::complete`], for a fetch that took `took`: with `--delay-factor`, a slow
    /// server gets a longer rest.
    pub fn answered(&mut self, host: &str, now: Instant, took: Duration) {
        self.end_job(host, now, Ended::Answered(took));
    }

    /// Ends the job of `host` at `now`, the host's clock set as `ended` says.
    pub(super) fn end_job(&mut self, host: &str, now: Instant, ended: Ended) {
        let Some(&id) = self.ids.get(host) else {
            return;
        };
        self.storage.finish(id);
        let q = &mut self.hosts[id as usize];
        if q.in_flight {
            q.in_flight = false;
            self.in_flight -= 1;
        }
        if let (Ended::Answered(_), false) = (ended, std::mem::take(&mut q.held)) {
            // Any answer but "slow down" lets a slowed-down host recover a step.
            q.backoff /= 2;
            if q.backoff <= q.delay {
                q.backoff = Duration::ZERO;
            }
        }
        let wait = match self.config.random_wait {
            // Never under a Crawl-delay the draw would undercut (one below --wait).
            true => politeness::random_wait(q.delay, self.config.delay, fastrand::f64())
                .max(crawl_delay_of(q, self.config.max_delay)),
            false => q.delay,
        };
        let delay = match ended {
            Ended::Answered(took) => wait.max(q.backoff).max(politeness::in_proportion(
                took,
                self.config.delay_factor,
                self.config.max_delay,
            )),
            Ended::Requeued => q.delay.max(q.backoff),
            Ended::NoRequest => Duration::ZERO,
        };
        q.next_allowed = q.next_allowed.max(now + delay);
        q.dirty = true;
        let group = q.group;
        self.schedule(id);
        // The group's server may take its next request after this host's delay.
        for parked in self.groups.finish(group, now + delay) {
            self.hosts[parked as usize].parked = false;
            self.schedule(parked);
        }
    }

    /// Puts a failed page job back for another attempt after `backoff`; the whole host waits,
    /// since a failing server should not be hit sooner by its other URLs.
    pub fn retry(&mut self, job: Job, now: Instant, backoff: Duration) {
        let attempt = job.attempt + 1;
        self.requeue_job(job, attempt, now, backoff);
    }

    /// [`Frontier::put_back`], for after `wait` (the `--proxy` was down).
    pub fn put_back_after(&mut self, job: Job, now: Instant, wait: Duration) {
        let attempt = job.attempt;
        self.requeue_job(job, attempt, now, wait);
    }

    /// Puts a page job whose server asked the crawl to slow down (429, 503) back for another
    /// attempt, and slows the host down: its back-off doubles from max(delay, 1 s), or is the
    /// server's `Retry-After` when it gave one, never above `--max-delay` (or the configured
    /// delay, if that is longer). Returns the host's wait.
    pub fn slow_down(&mut self, job: Job, now: Instant, retry_after: Option<Duration>) -> Duration {
        let Some(wait) = self.back_off(&job.host, retry_after) else {
            return Duration::ZERO;
        };
        let attempt = job.attempt + 1;
        self.requeue_job(job, attempt, now, wait);
        wait
    }

    /// Slows `host` down as [`Frontier::slow_down`] does, for a last answer that asked it to
    /// (not retried): called before the job ends, whose end then waits the back-off. Returns
    /// the wait.
    pub fn hold_back(&mut self, host: &str, retry_after: Option<Duration>) -> Duration {
        let wait = self.back_off(host, retry_after).unwrap_or_default();
        if let Some(&id) = self.ids.get(host) {
            self.hosts[id as usize].held = true;
        }
        wait
    }

    /// Doubles `host`'s back-off from max(delay, 1 s), or sets it to `retry_after`, never
    /// above `--max-delay` (or the configured delay, if that is longer). Returns it.
    fn back_off(&mut self, host: &str, retry_after: Option<Duration>) -> Option<Duration> {
        let &id = self.ids.get(host)?;
        let q = &mut self.hosts[id as usize];
        let floor = q.delay.max(Duration::from_secs(1));
        let wait = match retry_after {
            Some(asked) => asked.max(floor),
            None if q.backoff.is_zero() => floor,
            None => q.backoff.saturating_mul(2),
        };
        q.backoff = wait.min(self.config.max_delay.max(q.delay));
        Some(q.backoff)
    }

    /// Puts a job whose response redirected to `to`, a URL the seen set takes for its own
    /// (itself, with a cookie set to carry; or with a session id), back in its queue as `to`,
    /// one redirect hop further. The seen set is not asked (the URL is in it); the redirect
    /// limit ends a loop.
    pub fn again_at(&mut self, mut job: Job, to: Url, now: Instant) {
        job.url = to;
        job.redirects += 1;
        let attempt = job.attempt;
        self.requeue_job(job, attempt, now, Duration::ZERO);
    }

    /// Puts a job back in its queue as it was: a page whose response was not archived because
    /// the page target was met (a crawl run again with a higher target fetches it then), or
    /// a URL whose host has just been given credentials (`--http-user`).
    pub fn put_back(&mut self, job: Job, now: Instant) {
        let attempt = job.attempt;
        self.requeue_job(job, attempt, now, Duration::ZERO);
    }

    /// Queues `candidate` though its URL was seen before: a page requisite whose URL was
    /// fetched as a link of a type not archived (`crawl/ledger/linked_requisites.rs`). In a
    /// shared crawl only a host this worker holds takes it.
    pub fn push_again(&mut self, candidate: Candidate, now: Instant) {
        let id = self.host_id(candidate.url.host_str().unwrap_or(""), now);
        let entry = self.entry_of(candidate);
        match self.storage.requeue(id, &entry) {
            Ok(()) => self.queued_one(id),
            Err(e) => self.fail(e),
        }
    }

    /// Queues `job`'s URL again (as attempt `attempt`), its host waiting at least `wait`, and
    /// completes the job.
    pub(super) fn requeue_job(&mut self, job: Job, attempt: u32, now: Instant, wait: Duration) {
        let Some(&id) = self.ids.get(&job.host) else {
            return;
        };
        let q = &mut self.hosts[id as usize];
        q.next_allowed = q.next_allowed.max(now + wait);
        let requisite = match job.kind {
            JobKind::Requisite { hops } => hops,
            _ => 0,
        };
        let rank = self.config.order.rank_entry(&job.url, job.depth, requisite);
        let entry = QueuedUrl {
            url: job.url.into(),
            depth: job.depth,
            rank,
            requisite,
            redirects: job.redirects,
            attempt,
            sitemap: 0,
            referer: job.referer,
        };
        self.storage.finish(id);
        match self.storage.requeue(id, &entry) {
            Ok(()) => self.queued_one(id),
            Err(e) => self.fail(e),
        }
        self.end_job(&job.host, now, Ended::Requeued);
    }

    /// Applies the result of a robots.txt job and completes it. Returns true when the origin
    /// was given up by it (its URLs will be dropped).
    pub fn robots_result(&mut self, job: &Job, outcome: RobotsOutcome, now: Instant) -> bool {
        let JobKind::Robots { origin, hops } = &job.kind else {
            return false;
        };
        self.robots_redirect_done(&job.url, *hops, now);
        let Some(&id) = self.ids.get(&job.host) else {
            return false;
        };
        let q = &mut self.hosts[id as usize];
        let attempts = q.robots.get(origin).map_or(0, RobotsState::attempts);
        let mut t = transition(
            outcome,
            attempts,
            *hops,
            &self.config.robots_agent,
            RobotsRetry {
                first: self.config.robots_retry,
                attempts: self.config.robots_attempts,
                max_retry_after: self.config.max_delay,
            },
            now,
        );
        // A refetch of rules known before: a redirect keeps them holding, a failure keeps
        // them for another try later (a site whose robots.txt fails one night is not given
        // up for it).
        if let Some(RobotsState::Refreshing(_)) = q.robots.get(origin) {
            if !matches!(t.state, RobotsState::Known(_)) {
                if let Some(RobotsState::Refreshing(old)) = q.robots.remove(origin) {
                    t.state = match t.follow {
                        Some(_) => RobotsState::Refreshing(old),
                        None => RobotsState::Known(old.refreshed_at(now + ROBOTS_REFRESH_RETRY)),
                    };
                    t.save = None;
                }
            }
        }
        if let (true, RobotsState::Known(rules)) = (t.parsed, &t.state) {
            if let Some(asked) = rules
                .crawl_delay()
                .filter(|d| d.is_finite() && f64::from(*d) > self.config.max_delay.as_secs_f64())
            {
                // Visible without -v: the crawl is faster with this site than it asked.
                tracing::warn!(
                    "{origin} asks for a Crawl-delay of {asked} s; waiting {:?} (--max-delay)",
                    self.config.max_delay
                );
            }
            q.delay = politeness::host_delay(
                self.config.delay,
                rules.crawl_delay(),
                self.config.max_delay,
            );
        }
        let ended = t.follow.is_none();
        if let Some((url, hops)) = t.follow {
            q.pending_robots = Some(PendingRobots {
                origin: origin.clone(),
                url,
                hops,
            });
        }
        if let (true, RobotsState::Known(rules)) = (ended, &t.state) {
            self.robots_redirect_read(&job.url, *hops, rules);
        }
        let q = &mut self.hosts[id as usize];
        let gave_up = matches!(t.state, RobotsState::GaveUp);
        if gave_up {
            self.counters.origins_given_up += 1;
        }
        q.robots.insert(origin.clone(), t.state);
        if let Some(text) = t.save {
            if let Err(e) = self.storage.save_robots(origin, id, text.as_deref()) {
                self.fail(e);
            }
            // The rules are known for the first time: the site's sitemaps can be queued, when
            // its pages are crawled (not a host that only serves what pages need).
            let q = &self.hosts[id as usize];
            if let (true, Some(RobotsState::Known(rules))) = (q.has_pages, q.robots.get(origin)) {
                let listed = rules.sitemaps().to_vec();
                let guess_allowed = rules.allows(&format!("{origin}/sitemap.xml"));
                self.discover_sitemaps(origin, listed, guess_allowed, now);
            }
        }
        let host = job.host.clone();
        self.complete(&host, now);
        gave_up
    }

    /// Drops every queued URL of `origin` on `host` (e.g. an https seed that falls back to
    /// http). Returns how many were dropped.
    pub fn drop_origin(&mut self, host: &str, origin: &str) -> usize {
        let Some(&id) = self.ids.get(host) else {
            return 0;
        };
        let dropped = self.storage.drop_where(id, &mut |u| {
            Url::parse(u).is_ok_and(|u| u.origin().ascii_serialization() == origin)
        });
        let q = &mut self.hosts[id as usize];
        if q.pending_robots
            .as_ref()
            .is_some_and(|p| p.origin == origin)
        {
            q.pending_robots = None;
        }
        self.forget_dropped(id, dropped)
    }

    fn forget_dropped(&mut self, id: u32, dropped: Result<usize, StoreError>) -> usize {
        match dropped {
            Ok(n) => {
                let q = &mut self.hosts[id as usize];
                let n = (n as u64).min(q.queued);
                q.queued -= n;
                q.dirty = true;
                self.queued -= n;
                n as usize
            }
            Err(e) => {
                self.fail(e);
                0
            }
        }
    }

    /// Gives up an origin for good: drops its queued URLs and marks its robots.txt as given
    /// up, so later links to it are dropped too (e.g. an https seed that falls back to http).
    pub fn abandon_origin(&mut self, host: &str, origin: &str) -> usize {
        let dropped = self.drop_origin(host, origin);
        if let Some(&id) = self.ids.get(host) {
            self.hosts[id as usize]
                .robots
                .insert(origin.to_string(), RobotsState::GaveUp);
        }
        dropped
    }

    /// Drops every queued URL of a host (e.g. it reached `--max-pages-per-host`). Returns how
    /// many were dropped.
    pub fn drop_host(&mut self, host: &str) -> usize {
        let Some(&id) = self.ids.get(host) else {
            return 0;
        };
        self.hosts[id as usize].pending_robots = None;
        let dropped = self.storage.drop_where(id, &mut |_| true);
        self.forget_dropped(id, dropped)
    }
}

/// The longest Crawl-delay of the origins `q` holds rules for, capped at `max`.
fn crawl_delay_of(q: &super::host::HostState, max: Duration) -> Duration {
    let asked = q.robots.values().filter_map(|state| match state {
        RobotsState::Known(rules) | RobotsState::Refreshing(rules) => rules.crawl_delay(),
        _ => None,
    });
    let longest = asked.fold(None, |a: Option<f32>, d| Some(a.map_or(d, |a| a.max(d))));
    politeness::host_delay(Duration::ZERO, longest, max)
}
