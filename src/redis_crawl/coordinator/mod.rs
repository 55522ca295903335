//! The worker's side of the lease protocol, run by the crawl loop on its timer and at save
//! points: send discovered URLs to Redis, refill or release the hosts it holds, renew its
//! leases and write its heartbeat (here); claim hosts (`claim.rs`), acknowledge what the last
//! save point made durable and hand hosts back (`handover.rs`), and ride out Redis outages
//! (`outage.rs`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use redis::Value;

mod changes;
mod claim;
mod handover;
mod outage;
mod share;

use super::connection::Redis;
use super::join::Joined;
use super::keys::Keys;
use super::lease_book::{LeaseBook, Outgoing};
use super::replies::{array, int, parse_entries, text};
use super::scripts::Scripts;
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
    /// Held hosts to refill (new URLs or acknowledgements since the last try).
    dirty: HashSet<String>,
    /// Held hosts with nothing left but unacknowledged entries: an early save point frees them.
    awaiting_ack: HashSet<String>,
    last_renew: Instant,
    next_claim: Instant,
    claim_every: Duration,
    next_beat: Instant,
    /// Set while Redis is unreachable: when to try again, and the current backoff.
    retry_at: Option<(Instant, Duration)>,
    /// The held hosts start nothing: Redis was unreachable past their leases' margin.
    suspended: bool,
    /// Right after an outage: no host whose lease ran out is taken over before then.
    no_takeover_until: Option<Instant>,
    /// Host queues in Redis are ranked (`--order` other than bfs).
    ranked: bool,
    /// Console changes made here, to send.
    changes_out: Vec<String>,
    /// Entries of the crawl's change list read so far.
    changes_seen: usize,
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
}

impl Coordinator {
    /// The coordinator of a joined crawl.
    pub fn new(
        joined: &Joined,
        capacity: usize,
        host_cap: Option<u64>,
        brings_seeds: bool,
        ranked: bool,
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
            dirty: HashSet::new(),
            awaiting_ack: HashSet::new(),
            last_renew: now,
            next_claim: now,
            claim_every: CLAIM_EVERY,
            next_beat: now,
            retry_at: None,
            suspended: false,
            no_takeover_until: None,
            ranked,
            changes_out: Vec::new(),
            changes_seen: 0,
            crawl_over: false,
            stop_requested: false,
            seeds_to_send: brings_seeds,
            seeds_reading: false,
            scope_out: Vec::new(),
            scope_known: joined.scope.len(),
            started: SystemTime::now(),
            out,
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
        i64::from(self.ranked)
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
        let now = Instant::now();
        if let Some((at, _)) = self.retry_at {
            if now < at {
                self.expire_leases(frontier, now);
                return report;
            }
        }
        match self.step(frontier, stats, idle, &mut report).await {
            Ok(()) => {
                if self.retry_at.take().is_some() {
                    tracing::warn!("Redis is reachable again: continuing");
                }
            }
            Err(e) => self.unreachable(e, frontier),
        }
        report.stop_requested = self.stop_requested;
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
        if self.retry_at.is_some() {
            self.recover(frontier, stats).await?;
        }
        let now = Instant::now();
        self.send_outbox(report).await?;
        self.exchange_changes(report).await?;
        if self.seeds_to_send && !self.seeds_reading {
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
        self.refill(frontier, stats, report).await?;
        if self.room() > 0 && now >= self.next_claim && !self.stop_requested {
            let took = self.claim(frontier, report).await?;
            self.claim_every = if took > 0 {
                CLAIM_EVERY
            } else {
                (self.claim_every * 2).min(CLAIM_MAX)
            };
            self.next_claim = now + self.claim_every;
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
            self.beat(stats, "running").await?;
            self.read_share().await?;
            let scope_size: usize = redis::cmd("SCARD")
                .arg(self.keys.crawl("scope"))
                .query_async(&mut self.redis)
                .await?;
            if scope_size != self.scope_known {
                report.scope = redis::cmd("SMEMBERS")
                    .arg(self.keys.crawl("scope"))
                    .query_async(&mut self.redis)
                    .await?;
                self.scope_known = scope_size;
            }
            let stop: Option<String> = redis::cmd("GET")
                .arg(self.keys.crawl("stop"))
                .query_async(&mut self.redis)
                .await?;
            if stop.is_some() && !self.stop_requested {
                tracing::warn!("trawl stop was run for this crawl: stopping");
                self.stop_requested = true;
            }
            if idle && self.held.is_empty() && !self.book().has_outbox() {
                self.crawl_over = self.all_shards_empty().await?;
            }
        }
        Ok(())
    }

    /// Sends discovered URLs, one script call per shard.
    async fn send_outbox(&mut self, report: &mut SyncReport) -> Result<(), redis::RedisError> {
        let outbox = self.book().take_outbox();
        if outbox.is_empty() {
            return Ok(());
        }
        let mut by_shard: HashMap<u32, Vec<Outgoing>> = HashMap::new();
        for o in outbox {
            by_shard
                .entry(self.keys.shard_of(&o.host))
                .or_default()
                .push(o);
        }
        let mut unsent = Vec::new();
        let mut failure = None;
        for (k, links) in by_shard {
            if failure.is_some() {
                unsent.extend(links);
                continue;
            }
            let mut call = self.scripts.admit.key(self.keys.ready(k));
            call.arg(self.keys.shard(k)).arg(self.ranked_arg());
            for o in &links {
                call.arg(&o.host).arg(&o.fp[..]).arg(&o.entry).arg(o.rank);
            }
            match call.invoke_async::<Vec<i64>>(&mut self.redis).await {
                Ok(added) => {
                    for (o, added) in links.iter().zip(added) {
                        if added == 0 {
                            report.duplicates += 1;
                        } else if self.held.contains_key(&o.host) {
                            self.dirty.insert(o.host.clone());
                        } else if self.claim_every > CLAIM_EVERY {
                            // A host nobody may hold has work now: look again soon.
                            self.claim_every = CLAIM_EVERY;
                            self.next_claim = self.next_claim.min(Instant::now() + CLAIM_EVERY);
                        }
                    }
                }
                Err(e) => {
                    unsent.extend(links);
                    failure = Some(e);
                }
            }
        }
        match failure {
            None => Ok(()),
            Some(e) => {
                self.book().restore_outbox(unsent);
                Err(e)
            }
        }
    }

    async fn renew(&mut self, frontier: &mut Frontier) -> Result<(), redis::RedisError> {
        let sent = Instant::now();
        let mut by_shard: HashMap<u32, Vec<String>> = HashMap::new();
        for (host, &k) in &self.held {
            by_shard.entry(k).or_default().push(host.clone());
        }
        for (k, hosts) in by_shard {
            let mut call = self.scripts.renew.key(self.keys.ready(k));
            call.arg(self.keys.shard(k))
                .arg(&self.token)
                .arg(self.lease_ms());
            for h in &hosts {
                call.arg(h);
            }
            let lost: Vec<String> = call.invoke_async(&mut self.redis).await?;
            for host in lost {
                tracing::warn!("lease on {host} lost to another worker");
                self.held.remove(&host);
                self.forget(&host, frontier);
            }
        }
        self.last_renew = sent;
        Ok(())
    }

    /// Asks for more URLs for held hosts that ran dry; releases those with none left.
    async fn refill(
        &mut self,
        frontier: &mut Frontier,
        stats: &WorkerStats<'_>,
        report: &mut SyncReport,
    ) -> Result<(), redis::RedisError> {
        let now = Instant::now();
        let candidates: Vec<String> = self
            .dirty
            .iter()
            .filter(|h| frontier.is_idle(h))
            .cloned()
            .collect();
        for host in candidates {
            let Some(&k) = self.held.get(&host) else {
                self.dirty.remove(&host);
                continue;
            };
            let unacked = self.unacked_pages(&host, stats);
            let give_back = self.over_share();
            let reply: Value = self
                .scripts
                .refill
                .key(self.keys.ready(k))
                .arg(self.keys.shard(k))
                .arg(&self.token)
                .arg(&host)
                .arg(BATCH)
                .arg(frontier.wait_of(&host, now).as_millis() as u64)
                .arg(self.cap_arg())
                .arg(unacked)
                .arg(self.ranked_arg())
                .arg(i64::from(give_back))
                .invoke_async(&mut self.redis)
                .await?;
            self.dirty.remove(&host);
            let mut parts = array(reply).into_iter();
            match parts.next().and_then(text).as_deref() {
                Some("more") => {
                    let entries = parse_entries(parts.next());
                    report.host_quota += parts.next().and_then(int).unwrap_or(0);
                    let n = entries.len() as u64;
                    let id = self.book().id_of(&host);
                    if let Some(id) = id {
                        self.book().extend(id, entries);
                    }
                    frontier.add_queued(&host, n);
                }
                Some("busy") => {
                    self.awaiting_ack.insert(host);
                }
                Some("released") => {
                    report.host_quota += parts.next().and_then(int).unwrap_or(0);
                    self.held.remove(&host);
                    self.forget(&host, frontier);
                }
                _ => {
                    tracing::warn!("lease on {host} lost to another worker");
                    self.held.remove(&host);
                    self.forget(&host, frontier);
                }
            }
        }
        Ok(())
    }

    /// Pages of a held host archived here and not acknowledged yet.
    fn unacked_pages(&self, host: &str, stats: &WorkerStats<'_>) -> u64 {
        let acked = self.acked_pages.get(host).copied().unwrap_or(0);
        stats
            .pages_per_host
            .get(host)
            .map_or(0, |&p| p.saturating_sub(acked))
    }

    async fn beat(
        &mut self,
        stats: &WorkerStats<'_>,
        state: &str,
    ) -> Result<(), redis::RedisError> {
        let unix_ms = |t: SystemTime| {
            t.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis() as u64
        };
        let beat = serde_json::json!({
            "state": state,
            "heartbeat_ms": unix_ms(SystemTime::now()),
            "started_ms": unix_ms(self.started),
            "pages": stats.pages,
            "requests": stats.requests,
            "bytes": stats.bytes,
            "hosts_held": self.held.len(),
            "hungry": self.hungry(),
            "out": self.out,
        });
        redis::cmd("HSET")
            .arg(self.keys.crawl("workers"))
            .arg(&self.worker)
            .arg(beat.to_string())
            .query_async::<()>(&mut self.redis)
            .await
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
