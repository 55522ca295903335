//! The rows admitted since the last flush, held in memory: new queue entries and their seen-set
//! keys, written to the database in key order in batches (at each save point, or sooner when
//! the batch is large).
//!
//! Written one by one as links arrive, each row went to a B-tree leaf of its own, interleaved
//! with every other host's; redb splits a full leaf in half, and a host's queue only ever grows
//! at its end, so queue leaves stayed half empty (214 bytes on disk per URL at 6x10^7 URLs).
//! Written in order, each host's new entries pass through one cursor, which packs whole leaves,
//! and the seen keys reach their leaves in ascending order, each leaf touched once per batch.
//! Reads look here first, so the batch is invisible to the frontier; a crash loses it together
//! with the uncommitted transaction, as before.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use redb::CursorError;

use super::layout::{host_range, QueueKey, SeenKey};
use super::{QUEUE, SEEN};

/// Bytes of queue values a batch holds before it is written (about 200,000 short URLs).
const FLUSH_BYTES: usize = 16 * 1024 * 1024;

/// New rows not yet written to the database's transaction.
#[derive(Debug, Default)]
pub(super) struct Pending {
    queue: BTreeMap<QueueKey, Vec<u8>>,
    seen: HashMap<SeenKey, QueueKey>,
    bytes: usize,
}

impl Pending {
    /// True when the batch should be written now.
    pub(super) fn is_full(&self) -> bool {
        self.bytes >= FLUSH_BYTES
    }

    /// Adds a queue entry.
    pub(super) fn queue_insert(&mut self, key: QueueKey, value: Vec<u8>) {
        self.bytes += value.len() + key.len();
        if let Some(old) = self.queue.insert(key, value) {
            self.bytes -= old.len() + key.len();
        }
    }

    /// A pending queue entry.
    pub(super) fn queue_get(&self, key: &QueueKey) -> Option<&Vec<u8>> {
        self.queue.get(key)
    }

    /// Removes a pending queue entry.
    pub(super) fn queue_remove(&mut self, key: &QueueKey) -> Option<Vec<u8>> {
        let value = self.queue.remove(key)?;
        self.bytes -= value.len() + key.len();
        Some(value)
    }

    /// The first pending key of `host` (lowest rank, then oldest).
    pub(super) fn first_of(&self, host: u32) -> Option<QueueKey> {
        let (lo, hi) = host_range(host);
        self.queue.range(lo..=hi).next().map(|(k, _)| *k)
    }

    /// Removes the pending entries of `host` whose value `drop` says so; returns how many.
    pub(super) fn drop_where(&mut self, host: u32, mut drop: impl FnMut(&[u8]) -> bool) -> usize {
        let (lo, hi) = host_range(host);
        let gone: Vec<QueueKey> = self
            .queue
            .range(lo..=hi)
            .filter(|(_, v)| drop(v))
            .map(|(k, _)| *k)
            .collect();
        for key in &gone {
            self.queue_remove(key);
        }
        gone.len()
    }

    /// Records a seen-set row (or replaces its queue key).
    pub(super) fn seen_insert(&mut self, seen: SeenKey, key: QueueKey) {
        self.seen.insert(seen, key);
    }

    /// A pending seen-set row.
    pub(super) fn seen_get(&self, seen: &SeenKey) -> Option<QueueKey> {
        self.seen.get(seen).copied()
    }

    /// Empties the batch into `txn`: queue entries in key order through a cursor that packs
    /// whole leaves (one cursor per run of keys with nothing on disk between them), seen rows
    /// in key order.
    pub(super) fn write_into(&mut self, txn: &redb::WriteTransaction) -> Result<(), redb::Error> {
        self.bytes = 0;
        let queue = std::mem::take(&mut self.queue);
        let mut seen: Vec<_> = std::mem::take(&mut self.seen).into_iter().collect();
        seen.sort_unstable_by_key(|(k, _)| *k);
        if !queue.is_empty() {
            let mut table = txn.open_table(QUEUE)?;
            let mut rows = queue.iter().peekable();
            while let Some((key, value)) = rows.next() {
                let mut cursor = table.upper_bound_mut(Bound::Included(key))?;
                match cursor.insert_before(key, value.as_slice()) {
                    Ok(()) => {
                        // The run goes on while keys fit the cursor's gap.
                        while let Some((next, value)) = rows.peek() {
                            match cursor.insert_before(next, value.as_slice()) {
                                Ok(()) => {
                                    rows.next();
                                }
                                Err(CursorError::UnorderedKey) => break,
                                Err(e) => return Err(e.into()),
                            }
                        }
                        cursor.close()?;
                    }
                    Err(CursorError::UnorderedKey) => {
                        // The key is on disk already (a row put back): replace it.
                        cursor.close()?;
                        table.insert(key, value.as_slice())?;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        if !seen.is_empty() {
            let mut table = txn.open_table(SEEN)?;
            for (seen, key) in &seen {
                table.insert(seen, key)?;
            }
        }
        Ok(())
    }
}
