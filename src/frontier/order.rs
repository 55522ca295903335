//! The order in which a host's queued URLs are served (`--order`): each URL gets a rank when
//! it is queued, and the storage serves a host's lowest rank first, then the oldest.
//!
//! - `bfs` (default): the rank is the link depth: breadth-first within each host.
//! - `path-depth`: the rank is the number of `/`-separated segments of the URL's path, in ten
//!   classes (0-9, deeper paths in class 9), as the design we learn from ranks URLs; shallow
//!   URLs (a site's sections and hubs) come first.
//! - `random`: a uniform random rank: each fetch takes a uniformly random queued URL of the
//!   host (for sampling).
//! - `backlinks`: the rank counts down from `u32::MAX` by the URL's backlinks (one when first
//!   found; more as other pages link to it, applied at intervals by `backlinks.rs`); seeds
//!   first.
//!
//! Page requisites (`--page-requisites`) rank 0 under every order: what a fetched page needs
//! to render comes before the host's next page, as Heritrix schedules embeds.
//!
//! The rank lives in the storage key (so under `bfs` the layout is the original one) and
//! persists with the queue; a crawl resumed with another `--order` ranks new URLs the new way.

use url::Url;

/// What `--order` ranks a host's URLs by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CrawlOrder {
    /// Link depth.
    #[default]
    Bfs,
    /// Path segments, ten classes.
    PathDepth,
    /// Uniformly random.
    Random,
    /// Most backlinks first.
    Backlinks,
}

/// The rank of a URL with no backlinks under `backlinks`; each backlink takes one off.
const NO_BACKLINKS: u32 = u32::MAX;

/// The last `path-depth` class.
const MAX_PATH_CLASS: u32 = 9;

impl CrawlOrder {
    /// The rank of `url`, found at `depth` link hops from a seed.
    pub fn rank(self, url: &Url, depth: u32) -> u32 {
        match self {
            CrawlOrder::Bfs => depth,
            CrawlOrder::PathDepth => path_class(url),
            CrawlOrder::Random => fastrand::u32(..),
            // The page that found it is its first backlink.
            CrawlOrder::Backlinks if depth > 0 => NO_BACKLINKS - 1,
            CrawlOrder::Backlinks => 0,
        }
    }

    /// The rank of a queue entry: a page requisite's is 0, else [`CrawlOrder::rank`].
    pub fn rank_entry(self, url: &Url, depth: u32, requisite: u8) -> u32 {
        if requisite > 0 {
            0
        } else {
            self.rank(url, depth)
        }
    }
}

/// The number of non-empty path segments, capped at [`MAX_PATH_CLASS`].
pub fn path_class(url: &Url) -> u32 {
    let segments = url
        .path_segments()
        .map_or(0, |s| s.filter(|p| !p.is_empty()).count());
    (segments as u32).min(MAX_PATH_CLASS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert_eq!(CrawlOrder::Bfs.rank(&u("http://a/x/y"), 3), 3);
        assert_eq!(CrawlOrder::PathDepth.rank(&u("http://a/"), 3), 0);
        assert_eq!(CrawlOrder::PathDepth.rank(&u("http://a/x/y/"), 0), 2);
        assert_eq!(
            CrawlOrder::PathDepth.rank(&u("http://a/1/2/3/4/5/6/7/8/9/10/11"), 0),
            9
        );
        let ranks: std::collections::HashSet<u32> = (0..100)
            .map(|_| CrawlOrder::Random.rank(&u("http://a/"), 0))
            .collect();
        assert!(ranks.len() > 90);
        assert_eq!(CrawlOrder::Backlinks.rank(&u("http://a/"), 0), 0);
        assert_eq!(
            CrawlOrder::Backlinks.rank(&u("http://a/x"), 4),
            u32::MAX - 1
        );
        assert_eq!(
            CrawlOrder::PathDepth.rank_entry(&u("http://a/x/y"), 2, 1),
            0
        );
    }
}
