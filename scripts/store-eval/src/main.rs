//! store-eval: measures embedded stores (redb, fjall, SQLite) on trawl's frontier workload, to
//! choose where crawl state lives (docs/DESIGN.md). Run through `scripts/bench store`.
//!
//! Usage: store-eval STORE N HOSTS DIR
//! Workload: N discovered URLs over HOSTS hosts; for each, a seen-set lookup and, when new,
//! inserts into the seen set (16-byte SHA-1 prefix) and a per-host queue keyed by
//! (host, depth, seq); plus one lookup of an already-seen URL per URL (duplicate links).
//! Commits every 50,000 URLs. Then N/10 pops: per host, take the first queued entry and delete
//! it, committing every 10,000. Prints one JSON line: timings, ops/s, peak RSS, disk bytes.

use std::path::Path;
use std::time::Instant;

use redb::ReadableTable;
use sha1::{Digest, Sha1};

const COMMIT_EVERY: u64 = 50_000;
const POP_COMMIT_EVERY: u64 = 10_000;
const CACHE: usize = 64 << 20;

fn url(i: u64, hosts: u64) -> (u32, String) {
    let h = (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) % hosts;
    (h as u32, format!("http://host{h}.example/section/{}/page-{i}.html", i % 97))
}

fn seen_key(u: &str) -> [u8; 16] {
    let d = Sha1::digest(u.as_bytes());
    let mut k = [0u8; 16];
    k.copy_from_slice(&d[..16]);
    k
}

fn queue_key(host: u32, depth: u8, seq: u64) -> [u8; 13] {
    let mut k = [0u8; 13];
    k[..4].copy_from_slice(&host.to_be_bytes());
    k[4] = depth;
    k[5..].copy_from_slice(&seq.to_be_bytes());
    k
}

fn peak_rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

fn dir_size(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let m = e.metadata().unwrap();
            total += if m.is_dir() { dir_size(&e.path()) } else { m.len() };
        }
    }
    total
}

/// The operations the frontier needs from a store.
trait Store {
    fn seen(&mut self, key: &[u8; 16]) -> bool;
    fn insert(&mut self, seen: &[u8; 16], qkey: &[u8; 13], url: &[u8]);
    fn pop_first(&mut self, host: u32) -> bool;
    fn commit(&mut self);
}

struct Redb {
    db: redb::Database,
    txn: Option<redb::WriteTransaction>,
}
const SEEN: redb::TableDefinition<&[u8], ()> = redb::TableDefinition::new("seen");
const QUEUE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("queue");

impl Redb {
    fn open(dir: &Path) -> Self {
        let db = redb::Builder::new().set_cache_size(CACHE).create(dir.join("state.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        Redb { db, txn: Some(txn) }
    }
}
impl Store for Redb {
    fn seen(&mut self, key: &[u8; 16]) -> bool {
        let t = self.txn.as_ref().unwrap().open_table(SEEN).unwrap();
        let found = t.get(&key[..]).unwrap().is_some();
        found
    }
    fn insert(&mut self, seen: &[u8; 16], qkey: &[u8; 13], url: &[u8]) {
        let txn = self.txn.as_ref().unwrap();
        txn.open_table(SEEN).unwrap().insert(&seen[..], ()).unwrap();
        txn.open_table(QUEUE).unwrap().insert(&qkey[..], url).unwrap();
    }
    fn pop_first(&mut self, host: u32) -> bool {
        let txn = self.txn.as_ref().unwrap();
        let mut t = txn.open_table(QUEUE).unwrap();
        let lo = queue_key(host, 0, 0);
        let hi = queue_key(host, 255, u64::MAX);
        let first = t.range(&lo[..]..=&hi[..]).unwrap().next().map(|r| r.unwrap().0.value().to_vec());
        match first {
            Some(k) => {
                t.remove(&k[..]).unwrap();
                true
            }
            None => false,
        }
    }
    fn commit(&mut self) {
        self.txn.take().unwrap().commit().unwrap();
        self.txn = Some(self.db.begin_write().unwrap());
    }
}

struct Fjall {
    db: fjall::Database,
    seen: fjall::Keyspace,
    queue: fjall::Keyspace,
}
impl Fjall {
    fn open(dir: &Path) -> Self {
        let db = fjall::Database::builder(dir.join("fjall")).cache_size(CACHE as u64).open().unwrap();
        let seen = db.keyspace("seen", fjall::KeyspaceCreateOptions::default).unwrap();
        let queue = db.keyspace("queue", fjall::KeyspaceCreateOptions::default).unwrap();
        Fjall { db, seen, queue }
    }
}
impl Store for Fjall {
    fn seen(&mut self, key: &[u8; 16]) -> bool {
        self.seen.contains_key(key).unwrap()
    }
    fn insert(&mut self, seen: &[u8; 16], qkey: &[u8; 13], url: &[u8]) {
        self.seen.insert(seen.to_vec(), Vec::new()).unwrap();
        self.queue.insert(qkey.to_vec(), url.to_vec()).unwrap();
    }
    fn pop_first(&mut self, host: u32) -> bool {
        let first = self.queue.prefix(host.to_be_bytes()).next().map(|g| g.key().unwrap().to_vec());
        match first {
            Some(k) => {
                self.queue.remove(k).unwrap();
                true
            }
            None => false,
        }
    }
    fn commit(&mut self) {
        self.db.persist(fjall::PersistMode::SyncAll).unwrap();
    }
}

struct Sqlite {
    conn: rusqlite::Connection,
}
impl Sqlite {
    fn open(dir: &Path) -> Self {
        let conn = rusqlite::Connection::open(dir.join("state.sqlite")).unwrap();
        conn.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-{};
             CREATE TABLE seen (k BLOB PRIMARY KEY) WITHOUT ROWID;
             CREATE TABLE queue (k BLOB PRIMARY KEY, url BLOB) WITHOUT ROWID;
             BEGIN;",
            CACHE / 1024
        ))
        .unwrap();
        Sqlite { conn }
    }
}
impl Store for Sqlite {
    fn seen(&mut self, key: &[u8; 16]) -> bool {
        let mut s = self.conn.prepare_cached("SELECT 1 FROM seen WHERE k = ?1").unwrap();
        s.exists([&key[..]]).unwrap()
    }
    fn insert(&mut self, seen: &[u8; 16], qkey: &[u8; 13], url: &[u8]) {
        self.conn.prepare_cached("INSERT INTO seen (k) VALUES (?1)").unwrap().execute([&seen[..]]).unwrap();
        self.conn
            .prepare_cached("INSERT INTO queue (k, url) VALUES (?1, ?2)")
            .unwrap()
            .execute(rusqlite::params![&qkey[..], url])
            .unwrap();
    }
    fn pop_first(&mut self, host: u32) -> bool {
        let lo = queue_key(host, 0, 0);
        let hi = queue_key(host, 255, u64::MAX);
        let k: Option<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT k FROM queue WHERE k >= ?1 AND k <= ?2 ORDER BY k LIMIT 1")
            .unwrap()
            .query_row([&lo[..], &hi[..]], |r| r.get(0))
            .ok();
        match k {
            Some(k) => {
                self.conn.prepare_cached("DELETE FROM queue WHERE k = ?1").unwrap().execute([&k]).unwrap();
                true
            }
            None => false,
        }
    }
    fn commit(&mut self) {
        self.conn.execute_batch("COMMIT; BEGIN;").unwrap();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (store_name, n, hosts, dir) = (
        args[1].as_str(),
        args[2].parse::<u64>().unwrap(),
        args[3].parse::<u64>().unwrap(),
        Path::new(&args[4]),
    );
    std::fs::create_dir_all(dir).unwrap();
    let mut store: Box<dyn Store> = match store_name {
        "redb" => Box::new(Redb::open(dir)),
        "fjall" => Box::new(Fjall::open(dir)),
        "sqlite" => Box::new(Sqlite::open(dir)),
        other => panic!("unknown store {other}"),
    };
    let t = Instant::now();
    let mut inserted = 0u64;
    for i in 0..n {
        let (h, u) = url(i, hosts);
        let k = seen_key(&u);
        if !store.seen(&k) {
            store.insert(&k, &queue_key(h, (i % 5) as u8, i), u.as_bytes());
            inserted += 1;
        }
        if i > 0 {
            let (_, earlier) = url(i / 2, hosts);
            assert!(store.seen(&seen_key(&earlier)));
        }
        if (i + 1) % COMMIT_EVERY == 0 {
            store.commit();
        }
    }
    store.commit();
    let enqueue = t.elapsed().as_secs_f64();
    let rss_enqueue = peak_rss();
    let t = Instant::now();
    let pops = n / 10;
    let mut popped = 0u64;
    let mut h = 0u64;
    while popped < pops {
        if store.pop_first(h as u32) {
            popped += 1;
            if popped % POP_COMMIT_EVERY == 0 {
                store.commit();
            }
        }
        h = (h + 1) % hosts;
    }
    store.commit();
    let pop = t.elapsed().as_secs_f64();
    drop(store);
    println!(
        "{{\"store\": \"{store_name}\", \"urls\": {n}, \"hosts\": {hosts}, \"inserted\": {inserted}, \"enqueue_s\": {enqueue:.2}, \"enqueue_per_s\": {:.0}, \"pops\": {pops}, \"pop_s\": {pop:.2}, \"pops_per_s\": {:.0}, \"peak_rss_mb\": {:.0}, \"rss_after_enqueue_mb\": {:.0}, \"disk_mb\": {:.0}}}",
        n as f64 / enqueue,
        pops as f64 / pop,
        peak_rss() as f64 / 1e6,
        rss_enqueue as f64 / 1e6,
        dir_size(dir) as f64 / 1e6
    );
}
