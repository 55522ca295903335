//! The frontier: canonical URLs deduplicated at enqueue, per-host queues with a politeness
//! clock, robots.txt state, and the choice of what to fetch next.
//!
//! Logic with time passed in (`now: Instant`), owned by the crawl loop alone, so no lock is
//! needed and tests can drive the clock. At most one fetch per host is in flight; a host becomes
//! ready again `delay` after its last fetch finished. Ready hosts are served round-robin and the
//! ready list is shuffled periodically so no host or group of hosts dominates.
//!
//! The queued URLs and the seen set live in the [`Store`] (on disk), so memory does not grow
//! with the queue: in memory are only per-host state (counts, clocks, robots rules) and a
//! bounded cache of recently seen URLs. [`Frontier::checkpoint`] commits the store at a save
//! point; pages being fetched are written back as queued for that commit, so a crash never
//! loses them.

pub mod host_queue;
pub mod politeness;
pub mod records;
pub mod robots;
pub mod seen_cache;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::time::{Duration, Instant, SystemTime};

use url::Url;

use crate::store::{SeenKey, Store, StoreError};
use host_queue::{HostQueue, PendingRobots};
use records::{
    decode_robots, encode_robots, key_depth, queue_key, seen_key, HostRecord, QueueValue,
};
pub use robots::{RobotsOutcome, RobotsRules, RobotsState};
use robots::{MAX_ROBOTS_ATTEMPTS, MAX_ROBOTS_REDIRECTS};
use seen_cache::SeenCache;

/// Ready hosts are reshuffled after this many picks.
const SHUFFLE_EVERY: u32 = 64;
/// Fingerprints per generation of the seen cache (two tables of 524,288 slots: ~18 MB at most).
const SEEN_CACHE_GENERATION: usize = 450_000;
/// A saved next-allowed time further ahead than this is not trusted after a restart.
const MAX_RESTORED_WAIT: Duration = Duration::from_secs(600);
/// Name of the frontier's metadata in the store.
const META_NAME: &str = "frontier";

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

/// URLs dropped inside the frontier, for the report.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct FrontierCounters {
    /// Disallowed by robots.txt.
    pub robots_denied: u64,
    /// Dropped because robots.txt stayed unavailable.
    pub robots_unavailable: u64,
}

/// What the frontier saves besides its tables.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct FrontierMeta {
    seq: u64,
    counters: FrontierCounters,
}

/// The crawl frontier.
pub struct Frontier {
    config: FrontierConfig,
    store: Store,
    /// Per-host state, indexed by host id.
    hosts: Vec<HostQueue>,
    ids: HashMap<String, u32>,
    seen_cache: SeenCache,
    ready: VecDeque<u32>,
    waiting: BinaryHeap<Reverse<(Instant, u32)>>,
    in_flight: usize,
    queued: u64,
    seq: u64,
    picks_since_shuffle: u32,
    rng: fastrand::Rng,
    counters: FrontierCounters,
    /// The first store error since the last checkpoint; the next checkpoint reports it.
    failure: Option<StoreError>,
}

impl Frontier {
    /// An empty frontier on an in-memory store (tests and tools that need no persistence).
    pub fn new(config: FrontierConfig) -> Self {
        Frontier::open(config, Store::in_memory(), Instant::now())
            .expect("an empty in-memory store opens")
    }

    /// The frontier saved in `store` (empty for a new store), at time `now`.
    pub fn open(config: FrontierConfig, store: Store, now: Instant) -> Result<Self, StoreError> {
        let meta: FrontierMeta = store
            .meta_get(META_NAME)?
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let mut frontier = Frontier {
            config,
            store,
            hosts: Vec::new(),
            ids: HashMap::new(),
            seen_cache: SeenCache::new(SEEN_CACHE_GENERATION),
            ready: VecDeque::new(),
            waiting: BinaryHeap::new(),
            in_flight: 0,
            queued: 0,
            seq: meta.seq,
            picks_since_shuffle: 0,
            rng: fastrand::Rng::new(),
            counters: meta.counters,
            failure: None,
        };
        frontier.restore(now)?;
        Ok(frontier)
    }

    fn restore(&mut self, now: Instant) -> Result<(), StoreError> {
        let wall = SystemTime::now();
        for (id, bytes) in self.store.hosts()? {
            let record = HostRecord::decode(&bytes).filter(|_| id as usize == self.hosts.len());
            let Some(record) = record else {
                return Err(StoreError::Database {
                    path: self.store.path().to_path_buf(),
                    detail: format!("host record {id} is damaged"),
                });
            };
            let wait = record
                .next_allowed
                .duration_since(wall)
                .unwrap_or_default()
                .min(MAX_RESTORED_WAIT);
            let mut q = HostQueue::new(record.name.clone(), now + wait, self.config.delay);
            q.queued = record.queued;
            q.dirty = false;
            self.queued += record.queued;
            self.ids.insert(record.name, id);
            self.hosts.push(q);
        }
        let agent = self.config.robots_agent.clone();
        let (base, max) = (self.config.delay, self.config.max_delay);
        let hosts = &mut self.hosts;
        self.store.robots_each(|origin, bytes| {
            let Some((id, text)) = decode_robots(bytes) else {
                return;
            };
            let Some(q) = hosts.get_mut(id as usize) else {
                return;
            };
            let rules = match text {
                Some(text) => RobotsRules::parse(&agent, text),
                None => RobotsRules::allow_all(),
            };
            q.delay = politeness::host_delay(base, rules.crawl_delay(), max);
            q.robots
                .insert(origin.to_string(), RobotsState::Known(rules));
        })?;
        for id in 0..self.hosts.len() as u32 {
            self.schedule(id);
        }
        Ok(())
    }

    /// Makes the shuffle order reproducible (tests).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.rng = fastrand::Rng::with_seed(seed);
        self
    }

    /// The id of a host, creating its state if it is new.
    fn host_id(&mut self, host: &str, now: Instant) -> u32 {
        if let Some(&id) = self.ids.get(host) {
            return id;
        }
        let id = self.hosts.len() as u32;
        self.hosts
            .push(HostQueue::new(host.to_string(), now, self.config.delay));
        self.ids.insert(host.to_string(), id);
        id
    }

    /// Adds a URL unless it was seen before; returns whether it was queued.
    pub fn push(&mut self, candidate: Candidate, now: Instant) -> bool {
        let id = self.host_id(candidate.url.host_str().unwrap_or(""), now);
        let seen = seen_key(id, candidate.url.as_str());
        if self.seen_cache.contains(&seen) {
            return false;
        }
        match self.store.seen_get(&seen) {
            Ok(None) => {}
            Ok(Some(_)) => {
                self.seen_cache.insert(&seen);
                return false;
            }
            Err(e) => {
                self.fail(e);
                return false;
            }
        }
        self.seen_cache.insert(&seen);
        let value = QueueValue {
            redirects: candidate.redirects,
            attempt: 0,
            url: candidate.url.into(),
        };
        self.enqueue(id, &seen, candidate.depth, &value)
    }

    /// Queues `value` for host `id` and points its seen entry at the new queue key.
    fn enqueue(&mut self, id: u32, seen: &SeenKey, depth: u32, value: &QueueValue) -> bool {
        self.seq += 1;
        let key = queue_key(id, depth, self.seq);
        let stored = self
            .store
            .queue_insert(&key, &value.encode())
            .and_then(|()| self.store.seen_insert(seen, &key));
        if let Err(e) = stored {
            self.fail(e);
            return false;
        }
        let q = &mut self.hosts[id as usize];
        q.queued += 1;
        q.dirty = true;
        self.queued += 1;
        self.schedule(id);
        true
    }

    fn fail(&mut self, e: StoreError) {
        record_failure(&mut self.failure, e);
    }

    fn schedule(&mut self, id: u32) {
        if let Some(q) = self.hosts.get_mut(id as usize) {
            if q.wants_schedule() {
                q.scheduled = true;
                self.waiting.push(Reverse((q.next_allowed, id)));
            }
        }
    }

    fn promote(&mut self, now: Instant) {
        let mut promoted = false;
        while let Some(Reverse((at, _))) = self.waiting.peek() {
            if *at > now {
                break;
            }
            let Reverse((_, id)) = self.waiting.pop().expect("peeked");
            self.ready.push_back(id);
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
        while let Some(id) = self.ready.pop_front() {
            self.picks_since_shuffle += 1;
            self.hosts[id as usize].scheduled = false;
            if let Some(job) = self.take_job(id, now) {
                self.hosts[id as usize].in_flight = true;
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
    fn take_job(&mut self, id: u32, now: Instant) -> Option<Job> {
        let obey = self.config.obey_robots;
        let q = &mut self.hosts[id as usize];
        if let Some(p) = q.pending_robots.take() {
            return Some(Job {
                kind: JobKind::Robots {
                    origin: p.origin,
                    hops: p.hops,
                },
                url: p.url,
                host: q.name.clone(),
                depth: 0,
                redirects: 0,
                attempt: 0,
            });
        }
        while q.queued > 0 {
            let (key, bytes) = match self.store.queue_pop_first(id) {
                Ok(Some(entry)) => entry,
                Ok(None) => {
                    // The count disagrees with the store; the store is the truth.
                    self.queued -= q.queued;
                    q.queued = 0;
                    break;
                }
                Err(e) => {
                    record_failure(&mut self.failure, e);
                    return None;
                }
            };
            q.queued -= 1;
            q.dirty = true;
            self.queued -= 1;
            let Some((value, url)) =
                QueueValue::decode(&bytes).and_then(|v| Url::parse(&v.url).ok().map(|u| (v, u)))
            else {
                continue;
            };
            let origin = url.origin().ascii_serialization();
            let state = q.robots.entry(origin.clone()).or_insert_with(|| {
                if obey {
                    RobotsState::Unknown
                } else {
                    RobotsState::Known(RobotsRules::allow_all())
                }
            });
            let robots_fetch = match state {
                RobotsState::Known(rules) => {
                    if rules.allows(url.as_str()) {
                        let depth = key_depth(&key);
                        q.in_flight_entry = Some((key, bytes));
                        return Some(Job {
                            kind: JobKind::Page,
                            url,
                            host: q.name.clone(),
                            depth,
                            redirects: value.redirects,
                            attempt: value.attempt,
                        });
                    }
                    self.counters.robots_denied += 1;
                    continue;
                }
                RobotsState::GaveUp => {
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
            // Not runnable before its robots.txt is known: back into the queue, same place.
            if let Err(e) = self.store.queue_insert(&key, &bytes) {
                record_failure(&mut self.failure, e);
                return None;
            }
            q.queued += 1;
            self.queued += 1;
            let Some(attempts) = robots_fetch else {
                self.schedule(id);
                return None;
            };
            *state = RobotsState::Fetching { attempts };
            let url = Url::parse(&format!("{origin}/robots.txt")).ok()?;
            return Some(Job {
                kind: JobKind::Robots { origin, hops: 0 },
                url,
                host: q.name.clone(),
                depth: 0,
                redirects: 0,
                attempt: attempts,
            });
        }
        // Nothing runnable now; a robots retry may have moved the clock.
        self.schedule(id);
        None
    }

    /// Records that a fetch for `host` finished at `now`; the host may run again after its delay.
    pub fn complete(&mut self, host: &str, now: Instant) {
        let Some(&id) = self.ids.get(host) else {
            return;
        };
        let q = &mut self.hosts[id as usize];
        if q.in_flight {
            q.in_flight = false;
            self.in_flight -= 1;
        }
        q.in_flight_entry = None;
        q.next_allowed = q.next_allowed.max(now + q.delay);
        q.dirty = true;
        self.schedule(id);
    }

    /// Puts a failed page job back for another attempt after `backoff`; the whole host waits,
    /// since a failing server should not be hit sooner by its other URLs.
    pub fn retry(&mut self, job: Job, now: Instant, backoff: Duration) {
        let Some(&id) = self.ids.get(&job.host) else {
            return;
        };
        let q = &mut self.hosts[id as usize];
        q.next_allowed = q.next_allowed.max(now + backoff);
        let value = QueueValue {
            redirects: job.redirects,
            attempt: job.attempt + 1,
            url: job.url.into(),
        };
        self.enqueue(id, &seen_key(id, &value.url), job.depth, &value);
        self.complete(&job.host, now);
    }

    /// Applies the result of a robots.txt job and completes it.
    pub fn robots_result(&mut self, job: &Job, outcome: RobotsOutcome, now: Instant) {
        let JobKind::Robots { origin, hops } = &job.kind else {
            return;
        };
        let agent = self.config.robots_agent.clone();
        let (base, max) = (self.config.delay, self.config.max_delay);
        let retry_base = self.config.robots_retry;
        let Some(&id) = self.ids.get(&job.host) else {
            return;
        };
        let q = &mut self.hosts[id as usize];
        let attempts = match q.robots.get(origin) {
            Some(RobotsState::Fetching { attempts }) => *attempts,
            _ => 0,
        };
        // Rules that become known are saved with the text they came from.
        let mut saved: Option<Vec<u8>> = None;
        let new_state = match outcome {
            RobotsOutcome::Fetched { status, body } if (200..300).contains(&status) => {
                let rules = RobotsRules::parse(&agent, &body);
                q.delay = politeness::host_delay(base, rules.crawl_delay(), max);
                saved = Some(encode_robots(id, Some(robots::parsed_part(&body))));
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
            RobotsOutcome::Redirect(_) => {
                saved = Some(encode_robots(id, None));
                RobotsState::Known(RobotsRules::allow_all())
            }
            RobotsOutcome::Fetched { status, .. } if status < 500 => {
                saved = Some(encode_robots(id, None));
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
        if let Some(record) = saved {
            if let Err(e) = self.store.robots_put(origin, &record) {
                self.fail(e);
            }
        }
        let host = job.host.clone();
        self.complete(&host, now);
    }

    /// Drops every queued URL of `origin` on `host` (e.g. an https seed that falls back to
    /// http). Returns how many were dropped.
    pub fn drop_origin(&mut self, host: &str, origin: &str) -> usize {
        let Some(&id) = self.ids.get(host) else {
            return 0;
        };
        let dropped = self.store.queue_drop_where(id, |v| {
            std::str::from_utf8(QueueValue::url_of(v))
                .ok()
                .and_then(|u| Url::parse(u).ok())
                .is_some_and(|u| u.origin().ascii_serialization() == origin)
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
        let dropped = self.store.queue_drop_where(id, |_| true);
        self.forget_dropped(id, dropped)
    }

    /// Commits the frontier (and `meta`, named blobs of the caller's) to the store, durably.
    /// Pages being fetched are saved as queued, so after a crash they are fetched again.
    /// Reports the first store error since the last checkpoint, if any.
    pub fn checkpoint(&mut self, meta: &[(&str, &[u8])]) -> Result<(), StoreError> {
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        let (now, wall) = (Instant::now(), SystemTime::now());
        for (id, q) in self.hosts.iter().enumerate() {
            if let Some((key, bytes)) = &q.in_flight_entry {
                self.store.queue_insert(key, bytes)?;
            }
            if q.dirty || q.in_flight_entry.is_some() {
                let record = HostRecord {
                    queued: q.queued + u64::from(q.in_flight_entry.is_some()),
                    next_allowed: wall + q.next_allowed.saturating_duration_since(now),
                    name: q.name.clone(),
                };
                self.store.host_put(id as u32, &record.encode())?;
            }
        }
        let own = FrontierMeta {
            seq: self.seq,
            counters: self.counters.clone(),
        };
        let own = serde_json::to_vec(&own).expect("plain data serializes");
        self.store.meta_put(META_NAME, &own)?;
        for (name, value) in meta {
            self.store.meta_put(name, value)?;
        }
        self.store.commit()?;
        for q in &mut self.hosts {
            q.dirty = false;
            if let Some((key, _)) = &q.in_flight_entry {
                // Back out of the queue until the next save point; the count changes again
                // when the fetch ends, so the record is rewritten then.
                self.store.queue_remove(key)?;
                q.dirty = true;
            }
        }
        Ok(())
    }

    /// Reads a named blob saved by [`Frontier::checkpoint`].
    pub fn saved_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.store.meta_get(name)
    }

    /// Takes a queued URL out of the frontier (it was completed before a crash, as the WARC
    /// files show). Returns its queue entry as a job, or `None` when it is not queued.
    pub fn take_queued(&mut self, url: &Url) -> Option<Job> {
        let host = url.host_str()?;
        let id = *self.ids.get(host)?;
        let key = self.store.seen_get(&seen_key(id, url.as_str())).ok()??;
        let bytes = self.store.queue_get(&key).ok()??;
        if QueueValue::url_of(&bytes) != url.as_str().as_bytes() {
            return None;
        }
        if let Err(e) = self.store.queue_remove(&key) {
            self.fail(e);
            return None;
        }
        let q = &mut self.hosts[id as usize];
        q.queued = q.queued.saturating_sub(1);
        q.dirty = true;
        self.queued = self.queued.saturating_sub(1);
        let value = QueueValue::decode(&bytes)?;
        Some(Job {
            kind: JobKind::Page,
            url: url.clone(),
            host: q.name.clone(),
            depth: key_depth(&key),
            redirects: value.redirects,
            attempt: value.attempt,
        })
    }

    /// URLs waiting to be fetched.
    pub fn queued(&self) -> usize {
        self.queued as usize
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
        self.ids.get(host).map(|&id| self.hosts[id as usize].delay)
    }
}

/// Keeps the first store error (logged once) for the next checkpoint to report.
fn record_failure(slot: &mut Option<StoreError>, e: StoreError) {
    if slot.is_none() {
        tracing::error!("frontier store: {e}");
        *slot = Some(e);
    }
}

#[cfg(test)]
mod tests;
