//! The seen set as the store reads it: the batch's rows first, then the sorted runs on disk
//! ([`super::seen_runs`]), then, in a state written before the runs, the `seen` table.

use redb::ReadableTable;

use super::layout::{key_host, QueueKey, SeenKey};
use super::{CrawlDb, StoreError, SEEN};

impl CrawlDb {
    /// The queue key the seen set on disk holds for `key`.
    pub(super) fn seen_on_disk(&self, key: &SeenKey) -> Result<Option<QueueKey>, StoreError> {
        if let Some(queued) = self.seen_runs.get(key).map_err(|e| self.error(e))? {
            return Ok(Some(queued));
        }
        if !self.legacy_seen {
            return Ok(None);
        }
        let t = self.txn()?.open_table(SEEN).map_err(|e| self.error(e))?;
        let old = t.get(key).map_err(|e| self.error(e))?.map(|v| *v.value());
        Ok(old)
    }

    /// Which of `keys` (ascending) the seen set on disk holds.
    pub(super) fn seen_on_disk_sorted(&self, keys: &[SeenKey]) -> Result<Vec<bool>, StoreError> {
        let mut found = self
            .seen_runs
            .contains_sorted(keys)
            .map_err(|e| self.error(e))?;
        if self.legacy_seen {
            let t = self.txn()?.open_table(SEEN).map_err(|e| self.error(e))?;
            for (key, found) in keys.iter().zip(found.iter_mut()) {
                *found = *found || t.get(key).map_err(|e| self.error(e))?.is_some();
            }
        }
        Ok(found)
    }

    /// Looks a URL fingerprint up in the seen set; returns the queue key it was given.
    /// An unchecked row of the batch is checked on disk first: when the URL was there
    /// already, the row on disk is the URL's, and the batch's one is a late duplicate.
    pub(super) fn seen_get(&mut self, key: &SeenKey) -> Result<Option<QueueKey>, StoreError> {
        let pending = self.pending.seen_row(key);
        if let Some((queued, false)) = pending {
            return Ok(Some(queued));
        }
        let on_disk = self.seen_on_disk(key)?;
        if let Some((queued, true)) = pending {
            let duplicate = on_disk.is_some();
            let dropped = duplicate && self.pending.queue_remove(&queued).is_some();
            self.pending
                .checked(key, key_host(&queued), duplicate, dropped);
            if !duplicate {
                return Ok(Some(queued));
            }
        }
        Ok(on_disk)
    }

    /// Adds (or updates) a URL fingerprint in the seen set.
    pub(super) fn seen_insert(
        &mut self,
        key: &SeenKey,
        queue_key: &QueueKey,
    ) -> Result<(), StoreError> {
        self.pending.seen_insert(*key, *queue_key);
        self.flush_if_full()
    }
}
