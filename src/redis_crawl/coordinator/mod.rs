//! The worker's side of the lease protocol, run by the crawl loop on its timer and at save
//! points. The step (here) renews leases and orders the rest: discovered URLs go to Redis
//! (`outbox.rs`) and held hosts that ran dry are refilled or released (`refill.rs`), both in
//! the background (`background.rs`); console changes go out and come in (`changes.rs`); hosts
//! are claimed (`claim.rs`); once a second the heartbeat goes out and the others' come in
//! (`beat.rs`, `share.rs`). Save points acknowledge what they made durable and hand hosts back
//! (`handover.rs`); Redis outages are ridden out (`outage.rs`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

mod background;
mod beat;
mod changes;
mod claim;
mod handover;
mod lost_state;
mod outage;
mod outbox;
mod refill;
mod share;

use super::connection::Redis;
use super::join::Joined;
use super::keys::Keys;
use super::lease_book::LeaseBook;
use super::scripts::Scripts;
use crate::frontier::order::CrawlOrder;
use crate::frontier::Frontier;

/// Entries handed over per host and call.
const BATCH: usize = 32;
/// How often free hosts are looked for while there is room; doubled (up to `CLAIM_MAX`) while
/// looking finds none, and reset when this worker queues URLs for a host it does not hold.
const CLAIM_EVERY: Duration = Duration::from_millis(500);
/// The longest pause between two looks for free hosts.
const CLAIM_MAX: Duration = Duration::from_secs(4);
/// How often the heartbeat, the stop flag and the crawl's end are checked.
const BEAT_EVERY: Duration = Duration::from_secs(1);

/// What a sync step found, for the crawl loop.
#[derive(Debug, Default)]
pub struct SyncReport {
    /// Discovered URLs Redis answered were seen before.
    pub duplicates: u64,
    /// Queued URLs dropped because their host has its pages (`--max-pages-per-host`).
    pub host_quota: u64,
    /// Crawl-wide page counts of hosts just adopted.
    pub host_pages: Vec<(String, u64)>,
    /// `trawl stop` was run for this crawl.
    pub stop_requested: bool,
    /// The crawl's state in Redis is lost (`lost_state.rs`): the worker stops.
    pub state_lost: bool,
    /// Pages committed under `--max-pages` crawl-wide, when the heartbeat round read them.
    pub committed: Option<u64>,
    /// The crawl's scope seeds, when other workers added some since the last report.
    pub scope: Vec<String>,
    /// Console changes other workers made (JSON), in order.
    pub changes: Vec<String>,
}

/// One worker's coordinator.
pub struct Coordinator {
    redis: Redis,
    keys: Keys,
    scripts: Arc<Scripts>,
    worker: String,
    token: String,
    lease: Duration,
    book: Arc<Mutex<LeaseBook>>,
    /// Held hosts and their shard.
    held: HashMap<String, u32>,
    /// Most hosts held at once.
    capacity: usize,
    /// Most hosts to hold while another worker has too few (`share.rs`).
    share_limit: Option<usize>,
    /// When each other worker's heartbeat last changed (`share.rs`).
    beats_seen: share::BeatsSeen,
    /// `--max-pages-per-host`.
    host_cap: Option<u64>,
    /// Crawl-wide pages of each held host as last acknowledged.
    acked_pages: HashMap<String, u64>,
    /// Discovered URLs being sent in the background (`outbox.rs`).
    sending: Option<outbox::Sending>,
    /// Held hosts being refilled in the background (`refill.rs`).
    refilling: Option<refill::Refilling>,
    /// Told when a background send or refill has finished (`background.rs`).
    finished: Arc<tokio::sync::Notify>,
    /// Held hosts to refill (new URLs or acknowledgements since the last try).
    dirty: HashSet<String>,
    /// Shards whose hosts held before a restart were taken back (`reclaim`).
    reclaimed_shards: u32,
    /// Held hosts with nothing left but unacknowledged entries: an early save point frees them.
    awaiting_ack: HashSet<String>,
    last_renew: Instant,
    next_claim: Instant,
    claim_every: Duration,
    next_beat: Instant,
    /// Set while Redis is unreachable: since when, when to try again (`outage.rs`).
    outage: Option<outage::Outage>,
    /// The held hosts start nothing: Redis was unreachable past their leases' margin.
    suspended: bool,
    /// Right after an outage: no host whose lease ran out is taken over before then.
    no_takeover_until: Option<Instant>,
    /// How host queues in Redis are kept, as the scripts' `ranked` argument: 0 lists (bfs),
    /// 1 sorted sets (path-depth, random), 2 sorted sets whose URLs and hosts gain rank by
    /// backlinks.
    ranked: i64,
    /// Console changes made here, to send.
    changes_out: Vec<String>,
    /// Entries of the crawl's change list read so far.
    changes_seen: usize,
    /// A read of the change list under way (`changes.rs`).
    reading_changes: Option<changes::Reading>,
    /// The change list was read once (the first step waits for it).
    changes_read: bool,
    /// True once every shard was seen empty while this worker had nothing left.
    crawl_over: bool,
    /// Set once `trawl stop` was seen.
    stop_requested: bool,
    /// This worker brought seeds that are not yet in Redis.
    seeds_to_send: bool,
    /// Its seeds file is still being read: the crawl is not seeded yet.
    seeds_reading: bool,
    /// Scope seeds added here, to share.
    scope_out: Vec<String>,
    /// Scope seeds known here (the size of the crawl's scope set).
    scope_known: usize,
    /// For the heartbeat.
    started: SystemTime,
    out: String,
    /// When the crawl was created, as joined: its record with another value means Redis lost it.
    created: String,
    /// Why the crawl's state in Redis is known lost (`lost_state.rs`).
    state_lost: Option<String>,
}

impl Coordinator {
    /// The coordinator of a joined crawl.
    pub fn new(
        joined: &Joined,
        capacity: usize,
        host_cap: Option<u64>,
        brings_seeds: bool,
        order: CrawlOrder,
        out: String,
    ) -> Self {
        let now = Instant::now();
        Coordinator {
            redis: joined.redis.clone(),
            keys: joined.keys.clone(),
            scripts: joined.scripts.clone(),
            worker: joined.worker.clone(),
            token: joined.token.clone(),
            lease: joined.lease,
            book: joined.book.clone(),
            held: HashMap::new(),
            capacity: capacity.max(1),
            share_limit: None,
            beats_seen: share::BeatsSeen::new(),
            host_cap,
            acked_pages: HashMap::new(),
            sending: None,
            refilling: None,
            finished: Arc::new(tokio::sync::Notify::new()),
            dirty: HashSet::new(),
            reclaimed_shards: 0,
            awaiting_ack: HashSet::new(),
            last_renew: now,
            next_claim: now,
            claim_every: CLAIM_EVERY,
            next_beat: now,
            outage: None,
            suspended: false,
            no_takeover_until: None,
            ranked: match order {
                CrawlOrder::Bfs => 0,
                CrawlOrder::PathDepth | CrawlOrder::Random => 1,
                CrawlOrder::Backlinks => 2,
            },
            changes_out: Vec::new(),
            changes_seen: 0,
            reading_changes: None,
            changes_read: false,
            crawl_over: false,
            stop_requested: false,
            seeds_to_send: brings_seeds,
            seeds_reading: false,
            scope_out: Vec::new(),
            scope_known: joined.scope.len(),
            started: SystemTime::now(),
            out,
            created: joined.created.clone(),
            state_lost: None,
        }
    }

    fn book(&self) -> MutexGuard<'_, LeaseBook> {
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True once the crawl has no work left anywhere.
    pub fn crawl_over(&self) -> bool {
        self.crawl_over
    }

    /// Whether this worker is still reading its seeds file: until it has (and sent them with a
    /// step's outbox), the crawl is not marked seeded.
    pub fn set_seeds_reading(&mut self, reading: bool) {
        self.seeds_reading = reading;
    }

    /// Hosts held now.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// True when `host`, whose fetch just finished or whose queued URL was just declined, ran
    /// dry here while Redis may hold more of it: refilling it now, rather than at the next
    /// step, keeps a crawl of few hosts and no delay from waiting a step (up to 250 ms) for
    /// every batch of URLs.
    pub fn ran_dry(&self, host: &str, frontier: &Frontier) -> bool {
        self.may_refill(host) && frontier.is_idle(host)
    }

    /// True when `host` has news for Redis and no refill batch is under way: asked before its
    /// fetch is applied, so that the host's name is copied only then.
    pub fn may_refill(&self, host: &str) -> bool {
        self.refilling.is_none() && self.dirty.contains(host)
    }

    /// Refills the hosts that ran dry ([`Coordinator::ran_dry`]) now. What their pages found is
    /// sent first, so that Redis ranks their queues with it (`--order backlinks`): when links
    /// wait to be sent, they go now, and the refill follows when the send has finished
    /// ([`Coordinator::advance`]).
    pub fn refill_dry(&mut self, frontier: &Frontier, stats: &WorkerStats<'_>) {
        if self.outage.is_some() || self.sending.is_some() || self.state_lost() {
            return;
        }
        if self.book().has_outgoing() {
            self.start_send();
        } else {
            self.start_refill(frontier, stats);
        }
    }

    /// True when held hosts sit idle only because their last pages are not acknowledged yet:
    /// a save point now lets them go (and others come).
    pub fn wants_save(&self) -> bool {
        !self.awaiting_ack.is_empty()
    }

    /// Scope seeds this worker added (redirects out of a seed's chain), for the others.
    pub fn share_scope(&mut self, added: Vec<String>) {
        self.scope_out.extend(added);
    }

    fn lease_ms(&self) -> u64 {
        self.lease.as_millis() as u64
    }

    fn ranked_arg(&self) -> i64 {
        self.ranked
    }

    fn cap_arg(&self) -> i64 {
        self.host_cap.map_or(-1, |c| c as i64)
    }

    /// One step: send discovered URLs, renew, refill, claim, heartbeat. `idle`: the local
    /// frontier has nothing to run or wait for (then the crawl's end is checked).
    pub async fn sync(
        &mut self,
        frontier: &mut Frontier,
        stats: &WorkerStats<'_>,
        idle: bool,
    ) -> SyncReport {
        let mut report = SyncReport::default();
        if self.state_lost() {
            report.state_lost = true;
            return report;
        }
        let now = Instant::now();
        if let Some(at) = self.outage.map(|o| o.retry_at) {
            if now < at {
                self.expire_leases(frontier, now);
                return report;
            }
            if let Err(e) = self.probe().await {
                self.unreachable(e, frontier);
                return report;
            }
        }
        match self.step(frontier, stats, idle, &mut report).await {
            Ok(()) => {
                if let Some(outage) = self.outage.take().filter(|_| !self.state_lost()) {
                    let secs = outage.since.elapsed().as_secs_f64();
                    tracing::warn!("Redis is reachable again after {secs:.1}s: continuing");
                }
            }
            Err(e) => self.unreachable(e, frontier),
        }
        report.stop_requested = self.stop_requested;
        report.state_lost = self.state_lost();
        report
    }

    fn forget(&mut self, host: &str, frontier: &mut Frontier) {
        frontier.lose(host);
        let id = self.book().id_of(host);
        if let Some(id) = id {
            self.book().drop_host(id);
        }
        self.acked_pages.remove(host);
        self.dirty.remove(host);
        self.awaiting_ack.remove(host);
    }

    async fn step(
        &mut self,
        frontier: &mut Frontier,
        stats: &WorkerStats<'_>,
        idle: bool,
        report: &mut SyncReport,
    ) -> Result<(), redis::RedisError> {
        if self.outage.is_some() {
            self.recover(frontier, stats).await?;
            if self.state_lost() {
                return Ok(());
            }
        }
        let now = Instant::now();
        // Discovered URLs go out in the background (`outbox.rs`); the seeds count as sent once
        // nothing is left to send. While seeding, they go out now, so that this step's look
        // for free hosts finds them.
        if self.seeds_to_send {
            // Seeds just queued are free hosts: look for them in this step, not after the
            // back-off of a look that found none before they were sent.
            if self.book().has_outbox() {
                self.next_claim = now;
                self.claim_every = CLAIM_EVERY;
            }
            self.send_outbox(report).await?;
        } else {
            self.collect_sent(report, false).await?;
        }
        self.push_changes().await?;
        // The first step waits for the console changes made so far; later ones come in the
        // background (`changes.rs`).
        self.collect_changes(report, false).await?;
        self.start_reading_changes();
        if !self.changes_read {
            self.collect_changes(report, true).await?;
            self.changes_read = true;
        }
        if self.seeds_to_send && !self.seeds_reading && self.all_sent() {
            // The seeds are queued in Redis now: from here on, empty shards mean the end.
            redis::cmd("HSET")
                .arg(self.keys.crawl("meta"))
                .arg("seeded")
                .arg(1)
                .query_async::<()>(&mut self.redis)
                .await?;
            self.seeds_to_send = false;
        }
        if now >= self.last_renew + self.lease / 3 {
            self.renew(frontier).await?;
        }
        // Held hosts that ran dry are refilled in the background too (`refill.rs`).
        self.collect_refills(frontier, report, false).await?;
        self.start_refill(frontier, stats);
        self.start_send();
        let room = self.room();
        if room > 0 && now >= self.next_claim && !self.stop_requested {
            let took = self.claim(frontier, report).await?;
            self.claim_every = if took > 0 {
                CLAIM_EVERY
            } else {
                (self.claim_every * 2).min(CLAIM_MAX)
            };
            // A full look: there may be more free hosts, so look again at the next step.
            self.next_claim = if took >= room {
                now
            } else {
                now + self.claim_every
            };
        }
        if !self.scope_out.is_empty() {
            redis::cmd("SADD")
                .arg(self.keys.crawl("scope"))
                .arg(&self.scope_out)
                .query_async::<()>(&mut self.redis)
                .await?;
            self.scope_out.clear();
        }
        if now >= self.next_beat {
            self.next_beat = now + BEAT_EVERY;
            self.beat_round(stats, report).await?;
            if self.state_lost() {
                return Ok(());
            }
        }
        // Checked at every step once this worker has nothing (one cheap call), so that the
        // crawl ends as soon as its last host is let go.
        if idle && self.held.is_empty() && self.all_sent() && self.refilling.is_none() {
            self.crawl_over = self.all_shards_empty().await?;
        }
        Ok(())
    }

    async fn renew(&mut self, frontier: &mut Frontier) -> Result<(), redis::RedisError> {
        let sent = Instant::now();
        let mut by_shard: HashMap<u32, Vec<String>> = HashMap::new();
        for (host, &k) in &self.held {
            by_shard.entry(k).or_default().push(host.clone());
        }
        let by_shard: Vec<(u32, Vec<String>)> = by_shard.into_iter().collect();
        let scripts = self.scripts.clone();
        let calls: Vec<_> = by_shard
            .iter()
            .map(|(k, hosts)| {
                let mut call = scripts.renew.key(self.keys.ready(*k));
                call.arg(self.keys.shard(*k))
                    .arg(&self.token)
                    .arg(self.lease_ms());
                for h in hosts {
                    call.arg(h);
                }
                call
            })
            .collect();
        let replies = self.redis.invoke_all::<Vec<String>>(&calls).await;
        drop(calls);
        let mut failure = None;
        let mut gone = Vec::new();
        for reply in replies {
            match reply {
                Ok(lost) => {
                    for host in lost {
                        // `!host`: its record is gone too (`lost_state.rs`).
                        if let Some(host) = host.strip_prefix('!') {
                            gone.push(host.to_string());
                            continue;
                        }
                        tracing::warn!("lease on {host} lost to another worker");
                        self.held.remove(&host);
                        self.forget(&host, frontier);
                    }
                }
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        if !gone.is_empty() {
            self.hosts_gone(&gone).await;
            return Ok(());
        }
        if let Some(e) = failure {
            return Err(e);
        }
        self.last_renew = sent;
        Ok(())
    }

    /// A held host's crawl-wide pages as this worker counts them: those acknowledged, and
    /// those archived here since. Redis is told this total, never an increment, so that a call
    /// repeated after its answer was lost counts no page twice.
    fn pages_counted(&self, host: &str, stats: &WorkerStats<'_>) -> u64 {
        let acked = self.acked_pages.get(host).copied().unwrap_or(0);
        stats
            .pages_per_host
            .get(host)
            .map_or(acked, |&p| p.max(acked))
    }
}

/// The worker's counters the coordinator reports (heartbeat) and needs (page counts per host).
#[derive(Debug)]
pub struct WorkerStats<'a> {
    /// Pages archived by this worker.
    pub pages: u64,
    /// Requests made.
    pub requests: u64,
    /// Response bytes downloaded.
    pub bytes: u64,
    /// Pages archived per host (crawl-wide for held hosts).
    pub pages_per_host: &'a HashMap<String, u64>,
}
