//! Taking hosts: claiming due hosts up to the worker's capacity (free ones, and hosts whose
//! lease expired unless an outage just ended), taking back at start the hosts a previous process
//! of this worker held, adopting what those calls return, and asking whether any shard still has
//! work (the crawl's end).

use std::time::{Duration, Instant};

use redis::{ScriptInvocation, Value};

use super::{Coordinator, SyncReport, BATCH};
use crate::frontier::lease::Adopted;
use crate::frontier::Frontier;
use crate::redis_crawl::replies::{array, parse_adopted};

impl Coordinator {
    /// Hosts to claim now: up to a quarter of the capacity per look, so that when hosts are
    /// few the first worker to look does not take them all, and never beyond its share while
    /// another worker has too few (`share.rs`).
    pub(super) fn room(&self) -> usize {
        self.most_hosts()
            .saturating_sub(self.held.len())
            .min((self.capacity / 4).max(1))
    }

    /// Takes in hosts that a claim or reclaim returned.
    fn take_in(
        &mut self,
        reply: Value,
        frontier: &mut Frontier,
        report: &mut SyncReport,
        now: Instant,
    ) {
        for host in array(reply) {
            let Some(a) = parse_adopted(host) else {
                continue;
            };
            frontier.adopt(
                Adopted {
                    name: a.name.clone(),
                    wait: Duration::from_millis(a.wait_ms),
                    robots: a.robots,
                    queued: a.entries.len() as u64,
                },
                now,
            );
            let id = self.book().id_of(&a.name);
            if let Some(id) = id {
                self.book().hold(id, a.entries);
            }
            report.host_quota += a.dropped;
            report.host_pages.push((a.name.clone(), a.pages));
            self.acked_pages.insert(a.name.clone(), a.pages);
            // Refilled (or, with nothing left, released) once the frontier has taken what came.
            self.dirty.insert(a.name.clone());
            let shard = self.keys.shard_of(&a.name);
            self.held.insert(a.name, shard);
        }
    }

    /// Shards whose hosts [`Coordinator::reclaim`] has taken back so far.
    pub fn reclaimed_shards(&self) -> u32 {
        self.reclaimed_shards
    }

    /// Takes back, at start, the hosts this worker's previous process held (restart with the
    /// same `--worker-id`), so its unacknowledged pages come back to it and none is fetched
    /// twice.
    pub async fn reclaim(
        &mut self,
        frontier: &mut Frontier,
    ) -> Result<SyncReport, redis::RedisError> {
        let mut report = SyncReport::default();
        let mine = format!("{}#", self.worker);
        // A failed call is tried again from its shard: those before it answered.
        for k in self.reclaimed_shards..self.keys.shards() {
            let reply: Value = self
                .scripts
                .reclaim
                .key(self.keys.ready(k))
                .arg(self.keys.shard(k))
                .arg(&self.token)
                .arg(&mine)
                .arg(self.lease_ms())
                .arg(BATCH)
                .arg(self.cap_arg())
                .arg(self.ranked_arg())
                .invoke_async(&mut self.redis)
                .await?;
            self.take_in(reply, frontier, &mut report, Instant::now());
            self.reclaimed_shards = k + 1;
        }
        self.last_renew = Instant::now();
        if !self.held.is_empty() {
            tracing::warn!(
                "took back {} host(s) this worker held before it stopped",
                self.held.len()
            );
        }
        Ok(report)
    }

    /// Claims due hosts, shard by shard from a random start, until the worker is full: in one
    /// call on a single server; on a cluster (a script touches one slot) every shard is asked
    /// how many hosts it has due, then those that have some are asked for their part of the
    /// room, each round all at once (the crawl loop waits two round trips, not one per shard).
    /// Returns how many hosts it took.
    pub(super) async fn claim(
        &mut self,
        frontier: &mut Frontier,
        report: &mut SyncReport,
    ) -> Result<usize, redis::RedisError> {
        let shards = self.keys.shards();
        let start = fastrand::u32(0..shards);
        let before = self.held.len();
        let takeover = i64::from(self.may_take_over(Instant::now()));
        let room = self.room();
        if !self.redis.is_cluster() {
            let mut call = self.scripts.claim_all.arg(self.keys.shard_base());
            call.arg(shards).arg(start);
            self.claim_args(&mut call, room, takeover);
            let reply: Value = call.invoke_async(&mut self.redis).await?;
            self.take_in(reply, frontier, report, Instant::now());
            return Ok(self.held.len() - before);
        }
        let order: Vec<u32> = (0..shards).map(|i| (start + i) % shards).collect();
        let scripts = self.scripts.clone();
        let asks: Vec<_> = order
            .iter()
            .map(|&k| scripts.due.key(self.keys.ready(k)))
            .collect();
        let due = self.redis.invoke_all::<u64>(&asks).await;
        drop(asks);
        let mut parts = Vec::new();
        let mut left = room;
        for (&k, due) in order.iter().zip(due) {
            let n = (due? as usize).min(left);
            if n > 0 {
                parts.push((k, n));
                left -= n;
            }
        }
        let calls: Vec<_> = parts
            .iter()
            .map(|&(k, n)| {
                let mut call = scripts.claim.key(self.keys.ready(k));
                call.arg(self.keys.shard(k));
                self.claim_args(&mut call, n, takeover);
                call
            })
            .collect();
        let replies = self.redis.invoke_all::<Value>(&calls).await;
        drop(calls);
        let mut failure = None;
        for reply in replies {
            match reply {
                Ok(reply) => self.take_in(reply, frontier, report, Instant::now()),
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(self.held.len() - before),
        }
    }

    /// The arguments `claim` and `claim_all` end with: token, most hosts, lease, batch, host
    /// cap, takeover, ranked.
    fn claim_args(&self, call: &mut ScriptInvocation<'_>, room: usize, takeover: i64) {
        call.arg(&self.token)
            .arg(room)
            .arg(self.lease_ms())
            .arg(BATCH)
            .arg(self.cap_arg())
            .arg(takeover)
            .arg(self.ranked_arg());
    }

    /// True when the crawl has been seeded and no shard has a host with work. A shard found
    /// without its marker has lost its state: the crawl is marked lost (`lost_state.rs`).
    pub(super) async fn all_shards_empty(&mut self) -> Result<bool, redis::RedisError> {
        let seeded: Option<String> = redis::cmd("HGET")
            .arg(self.keys.crawl("meta"))
            .arg("seeded")
            .query_async(&mut self.redis)
            .await?;
        if seeded.is_none() {
            // A worker with seeds joined but has not sent them yet.
            return Ok(false);
        }
        if !self.redis.is_cluster() {
            let busy: i64 = self
                .scripts
                .busy_all
                .arg(self.keys.shard_base())
                .arg(self.keys.shards())
                .invoke_async(&mut self.redis)
                .await?;
            if busy < 0 {
                self.shard_gone(-1 - busy).await;
                return Ok(false);
            }
            return Ok(busy == 0);
        }
        // A cluster: every shard at once.
        let counts = futures_util::future::join_all((0..self.keys.shards()).map(|k| {
            let mut redis = self.redis.clone();
            let (ready, stat) = (self.keys.ready(k), self.keys.stat(k));
            async move {
                redis::pipe()
                    .cmd("ZCARD")
                    .arg(ready)
                    .cmd("HEXISTS")
                    .arg(stat)
                    .arg("made")
                    .query_async::<(u64, bool)>(&mut redis)
                    .await
            }
        }))
        .await;
        let mut busy = false;
        for (k, reply) in counts.into_iter().enumerate() {
            let (hosts, made) = reply?;
            if !made {
                self.shard_gone(k as i64).await;
                return Ok(false);
            }
            busy |= hosts > 0;
        }
        Ok(!busy)
    }
}
