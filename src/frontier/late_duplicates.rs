//! URLs the storage admitted as new and found later to have been seen before (a storage that
//! checks its on-disk seen set in batches, see `crawl_db::pending`): the frontier takes them off
//! its per-host and total queued counts, and keeps their number for the caller's tally of
//! duplicates.

use super::Frontier;

impl Frontier {
    /// Takes the storage's late duplicates off the queued counts.
    pub(super) fn settle_late_duplicates(&mut self) {
        for (id, n) in self.storage.late_duplicates() {
            self.late_found += n;
            let Some(q) = self.hosts.get_mut(id as usize) else {
                continue;
            };
            // A host whose queue ran dry before has had its count set to what storage held.
            let gone = n.min(q.queued);
            q.queued -= gone;
            q.dirty = true;
            self.queued = self.queued.saturating_sub(gone);
        }
    }

    /// Late duplicates found since the last call (for the crawl's count of duplicate links).
    pub fn take_late_duplicates(&mut self) -> u64 {
        self.settle_late_duplicates();
        std::mem::take(&mut self.late_found)
    }
}
