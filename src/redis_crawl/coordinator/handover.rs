//! The coordinator at save points and at the end: acknowledge in Redis what a save point made
//! durable (finished entries, page counts, robots.txt texts, host clocks, committed pages, the
//! worker's blobs), and hand every held host back when the worker leaves.

use std::time::{Duration, Instant, SystemTime};

use super::{Coordinator, SyncReport, WorkerStats};
use crate::frontier::Frontier;
use crate::redis_crawl::budget::SharedBudget;

impl Coordinator {
    /// After a save point: acknowledges what it made durable (finished entries, page counts,
    /// robots.txt texts, the host clocks), commits the pages archived under the budget, and
    /// saves the worker's blobs. Kept for the next try when Redis cannot be reached.
    pub async fn save(
        &mut self,
        frontier: &mut Frontier,
        stats: &WorkerStats<'_>,
        budget: Option<&SharedBudget>,
    ) {
        if self.state_lost() {
            return;
        }
        // After a failure Redis may be back without the crawl: nothing is written before
        // that is known (`lost_state.rs`).
        if self.outage.is_some() {
            if let Err(e) = self.check_record().await {
                return self.unreachable(e, frontier);
            }
            if self.state_lost() {
                return;
            }
        }
        match self.try_save(frontier, stats, budget).await {
            // Hosts that ran dry waiting for this acknowledgement are refilled (or let go)
            // now, not at the next step.
            Ok(()) => self.start_refill(frontier, stats),
            Err(e) => self.unreachable(e, frontier),
        }
    }

    pub(super) async fn try_save(
        &mut self,
        frontier: &mut Frontier,
        stats: &WorkerStats<'_>,
        budget: Option<&SharedBudget>,
    ) -> Result<(), redis::RedisError> {
        let mut report = SyncReport::default();
        // Links first: a page is acknowledged only once what it found is in Redis.
        self.send_outbox(&mut report).await?;
        let now = Instant::now();
        let hosts: Vec<(String, u32)> = self.held.iter().map(|(h, &k)| (h.clone(), k)).collect();
        let mut acks = Vec::with_capacity(hosts.len());
        for (host, k) in hosts {
            let Some(id) = self.book().id_of(&host) else {
                continue;
            };
            let staged = self.book().held_mut(id).map(|held| {
                (
                    std::mem::take(&mut held.staged_done),
                    std::mem::take(&mut held.staged_robots),
                )
            });
            let Some((done, robots)) = staged else {
                continue;
            };
            let pages = self.pages_counted(&host, stats);
            acks.push(Ack {
                host,
                k,
                id,
                done,
                robots,
                pages,
            });
        }
        let scripts = self.scripts.clone();
        let calls: Vec<_> = acks
            .iter()
            .map(|a| {
                let mut call = scripts.ack.key(self.keys.ready(a.k));
                call.arg(self.keys.shard(a.k))
                    .arg(&self.token)
                    .arg(&a.host)
                    .arg(frontier.wait_of(&a.host, now).as_millis() as u64)
                    .arg(a.pages)
                    .arg(self.lease_ms())
                    .arg(a.done.len());
                for url in &a.done {
                    call.arg(url);
                }
                for (origin, text) in &a.robots {
                    let value = match text {
                        Some(t) => [b"T".as_slice(), t].concat(),
                        None => b"N".to_vec(),
                    };
                    call.arg(origin).arg(value);
                }
                call
            })
            .collect();
        let replies = self.redis.invoke_all::<i64>(&calls).await;
        drop(calls);
        let mut failure = None;
        let mut lost = Vec::new();
        for (a, reply) in acks.into_iter().zip(replies) {
            match reply {
                Ok(1) => {
                    self.book().acknowledged(a.id, a.done);
                    self.acked_pages.insert(a.host.clone(), a.pages);
                    self.awaiting_ack.remove(&a.host);
                    self.dirty.insert(a.host);
                }
                Ok(_) => lost.push(a.host),
                Err(e) => {
                    // Staged again: acknowledged by a later save point (repeating is harmless).
                    let mut book = self.book();
                    if let Some(held) = book.held_mut(a.id) {
                        held.staged_done.extend(a.done);
                        held.staged_robots.extend(a.robots);
                    }
                    failure.get_or_insert(e);
                }
            }
        }
        self.leases_lost(lost, frontier).await;
        if let Some(e) = failure {
            return Err(e);
        }
        self.last_renew = now;
        if let Some(budget) = budget {
            budget.commit(&mut self.redis).await?;
        }
        let meta = self.book().take_staged_meta();
        if let Some(meta) = meta {
            let mut cmd = redis::cmd("HSET");
            cmd.arg(self.keys.worker(&self.worker));
            for (k, v) in &meta {
                cmd.arg(k).arg(v);
            }
            if let Err(e) = cmd.query_async::<()>(&mut self.redis).await {
                self.book().restage_meta();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Leaves the crawl after the final save: acknowledges, gives every held host back (its
    /// unfetched URLs stay queued for the others), and records how the worker ended.
    pub async fn leave(
        &mut self,
        frontier: &mut Frontier,
        stats: &WorkerStats<'_>,
        budget: Option<&SharedBudget>,
        state: &str,
    ) {
        if self.state_lost() {
            return;
        }
        for attempt in 0..5u32 {
            match self.try_leave(frontier, stats, budget, state).await {
                Ok(()) => {
                    if self.state_lost() {
                        tracing::warn!(
                            "not handing back {} host(s): the crawl's state in Redis is lost",
                            self.held.len()
                        );
                    }
                    return;
                }
                Err(e) => {
                    tracing::warn!("leaving the shared crawl: Redis: {e} (try {})", attempt + 1);
                    tokio::time::sleep(Duration::from_millis(500 << attempt)).await;
                }
            }
        }
        tracing::error!(
            "could not hand back {} host(s): other workers take them once their leases expire",
            self.held.len()
        );
    }

    async fn try_leave(
        &mut self,
        frontier: &mut Frontier,
        stats: &WorkerStats<'_>,
        budget: Option<&SharedBudget>,
        state: &str,
    ) -> Result<(), redis::RedisError> {
        // Nothing is written to a Redis that lost the crawl (`lost_state.rs`).
        self.check_record().await?;
        if self.state_lost() {
            return Ok(());
        }
        self.try_save(frontier, stats, budget).await?;
        // A refill under way ends before the hosts go back (what it took is handed back too).
        self.collect_refills(frontier, &mut SyncReport::default(), true)
            .await?;
        let now = Instant::now();
        let hosts: Vec<(String, u32)> = self.held.iter().map(|(h, &k)| (h.clone(), k)).collect();
        // Every host at once (a worker stopped mid-crawl may hold 4 x --concurrency).
        let scripts = self.scripts.clone();
        let calls: Vec<_> = hosts
            .iter()
            .map(|(host, k)| {
                let mut call = scripts.release.key(self.keys.ready(*k));
                call.arg(self.keys.shard(*k))
                    .arg(&self.token)
                    .arg(host)
                    .arg(frontier.wait_of(host, now).as_millis() as u64)
                    .arg(self.ranked_arg());
                call
            })
            .collect();
        let replies = self.redis.invoke_all::<i64>(&calls).await;
        drop(calls);
        let mut failure = None;
        for ((host, _), reply) in hosts.into_iter().zip(replies) {
            if let Err(e) = reply {
                // Still held: the next attempt releases it (releasing twice is harmless).
                failure.get_or_insert(e);
                continue;
            }
            self.held.remove(&host);
            self.forget(&host, frontier);
        }
        failure.map_or(Ok(()), Err)?;
        self.beat(stats, state).await?;
        if state == "finished" {
            redis::cmd("HSETNX")
                .arg(self.keys.crawl("meta"))
                .arg("finished")
                .arg(humantime::format_rfc3339_seconds(SystemTime::now()).to_string())
                .query_async::<()>(&mut self.redis)
                .await?;
        }
        Ok(())
    }
}

/// One held host's acknowledgement, staged since the last save point.
struct Ack {
    host: String,
    k: u32,
    id: u32,
    done: Vec<String>,
    robots: Vec<(String, Option<Vec<u8>>)>,
    /// The host's crawl-wide pages, those archived here since the last save point included.
    pages: u64,
}
