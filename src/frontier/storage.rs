//! The frontier's storage seam: where queued URLs, the seen set, host records and robots.txt
//! texts live, and how they become durable. The frontier is pure scheduling logic over it.
//!
//! One implementation today, the embedded redb database (`crawl_db`). The trait speaks in
//! host ids, URL fingerprints and queue entries, never in bytes or keys: the byte layout is the
//! implementation's business. Every call is synchronous and cheap enough to make from the crawl
//! loop, except [`FrontierStorage::checkpoint`], which syncs to disk and is run by the loop off
//! its async thread.

use std::path::PathBuf;
use std::time::SystemTime;

use sha1::{Digest, Sha1};

use crate::url_rules::session_ids::without_session_ids;

/// 96 bits of the SHA-1 of a canonical URL without its session ids: its identity in the seen
/// set (collisions within one host are out of reach).
pub type Fingerprint = [u8; 12];

/// The fingerprint of a canonical URL. Session ids do not count
/// (`url_rules/session_ids.rs`): URLs that differ only by one are one URL to the seen set.
pub fn fingerprint(url: &str) -> Fingerprint {
    let digest = Sha1::digest(without_session_ids(url).as_bytes());
    digest[..12].try_into().expect("12 of 20 bytes")
}

/// A URL waiting to be fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueuedUrl {
    /// The canonical URL.
    pub url: String,
    /// Link hops from a seed.
    pub depth: u32,
    /// Serving order within a host: lowest rank first, then oldest (`--order`; the depth
    /// under `bfs`).
    pub rank: u32,
    /// A page requisite (`--page-requisites`) this many transclusion hops from a page; 0 for
    /// an ordinary URL.
    pub requisite: u8,
    /// Redirect hops that led here.
    pub redirects: u32,
    /// Failed attempts so far.
    pub attempt: u32,
    /// A sitemap file `sitemap - 1` levels below robots.txt, queued in a storage that
    /// [`FrontierStorage::queues_sitemaps`]; 0 for any other URL.
    pub sitemap: u8,
    /// The `Referer` its request sends: the document it was found in, under the policy of
    /// [`crate::url_rules::referrer`].
    pub referer: Option<Box<str>>,
}

/// What is saved of a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedHost {
    /// The politeness key (host name).
    pub name: String,
    /// URLs queued for it (the storage adds the entry it holds in flight, if any).
    pub queued: u64,
    /// When it may be fetched again, as wall-clock time (an `Instant` does not survive a
    /// restart).
    pub next_allowed: SystemTime,
    /// Pages of other hosts that linked to it (`--order backlinks`).
    pub backlinks: u64,
}

/// Why the storage failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another process has the database open.
    #[error("crawl state {path} is in use by another process")]
    Locked {
        /// The database file.
        path: PathBuf,
    },
    /// The state directory could not be created.
    #[error("crawl state {path}: {source}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The shared store (Redis) failed or holds data this version cannot read.
    #[error("shared crawl state: {detail}")]
    Shared {
        /// What went wrong.
        detail: String,
    },
    /// The database reported an error (I/O, full disk, corruption) or holds damaged data.
    #[error("crawl state {path}: {detail}")]
    Database {
        /// The database file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
}

/// What [`FrontierStorage::admit`] did with a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// New: queued.
    Queued,
    /// Seen before: dropped.
    Seen,
    /// Handed to a shared store that answers later (Redis mode); it counts duplicates itself.
    Deferred,
}

/// Receives saved robots.txt texts: origin, host id, text (`None`: allow everything).
pub type RobotsVisitor<'a> = dyn FnMut(&str, u32, Option<&[u8]>) + 'a;

/// Persistence of the frontier. Changes accumulate until [`FrontierStorage::checkpoint`]; a
/// crash returns the storage to the last checkpoint.
pub trait FrontierStorage: Send {
    /// Queues `entry` for host `host` unless a URL with fingerprint `fp` was seen on that host
    /// before; marks it seen.
    fn admit(
        &mut self,
        host: u32,
        fp: &Fingerprint,
        entry: &QueuedUrl,
    ) -> Result<Admit, StoreError>;

    /// As [`admit`](Self::admit), for a link found on a page, the bulk of what a crawl
    /// admits: a storage may answer [`Admit::Queued`] without looking at its seen set on disk
    /// and find out later that the URL was seen before; it then drops the entry itself and
    /// reports it in [`late_duplicates`](Self::late_duplicates). A URL is never handed out
    /// twice either way.
    fn admit_link(
        &mut self,
        host: u32,
        fp: &Fingerprint,
        entry: &QueuedUrl,
    ) -> Result<Admit, StoreError> {
        self.admit(host, fp, entry)
    }

    /// Tells the storage the name of a new host id (before any other call about it).
    fn host_named(&mut self, _host: u32, _name: &str) {}

    /// URLs admitted as new ([`Admit::Queued`]) that turned out to have been seen before, per
    /// host, since the last call: a storage that checks its seen set in batches finds them
    /// later and drops their queue entries itself; the frontier corrects its counts.
    fn late_duplicates(&mut self) -> Vec<(u32, u64)> {
        Vec::new()
    }

    /// Queues `entry` again (a retry), whether seen or not.
    fn requeue(&mut self, host: u32, entry: &QueuedUrl) -> Result<(), StoreError>;

    /// Takes the next entry of `host` (lowest depth, then oldest). The storage holds it as the
    /// host's entry in flight until [`finish`](Self::finish) or [`put_back`](Self::put_back);
    /// a checkpoint meanwhile saves it as queued, so a crash never loses it.
    fn pop(&mut self, host: u32) -> Result<Option<QueuedUrl>, StoreError>;

    /// Returns the host's entry in flight to its place in the queue (it cannot run yet).
    fn put_back(&mut self, host: u32) -> Result<(), StoreError>;

    /// The host's entry in flight is done.
    fn finish(&mut self, host: u32);

    /// Entries in flight, which a checkpoint saves as queued (fetches abandoned at a stop run
    /// again in the next run).
    fn held(&self) -> usize {
        0
    }

    /// Moves the queued URL with fingerprint `fp` of `host` `n` ranks earlier, keeping its
    /// age among equals (`--order backlinks`: it gained `n` backlinks). `url` is the URL's
    /// text when the storage asked for it ([`FrontierStorage::ranks_by_url`]). False when it is
    /// not queued (fetched, in flight or dropped), already first, or moved elsewhere later. A
    /// storage that cannot re-rank keeps its order.
    fn promote(
        &mut self,
        _host: u32,
        _fp: &Fingerprint,
        _url: Option<&str>,
        _n: u32,
    ) -> Result<bool, StoreError> {
        Ok(false)
    }

    /// True when [`FrontierStorage::promote`] needs the URL's text, not only its fingerprint
    /// (the shared crawl's queues in Redis find a queued URL by its text).
    fn ranks_by_url(&self) -> bool {
        false
    }

    /// `host` gained `n` pages of other hosts linking to it (`--order backlinks`): a storage
    /// shared with other processes counts them for the whole crawl.
    fn host_backlinks(&mut self, _host: u32, _n: u32) {}

    /// Removes the queued URLs of `host` for which `drop` is true; returns how many.
    fn drop_where(
        &mut self,
        host: u32,
        drop: &mut dyn FnMut(&str) -> bool,
    ) -> Result<usize, StoreError>;

    /// Removes the queued URL `url` of `host` (crash replay: it was done before the crash);
    /// `None` when it is not queued.
    fn take(&mut self, host: u32, url: &str) -> Result<Option<QueuedUrl>, StoreError>;

    /// Saves a host's record.
    fn save_host(&mut self, host: u32, record: &SavedHost) -> Result<(), StoreError>;

    /// Every saved host with its id, in id order.
    fn hosts(&self) -> Result<Vec<(u32, SavedHost)>, StoreError>;

    /// Saves the robots.txt text of `origin` on host `host` (`None`: allow everything).
    fn save_robots(
        &mut self,
        origin: &str,
        host: u32,
        text: Option<&[u8]>,
    ) -> Result<(), StoreError>;

    /// Calls `each(origin, host, text)` for every saved robots.txt.
    fn robots(&self, each: &mut RobotsVisitor<'_>) -> Result<(), StoreError>;

    /// Reads a named blob.
    fn meta_get(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Writes a named blob (made durable by the next checkpoint).
    fn meta_put(&mut self, name: &str, value: &[u8]) -> Result<(), StoreError>;

    /// Makes every change so far durable. Entries in flight are saved as queued.
    fn checkpoint(&mut self) -> Result<(), StoreError>;

    /// True when sitemap files go into the queue as entries (a shared crawl, where a host's
    /// requests are made only by the worker holding its lease); else the frontier keeps them
    /// per host in memory, fetched before the host's pages.
    fn queues_sitemaps(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_96_bits_of_sha1() {
        // Python: hashlib.sha1(b"http://a.org/").hexdigest()[:24]
        let fp = fingerprint("http://a.org/");
        assert_eq!(
            data_encoding::HEXLOWER.encode(&fp),
            "46ebe0b0bd343dd876bdbfd1"
        );
        assert_ne!(fp, fingerprint("http://a.org/x"));
        let session = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            fingerprint(&format!("http://a.org/x;jsessionid={session}")),
            fingerprint("http://a.org/x")
        );
    }
}
