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
        let result = self.try_save(frontier, stats, budget).await;
        if let Err(e) = result {
            self.unreachable(e, frontier);
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
        for (host, k) in hosts {
            let Some(id) = self.book().id_of(&host) else {
                continue;
            };
            let (done, robots) = {
                let mut book = self.book();
                let Some(held) = book.held_mut(id) else {
                    continue;
                };
                (
                    std::mem::take(&mut held.staged_done),
                    std::mem::take(&mut held.staged_robots),
                )
            };
            let pages = self.unacked_pages(&host, stats);
            let mut call = self.scripts.ack.key(self.keys.ready(k));
            call.arg(self.keys.shard(k))
                .arg(&self.token)
                .arg(&host)
                .arg(frontier.wait_of(&host, now).as_millis() as u64)
                .arg(pages)
                .arg(self.lease_ms())
                .arg(done.len());
            for url in &done {
                call.arg(url);
            }
            for (origin, text) in &robots {
                let value = match text {
                    Some(t) => [b"T".as_slice(), t].concat(),
                    None => b"N".to_vec(),
                };
                call.arg(origin).arg(value);
            }
            match call.invoke_async::<i64>(&mut self.redis).await {
                Ok(1) => {
                    *self.acked_pages.entry(host.clone()).or_default() += pages;
                    self.awaiting_ack.remove(&host);
                    self.dirty.insert(host);
                }
                Ok(_) => {
                    tracing::warn!("lease on {host} lost to another worker");
                    self.held.remove(&host);
                    self.forget(&host, frontier);
                }
                Err(e) => {
                    let mut book = self.book();
                    if let Some(held) = book.held_mut(id) {
                        held.staged_done.extend(done);
                        held.staged_robots.extend(robots);
                    }
                    return Err(e);
                }
            }
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
        for attempt in 0..5u32 {
            match self.try_leave(frontier, stats, budget, state).await {
                Ok(()) => return,
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
        self.try_save(frontier, stats, budget).await?;
        let now = Instant::now();
        let hosts: Vec<(String, u32)> = self.held.iter().map(|(h, &k)| (h.clone(), k)).collect();
        for (host, k) in hosts {
            self.scripts
                .release
                .key(self.keys.ready(k))
                .arg(self.keys.shard(k))
                .arg(&self.token)
                .arg(&host)
                .arg(frontier.wait_of(&host, now).as_millis() as u64)
                .arg(self.ranked_arg())
                .invoke_async::<i64>(&mut self.redis)
                .await?;
            self.held.remove(&host);
            self.forget(&host, frontier);
        }
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
