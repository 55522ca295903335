//! The crawl database: one embedded redb file, `state.redb`, in the state directory, and the
//! seen set's runs beside it (`seen/`); the frontier's storage (it implements
//! [`FrontierStorage`]) and the crawl's saved counters.
//!
//! It holds everything a crawl needs to continue: the queued URLs, the seen set, per-host
//! records, robots.txt texts and named metadata blobs (counters, the WARC serial to replay
//! from). All changes go into one write transaction that stays open between save points and is
//! committed, durably, only at a save point (after the WARC writer has synced), so the store
//! always reflects a moment the WARC files agree with. A crash rolls the store back to the last
//! save point; `crawl/replay.rs` then replays the WARC records written since.
//!
//! Tables (keys are big-endian so that byte order is numeric order):
//!
//! | table   | key                                   | value                                   |
//! |---------|---------------------------------------|-----------------------------------------|
//! | `queue` | host id u32, depth u32, seq u64       | redirects u32, attempt u32, URL (1)     |
//! | `seen`  | host id u32, 96 bits of SHA-1(URL)    | the URL's queue key (2)                 |
//! | `hosts` | host id u32                           | queued count, next-allowed time, name   |
//! | `robots`| origin                                | host id u32, robots.txt text            |
//! | `meta`  | name                                  | JSON                                    |
//!
//! (1) Without its `scheme://host` when the URL is on the key's host (a marker byte says which
//! scheme). New rows wait in memory ([`pending`]) and are written in key order in batches.
//! (2) Only in a state written before the seen set moved to sorted runs ([`seen_runs`],
//! named by a manifest in `meta`): read as the oldest part of the set, never written.
//!
//! The byte layout of every row is in [`layout`]. redb was chosen over fjall and SQLite by
//! measurement (docs/DESIGN.md): bounded memory, ACID commits that map onto save points, pure
//! Rust.

mod bare_hosts;
mod frontier_storage;
pub mod layout;
mod pending;
mod seen_runs;
mod seen_set;
mod space;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use redb::{ReadableTable, ReadableTableMetadata, TableDefinition};

pub use crate::frontier::storage::{FrontierStorage, StoreError};
use bare_hosts::BareHosts;
use layout::{decode_host, host_range, QueueKey, SeenKey};
use pending::Pending;
use seen_runs::SeenRuns;
pub use space::{RunSpace, Space, TableSpace};

/// Name of the database file in the state directory.
pub const STORE_FILE: &str = "state.redb";

/// Memory redb may use for its page cache (and write buffer). Small on purpose: its pages are
/// evicted and allocated again all the time, and the allocator keeps about three bytes resident
/// for each byte of it (a crawl to 10^7 URLs peaked at 330-360 MB with 48 MB, 205 MB with
/// 16 MB, at the same speed; docs/PERFORMANCE.md). Past a few million URLs the B-trees outgrow
/// any cache of this order, and the operating system's page cache holds the file.
const CACHE_BYTES: usize = 16 * 1024 * 1024;

const QUEUE: TableDefinition<&QueueKey, &[u8]> = TableDefinition::new("queue");
const SEEN: TableDefinition<&SeenKey, &QueueKey> = TableDefinition::new("seen");
const HOSTS: TableDefinition<u32, &[u8]> = TableDefinition::new("hosts");
const ROBOTS: TableDefinition<&str, &[u8]> = TableDefinition::new("robots");
const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");

/// The open database, its current write transaction, and the frontier's entries in flight.
pub struct CrawlDb {
    db: redb::Database,
    /// Every change since the last commit; committed (and replaced) only at a save point.
    txn: Option<redb::WriteTransaction>,
    path: PathBuf,
    /// Sequence number of the last queue key handed out (saved in the `meta` table).
    seq: u64,
    /// Per host, the queue row of the page being fetched: out of the queue, but written back
    /// for every commit until the fetch is done, so a crash never loses it.
    in_flight: HashMap<u32, (QueueKey, Vec<u8>)>,
    /// New rows not yet written to the transaction (written in key order, in batches).
    pending: Pending,
    /// Hosts found with no queue rows on disk since the last batch was written.
    bare: BareHosts,
    /// Host names by id: queue rows store their URLs without scheme and host name.
    names: HashMap<u32, Box<str>>,
    /// The seen set's rows on disk, written by each batch.
    seen_runs: SeenRuns,
    /// The `seen` table holds rows (a state written before the seen set moved to runs): it is
    /// read as the oldest part of the set, and never written.
    legacy_seen: bool,
}

impl std::fmt::Debug for CrawlDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrawlDb").field("path", &self.path).finish()
    }
}

/// Creates an empty database at `path` as a whole: written beside it and renamed into place,
/// so a kill during creation never leaves a file that is not a database (the next start would
/// refuse it) but at worst a stale `.new` file, removed here.
fn create_in_place(path: &Path) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let fresh = path.with_extension("redb.new");
    match std::fs::remove_file(&fresh) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
        _ => {}
    }
    let db = redb::Database::builder()
        .create(&fresh)
        .map_err(|e| StoreError::Database {
            path: fresh.clone(),
            detail: e.to_string(),
        })?;
    drop(db);
    std::fs::File::open(&fresh)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    std::fs::rename(&fresh, path).map_err(io)?;
    if let Some(dir) = path.parent() {
        // Makes the rename durable; not supported everywhere.
        let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(())
}

fn database_error(path: &Path, e: impl Into<redb::Error>) -> StoreError {
    StoreError::Database {
        path: path.to_path_buf(),
        detail: e.into().to_string(),
    }
}

fn no_transaction(path: &Path) -> StoreError {
    StoreError::Database {
        path: path.to_path_buf(),
        detail: "no open transaction after a failed commit".into(),
    }
}

impl CrawlDb {
    /// Opens (or creates) the store in `dir`. A database left by a crash is repaired by redb
    /// to its last commit.
    pub fn open(dir: &Path) -> Result<CrawlDb, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = dir.join(STORE_FILE);
        if !path.exists() {
            create_in_place(&path)?;
        }
        let db = match redb::Database::builder()
            .set_cache_size(CACHE_BYTES)
            .create(&path)
        {
            Ok(db) => db,
            Err(redb::DatabaseError::DatabaseAlreadyOpen) => {
                return Err(StoreError::Locked { path })
            }
            Err(e) => {
                return Err(StoreError::Database {
                    path,
                    detail: e.to_string(),
                })
            }
        };
        CrawlDb::start(db, path, Some(dir))
    }

    /// A store in memory, for tests of logic that does not care where data lives.
    #[cfg(test)]
    pub fn in_memory() -> CrawlDb {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .expect("in-memory redb");
        CrawlDb::start(db, PathBuf::from("(memory)"), None).expect("in-memory redb")
    }

    /// Starts the store on `db`, with its seen-set runs in `dir` (in memory without one).
    fn start(db: redb::Database, path: PathBuf, dir: Option<&Path>) -> Result<CrawlDb, StoreError> {
        let mut store = CrawlDb {
            db,
            txn: None,
            path,
            seq: 0,
            in_flight: HashMap::new(),
            pending: Pending::default(),
            bare: BareHosts::default(),
            names: HashMap::new(),
            seen_runs: SeenRuns::in_memory(),
            legacy_seen: false,
        };
        let txn = store.db.begin_write().map_err(|e| store.error(e))?;
        // Create every table so reads never meet a missing one.
        {
            let _ = txn.open_table(QUEUE).map_err(|e| store.error(e))?;
            let _ = txn.open_table(SEEN).map_err(|e| store.error(e))?;
            let _ = txn.open_table(HOSTS).map_err(|e| store.error(e))?;
            let _ = txn.open_table(ROBOTS).map_err(|e| store.error(e))?;
            let _ = txn.open_table(META).map_err(|e| store.error(e))?;
        }
        store.txn = Some(txn);
        let legacy = store.txn()?.open_table(SEEN).map_err(|e| store.error(e))?;
        let legacy_seen = !legacy.is_empty().map_err(|e| store.error(e))?;
        drop(legacy);
        store.legacy_seen = legacy_seen;
        if let Some(dir) = dir {
            let manifest = store.meta_read(seen_runs::MANIFEST_META)?;
            store.seen_runs = SeenRuns::open(dir, manifest.as_deref())
                .map_err(|e| database_error(&store.path, e))?;
        }
        store.seq = frontier_storage::saved_seq(&store)?;
        for (id, row) in store.host_rows()? {
            if let Some(host) = decode_host(&row) {
                store.names.insert(id, host.name.into());
            }
        }
        Ok(store)
    }

    fn error(&self, e: impl Into<redb::Error>) -> StoreError {
        database_error(&self.path, e)
    }

    fn txn(&self) -> Result<&redb::WriteTransaction, StoreError> {
        self.txn.as_ref().ok_or_else(|| no_transaction(&self.path))
    }

    /// Makes every change so far durable (fsync) and starts a new transaction.
    fn commit(&mut self) -> Result<(), StoreError> {
        self.flush()?;
        // The runs the manifest names are on disk before the commit that names them.
        self.seen_runs.sync().map_err(|e| self.error(e))?;
        let txn = self.txn.take().ok_or_else(|| no_transaction(&self.path))?;
        if let Err(e) = txn.commit() {
            // No further transaction: the store stays at its last good commit, which the WARC
            // files can be replayed against, rather than taking a partial one later.
            return Err(self.error(e));
        }
        self.seen_runs.committed();
        self.txn = Some(self.db.begin_write().map_err(|e| self.error(e))?);
        Ok(())
    }

    /// Writes the pending rows: the seen rows as a new run of the seen set (an unchecked row
    /// the set holds already is a late duplicate: its old row stays and its queue entry
    /// goes), the queue entries into the transaction, and the seen set's manifest when it
    /// changed.
    fn flush(&mut self) -> Result<(), StoreError> {
        self.seen_runs.poll().map_err(|e| self.error(e))?;
        let mut seen = self.pending.take_seen();
        let unchecked: Vec<SeenKey> = seen.iter().filter(|r| r.2).map(|r| r.0).collect();
        if !unchecked.is_empty() {
            let mut known = self.seen_on_disk_sorted(&unchecked)?.into_iter();
            seen.retain(|(_, queued, unchecked)| {
                let duplicate = *unchecked && known.next().unwrap_or(false);
                if duplicate {
                    self.pending.late_duplicate(queued);
                }
                !duplicate
            });
        }
        let rows: Vec<(SeenKey, QueueKey)> = seen.into_iter().map(|(k, q, _)| (k, q)).collect();
        self.seen_runs.add(&rows).map_err(|e| self.error(e))?;
        if let Some(manifest) = self.seen_runs.take_manifest() {
            self.meta_write(seen_runs::MANIFEST_META, &manifest)?;
        }
        let txn = self
            .txn
            .as_ref()
            .ok_or_else(|| no_transaction(&self.path))?;
        self.bare.clear();
        self.pending
            .write_queue_into(txn)
            .map_err(|e| database_error(&self.path, e))
    }

    /// Writes the pending rows when the batch is full.
    fn flush_if_full(&mut self) -> Result<(), StoreError> {
        if self.pending.is_full() {
            self.flush()?;
        }
        Ok(())
    }

    /// Adds a queue entry.
    fn queue_insert(&mut self, key: &QueueKey, value: &[u8]) -> Result<(), StoreError> {
        self.pending.queue_insert(*key, value);
        self.flush_if_full()
    }

    /// Queues `value` under `key` and points `seen` at it, unless the batch has `seen`
    /// already; returns whether it did. Runs for every new link, so the seen set on disk is
    /// not read: the batch's write checks it ([`pending`]).
    fn queue_unseen(
        &mut self,
        seen: &SeenKey,
        key: &QueueKey,
        value: &[u8],
    ) -> Result<bool, StoreError> {
        if !self.pending.admit_unchecked(*seen, *key, value) {
            return Ok(false);
        }
        self.flush_if_full()?;
        Ok(true)
    }

    /// Late duplicates found per host since the last call.
    fn take_late_duplicates(&mut self) -> Vec<(u32, u64)> {
        self.pending.take_late()
    }

    /// Removes and returns the first queue entry of `host` (lowest depth, then oldest),
    /// skipping late duplicates.
    fn queue_pop_first(&mut self, host: u32) -> Result<Option<(QueueKey, Vec<u8>)>, StoreError> {
        loop {
            let Some((key, value, unchecked)) = self.queue_pop_any(host)? else {
                return Ok(None);
            };
            let Some(seen) = unchecked else {
                return Ok(Some((key, value)));
            };
            let duplicate = self.seen_on_disk(&seen)?.is_some();
            // The entry was taken just now: a duplicate is counted.
            self.pending.checked(&seen, host, duplicate, true);
            if !duplicate {
                return Ok(Some((key, value)));
            }
        }
    }

    /// Removes and returns the first queue entry of `host`, on disk or pending, with the seen
    /// key to check when it is pending and unchecked.
    #[allow(clippy::type_complexity)]
    fn queue_pop_any(
        &mut self,
        host: u32,
    ) -> Result<Option<(QueueKey, Vec<u8>, Option<SeenKey>)>, StoreError> {
        let pending = self.pending.first_of(host);
        if !self.bare.contains(host) {
            let mut t = self.txn()?.open_table(QUEUE).map_err(|e| self.error(e))?;
            let (lo, hi) = host_range(host);
            let on_disk = {
                let mut range = t.range::<&QueueKey>(&lo..=&hi).map_err(|e| self.error(e))?;
                match range.next() {
                    Some(entry) => {
                        let (k, v) = entry.map_err(|e| self.error(e))?;
                        let key = *k.value();
                        // Only read the row when it is the one served.
                        let value = pending.is_none_or(|p| key < p).then(|| v.value().to_vec());
                        Some((key, value))
                    }
                    None => None,
                }
            };
            match on_disk {
                Some((key, Some(value))) => {
                    t.remove(&key).map_err(|e| self.error(e))?;
                    return Ok(Some((key, value, None)));
                }
                // A pending row under the same key replaces this one: both go.
                Some((key, None)) if Some(key) == pending => {
                    t.remove(&key).map_err(|e| self.error(e))?;
                }
                Some(_) => {}
                None => {
                    drop(t);
                    self.bare.insert(host);
                }
            }
        }
        // A pending entry that sorts first is served from memory.
        Ok(pending.and_then(|key| {
            let (value, unchecked) = self.pending.queue_take(&key)?;
            Some((key, value, unchecked))
        }))
    }

    /// Removes a queue entry, returning its value if it was there.
    fn queue_remove(&mut self, key: &QueueKey) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(value) = self.pending.queue_remove(key) {
            return Ok(Some(value));
        }
        let mut t = self.txn()?.open_table(QUEUE).map_err(|e| self.error(e))?;
        let old = t.remove(key).map_err(|e| self.error(e))?;
        Ok(old.map(|v| v.value().to_vec()))
    }

    /// Reads a queue entry.
    fn queue_get(&self, key: &QueueKey) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(value) = self.pending.queue_get(key) {
            return Ok(Some(value.to_vec()));
        }
        let t = self.txn()?.open_table(QUEUE).map_err(|e| self.error(e))?;
        let value = t.get(key).map_err(|e| self.error(e))?;
        Ok(value.map(|v| v.value().to_vec()))
    }

    /// Removes the queue entries of `host` for which `drop` says so; returns how many.
    fn queue_drop_where(
        &mut self,
        host: u32,
        mut drop: impl FnMut(&[u8]) -> bool,
    ) -> Result<usize, StoreError> {
        let mut dropped = self.pending.drop_where(host, &mut drop);
        let mut t = self.txn()?.open_table(QUEUE).map_err(|e| self.error(e))?;
        let (lo, hi) = host_range(host);
        t.retain_in::<&QueueKey, _>(&lo..=&hi, |_, v| {
            let gone = drop(v);
            dropped += usize::from(gone);
            !gone
        })
        .map_err(|e| self.error(e))?;
        Ok(dropped)
    }

    /// Writes a host record.
    fn host_put(&self, id: u32, record: &[u8]) -> Result<(), StoreError> {
        let mut t = self.txn()?.open_table(HOSTS).map_err(|e| self.error(e))?;
        t.insert(id, record).map_err(|e| self.error(e))?;
        Ok(())
    }

    /// Every host record, in id order.
    fn host_rows(&self) -> Result<Vec<(u32, Vec<u8>)>, StoreError> {
        let t = self.txn()?.open_table(HOSTS).map_err(|e| self.error(e))?;
        let mut out = Vec::new();
        for entry in t.iter().map_err(|e| self.error(e))? {
            let (k, v) = entry.map_err(|e| self.error(e))?;
            out.push((k.value(), v.value().to_vec()));
        }
        Ok(out)
    }

    /// Writes the robots.txt record of an origin.
    fn robots_put(&self, origin: &str, record: &[u8]) -> Result<(), StoreError> {
        let mut t = self.txn()?.open_table(ROBOTS).map_err(|e| self.error(e))?;
        t.insert(origin, record).map_err(|e| self.error(e))?;
        Ok(())
    }

    /// Calls `each` with every robots.txt record.
    fn robots_rows(&self, mut each: impl FnMut(&str, &[u8])) -> Result<(), StoreError> {
        let t = self.txn()?.open_table(ROBOTS).map_err(|e| self.error(e))?;
        for entry in t.iter().map_err(|e| self.error(e))? {
            let (k, v) = entry.map_err(|e| self.error(e))?;
            each(k.value(), v.value());
        }
        Ok(())
    }

    /// Writes a named metadata blob.
    fn meta_write(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
        let mut t = self.txn()?.open_table(META).map_err(|e| self.error(e))?;
        t.insert(name, value).map_err(|e| self.error(e))?;
        Ok(())
    }

    /// Reads a named metadata blob.
    fn meta_read(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let t = self.txn()?.open_table(META).map_err(|e| self.error(e))?;
        let value = t.get(name).map_err(|e| self.error(e))?;
        Ok(value.map(|v| v.value().to_vec()))
    }
}

#[cfg(test)]
mod tests;
