//! `--order backlinks`: URLs, and hosts, that more crawled pages link to are served first.
//!
//! - **URLs.** A URL is queued with one backlink (the page that found it; see `order.rs`).
//!   Each later page that links to it while it is queued adds one more: the link is counted in
//!   memory (`pending`, per host id and fingerprint) and, at most every [`RERANK_EVERY`] or
//!   when [`MAX_PENDING`] URLs are counted, a re-rank pass moves each counted URL that is
//!   still queued that many ranks earlier in its host's queue ([`FrontierStorage::promote`]).
//!   The rank is the count: it lives in the queue key, so it persists with the queue, and the
//!   pass also runs before every save point, so a resumed crawl has every count a save point
//!   made durable. Links to URLs fetched already cost one lookup in the pass and change
//!   nothing.
//! - **Hosts.** A host's backlinks are the pages of other hosts that linked to it (once per
//!   page); its own pages do not count, or a big site would rank itself first. They are kept
//!   in the host's state and saved in its row. The scheduler serves ready hosts by them,
//!   highest first, with the count each had when it became ready (so they are re-read every
//!   time a host waits out its delay).
//!
//! Politeness and robots.txt are untouched: only which ready host goes first, and which of a
//! host's URLs it fetches next, change.
//!
//! In a shared crawl the storage keeps the queues in Redis: it asks for the counted URLs' text
//! ([`FrontierStorage::ranks_by_url`]) and receives the host counts too
//! ([`FrontierStorage::host_backlinks`]), and sends both there (`redis_crawl/lease_book/`).
//!
//! [`FrontierStorage::ranks_by_url`]: super::storage::FrontierStorage::ranks_by_url
//! [`FrontierStorage::host_backlinks`]: super::storage::FrontierStorage::host_backlinks
//!
//! [`FrontierStorage::promote`]: super::storage::FrontierStorage::promote

use std::collections::HashMap;
use std::time::{Duration, Instant};

use url::Url;

use super::link_key::{link_keys, LinkKey};
use super::storage::Fingerprint;
use super::{Admit, Candidate, Frontier};

/// Counted links are applied to the queue at most this often.
pub const RERANK_EVERY: Duration = Duration::from_secs(1);
/// ... or when this many URLs are counted (~40 bytes each).
pub const MAX_PENDING: usize = 250_000;

/// Links counted since the last re-rank pass.
#[derive(Debug)]
pub struct Backlinks {
    pending: HashMap<(u32, Fingerprint), u32>,
    /// The counted URLs' texts, kept only for a storage that finds queued URLs by text (a
    /// shared crawl's queues in Redis).
    urls: Option<HashMap<(u32, Fingerprint), Box<str>>>,
    last_pass: Instant,
}

impl Backlinks {
    /// Nothing counted; the first pass is due [`RERANK_EVERY`] after `now`. With `keep_urls`,
    /// counted URLs keep their text for [`FrontierStorage::promote`].
    ///
    /// [`FrontierStorage::promote`]: super::storage::FrontierStorage::promote
    pub fn new(now: Instant, keep_urls: bool) -> Self {
        Backlinks {
            pending: HashMap::new(),
            urls: keep_urls.then(HashMap::new),
            last_pass: now,
        }
    }
}

impl Frontier {
    /// Offers the links of one page of `from_host` (in document order, each once): a link
    /// seen moments ago (in the seen cache) counts as seen at once, any other is offered to
    /// `admit` first and queued if it returns a candidate (for that same URL). Without
    /// `--order backlinks` that is all; with it, each seen or admitted link is also a backlink
    /// of its URL, and of its host when that is another host. Returns how many were seen
    /// before.
    pub fn push_links(
        &mut self,
        from_host: &str,
        links: impl IntoIterator<Item = Url>,
        now: Instant,
        admit: impl FnMut(Url) -> Option<Candidate>,
    ) -> usize {
        let links: Vec<Url> = links.into_iter().collect();
        let keys = link_keys(&links, from_host);
        self.push_keyed_links(from_host, links, keys, now, admit)
    }

    /// [`Frontier::push_links`] with each link's key worked out already (by the job that
    /// found them, see `link_key.rs`): `keys[i]` is the key of `links[i]`.
    pub fn push_keyed_links(
        &mut self,
        from_host: &str,
        links: Vec<Url>,
        keys: Vec<LinkKey>,
        now: Instant,
        mut admit: impl FnMut(Url) -> Option<Candidate>,
    ) -> usize {
        // Keys that do not match the links (none of the crawl's paths makes such) are made
        // again here rather than trusted.
        let keys = match keys.len() == links.len() {
            true => keys,
            false => link_keys(&links, from_host),
        };
        let mut seen = 0;
        // The page's host id serves backlinks only (a count per other host).
        let from = match self.backlinks {
            Some(_) => self.ids.get(from_host).copied(),
            None => None,
        };
        let mut hosts_counted: Vec<u32> = Vec::new();
        let keep_urls = self.backlinks.as_ref().is_some_and(|b| b.urls.is_some());
        // The cache's answers first, in a loop of their own: its lookups miss the CPU caches
        // (it spans megabytes) and, with nothing between them, the CPU overlaps those misses.
        // (The links are distinct, so none of them is cached by another one's admission on the
        // way.) The cache is keyed by fingerprint alone (`seen_cache.rs`), so no link's host
        // id is looked up for it.
        let cached: Vec<bool> = keys
            .iter()
            .map(|key| self.seen_cache.contains(&key.fingerprint))
            .collect();
        for ((url, key), cached) in links.into_iter().zip(keys).zip(cached) {
            let fp = key.fingerprint;
            if cached && self.backlinks.is_none() {
                seen += 1;
                continue;
            }
            // Backlinks count a cached link under its host, which is known (the cache holds
            // admitted URLs only); most of a page's links are on its own host, whose id is at
            // hand, and only the others' names are looked up.
            let known = match (cached, from) {
                (false, _) => None,
                (true, Some(id)) if key.on_page_host => Some(id),
                (true, _) => self.ids.get(url.host_str().unwrap_or("")).copied(),
            };
            // The text is kept only for a link the cache of recent links answers (a storage
            // that asks for texts defers every admission, so no other link is counted here).
            let (id, outcome, text) = match known {
                Some(id) => (id, Admit::Seen, keep_urls.then(|| url.as_str().into())),
                None => match admit(url) {
                    Some(candidate) => {
                        let (id, outcome) = self.push_one(candidate, fp, true, now);
                        (id, outcome, None::<Box<str>>)
                    }
                    None => continue,
                },
            };
            let Some(backlinks) = &mut self.backlinks else {
                seen += usize::from(outcome == Admit::Seen);
                continue;
            };
            if outcome == Admit::Seen {
                seen += 1;
                *backlinks.pending.entry((id, fp)).or_default() += 1;
                if let (Some(urls), Some(text)) = (&mut backlinks.urls, text) {
                    urls.entry((id, fp)).or_insert(text);
                }
            }
            if Some(id) != from && !hosts_counted.contains(&id) {
                hosts_counted.push(id);
                let q = &mut self.hosts[id as usize];
                q.backlinks += 1;
                q.dirty = true;
                self.storage.host_backlinks(id, 1);
            }
        }
        if self
            .backlinks
            .as_ref()
            .is_some_and(|b| b.pending.len() >= MAX_PENDING)
        {
            self.rerank(now);
        }
        seen
    }

    /// Runs a re-rank pass when one is due.
    pub(super) fn rerank_if_due(&mut self, now: Instant) {
        if self
            .backlinks
            .as_ref()
            .is_some_and(|b| now.saturating_duration_since(b.last_pass) >= RERANK_EVERY)
        {
            self.rerank(now);
        }
    }

    /// Moves every counted URL that is still queued earlier by its count.
    pub(super) fn rerank(&mut self, now: Instant) {
        let Some(b) = &mut self.backlinks else {
            return;
        };
        b.last_pass = now;
        let pending = std::mem::take(&mut b.pending);
        let mut urls = b.urls.as_mut().map(std::mem::take);
        let counted = pending.len();
        let mut moved = 0;
        for ((id, fp), n) in pending {
            let url = urls.as_mut().and_then(|u| u.remove(&(id, fp)));
            match self.storage.promote(id, &fp, url.as_deref(), n) {
                Ok(true) => moved += 1,
                Ok(false) => {}
                Err(e) => {
                    self.fail(e);
                    break;
                }
            }
        }
        if counted > 0 {
            tracing::debug!(counted, moved, "backlinks re-rank pass");
        }
    }
}
