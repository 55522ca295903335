//! The frontier: canonical URLs deduplicated at enqueue, per-host queues with a politeness
//! clock, robots.txt state, and the choice of what to fetch next.
//!
//! Logic with time passed in (`now: Instant`), owned by the crawl loop alone, so no lock is
//! needed and tests can drive the clock. At most one fetch per host is in flight; a host becomes
//! ready again `delay` after its last fetch finished.
//!
//! | part | file |
//! |---|---|
//! | ready and waiting hosts, shuffle | `scheduler.rs` |
//! | one host's counts, clock, robots states | `host.rs` |
//! | a host found down by failed connections, probed, given up | `host_health.rs` |
//! | its settings, and the counts it reports | `settings.rs` |
//! | delays and backoff | `politeness.rs` |
//! | the order of a host's queue (`--order`) | `order.rs` |
//! | backlink counts and re-rank passes (`--order backlinks`) | `backlinks.rs` |
//! | hosts served as one (`--politeness ip/domain`) | `groups.rs` |
//! | a new name's lookup and its group (`--politeness ip`) | `group_membership.rs` |
//! | sitemaps: discovery, nesting, once per run | `sitemaps.rs` |
//! | what the live console sees and changes: hosts, delay, releasing a job | `operator.rs` |
//! | robots.txt: our group of its lines / rules matched | `robots_group.rs` / `robots_match.rs` |
//! | robots.txt rules of an origin / state machine | `robots_rules.rs` / `robots_state.rs` |
//! | jobs, candidates, "what next?" | `job.rs` |
//! | what finished jobs change: completion, retries, robots.txt results, drops | `outcomes.rs` |
//! | restore, checkpoint, replay's take-out | `persistence.rs` over `storage.rs` (the seam) |
//! | the storage implementation (redb) | `crate::crawl_db` |
//! | recently seen URLs | `seen_cache.rs` |
//! | a link's fingerprint and host test, made by the job that found it | `link_key.rs` |
//!
//! The queued URLs and the seen set live behind [`FrontierStorage`], so memory does not grow
//! with the queue: in memory are only per-host state and a bounded cache of recently seen URLs.
//! [`Frontier::checkpoint`] makes the storage durable at a save point.

pub mod backlinks;
mod group_membership;
pub mod groups;
pub mod host;
pub mod host_health;
mod job;
mod late_duplicates;
pub mod lease;
mod link_key;
mod operator;
pub mod order;
mod outcomes;
mod persistence;
pub mod politeness;
mod robots_group;
mod robots_index;
mod robots_match;
mod robots_redirects;
pub mod robots_rules;
pub mod robots_state;
pub mod scheduler;
pub mod seen_cache;
mod settings;
pub mod sitemaps;
pub mod storage;

use std::collections::HashMap;
use std::time::Instant;

use url::Url;

use crate::url_rules::origin_prefix;

use backlinks::Backlinks;
pub use groups::PolitenessKey;
use groups::{Groups, Membership};
use host::{HostState, PendingRobots};
pub use host_health::{HostDown, Silence};
pub use job::{Candidate, Job, JobKind, Next};
pub use link_key::{link_keys, LinkKey};
pub use order::CrawlOrder;
use persistence::{FrontierMeta, META_NAME};
use robots_redirects::{robots_job, Followed, RobotsRedirects};
pub use robots_rules::RobotsRules;
use robots_state::Gate;
pub use robots_state::{RobotsOutcome, RobotsState};
use scheduler::{Pick, Placement, Scheduler, TURN};
use seen_cache::SeenCache;
pub use settings::{FrontierConfig, FrontierCounters};
pub use storage::Admit;
use storage::{fingerprint, Fingerprint, FrontierStorage, QueuedUrl, StoreError};

/// Fingerprints per generation of the seen cache (two tables of 524,288 slots: ~18 MB at most).
const SEEN_CACHE_GENERATION: usize = 450_000;

/// The crawl frontier.
pub struct Frontier {
    config: FrontierConfig,
    storage: Box<dyn FrontierStorage>,
    /// Per-host state, indexed by host id.
    hosts: Vec<HostState>,
    ids: HashMap<String, u32>,
    seen_cache: SeenCache,
    scheduler: Scheduler,
    groups: Groups,
    /// Sitemap URLs queued this run.
    sitemaps_seen: std::collections::HashSet<String>,
    /// The run's sitemap share was reached and said so.
    sitemaps_all_said: bool,
    robots_redirects: RobotsRedirects,
    /// Link counts waiting for a re-rank pass (`--order backlinks`).
    backlinks: Option<Backlinks>,
    /// Only page requisites are handed out (the page target is reached; see
    /// [`Frontier::requisites_only`]).
    requisites_only: bool,
    in_flight: usize,
    queued: u64,
    counters: FrontierCounters,
    /// Late duplicates (see [`FrontierStorage::late_duplicates`]) not yet taken by the caller.
    late_found: u64,
    /// The first storage error since the last checkpoint; the next checkpoint reports it.
    failure: Option<StoreError>,
}

impl Frontier {
    /// The frontier saved in `storage` (empty for new storage), at time `now`.
    pub fn open(
        config: FrontierConfig,
        storage: Box<dyn FrontierStorage>,
        now: Instant,
    ) -> Result<Self, StoreError> {
        let meta: FrontierMeta = storage
            .meta_get(META_NAME)?
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let ranked = config.order == CrawlOrder::Backlinks;
        let keep_urls = storage.ranks_by_url();
        let scheduler = Scheduler::new(fastrand::Rng::new());
        let mut frontier = Frontier {
            config: config.clone(),
            storage,
            hosts: Vec::new(),
            ids: HashMap::new(),
            seen_cache: SeenCache::new(SEEN_CACHE_GENERATION),
            scheduler: if ranked {
                scheduler.ranked()
            } else {
                scheduler
            },
            groups: Groups::new(config.politeness),
            sitemaps_seen: Default::default(),
            sitemaps_all_said: false,
            robots_redirects: Default::default(),
            backlinks: ranked.then(|| Backlinks::new(now, keep_urls)),
            requisites_only: false,
            in_flight: 0,
            queued: 0,
            counters: meta.counters.clone(),
            late_found: 0,
            failure: None,
        };
        frontier.restore(now, &meta)?;
        Ok(frontier)
    }

    /// Makes the shuffle order reproducible (tests).
    #[cfg(test)]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.scheduler.set_rng(fastrand::Rng::with_seed(seed));
        self
    }

    /// The id of a host, creating its state if it is new.
    fn host_id(&mut self, host: &str, now: Instant) -> u32 {
        if let Some(&id) = self.ids.get(host) {
            return id;
        }
        let id = self.hosts.len() as u32;
        let mut q = HostState::new(host.to_string(), now, self.config.delay);
        q.group = self.groups.membership_of(host, now);
        self.hosts.push(q);
        self.ids.insert(host.to_string(), id);
        self.storage.host_named(id, host);
        id
    }

    /// Adds a URL unless it was seen before.
    pub fn push(&mut self, candidate: Candidate, now: Instant) -> Admit {
        let fp = fingerprint(candidate.url.as_str());
        self.push_one(candidate, fp, false, now).1
    }

    /// Adds a URL with fingerprint `fp` unless it was seen before; returns its host id too.
    /// A `link` of a page may be admitted and found to be a duplicate later
    /// ([`FrontierStorage::admit_link`]).
    fn push_one(
        &mut self,
        candidate: Candidate,
        fp: Fingerprint,
        link: bool,
        now: Instant,
    ) -> (u32, Admit) {
        let id = self.host_id(candidate.url.host_str().unwrap_or(""), now);
        self.hosts[id as usize].has_pages |= candidate.requisite == 0;
        if self.seen_cache.contains(&fp) {
            return (id, Admit::Seen);
        }
        self.seen_cache.insert(&fp);
        let entry = self.entry_of(candidate);
        let admitted = if link {
            self.storage.admit_link(id, &fp, &entry)
        } else {
            self.storage.admit(id, &fp, &entry)
        };
        let admit = match admitted {
            Ok(Admit::Queued) => {
                self.queued_one(id);
                Admit::Queued
            }
            Ok(other) => other,
            Err(e) => {
                self.fail(e);
                Admit::Seen
            }
        };
        (id, admit)
    }

    /// The queue entry of `candidate`, ranked.
    fn entry_of(&self, candidate: Candidate) -> QueuedUrl {
        let rank =
            self.config
                .order
                .rank_entry(&candidate.url, candidate.depth, candidate.requisite);
        QueuedUrl {
            url: candidate.url.into(),
            depth: candidate.depth,
            rank,
            requisite: candidate.requisite,
            redirects: candidate.redirects,
            attempt: 0,
            sitemap: 0,
            referer: candidate.referer,
        }
    }

    fn queued_one(&mut self, id: u32) {
        let q = &mut self.hosts[id as usize];
        q.queued += 1;
        q.dirty = true;
        self.queued += 1;
        self.schedule(id);
    }

    fn fail(&mut self, e: StoreError) {
        record_failure(&mut self.failure, e);
    }

    fn schedule(&mut self, id: u32) {
        if let Some(q) = self.hosts.get_mut(id as usize) {
            if q.wants_schedule() {
                q.scheduled = true;
                let at = match self.groups.next_allowed(q.group) {
                    Some(group) => q.next_allowed.max(group),
                    None => q.next_allowed,
                };
                self.scheduler.wait_until(id, at);
            }
        }
    }

    /// From now on hands out only page requisites (and the robots.txt and lookups they
    /// need): the page target is reached, and what the pages archived need to render is
    /// fetched before the crawl ends. A host whose next URL is a page is set aside; its
    /// queue is kept.
    pub fn requisites_only(&mut self) {
        self.requisites_only = true;
        for q in &mut self.hosts {
            q.sitemaps.clear();
        }
    }

    /// Picks the next job at time `now`.
    pub fn next(&mut self, now: Instant) -> Next {
        self.settle_late_duplicates();
        self.rerank_if_due(now);
        let (hosts, obey) = (&self.hosts, self.config.obey_robots);
        self.scheduler.promote(now, |id| {
            let q = &hosts[id as usize];
            Placement {
                priority: q.backlinks,
                unopened: obey && q.robots.is_empty(),
                turn_over: q.turn >= TURN,
            }
        });
        while let Some(Pick { id, opens }) = self.scheduler.pop_ready() {
            let q = &mut self.hosts[id as usize];
            q.scheduled = false;
            if q.next_allowed > now {
                // Its clock moved on since it was scheduled (a request made for it elsewhere).
                self.schedule(id);
                continue;
            }
            if opens {
                q.turn = 0;
            }
            let group = q.group;
            if group == Membership::Pending {
                if let Some(job) = self.resolve_job(id) {
                    self.hosts[id as usize].in_flight = true;
                    self.in_flight += 1;
                    return Next::Job(job);
                }
                continue;
            }
            if self.groups.busy(group) {
                self.hosts[id as usize].parked = true;
                self.groups.park(group, id);
                continue;
            }
            if self.groups.next_allowed(group).is_some_and(|at| at > now) {
                self.schedule(id);
                continue;
            }
            if let Some(job) = self.take_job(id, now) {
                self.hosts[id as usize].in_flight = true;
                self.hosts[id as usize].turn += 1;
                self.in_flight += 1;
                self.groups.start(group);
                return Next::Job(job);
            }
        }
        if let Some(at) = self.scheduler.next_wake() {
            Next::Wait(at)
        } else if self.in_flight > 0 {
            Next::Idle
        } else {
            Next::Exhausted
        }
    }

    /// The next runnable job of one host, dropping robots-denied URLs on the way.
    fn take_job(&mut self, id: u32, now: Instant) -> Option<Job> {
        if self.hosts[id as usize].health.given_up() {
            self.drop_given_up(id);
            return None;
        }
        let obey = self.config.obey_robots;
        if let Some(p) = self.hosts[id as usize].pending_robots.take() {
            match self.follow_robots_redirect(id, p, now) {
                Followed::Adopted => {}
                Followed::Fetch(job) => return Some(job),
                Followed::Wait => return None,
            }
        }
        if let Some(job) = self.next_sitemap(id, now) {
            return Some(job);
        }
        let q = &mut self.hosts[id as usize];
        while q.queued > 0 {
            let entry = match self.storage.pop(id) {
                Ok(Some(entry)) => entry,
                Ok(None) => {
                    // The count disagrees with storage; storage is the truth.
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
            if self.requisites_only && entry.requisite == 0 {
                // Requisites rank first, so the host has none left: set it aside.
                if let Err(e) = self.storage.put_back(id) {
                    record_failure(&mut self.failure, e);
                }
                q.queued += 1;
                self.queued += 1;
                return None;
            }
            let Ok(url) = Url::parse(&entry.url) else {
                self.storage.finish(id);
                continue;
            };
            // No allocation per job for the robots lookup (unless the URL has credentials).
            let spelled;
            let origin: &str = match origin_prefix(&url) {
                Some(prefix) => prefix,
                None => {
                    spelled = url.origin().ascii_serialization();
                    &spelled
                }
            };
            if !q.robots.contains_key(origin) {
                q.robots
                    .insert(origin.to_string(), RobotsState::initial(obey));
            }
            let state = q.robots.get_mut(origin).expect("inserted just above");
            let robots_fetch = match state.gate(url.as_str(), now) {
                Gate::Allowed => {
                    return Some(Job {
                        kind: entry_kind(&entry),
                        url,
                        host: q.name.clone(),
                        depth: entry.depth,
                        redirects: entry.redirects,
                        attempt: entry.attempt,
                        referer: entry.referer,
                    });
                }
                Gate::Denied => {
                    if entry.depth == 0 && entry.redirects == 0 && entry.requisite == 0 {
                        // Visible without -v, as a seed that answers an error is.
                        tracing::warn!("seed {url} is disallowed by {origin}/robots.txt: not fetched (--ignore-robots fetches it)");
                    }
                    self.counters.robots_denied += 1;
                    self.storage.finish(id);
                    continue;
                }
                Gate::GaveUp => {
                    self.counters.robots_unavailable += 1;
                    self.storage.finish(id);
                    continue;
                }
                Gate::FetchRobots(attempts) => Some(attempts),
                Gate::Wait(retry_at) => {
                    if let Some(at) = retry_at {
                        q.next_allowed = q.next_allowed.max(at);
                    }
                    None
                }
            };
            // Not runnable before its robots.txt is known: back into the queue, same place.
            if let Err(e) = self.storage.put_back(id) {
                record_failure(&mut self.failure, e);
                return None;
            }
            q.queued += 1;
            self.queued += 1;
            let Some(attempts) = robots_fetch else {
                self.schedule(id);
                return None;
            };
            let robots_url = Url::parse(&format!("{origin}/robots.txt")).ok()?;
            return Some(robots_job(q, origin.to_string(), robots_url, 0, attempts));
        }
        // Nothing runnable now; a robots retry may have moved the clock.
        self.schedule(id);
        None
    }

    /// URLs waiting to be fetched.
    pub fn queued(&self) -> usize {
        self.queued as usize
    }

    /// URLs the next run would fetch: those waiting, and those in flight, which the final save
    /// point keeps as queued (fetches abandoned at `--shutdown-timeout`).
    pub fn queued_for_next_run(&self) -> usize {
        self.queued() + self.storage.held()
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
    #[cfg(test)]
    pub fn host_delay(&self, host: &str) -> Option<std::time::Duration> {
        self.ids.get(host).map(|&id| self.hosts[id as usize].delay)
    }
}

/// Keeps the first storage error (logged once) for the next checkpoint to report.
fn record_failure(slot: &mut Option<StoreError>, e: StoreError) {
    if slot.is_none() {
        tracing::error!("frontier store: {e}");
        *slot = Some(e);
    }
}

/// The kind of a job for a queued URL: a page, a page requisite, or (in a shared crawl) a
/// sitemap file.
fn entry_kind(entry: &QueuedUrl) -> JobKind {
    match (entry.sitemap, entry.requisite) {
        (0, 0) => JobKind::Page,
        (0, hops) => JobKind::Requisite { hops },
        (level, _) => JobKind::Sitemap {
            nesting: u32::from(level - 1),
        },
    }
}

#[cfg(test)]
mod tests;
