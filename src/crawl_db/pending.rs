//! The rows admitted since the last flush, held in memory: new queue entries and their seen-set
//! keys, written to the database in key order in batches (at each save point, or sooner when
//! the batch is large).
//!
//! Written one by one as links arrive, each row went to a B-tree leaf of its own, interleaved
//! with every other host's; redb splits a full leaf in half, and a host's queue only ever grows
//! at its end, so queue leaves stayed half empty (214 bytes on disk per URL at 6x10^7 URLs).
//! Written in order, each host's new entries pass through one cursor, which packs whole leaves;
//! the seen rows become one sorted run of the seen set ([`super::seen_runs`]).
//! Reads look here first, so the batch is invisible to the frontier; a crash loses it together
//! with the uncommitted transaction, as before.
//!
//! A new link is admitted without reading the on-disk seen set: its seen row waits here,
//! *unchecked*, and the write of the batch looks the unchecked rows up in the runs, in key
//! order, to find out whether the URL was there already.
//! Such a *late duplicate* gets its old row back and its queue entry is dropped before it is
//! written; the frontier is told so that it can correct its counts. An unchecked entry that
//! is taken from the queue before its batch is written is checked on disk first, so a late
//! duplicate is never fetched. At 2x10^7 queued URLs, the random reads of the seen set at
//! admission were a quarter of the crawl loop's time.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use redb::CursorError;

use super::layout::{host_range, key_host, QueueKey, SeenKey};
use super::QUEUE;

/// Memory a batch may take before it is written: about 170,000 short URLs, enough for each of
/// a few hundred busy hosts to fill whole leaves. With redb's 16 MB cache a crawl to 10^8 URLs
/// peaked at 234 MB; twice this batch was 12-15% faster on a crawl to 2x10^7 but peaked
/// 28-33 MB higher (docs/PERFORMANCE.md).
const FLUSH_BYTES: usize = 32 * 1024 * 1024;

/// Memory of a pending row besides its value: its queue-map entry, its seen row, its
/// unchecked mark and the allocation holding the value (estimated from their sizes).
const ROW_BYTES: usize = 160;

/// A pending seen-set row.
#[derive(Debug, Clone, Copy)]
struct SeenRow {
    /// The URL's queue key.
    key: QueueKey,
    /// Admitted without looking at the seen set on disk.
    unchecked: bool,
}

/// Where a pending queue value sits in the batch's arena.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    len: u32,
}

/// New rows not yet written to the database's transaction.
#[derive(Debug, Default)]
pub(super) struct Pending {
    /// Queue entries, their values in `arena`.
    queue: BTreeMap<QueueKey, Span>,
    /// The values of the queue entries, one after another: one allocation for the batch
    /// rather than one per row.
    arena: Vec<u8>,
    seen: HashMap<SeenKey, SeenRow>,
    /// The seen key of each queue entry whose seen row is unchecked.
    provisional: HashMap<QueueKey, SeenKey>,
    /// Late duplicates found per host, until the frontier takes them.
    late: HashMap<u32, u64>,
    bytes: usize,
}

impl Pending {
    /// True when the batch should be written now.
    pub(super) fn is_full(&self) -> bool {
        self.bytes >= FLUSH_BYTES || self.arena.len() >= FLUSH_BYTES
    }

    /// Adds a queue entry.
    pub(super) fn queue_insert(&mut self, key: QueueKey, value: &[u8]) {
        let span = Span {
            start: self.arena.len() as u32,
            len: value.len() as u32,
        };
        self.arena.extend_from_slice(value);
        self.bytes += value.len() + ROW_BYTES;
        if let Some(old) = self.queue.insert(key, span) {
            self.bytes -= old.len as usize + ROW_BYTES;
        }
    }

    /// The value in the arena at `span`.
    fn value(&self, span: Span) -> &[u8] {
        &self.arena[span.start as usize..][..span.len as usize]
    }

    /// A pending queue entry.
    pub(super) fn queue_get(&self, key: &QueueKey) -> Option<&[u8]> {
        self.queue.get(key).map(|span| self.value(*span))
    }

    /// Removes a pending queue entry (its bytes stay in the arena until the batch is written).
    pub(super) fn queue_remove(&mut self, key: &QueueKey) -> Option<Vec<u8>> {
        let span = self.queue.remove(key)?;
        self.bytes -= span.len as usize + ROW_BYTES;
        self.provisional.remove(key);
        Some(self.value(span).to_vec())
    }

    /// Removes a pending queue entry that is about to be served, with the seen key to check on
    /// disk first when it was admitted unchecked.
    pub(super) fn queue_take(&mut self, key: &QueueKey) -> Option<(Vec<u8>, Option<SeenKey>)> {
        let unchecked = self.provisional.remove(key);
        Some((self.queue_remove(key)?, unchecked))
    }

    /// The outcome of the disk check of an unchecked row: a late duplicate (its row forgotten;
    /// counted for `host` when `counted`, that is when its queue entry was still there to be
    /// dropped, so the frontier does not take off an entry it dropped itself) or a new URL.
    pub(super) fn checked(&mut self, seen: &SeenKey, host: u32, duplicate: bool, counted: bool) {
        if duplicate {
            self.seen.remove(seen);
            if counted {
                *self.late.entry(host).or_default() += 1;
            }
        } else if let Some(row) = self.seen.get_mut(seen) {
            row.unchecked = false;
        }
    }

    /// Late duplicates found per host since the last call.
    pub(super) fn take_late(&mut self) -> Vec<(u32, u64)> {
        self.late.drain().collect()
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
            .filter(|(_, span)| drop(self.value(**span)))
            .map(|(k, _)| *k)
            .collect();
        for key in &gone {
            self.queue_remove(key);
        }
        gone.len()
    }

    /// Records a seen-set row (or replaces its queue key; an unchecked row stays unchecked).
    pub(super) fn seen_insert(&mut self, seen: SeenKey, key: QueueKey) {
        match self.seen.get_mut(&seen) {
            Some(row) => {
                row.key = key;
                if row.unchecked {
                    self.provisional.insert(key, seen);
                }
            }
            None => {
                self.seen.insert(
                    seen,
                    SeenRow {
                        key,
                        unchecked: false,
                    },
                );
            }
        }
    }

    /// Records the seen row of a new link and its queue entry, without a look at the disk;
    /// false when the batch has seen the URL already.
    pub(super) fn admit_unchecked(&mut self, seen: SeenKey, key: QueueKey, value: &[u8]) -> bool {
        if self.seen.contains_key(&seen) {
            return false;
        }
        self.seen.insert(
            seen,
            SeenRow {
                key,
                unchecked: true,
            },
        );
        self.queue_insert(key, value);
        self.provisional.insert(key, seen);
        true
    }

    /// A pending seen-set row: the URL's queue key, and whether it is unchecked.
    pub(super) fn seen_row(&self, seen: &SeenKey) -> Option<(QueueKey, bool)> {
        self.seen.get(seen).map(|row| (row.key, row.unchecked))
    }

    /// Takes the batch's seen rows, in key order: its queue key and whether it is unchecked.
    pub(super) fn take_seen(&mut self) -> Vec<(SeenKey, QueueKey, bool)> {
        self.provisional.clear();
        let mut seen: Vec<_> = std::mem::take(&mut self.seen)
            .into_iter()
            .map(|(k, row)| (k, row.key, row.unchecked))
            .collect();
        seen.sort_unstable_by_key(|(k, ..)| *k);
        seen
    }

    /// An unchecked row taken by [`Pending::take_seen`] was on disk already: its queue entry
    /// is dropped, and counted when it was still queued (not dropped by an exclude).
    pub(super) fn late_duplicate(&mut self, key: &QueueKey) {
        if self.queue.remove(key).is_some() {
            *self.late.entry(key_host(key)).or_default() += 1;
        }
    }

    /// Empties the batch's queue entries into `txn`, in key order, through a cursor that packs
    /// whole leaves (one cursor per run of keys with nothing on disk between them). The seen
    /// rows are taken first ([`Pending::take_seen`]).
    pub(super) fn write_queue_into(
        &mut self,
        txn: &redb::WriteTransaction,
    ) -> Result<(), redb::Error> {
        self.bytes = 0;
        let queue = std::mem::take(&mut self.queue);
        let arena = std::mem::take(&mut self.arena);
        let value = |span: &Span| &arena[span.start as usize..][..span.len as usize];
        if !queue.is_empty() {
            let mut table = txn.open_table(QUEUE)?;
            let mut rows = queue.iter().peekable();
            while let Some((key, span)) = rows.next() {
                let mut cursor = table.upper_bound_mut(Bound::Included(key))?;
                match cursor.insert_before(key, value(span)) {
                    Ok(()) => {
                        // The run goes on while keys fit the cursor's gap.
                        while let Some((next, span)) = rows.peek() {
                            match cursor.insert_before(next, value(span)) {
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
                        table.insert(key, value(span))?;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        // The arena's memory is kept for the next batch.
        self.arena = arena;
        self.arena.clear();
        Ok(())
    }
}
