//! The operator's changes, crawl-wide: what a worker's console changes (pause and resume,
//! exclude patterns, the delay, host drops) goes into one Redis list in order as soon as it is
//! made; every worker reads the entries it has not seen at each step, in the background
//! (`background.rs`: the read started at one step is applied at the next; the first step waits
//! for it, so a worker that joins a paused crawl starts paused), and applies those another
//! process made. A worker that starts reads the whole list, so a change survives restarts. The
//! entries are opaque JSON here: the crawl loop makes and applies them.

use super::background::{spawn, take_finished, Pending};
use super::{Coordinator, SyncReport};

/// Most entries read in one step (a long list is read over several steps).
const READ_MAX: usize = 1000;

impl Coordinator {
    /// A change this worker's console made, for the other workers.
    pub fn share_change(&mut self, json: String) {
        self.changes_out.push(json);
    }

    /// True while a change this worker's console made has not reached Redis, or Redis is
    /// failing: the change holds here, and is not yet the crawl's.
    pub fn changes_held_back(&self) -> bool {
        !self.changes_out.is_empty() || self.outage.is_some()
    }

    /// Sends the changes this worker's console made and has not sent yet, at once after each
    /// console command (the crawl loop calls this). After a failure they wait for the next
    /// step, which first checks that Redis still holds the crawl (`lost_state.rs`).
    pub async fn send_changes(&mut self) -> Result<(), redis::RedisError> {
        if self.outage.is_some() {
            return Ok(());
        }
        self.push_changes().await
    }

    /// Sends the changes not sent yet (at every step, as well: a send that failed).
    pub(super) async fn push_changes(&mut self) -> Result<(), redis::RedisError> {
        if self.changes_out.is_empty() || self.state_lost() {
            return Ok(());
        }
        let entries: Vec<String> = self
            .changes_out
            .iter()
            .map(|json| format!("{}\t{json}", self.token))
            .collect();
        redis::cmd("RPUSH")
            .arg(self.keys.crawl("changes"))
            .arg(&entries)
            .query_async::<()>(&mut self.redis)
            .await?;
        self.changes_out.clear();
        Ok(())
    }

    /// Starts reading the changes made since the last read, unless a read is under way.
    pub(super) fn start_reading_changes(&mut self) {
        if self.reading_changes.is_some() {
            return;
        }
        let mut redis = self.redis.clone();
        let key = self.keys.crawl("changes");
        let from = self.changes_seen;
        self.reading_changes = Some(spawn(None, async move {
            let len: usize = redis::cmd("LLEN").arg(&key).query_async(&mut redis).await?;
            if len <= from {
                return Ok((from, Vec::new()));
            }
            let last = len.min(from + READ_MAX) - 1;
            let entries: Vec<String> = redis::cmd("LRANGE")
                .arg(&key)
                .arg(from)
                .arg(last)
                .query_async(&mut redis)
                .await?;
            Ok((from, entries))
        }));
    }

    /// Applies a read that has finished (with `wait`, one under way): the other workers'
    /// changes go to the report, in order.
    pub(super) async fn collect_changes(
        &mut self,
        report: &mut SyncReport,
        wait: bool,
    ) -> Result<(), redis::RedisError> {
        let Some(read) = take_finished(
            &mut self.reading_changes,
            wait,
            "reading the crawl's console changes",
        )
        .await
        else {
            return Ok(());
        };
        let (from, entries) = read?;
        if from != self.changes_seen {
            return Ok(());
        }
        self.changes_seen += entries.len();
        for entry in entries {
            if let Some((token, json)) = entry.split_once('\t') {
                if token != self.token {
                    report.changes.push(json.to_string());
                }
            }
        }
        Ok(())
    }
}

/// A read of the change list under way: where it started, and the entries from there.
pub(super) type Reading = Pending<redis::RedisResult<(usize, Vec<String>)>>;
