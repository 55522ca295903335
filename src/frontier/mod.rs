//! The frontier: canonical URLs deduplicated at enqueue, per-host queues with a politeness
//! clock, robots.txt state, and the choice of what to fetch next.
//!
//! Pure logic with time passed in (`now: Instant`), owned by the crawl loop alone, so no lock
//! is needed and tests can drive the clock. At most one fetch per host is in flight; a host
//! becomes ready again `delay` after its last fetch finished. Ready hosts are served round-robin
//! and the ready list is shuffled periodically so no host or group of hosts dominates.

pub mod host_queue;
pub mod politeness;
pub mod robots;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use url::Url;

use host_queue::{Entry, HostQueue, PendingRobots};
pub use robots::{RobotsOutcome, RobotsRules, RobotsState};
use robots::{MAX_ROBOTS_ATTEMPTS, MAX_ROBOTS_REDIRECTS};

/// Ready hosts are reshuffled after this many picks.
const SHUFFLE_EVERY: u32 = 64;

/// A URL offered to the frontier.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Canonical URL (see [`crate::url::canonicalize`]).
    pub url: Url,
    /// Link hops from a seed.
    pub depth: u32,
    /// Redirect hops that led here.
    pub redirects: u32,
}

/// What a job fetches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobKind {
    /// A page URL.
    Page,
    /// robots.txt of `origin`, `hops` redirects in.
    Robots {
        /// The origin the rules are for.
        origin: String,
        /// Redirect hops so far.
        hops: u32,
    },
}

/// One fetch to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// Page or robots.txt.
    pub kind: JobKind,
    /// The URL to fetch.
    pub url: Url,
    /// The politeness key (host name) this job runs under.
    pub host: String,
    /// Link hops from a seed.
    pub depth: u32,
    /// Redirect hops that led here.
    pub redirects: u32,
    /// Failed attempts before this one.
    pub attempt: u32,
}

/// The answer to "what next?".
#[derive(Debug)]
pub enum Next {
    /// Run this job.
    Job(Job),
    /// Nothing is ready; ask again at this time.
    Wait(Instant),
    /// Nothing is ready or waiting, but fetches are in flight and may add work.
    Idle,
    /// No work left at all.
    Exhausted,
}

/// Settings of the frontier.
#[derive(Debug, Clone)]
pub struct FrontierConfig {
    /// Configured per-host delay.
    pub delay: Duration,
    /// Ceiling for Crawl-delay.
    pub max_delay: Duration,
    /// Product token matched against robots.txt groups.
    pub robots_agent: String,
    /// False to ignore robots.txt.
    pub obey_robots: bool,
    /// First wait after a robots.txt could not be fetched; doubles per attempt.
    pub robots_retry: Duration,
}

/// A queued URL as saved in crawl state.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct QueuedUrl {
    /// Canonical URL.
    pub url: String,
    /// Link hops from a seed.
    pub depth: u32,
    /// Redirect hops that led here.
    pub redirects: u32,
    /// Failed attempts so far.
    pub attempt: u32,
}

/// Known robots.txt rules of one origin, as saved in crawl state.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SavedRobots {
    /// Politeness key (host).
    pub host: String,
    /// Origin the rules are for.
    pub origin: String,
    /// The robots.txt text, base64; `None` for allow-all.
    pub body: Option<String>,
}

/// The part of crawl state the frontier owns.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct FrontierSnapshot {
    /// Every URL ever queued.
    pub seen: Vec<String>,
    /// URLs still to fetch.
    pub queue: Vec<QueuedUrl>,
    /// robots.txt rules known.
    pub robots: Vec<SavedRobots>,
}

/// URLs dropped inside the frontier, for the report.
#[derive(Debug, Default, Clone)]
pub struct FrontierCounters {
    /// Disallowed by robots.txt.
    pub robots_denied: u64,
    /// Dropped because robots.txt stayed unavailable.
    pub robots_unavailable: u64,
}

/// The crawl frontier.
pub struct Frontier {
    config: FrontierConfig,
    hosts: HashMap<String, HostQueue>,
    seen: HashSet<String>,
    ready: VecDeque<String>,
    waiting: BinaryHeap<Reverse<(Instant, String)>>,
    in_flight: usize,
    queued: usize,
    seq: u64,
    picks_since_shuffle: u32,
    rng: fastrand::Rng,
    counters: FrontierCounters,
}

impl Frontier {
    /// An empty frontier.
    pub fn new(config: FrontierConfig) -> Self {
        Frontier {
            config,
            hosts: HashMap::new(),
            seen: HashSet::new(),
            ready: VecDeque::new(),
            waiting: BinaryHeap::new(),
            in_flight: 0,
            queued: 0,
            seq: 0,
            picks_since_shuffle: 0,
            rng: fastrand::Rng::new(),
            counters: FrontierCounters::default(),
        }
    }

    /// Makes the shuffle order reproducible (tests).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.rng = fastrand::Rng::with_seed(seed);
        self
    }

    /// Adds a URL unless it was seen before; returns whether it was queued.
    pub fn push(&mut self, candidate: Candidate, now: Instant) -> bool {
        if !self.seen.insert(candidate.url.as_str().to_string()) {
            return false;
        }
        self.enqueue(candidate.url, candidate.depth, candidate.redirects, 0, now);
        true
    }

    fn enqueue(&mut self, url: Url, depth: u32, redirects: u32, attempt: u32, now: Instant) {
        let host = url.host_str().unwrap_or("").to_string();
        self.seq += 1;
        let delay = self.config.delay;
        let queue = self
            .hosts
            .entry(host.clone())
            .or_insert_with(|| HostQueue::new(now, delay));
        queue.entries.push(Entry {
            url,
            depth,
            redirects,
            attempt,
            seq: self.seq,
        });
        self.queued += 1;
        self.schedule(&host);
    }

    fn schedule(&mut self, host: &str) {
        if let Some(q) = self.hosts.get_mut(host) {
            if q.wants_schedule() {
                q.scheduled = true;
                self.waiting
                    .push(Reverse((q.next_allowed, host.to_string())));
            }
        }
    }

    fn promote(&mut self, now: Instant) {
        let mut promoted = false;
        while let Some(Reverse((at, _))) = self.waiting.peek() {
            if *at > now {
                break;
            }
            let Reverse((_, host)) = self.waiting.pop().expect("peeked");
            self.ready.push_back(host);
            promoted = true;
        }
        if promoted && self.picks_since_shuffle >= SHUFFLE_EVERY {
            self.picks_since_shuffle = 0;
            let slice = self.ready.make_contiguous();
            self.rng.shuffle(slice);
        }
    }

    /// Picks the next job at time `now`.
    pub fn next(&mut self, now: Instant) -> Next {
        self.promote(now);
        while let Some(host) = self.ready.pop_front() {
            self.picks_since_shuffle += 1;
            if let Some(q) = self.hosts.get_mut(&host) {
                q.scheduled = false;
            }
            if let Some(job) = self.take_job(&host, now) {
                let q = self.hosts.get_mut(&host).expect("host exists");
                q.in_flight = true;
                self.in_flight += 1;
                return Next::Job(job);
            }
        }
        if let Some(Reverse((at, _))) = self.waiting.peek() {
            Next::Wait(*at)
        } else if self.in_flight > 0 {
            Next::Idle
        } else {
            Next::Exhausted
        }
    }

    /// The next runnable job of one host, dropping robots-denied URLs on the way.
    fn take_job(&mut self, host: &str, now: Instant) -> Option<Job> {
        let obey = self.config.obey_robots;
        let q = self.hosts.get_mut(host)?;
        if let Some(p) = q.pending_robots.take() {
            return Some(Job {
                kind: JobKind::Robots {
                    origin: p.origin,
                    hops: p.hops,
                },
                url: p.url,
                host: host.to_string(),
                depth: 0,
                redirects: 0,
                attempt: 0,
            });
        }
        while let Some(entry) = q.entries.pop() {
            let origin = entry.url.origin().ascii_serialization();
            let state = q.robots.entry(origin.clone()).or_insert_with(|| {
                if obey {
                    RobotsState::Unknown
                } else {
                    RobotsState::Known(RobotsRules::allow_all())
                }
            });
            let robots_fetch = match state {
                RobotsState::Known(rules) => {
                    if rules.allows(entry.url.as_str()) {
                        self.queued -= 1;
                        return Some(Job {
                            kind: JobKind::Page,
                            url: entry.url,
                            host: host.to_string(),
                            depth: entry.depth,
                            redirects: entry.redirects,
                            attempt: entry.attempt,
                        });
                    }
                    self.queued -= 1;
                    self.counters.robots_denied += 1;
                    continue;
                }
                RobotsState::GaveUp => {
                    self.queued -= 1;
                    self.counters.robots_unavailable += 1;
                    continue;
                }
                RobotsState::Unknown => Some(0),
                RobotsState::Unavailable { attempts, retry_at } => {
                    if now >= *retry_at {
                        Some(*attempts)
                    } else {
                        q.next_allowed = q.next_allowed.max(*retry_at);
                        None
                    }
                }
                RobotsState::Fetching { .. } => None,
            };
            q.entries.push(entry);
            let Some(attempts) = robots_fetch else {
                self.schedule(host);
                return None;
            };
            *state = RobotsState::Fetching { attempts };
            let url = Url::parse(&format!("{origin}/robots.txt")).ok()?;
            return Some(Job {
                kind: JobKind::Robots { origin, hops: 0 },
                url,
                host: host.to_string(),
                depth: 0,
                redirects: 0,
                attempt: attempts,
            });
        }
        // Nothing runnable now; a robots retry may have moved the clock.
        self.schedule(host);
        None
    }

    /// Records that a fetch for `host` finished at `now`; the host may run again after its delay.
    pub fn complete(&mut self, host: &str, now: Instant) {
        if let Some(q) = self.hosts.get_mut(host) {
            if q.in_flight {
                q.in_flight = false;
                self.in_flight -= 1;
            }
            q.next_allowed = q.next_allowed.max(now + q.delay);
        }
        self.schedule(host);
    }

    /// Puts a failed page job back for another attempt after `backoff`; the whole host waits,
    /// since a failing server should not be hit sooner by its other URLs.
    pub fn retry(&mut self, job: Job, now: Instant, backoff: Duration) {
        let host = job.host.clone();
        if let Some(q) = self.hosts.get_mut(&host) {
            q.next_allowed = q.next_allowed.max(now + backoff);
        }
        self.enqueue(job.url, job.depth, job.redirects, job.attempt + 1, now);
        self.complete(&host, now);
    }

    /// Applies the result of a robots.txt job and completes it.
    pub fn robots_result(&mut self, job: &Job, outcome: RobotsOutcome, now: Instant) {
        let JobKind::Robots { origin, hops } = &job.kind else {
            return;
        };
        let agent = self.config.robots_agent.clone();
        let (base, max) = (self.config.delay, self.config.max_delay);
        let retry_base = self.config.robots_retry;
        let Some(q) = self.hosts.get_mut(&job.host) else {
            return;
        };
        let attempts = match q.robots.get(origin) {
            Some(RobotsState::Fetching { attempts }) => *attempts,
            _ => 0,
        };
        let new_state = match outcome {
            RobotsOutcome::Fetched { status, body } if (200..300).contains(&status) => {
                let rules = RobotsRules::parse(&agent, &body);
                q.delay = politeness::host_delay(base, rules.crawl_delay(), max);
                RobotsState::Known(rules)
            }
            RobotsOutcome::Redirect(url) if *hops < MAX_ROBOTS_REDIRECTS => {
                q.pending_robots = Some(PendingRobots {
                    origin: origin.clone(),
                    url,
                    hops: hops + 1,
                });
                RobotsState::Fetching { attempts }
            }
            // Too many redirects or a 3xx without Location: "unavailable", i.e. like a 4xx.
            RobotsOutcome::Redirect(_) => RobotsState::Known(RobotsRules::allow_all()),
            RobotsOutcome::Fetched { status, .. } if status < 500 => {
                RobotsState::Known(RobotsRules::allow_all())
            }
            RobotsOutcome::Refused => RobotsState::GaveUp,
            RobotsOutcome::Fetched { .. } | RobotsOutcome::Unreachable => {
                let attempts = attempts + 1;
                if attempts >= MAX_ROBOTS_ATTEMPTS {
                    RobotsState::GaveUp
                } else {
                    RobotsState::Unavailable {
                        attempts,
                        retry_at: now + politeness::retry_backoff(retry_base, attempts),
                    }
                }
            }
        };
        q.robots.insert(origin.clone(), new_state);
        let host = job.host.clone();
        self.complete(&host, now);
    }

    /// Drops every queued URL of `origin` on `host` (e.g. an https seed that falls back to
    /// http). Returns how many were dropped.
    pub fn drop_origin(&mut self, host: &str, origin: &str) -> usize {
        let Some(q) = self.hosts.get_mut(host) else {
            return 0;
        };
        let before = q.entries.len();
        let kept: Vec<Entry> = std::mem::take(&mut q.entries)
            .into_iter()
            .filter(|e| e.url.origin().ascii_serialization() != origin)
            .collect();
        q.entries = kept.into();
        if q.pending_robots
            .as_ref()
            .is_some_and(|p| p.origin == origin)
        {
            q.pending_robots = None;
        }
        let dropped = before - q.entries.len();
        self.queued -= dropped;
        dropped
    }

    /// Gives up an origin for good: drops its queued URLs and marks its robots.txt as given
    /// up, so later links to it are dropped too (e.g. an https seed that falls back to http).
    pub fn abandon_origin(&mut self, host: &str, origin: &str) -> usize {
        let dropped = self.drop_origin(host, origin);
        if let Some(q) = self.hosts.get_mut(host) {
            q.robots.insert(origin.to_string(), RobotsState::GaveUp);
        }
        dropped
    }

    /// Drops every queued URL of a host (e.g. it reached `--max-pages-per-host`). Returns how
    /// many were dropped.
    pub fn drop_host(&mut self, host: &str) -> usize {
        let Some(q) = self.hosts.get_mut(host) else {
            return 0;
        };
        let dropped = q.entries.len();
        q.entries.clear();
        q.pending_robots = None;
        self.queued -= dropped;
        dropped
    }

    /// What must be saved to resume: seen URLs, queued URLs (plus `in_flight` page jobs, which
    /// will be fetched again), and robots.txt rules known per origin.
    pub fn snapshot<'a>(&self, in_flight: impl Iterator<Item = &'a Job>) -> FrontierSnapshot {
        let mut queue: Vec<QueuedUrl> = self
            .hosts
            .values()
            .flat_map(|q| q.entries.iter())
            .map(|e| QueuedUrl {
                url: e.url.to_string(),
                depth: e.depth,
                redirects: e.redirects,
                attempt: e.attempt,
            })
            .collect();
        queue.extend(
            in_flight
                .filter(|j| j.kind == JobKind::Page)
                .map(|j| QueuedUrl {
                    url: j.url.to_string(),
                    depth: j.depth,
                    redirects: j.redirects,
                    attempt: j.attempt,
                }),
        );
        let robots = self
            .hosts
            .iter()
            .flat_map(|(host, q)| {
                q.robots
                    .iter()
                    .filter_map(move |(origin, state)| match state {
                        RobotsState::Known(rules) => Some(SavedRobots {
                            host: host.clone(),
                            origin: origin.clone(),
                            body: rules.source().map(|b| data_encoding::BASE64.encode(b)),
                        }),
                        _ => None,
                    })
            })
            .collect();
        FrontierSnapshot {
            seen: self.seen.iter().cloned().collect(),
            queue,
            robots,
        }
    }

    /// Restores a snapshot into an empty frontier.
    pub fn restore(&mut self, snapshot: FrontierSnapshot, now: Instant) {
        self.seen.extend(snapshot.seen);
        for q in snapshot.queue {
            if let Ok(url) = Url::parse(&q.url) {
                self.seen.insert(url.as_str().to_string());
                self.enqueue(url, q.depth, q.redirects, q.attempt, now);
            }
        }
        let delay = self.config.delay;
        for r in snapshot.robots {
            let rules = match r
                .body
                .and_then(|b| data_encoding::BASE64.decode(b.as_bytes()).ok())
            {
                Some(body) => RobotsRules::parse(&self.config.robots_agent, &body),
                None => RobotsRules::allow_all(),
            };
            let host_delay = politeness::host_delay(
                self.config.delay,
                rules.crawl_delay(),
                self.config.max_delay,
            );
            let q = self
                .hosts
                .entry(r.host)
                .or_insert_with(|| HostQueue::new(now, delay));
            q.delay = host_delay;
            q.robots.insert(r.origin, RobotsState::Known(rules));
        }
    }

    /// Takes a queued URL out of the frontier (it was completed before a crash, as the WARC
    /// files show). Returns its queue entry as a job, or `None` when it is not queued.
    pub fn take_queued(&mut self, url: &Url) -> Option<Job> {
        let host = url.host_str()?.to_string();
        let q = self.hosts.get_mut(&host)?;
        let entries = std::mem::take(&mut q.entries).into_vec();
        let (mut found, rest): (Vec<Entry>, Vec<Entry>) =
            entries.into_iter().partition(|e| e.url == *url);
        q.entries = rest.into();
        let e = found.pop()?;
        self.queued -= 1 + found.len();
        Some(Job {
            kind: JobKind::Page,
            url: e.url,
            host,
            depth: e.depth,
            redirects: e.redirects,
            attempt: e.attempt,
        })
    }

    /// URLs waiting to be fetched.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Distinct hosts that ever had a URL queued.
    pub fn hosts_seen(&self) -> usize {
        self.hosts.len()
    }

    /// Drop counters.
    pub fn counters(&self) -> &FrontierCounters {
        &self.counters
    }

    /// The current delay of a host (configured delay raised by Crawl-delay).
    pub fn host_delay(&self, host: &str) -> Option<Duration> {
        self.hosts.get(host).map(|q| q.delay)
    }
}

#[cfg(test)]
mod tests;
