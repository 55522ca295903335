//! The operator's changes, crawl-wide: what a worker's console changes (pause and resume,
//! exclude patterns, the delay, host drops) goes into one Redis list in order; every worker reads
//! the entries it has not seen at each step (four times a second) and applies those another
//! process made. A worker that starts reads the whole list, so a change survives restarts. The
//! entries are opaque JSON here: the crawl loop makes and applies them.

use super::{Coordinator, SyncReport};

/// Most entries read in one step (a long list is read over several steps).
const READ_MAX: usize = 1000;

impl Coordinator {
    /// A change this worker's console made, for the other workers.
    pub fn share_change(&mut self, json: String) {
        self.changes_out.push(json);
    }

    /// Sends this worker's changes, then reads the others' changes made since the last read.
    pub(super) async fn exchange_changes(
        &mut self,
        report: &mut SyncReport,
    ) -> Result<(), redis::RedisError> {
        let key = self.keys.crawl("changes");
        if !self.changes_out.is_empty() {
            let entries: Vec<String> = self
                .changes_out
                .iter()
                .map(|json| format!("{}\t{json}", self.token))
                .collect();
            redis::cmd("RPUSH")
                .arg(&key)
                .arg(&entries)
                .query_async::<()>(&mut self.redis)
                .await?;
            self.changes_out.clear();
        }
        let len: usize = redis::cmd("LLEN")
            .arg(&key)
            .query_async(&mut self.redis)
            .await?;
        if len <= self.changes_seen {
            return Ok(());
        }
        let last = len.min(self.changes_seen + READ_MAX) - 1;
        let entries: Vec<String> = redis::cmd("LRANGE")
            .arg(&key)
            .arg(self.changes_seen)
            .arg(last)
            .query_async(&mut self.redis)
            .await?;
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
