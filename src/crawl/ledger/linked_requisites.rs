//! Page requisites the crawl first met as links (`--page-requisites`). The frontier keeps one
//! seen set for every URL, so a page's `<img src=x.png>` is a duplicate when the crawl has
//! already queued or fetched `x.png` as a link (`<a href=x.png><img src=x.png></a>`, Javadoc's
//! module graphs). Fetched as a link, such a URL is a page of a type not archived, or a link the
//! extension pre-filter declines unfetched: the page that needs it would replay without it.
//! This remembers what is needed to make up for that, so that the URL is fetched as a
//! requisite once:
//! - a requisite found to be seen, not queued as a requisite before, is *wanted*: when its
//!   link's job comes to run, it runs as a requisite, and when that job was already running
//!   and its type was not archived, the URL is queued again as a requisite;
//! - a link's job skipped for its type, or declined by the extension pre-filter, is
//!   remembered: a requisite of that URL found later is queued again.
//!
//! Memory is bounded (each set starts over when full) and per process: a resumed crawl, or a
//! shared crawl whose link ran on another worker, may still miss such a requisite.

use std::collections::HashSet;
use std::hash::BuildHasher;

use foldhash::fast::RandomState;
use url::Url;

/// Most requisite URLs remembered as queued (a table of 2^20 slots, ~9.5 MB): past it the set
/// starts over, and a requisite queued before counts as wanted when it is found again (at
/// worst a page job runs as a requisite).
const MAX_REQUISITES: usize = 900_000;

/// Most URLs wanted, and most links skipped, remembered (2^16 slots, ~0.6 MB each).
const MAX_PENDING: usize = 57_000;

/// What to do with a requisite the frontier found to be seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SeenRequisite {
    /// Queued as a requisite before, or wanted from a link not run yet: nothing.
    Duplicate,
    /// Its link was skipped for its type or declined: queue it again, as a requisite.
    FetchAgain,
}

/// The URLs in play (see the module's doc), by a hash of the URL seeded per process.
#[derive(Debug, Default)]
pub(super) struct LinkedRequisites {
    /// `--page-requisites` is on; nothing is remembered otherwise.
    on: bool,
    /// Queued as requisites.
    requisites: HashSet<u64, RandomState>,
    /// Needed as requisites, seen as something else, not fetched as requisites yet.
    wanted: HashSet<u64, RandomState>,
    /// Fetched as links of a type not archived, or declined unfetched.
    skipped: HashSet<u64, RandomState>,
    hasher: RandomState,
}

impl LinkedRequisites {
    /// Remembers only when `on` (`--page-requisites`).
    pub(super) fn new(on: bool) -> Self {
        LinkedRequisites {
            on,
            ..Default::default()
        }
    }

    /// The URL of `key` ([`Self::key`]) was queued as a requisite.
    pub(super) fn queued(&mut self, key: u64) {
        if self.on {
            insert_bounded(&mut self.requisites, key, MAX_REQUISITES);
        }
    }

    /// True when a requisite of the URL of `key`, if found to be seen, is to be queued again
    /// ([`Self::seen`] says so then).
    pub(super) fn was_skipped(&self, key: u64) -> bool {
        self.on && self.skipped.contains(&key)
    }

    /// A requisite of the URL of `key` was found to be seen.
    pub(super) fn seen(&mut self, key: u64) -> SeenRequisite {
        if !self.on {
            return SeenRequisite::Duplicate;
        }
        if self.requisites.contains(&key) {
            return SeenRequisite::Duplicate;
        }
        if self.skipped.remove(&key) {
            insert_bounded(&mut self.requisites, key, MAX_REQUISITES);
            return SeenRequisite::FetchAgain;
        }
        insert_bounded(&mut self.wanted, key, MAX_PENDING);
        SeenRequisite::Duplicate
    }

    /// The key of `url` in these sets (0 when nothing is remembered).
    pub(super) fn key(&self, url: &Url) -> u64 {
        match self.on {
            true => self.hasher.hash_one(url.as_str()),
            false => 0,
        }
    }

    /// True when a link's job of `url` is to run as a requisite (see [`Self::take_wanted`]).
    pub(super) fn is_wanted(&self, url: &Url) -> bool {
        self.on && !self.wanted.is_empty() && self.wanted.contains(&self.key(url))
    }

    /// True (and forgotten) when a page needs `url`, whose link's job is about to run or has
    /// run: it is to run as a requisite.
    pub(super) fn take_wanted(&mut self, url: &Url) -> bool {
        if !self.on || self.wanted.is_empty() {
            return false;
        }
        let key = self.key(url);
        let wanted = self.wanted.remove(&key);
        if wanted {
            insert_bounded(&mut self.requisites, key, MAX_REQUISITES);
        }
        wanted
    }

    /// `url`'s link was fetched and its type is not archived, or it was declined unfetched.
    pub(super) fn skipped(&mut self, url: &Url) {
        if self.on {
            let key = self.key(url);
            insert_bounded(&mut self.skipped, key, MAX_PENDING);
        }
    }
}

/// Inserts `key`, starting `set` over when it holds `max`.
fn insert_bounded(set: &mut HashSet<u64, RandomState>, key: u64, max: usize) {
    if set.len() >= max {
        set.clear();
    }
    set.insert(key);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn a_requisite_of_a_link_not_run_yet_makes_it_run_as_one() {
        let mut linked = LinkedRequisites::new(true);
        let graph = url("http://a.test/m/graph.svg");
        assert_eq!(linked.seen(linked.key(&graph)), SeenRequisite::Duplicate);
        assert!(linked.is_wanted(&graph));
        assert!(linked.take_wanted(&graph));
        // Once: it is a requisite now.
        assert!(!linked.take_wanted(&graph));
        assert_eq!(linked.seen(linked.key(&graph)), SeenRequisite::Duplicate);
        assert!(!linked.take_wanted(&graph));
    }

    #[test]
    fn a_requisite_of_a_skipped_link_is_fetched_again_once() {
        let mut linked = LinkedRequisites::new(true);
        let image = url("http://a.test/full.jpg");
        linked.skipped(&image);
        let key = linked.key(&image);
        assert!(linked.was_skipped(key));
        assert_eq!(linked.seen(key), SeenRequisite::FetchAgain);
        assert!(!linked.was_skipped(key));
        assert_eq!(linked.seen(key), SeenRequisite::Duplicate);
        assert!(!linked.take_wanted(&image));
    }

    #[test]
    fn a_requisite_queued_as_one_is_a_duplicate() {
        let mut linked = LinkedRequisites::new(true);
        let css = url("http://a.test/site.css");
        linked.queued(linked.key(&css));
        assert_eq!(linked.seen(linked.key(&css)), SeenRequisite::Duplicate);
        assert!(!linked.take_wanted(&css));
    }

    #[test]
    fn nothing_is_remembered_without_page_requisites() {
        let mut linked = LinkedRequisites::new(false);
        let image = url("http://a.test/full.jpg");
        linked.skipped(&image);
        let key = linked.key(&image);
        assert!(!linked.was_skipped(key));
        assert_eq!(linked.seen(key), SeenRequisite::Duplicate);
        assert!(!linked.is_wanted(&image));
    }
}
