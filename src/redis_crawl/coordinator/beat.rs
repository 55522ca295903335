//! The once-a-second round, in one round trip: this worker's heartbeat goes out, and the
//! others' heartbeats (for the share, `share.rs`), the size of the crawl's scope set, the
//! stop flag, the crawl's record (`lost_state.rs`) and its pages committed under
//! `--max-pages` come back; the scope is read only when it grew. The crawl loop waits for each call it makes to Redis, and on a loaded
//! machine a wait costs a turn of the async runtime's queue (6-40 ms measured with 256 fetches
//! under way), not the round trip, so the round is one pipeline rather than four calls.

use std::time::SystemTime;

use super::{Coordinator, SyncReport, WorkerStats};

impl Coordinator {
    /// The heartbeat's JSON in `state`.
    fn beat_json(&self, stats: &WorkerStats<'_>, state: &str) -> String {
        let unix_ms = |t: SystemTime| {
            t.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis() as u64
        };
        serde_json::json!({
            "state": state,
            "heartbeat_ms": unix_ms(SystemTime::now()),
            "started_ms": unix_ms(self.started),
            "pages": stats.pages,
            "requests": stats.requests,
            "bytes": stats.bytes,
            "hosts_held": self.held.len(),
            "hungry": self.hungry(),
            "out": self.out,
        })
        .to_string()
    }

    /// Writes the heartbeat alone (at the end: `state` says how the worker ended).
    pub(super) async fn beat(
        &mut self,
        stats: &WorkerStats<'_>,
        state: &str,
    ) -> Result<(), redis::RedisError> {
        let beat = self.beat_json(stats, state);
        redis::cmd("HSET")
            .arg(self.keys.crawl("workers"))
            .arg(&self.worker)
            .arg(beat)
            .query_async::<()>(&mut self.redis)
            .await
    }

    /// The round: heartbeat, share, scope, stop flag.
    pub(super) async fn beat_round(
        &mut self,
        stats: &WorkerStats<'_>,
        report: &mut SyncReport,
    ) -> Result<(), redis::RedisError> {
        let beat = self.beat_json(stats, "running");
        let workers = self.keys.crawl("workers");
        type Round = (
            Vec<(String, String)>,
            usize,
            Option<String>,
            (Option<String>, Option<String>),
            Option<u64>,
        );
        let (beats, scope_size, stop, record, committed): Round = redis::pipe()
            .cmd("HSET")
            .arg(&workers)
            .arg(&self.worker)
            .arg(beat)
            .ignore()
            .cmd("HGETALL")
            .arg(&workers)
            .cmd("SCARD")
            .arg(self.keys.crawl("scope"))
            .cmd("GET")
            .arg(self.keys.crawl("stop"))
            .cmd("HMGET")
            .arg(self.keys.crawl("meta"))
            .arg("created")
            .arg("lost")
            .cmd("HGET")
            .arg(self.keys.crawl("budget"))
            .arg("committed")
            .query_async(&mut self.redis)
            .await?;
        report.committed = committed;
        self.judge_record(record.0, record.1);
        if self.state_lost() {
            return Ok(());
        }
        self.apply_beats(beats);
        if scope_size != self.scope_known {
            report.scope = redis::cmd("SMEMBERS")
                .arg(self.keys.crawl("scope"))
                .query_async(&mut self.redis)
                .await?;
            self.scope_known = scope_size;
        }
        if stop.is_some() && !self.stop_requested {
            tracing::warn!("trawl stop was run for this crawl: stopping");
            self.stop_requested = true;
        }
        Ok(())
    }
}
