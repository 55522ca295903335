//! The crawl database as the frontier's storage: queue rows per host, the seen set, host and
//! robots.txt rows, in the layout of [`super::layout`].

use super::layout::{
    decode_host, decode_queued, decode_robots, encode_host, encode_queued, encode_robots, key_seq,
    queue_key, queued_url, seen_key, QueueKey,
};
use super::CrawlDb;
use crate::frontier::storage::{
    fingerprint, Admit, Fingerprint, FrontierStorage, QueuedUrl, RobotsVisitor, SavedHost,
    StoreError,
};

/// Name of the queue sequence number in the `meta` table.
const SEQ_META: &str = "queue_seq";
/// The frontier's blob that held the sequence number before it moved here.
const LEGACY_SEQ_META: &str = "frontier";

/// The sequence number saved in `db` (0 for a new database).
pub(super) fn saved_seq(db: &CrawlDb) -> Result<u64, StoreError> {
    if let Some(bytes) = db.meta_read(SEQ_META)? {
        return Ok(bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
            .unwrap_or_default());
    }
    #[derive(serde::Deserialize)]
    struct Legacy {
        seq: u64,
    }
    Ok(db
        .meta_read(LEGACY_SEQ_META)?
        .and_then(|b| serde_json::from_slice::<Legacy>(&b).ok())
        .map_or(0, |l| l.seq))
}

impl CrawlDb {
    fn name(&self, host: u32) -> Option<&str> {
        self.names.get(&host).map(|n| &**n)
    }

    fn next_key(&mut self, host: u32, depth: u32) -> QueueKey {
        self.seq += 1;
        queue_key(host, depth, self.seq)
    }

    /// Queues `entry` under a new key and points its seen row at that key.
    fn enqueue(
        &mut self,
        host: u32,
        fp: &Fingerprint,
        entry: &QueuedUrl,
    ) -> Result<(), StoreError> {
        let key = self.next_key(host, entry.rank);
        let value = encode_queued(entry, self.name(host));
        self.queue_insert(&key, &value)?;
        self.seen_insert(&seen_key(host, fp), &key)
    }

    fn damaged(&self, what: String) -> StoreError {
        StoreError::Database {
            path: self.path.clone(),
            detail: what,
        }
    }
}

impl FrontierStorage for CrawlDb {
    fn host_named(&mut self, host: u32, name: &str) {
        self.names.insert(host, name.into());
    }

    fn late_duplicates(&mut self) -> Vec<(u32, u64)> {
        self.take_late_duplicates()
    }

    fn admit(
        &mut self,
        host: u32,
        fp: &Fingerprint,
        entry: &QueuedUrl,
    ) -> Result<Admit, StoreError> {
        if self.seen_get(&seen_key(host, fp))?.is_some() {
            return Ok(Admit::Seen);
        }
        self.enqueue(host, fp, entry)?;
        Ok(Admit::Queued)
    }

    fn admit_link(
        &mut self,
        host: u32,
        fp: &Fingerprint,
        entry: &QueuedUrl,
    ) -> Result<Admit, StoreError> {
        // The key the entry gets if it is new; the sequence moves on only then.
        let key = queue_key(host, entry.rank, self.seq + 1);
        let value = encode_queued(entry, self.name(host));
        if !self.queue_unseen(&seen_key(host, fp), &key, &value)? {
            return Ok(Admit::Seen);
        }
        self.seq += 1;
        Ok(Admit::Queued)
    }

    fn requeue(&mut self, host: u32, entry: &QueuedUrl) -> Result<(), StoreError> {
        self.enqueue(host, &fingerprint(&entry.url), entry)
    }

    fn pop(&mut self, host: u32) -> Result<Option<QueuedUrl>, StoreError> {
        loop {
            let Some((key, bytes)) = self.queue_pop_first(host)? else {
                return Ok(None);
            };
            // A row this layout cannot read is dropped rather than blocking the host.
            if let Some(entry) = decode_queued(&key, &bytes, self.name(host)) {
                self.in_flight.insert(host, (key, bytes));
                return Ok(Some(entry));
            }
        }
    }

    fn put_back(&mut self, host: u32) -> Result<(), StoreError> {
        match self.in_flight.remove(&host) {
            Some((key, bytes)) => self.queue_insert(&key, &bytes),
            None => Ok(()),
        }
    }

    fn finish(&mut self, host: u32) {
        self.in_flight.remove(&host);
    }

    fn promote(
        &mut self,
        host: u32,
        fp: &Fingerprint,
        _url: Option<&str>,
        n: u32,
    ) -> Result<bool, StoreError> {
        let seen = seen_key(host, fp);
        let Some(key) = self.seen_get(&seen)? else {
            return Ok(false);
        };
        let Some(bytes) = self.queue_get(&key)? else {
            return Ok(false);
        };
        let Some(mut entry) = decode_queued(&key, &bytes, self.name(host)) else {
            return Ok(false);
        };
        let rank = entry.rank.saturating_sub(n);
        if rank == entry.rank {
            return Ok(false);
        }
        entry.rank = rank;
        let moved = queue_key(host, rank, key_seq(&key));
        self.queue_remove(&key)?;
        let value = encode_queued(&entry, self.name(host));
        self.queue_insert(&moved, &value)?;
        self.seen_insert(&seen, &moved)?;
        Ok(true)
    }

    fn drop_where(
        &mut self,
        host: u32,
        drop: &mut dyn FnMut(&str) -> bool,
    ) -> Result<usize, StoreError> {
        let name = self.names.get(&host).cloned();
        self.queue_drop_where(host, |bytes| {
            queued_url(bytes, name.as_deref()).is_some_and(|url| drop(&url))
        })
    }

    fn take(&mut self, host: u32, url: &str) -> Result<Option<QueuedUrl>, StoreError> {
        let Some(key) = self.seen_get(&seen_key(host, &fingerprint(url)))? else {
            return Ok(None);
        };
        let Some(bytes) = self.queue_get(&key)? else {
            return Ok(None);
        };
        if queued_url(&bytes, self.name(host)).as_deref() != Some(url) {
            return Ok(None);
        }
        self.queue_remove(&key)?;
        Ok(decode_queued(&key, &bytes, self.name(host)))
    }

    fn save_host(&mut self, host: u32, record: &SavedHost) -> Result<(), StoreError> {
        let held = u64::from(self.in_flight.contains_key(&host));
        let row = encode_host(&SavedHost {
            queued: record.queued + held,
            ..record.clone()
        });
        self.host_put(host, &row)
    }

    fn hosts(&self) -> Result<Vec<(u32, SavedHost)>, StoreError> {
        self.host_rows()?
            .into_iter()
            .map(|(id, row)| match decode_host(&row) {
                Some(host) => Ok((id, host)),
                None => Err(self.damaged(format!("host row {id} is damaged"))),
            })
            .collect()
    }

    fn save_robots(
        &mut self,
        origin: &str,
        host: u32,
        text: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        self.robots_put(origin, &encode_robots(host, text))
    }

    fn robots(&self, each: &mut RobotsVisitor<'_>) -> Result<(), StoreError> {
        self.robots_rows(|origin, row| {
            if let Some((host, text)) = decode_robots(row) {
                each(origin, host, text);
            }
        })
    }

    fn meta_get(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.meta_read(name)
    }

    fn meta_put(&mut self, name: &str, value: &[u8]) -> Result<(), StoreError> {
        self.meta_write(name, value)
    }

    fn held(&self) -> usize {
        self.in_flight.len()
    }

    fn checkpoint(&mut self) -> Result<(), StoreError> {
        let held: Vec<(QueueKey, Vec<u8>)> = self.in_flight.values().cloned().collect();
        for (key, bytes) in &held {
            self.queue_insert(key, bytes)?;
        }
        self.meta_write(SEQ_META, &self.seq.to_le_bytes())?;
        self.commit()?;
        // Back out of the queue until the next save point.
        for (key, _) in &held {
            self.queue_remove(key)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_from_before_the_seam_keeps_its_queue_sequence() {
        let dir = tempfile::tempdir().unwrap();
        {
            // What the previous version saved: the sequence in the frontier's blob only.
            let mut db = CrawlDb::open(dir.path()).unwrap();
            db.meta_write(
                LEGACY_SEQ_META,
                br#"{"seq":42,"counters":{"robots_denied":1,"robots_unavailable":0}}"#,
            )
            .unwrap();
            db.commit().unwrap();
        }
        let mut db = CrawlDb::open(dir.path()).unwrap();
        assert_eq!(db.seq, 42);
        let entry = QueuedUrl {
            url: "http://a.org/".into(),
            ..QueuedUrl::default()
        };
        assert_eq!(
            db.admit(1, &fingerprint(&entry.url), &entry).unwrap(),
            Admit::Queued
        );
        assert_eq!(db.seq, 43, "new keys never reuse an old sequence number");
        db.checkpoint().unwrap();
        drop(db);
        let db = CrawlDb::open(dir.path()).unwrap();
        assert_eq!(db.seq, 43);
    }
}
