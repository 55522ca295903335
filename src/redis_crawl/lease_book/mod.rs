//! The worker's local share of a shared crawl: the frontier's storage in Redis mode.
//!
//! Redis holds every queue and seen set; a worker holds, for each host it has a lease on, the
//! batch of entries Redis handed it (they stay "in flight" in Redis until acknowledged). This
//! book is that local part: what the frontier pops from, what it finished (acknowledged after
//! the next save point, once the WARC file is synced), the URLs it discovered (sent to Redis by
//! the coordinator, which answers whether they were new), the backlinks it counted
//! (`--order backlinks`) and the robots.txt texts it learned.
//! The frontier reaches it through [`FrontierStorage`]; the coordinator through [`LeaseBook`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::frontier::storage::{
    Admit, Fingerprint, FrontierStorage, QueuedUrl, RobotsVisitor, SavedHost, StoreError,
};
use crate::url_rules::referrer::{restored, stored};

/// What an [`Outgoing`] item asks of Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutgoingKind {
    /// Queue the URL unless the host's seen set has it (under `--order backlinks`, a URL it
    /// has gains a backlink).
    Admit,
    /// `--order backlinks`: the URL (`entry`), if still queued, gained `rank` backlinks that
    /// this worker's cache of recent links answered.
    Backlinks,
    /// `--order backlinks`: the host gained `rank` other hosts' pages linking to it.
    HostBacklinks,
}

/// A discovered URL, or a backlink count, on its way to Redis.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// What Redis is asked to do.
    pub kind: OutgoingKind,
    /// Host name.
    pub host: String,
    /// URL fingerprint (admissions).
    pub fp: Fingerprint,
    /// The encoded queue entry (admissions), or the URL (backlinks).
    pub entry: String,
    /// Its rank (`--order`; used when the crawl's queues are ranked), or a backlink count.
    pub rank: u32,
}

/// One leased host's local state.
#[derive(Debug, Default)]
pub struct Held {
    /// Entries handed over by Redis, not yet taken by the frontier.
    pub buffer: VecDeque<QueuedUrl>,
    /// The entry being fetched.
    current: Option<QueuedUrl>,
    /// URLs finished since the last checkpoint.
    done: Vec<String>,
    /// URLs finished before the last checkpoint: acknowledged at the next flush.
    pub staged_done: Vec<String>,
    /// robots.txt texts learned since the last checkpoint.
    robots: Vec<(String, Option<Vec<u8>>)>,
    /// robots.txt texts to save at the next flush.
    pub staged_robots: Vec<(String, Option<Vec<u8>>)>,
    /// URLs acknowledged since the host's last refill answer was taken: a refill Redis ran
    /// before an acknowledgement may still hand them back as in flight.
    acked_lately: Vec<String>,
}

/// The shared local state (the frontier and the coordinator both run on the crawl loop, so the
/// lock is never contended).
#[derive(Debug, Default)]
pub struct LeaseBook {
    names: Vec<String>,
    ids: HashMap<String, u32>,
    held: HashMap<u32, Held>,
    outbox: Vec<Outgoing>,
    /// Other hosts' pages linking to each host since the last send (`--order backlinks`).
    host_backlinks: HashMap<u32, u32>,
    meta: HashMap<String, Vec<u8>>,
    meta_staged: bool,
}

impl LeaseBook {
    /// A book holding the worker's saved blobs (read from Redis at start).
    pub fn new(meta: HashMap<String, Vec<u8>>) -> Arc<Mutex<LeaseBook>> {
        Arc::new(Mutex::new(LeaseBook {
            meta,
            ..Default::default()
        }))
    }

    /// The id of a host name the frontier knows.
    pub fn id_of(&self, host: &str) -> Option<u32> {
        self.ids.get(host).copied()
    }

    /// Starts holding a host with its first entries.
    pub fn hold(&mut self, id: u32, entries: Vec<QueuedUrl>) {
        let held = self.held.entry(id).or_default();
        held.buffer.extend(entries);
    }

    /// Entries of a held host in flight in Redis as this worker knows them: handed over and
    /// not acknowledged (buffered, being fetched, finished).
    pub fn outstanding(&self, id: u32) -> usize {
        self.held.get(&id).map_or(0, |h| {
            h.buffer.len() + usize::from(h.current.is_some()) + h.done.len() + h.staged_done.len()
        })
    }

    /// A save point acknowledged these finished URLs of a held host.
    pub fn acknowledged(&mut self, id: u32, urls: Vec<String>) {
        if let Some(held) = self.held.get_mut(&id) {
            held.acked_lately.extend(urls);
        }
    }

    /// More entries for a held host, from a refill answer, which may repeat some it has (the
    /// refill also returned what is in flight): takes those whose URL it neither holds,
    /// fetches nor has finished, nor had acknowledged since the last answer (Redis may have run
    /// the refill before that acknowledgement); returns how many.
    pub fn extend_missing(&mut self, id: u32, entries: Vec<QueuedUrl>) -> usize {
        let Some(held) = self.held.get_mut(&id) else {
            return 0;
        };
        let mut known: HashSet<&str> = held.buffer.iter().map(|e| e.url.as_str()).collect();
        known.extend(held.current.iter().map(|e| e.url.as_str()));
        known.extend(
            held.done
                .iter()
                .chain(&held.staged_done)
                .chain(&held.acked_lately)
                .map(String::as_str),
        );
        let missing: Vec<QueuedUrl> = entries
            .into_iter()
            .filter(|e| !known.contains(e.url.as_str()))
            .collect();
        let n = missing.len();
        held.buffer.extend(missing);
        held.acked_lately.clear();
        n
    }

    /// Stops holding a host; returns what it had not acknowledged yet.
    pub fn drop_host(&mut self, id: u32) -> Option<Held> {
        self.held.remove(&id)
    }

    /// Entries of a held host the frontier has not taken yet.
    pub fn buffered(&self, id: u32) -> usize {
        self.held.get(&id).map_or(0, |h| h.buffer.len())
    }

    /// The held host `id`.
    pub fn held_mut(&mut self, id: u32) -> Option<&mut Held> {
        self.held.get_mut(&id)
    }

    /// True when discovered URLs or backlink counts wait to be sent.
    pub fn has_outgoing(&self) -> bool {
        !self.outbox.is_empty() || !self.host_backlinks.is_empty()
    }

    /// Takes the discovered URLs and backlink counts to send.
    pub fn take_outbox(&mut self) -> Vec<Outgoing> {
        let counts: Vec<(u32, u32)> = self.host_backlinks.drain().collect();
        for (id, n) in counts {
            if let Some(host) = self.name_of(id).map(str::to_string) {
                self.outbox.push(Outgoing {
                    kind: OutgoingKind::HostBacklinks,
                    host,
                    fp: Fingerprint::default(),
                    entry: String::new(),
                    rank: n,
                });
            }
        }
        std::mem::take(&mut self.outbox)
    }

    /// Puts back URLs that could not be sent (sent again next time; admission is idempotent).
    pub fn restore_outbox(&mut self, mut sent: Vec<Outgoing>) {
        sent.append(&mut self.outbox);
        self.outbox = sent;
    }

    /// True when discovered URLs or backlink counts wait to be sent.
    pub fn has_outbox(&self) -> bool {
        !self.outbox.is_empty() || !self.host_backlinks.is_empty()
    }

    /// The worker's blobs, when a checkpoint staged them since the last call.
    pub fn take_staged_meta(&mut self) -> Option<Vec<(String, Vec<u8>)>> {
        if !std::mem::take(&mut self.meta_staged) {
            return None;
        }
        Some(
            self.meta
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }

    /// Stages the blobs again after a failed flush.
    pub fn restage_meta(&mut self) {
        self.meta_staged = true;
    }

    /// Host name of an id.
    pub fn name_of(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }
}

/// Encodes a queue entry: `url TAB depth TAB redirects`, then `TAB attempt TAB requisite TAB
/// sitemap` as far as the last of them that is not 0, then `TAB shared > rest` for a
/// `Referer`: the length of the start it shares with the URL, and the rest. A canonical URL
/// never holds a tab or `>`, nor does a `Referer`, which is one, or `--referer`'s ASCII
/// without a tab. Workers of an earlier version read such an entry without its `Referer`
/// (they need the first three fields, and read a field they cannot parse as 0).
pub fn encode_entry(e: &QueuedUrl) -> String {
    let mut s = format!("{}\t{}\t{}", e.url, e.depth, e.redirects);
    let counts = [e.attempt, u32::from(e.requisite), u32::from(e.sitemap)];
    let written = counts.iter().rposition(|&n| n > 0).map_or(0, |i| i + 1);
    for n in &counts[..written] {
        s.push_str(&format!("\t{n}"));
    }
    if let Some(referer) = e.referer.as_deref().filter(|r| !r.contains('\t')) {
        let (shared, rest) = stored(referer, &e.url);
        s.push_str(&format!("\t{shared}>{rest}"));
    }
    s
}

/// Decodes a queue entry; `None` for one this version cannot read.
pub fn decode_entry(s: &str) -> Option<QueuedUrl> {
    let (s, referer_field) = match s.rsplit_once('\t') {
        Some((before, last)) if last.contains('>') => (before, Some(last)),
        _ => (s, None),
    };
    let mut parts = s.split('\t');
    let url = parts.next()?.to_string();
    let mut num = || parts.next().and_then(|p| p.parse::<u32>().ok());
    let depth = num()?;
    let redirects = num()?;
    let attempt = num().unwrap_or(0);
    let mut small = || num().and_then(|n| u8::try_from(n).ok()).unwrap_or(0);
    let requisite = small();
    let sitemap = small();
    // (A `Referer` that cannot be read is not sent; the URL is kept.)
    let referer = referer_field.and_then(|field| {
        let (shared, rest) = field.split_once('>')?;
        restored(&url, shared.parse().ok()?, rest)
    });
    Some(QueuedUrl {
        url,
        depth,
        rank: depth,
        requisite,
        redirects,
        attempt,
        sitemap,
        referer,
    })
}

/// The frontier's storage in Redis mode: a handle on the book.
pub struct LeaseStore {
    book: Arc<Mutex<LeaseBook>>,
}

impl LeaseStore {
    /// A store over `book`.
    pub fn new(book: Arc<Mutex<LeaseBook>>) -> Self {
        LeaseStore { book }
    }

    fn book(&self) -> MutexGuard<'_, LeaseBook> {
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl FrontierStorage for LeaseStore {
    fn admit(
        &mut self,
        host: u32,
        fp: &Fingerprint,
        entry: &QueuedUrl,
    ) -> Result<Admit, StoreError> {
        let mut book = self.book();
        let Some(name) = book.name_of(host).map(str::to_string) else {
            return Ok(Admit::Seen);
        };
        book.outbox.push(Outgoing {
            kind: OutgoingKind::Admit,
            host: name,
            fp: *fp,
            entry: encode_entry(entry),
            rank: entry.rank,
        });
        Ok(Admit::Deferred)
    }

    fn host_named(&mut self, host: u32, name: &str) {
        let mut book = self.book();
        let names = &mut book.names;
        if names.len() <= host as usize {
            names.resize(host as usize + 1, String::new());
        }
        names[host as usize] = name.to_string();
        book.ids.insert(name.to_string(), host);
    }

    fn requeue(&mut self, host: u32, entry: &QueuedUrl) -> Result<(), StoreError> {
        if let Some(held) = self.book().held.get_mut(&host) {
            // Still in flight in Redis: it must not be acknowledged as done.
            if let Some(i) = held.done.iter().rposition(|u| *u == entry.url) {
                held.done.remove(i);
            }
            held.buffer.push_back(entry.clone());
        }
        Ok(())
    }

    fn pop(&mut self, host: u32) -> Result<Option<QueuedUrl>, StoreError> {
        let mut book = self.book();
        let Some(held) = book.held.get_mut(&host) else {
            return Ok(None);
        };
        let entry = held.buffer.pop_front();
        held.current = entry.clone();
        Ok(entry)
    }

    fn put_back(&mut self, host: u32) -> Result<(), StoreError> {
        if let Some(held) = self.book().held.get_mut(&host) {
            if let Some(e) = held.current.take() {
                held.buffer.push_front(e);
            }
        }
        Ok(())
    }

    fn finish(&mut self, host: u32) {
        if let Some(held) = self.book().held.get_mut(&host) {
            if let Some(e) = held.current.take() {
                held.done.push(e.url);
            }
        }
    }

    fn drop_where(
        &mut self,
        host: u32,
        drop: &mut dyn FnMut(&str) -> bool,
    ) -> Result<usize, StoreError> {
        let mut book = self.book();
        let Some(held) = book.held.get_mut(&host) else {
            return Ok(0);
        };
        let before = held.buffer.len();
        let mut dropped = Vec::new();
        held.buffer.retain(|e| {
            let keep = !drop(&e.url);
            if !keep {
                dropped.push(e.url.clone());
            }
            keep
        });
        held.done.extend(dropped);
        Ok(before - held.buffer.len())
    }

    fn ranks_by_url(&self) -> bool {
        true
    }

    fn promote(
        &mut self,
        host: u32,
        _fp: &Fingerprint,
        url: Option<&str>,
        n: u32,
    ) -> Result<bool, StoreError> {
        let Some(url) = url else {
            return Ok(false);
        };
        let mut book = self.book();
        // A URL in this worker's batch (in flight in Redis, up to 32 per host, handed out in
        // rank order) keeps its place; anywhere else it is Redis's to move, if still queued.
        if book
            .held
            .get(&host)
            .is_some_and(|held| held.buffer.iter().any(|e| e.url == url))
        {
            return Ok(false);
        }
        let Some(name) = book.name_of(host).map(str::to_string) else {
            return Ok(false);
        };
        book.outbox.push(Outgoing {
            kind: OutgoingKind::Backlinks,
            host: name,
            fp: Fingerprint::default(),
            entry: url.to_string(),
            rank: n,
        });
        Ok(false)
    }

    fn host_backlinks(&mut self, host: u32, n: u32) {
        *self.book().host_backlinks.entry(host).or_default() += n;
    }

    fn take(&mut self, host: u32, url: &str) -> Result<Option<QueuedUrl>, StoreError> {
        let mut book = self.book();
        let Some(held) = book.held.get_mut(&host) else {
            return Ok(None);
        };
        let Some(i) = held.buffer.iter().position(|e| e.url == url) else {
            return Ok(None);
        };
        let entry = held.buffer.remove(i);
        if let Some(e) = &entry {
            held.done.push(e.url.clone());
        }
        Ok(entry)
    }

    fn save_host(&mut self, _host: u32, _record: &SavedHost) -> Result<(), StoreError> {
        // A host's clock travels with its acknowledgements (the coordinator reads it from the
        // frontier).
        Ok(())
    }

    fn hosts(&self) -> Result<Vec<(u32, SavedHost)>, StoreError> {
        // Hosts arrive by lease, never from a saved table.
        Ok(Vec::new())
    }

    fn save_robots(
        &mut self,
        origin: &str,
        host: u32,
        text: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        if let Some(held) = self.book().held.get_mut(&host) {
            held.robots
                .push((origin.to_string(), text.map(<[u8]>::to_vec)));
        }
        Ok(())
    }

    fn robots(&self, _each: &mut RobotsVisitor<'_>) -> Result<(), StoreError> {
        Ok(())
    }

    fn meta_get(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.book().meta.get(name).cloned())
    }

    fn meta_put(&mut self, name: &str, value: &[u8]) -> Result<(), StoreError> {
        self.book().meta.insert(name.to_string(), value.to_vec());
        Ok(())
    }

    fn queues_sitemaps(&self) -> bool {
        true
    }

    fn checkpoint(&mut self) -> Result<(), StoreError> {
        // The WARC file is synced: what finished so far may be acknowledged (by the
        // coordinator, right after this save point).
        let mut book = self.book();
        for held in book.held.values_mut() {
            held.staged_done.append(&mut held.done);
            held.staged_robots.append(&mut held.robots);
        }
        book.meta_staged = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
