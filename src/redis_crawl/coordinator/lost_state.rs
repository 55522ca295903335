//! A crawl whose state Redis lost. A Redis restarted without persistence (no RDB or AOF), one
//! that reloaded an older snapshot, a `FLUSHALL`, or a failover to an empty replica leaves the
//! workers facing a crawl that is gone, or (one node of a cluster) partly gone: queues, seen
//! sets and leases missing. Going on would crawl again what was done, or end the crawl early
//! with URLs lost; waiting would never end. So a worker that finds it stops (exit 9) and says
//! why, starting no more calls to Redis (those already under way in the background may still
//! land), and a worker that finds only part of it gone marks the
//! crawl (`meta`'s `lost`) so that every other worker stops too and none joins it again.
//!
//! Found by: the crawl's record (`meta`'s `created`) missing or not the one joined (checked in
//! the heartbeat round and first after an outage); a held host whose record is gone (the
//! lease renewal; a host's record is never deleted); and, when a worker with nothing left
//! looks for the crawl's end, a shard without its marker (`made`, written when the crawl is
//! created).

use redis::Script;

use super::Coordinator;
use crate::frontier::Frontier;

/// Marks the crawl lost, only while its record is the one this worker joined (a crawl that is
/// wholly gone, or made again since, is left alone).
const MARK_LOST: &str = r#"
if redis.call('HGET', KEYS[1], 'created') == ARGV[1] then
  redis.call('HSETNX', KEYS[1], 'lost', ARGV[2])
  return 1
end
return 0
"#;

impl Coordinator {
    /// True once the crawl's state was found lost: the worker stops and calls Redis no more.
    pub fn state_lost(&self) -> bool {
        self.state_lost.is_some()
    }

    /// Judges the crawl's record as read from `meta` (`created`, `lost`).
    pub(super) fn judge_record(&mut self, created: Option<String>, lost: Option<String>) {
        if let Some(detail) = lost {
            self.lose_state(format!("a worker found part of it gone: {detail}"));
        } else if !self.created.is_empty() && created.as_deref() != Some(self.created.as_str()) {
            // (A crawl whose record had no `created` when this worker joined is judged by
            // `lost` and its shards' markers alone.)
            self.lose_state(
                "its record is gone or was made again: Redis restarted without its data (no RDB \
                 or AOF persistence) or from an older snapshot, was flushed, or failed over to \
                 an empty replica"
                    .to_string(),
            );
        }
    }

    /// Lets go of `hosts`, whose leases Redis said this worker no longer holds. That is
    /// another worker's doing only while the crawl's record is still the one joined: a Redis
    /// back without its data answers the same way (the lease keys are gone), and then the
    /// crawl is lost, which the record read here says (and the stop that follows), rather
    /// than a warning that blames another worker.
    pub(super) async fn leases_lost(&mut self, hosts: Vec<String>, frontier: &mut Frontier) {
        if hosts.is_empty() {
            return;
        }
        if !self.state_lost() {
            // A failing Redis is the outage path's to notice; the leases go either way.
            let _ = self.check_record().await;
        }
        for host in hosts {
            if !self.state_lost() {
                tracing::warn!("lease on {host} lost to another worker");
            }
            self.held.remove(&host);
            self.forget(&host, frontier);
        }
    }

    /// Reads and judges the crawl's record.
    pub(super) async fn check_record(&mut self) -> Result<(), redis::RedisError> {
        let (created, lost): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(self.keys.crawl("meta"))
            .arg("created")
            .arg("lost")
            .query_async(&mut self.redis)
            .await?;
        self.judge_record(created, lost);
        Ok(())
    }

    /// Held hosts whose state is gone (their record): the crawl is marked lost for every
    /// worker, as far as the crawl's record is still there.
    pub(super) async fn hosts_gone(&mut self, hosts: &[String]) {
        let detail = format!(
            "the state of {} host(s) held by worker {} is gone (first: {}); a Redis node \
             restarted without its data?",
            hosts.len(),
            self.worker,
            hosts.first().map_or("", String::as_str)
        );
        self.mark_lost(detail).await;
    }

    /// Shard `k` has lost its marker (found at the crawl's end check): marked as for hosts.
    pub(super) async fn shard_gone(&mut self, k: i64) {
        let detail = format!(
            "shard {k} of the crawl is gone from Redis (found by worker {}); a Redis node \
             restarted without its data?",
            self.worker
        );
        self.mark_lost(detail).await;
    }

    async fn mark_lost(&mut self, detail: String) {
        let marked = Script::new(MARK_LOST)
            .key(self.keys.crawl("meta"))
            .arg(&self.created)
            .arg(&detail)
            .invoke_async::<i64>(&mut self.redis)
            .await;
        if let Err(e) = marked {
            tracing::warn!("could not mark the crawl's state lost in Redis: {e}");
        }
        self.lose_state(detail);
    }

    fn lose_state(&mut self, why: String) {
        if self.state_lost.is_none() {
            tracing::error!(
                "the shared crawl's state in Redis is lost ({why}): stopping without writing to \
                 Redis again. The WARC files written are valid; start a new crawl (a new \
                 --crawl-id) to go on"
            );
            self.state_lost = Some(why);
        }
    }
}
