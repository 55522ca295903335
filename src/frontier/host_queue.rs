//! One host's queue: its URLs in breadth-first order, its politeness clock and its robots state
//! per origin.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::time::{Duration, Instant};

use url::Url;

use super::robots::RobotsState;

/// A queued URL. Ordered so that the heap pops the lowest depth first, then the oldest.
#[derive(Debug)]
pub struct Entry {
    /// Canonical URL.
    pub url: Url,
    /// Link hops from a seed.
    pub depth: u32,
    /// Redirect hops that led here.
    pub redirects: u32,
    /// Fetch attempts already failed.
    pub attempt: u32,
    /// Enqueue order, for FIFO within a depth.
    pub seq: u64,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the smallest (depth, seq) comes out first.
        (other.depth, other.seq).cmp(&(self.depth, self.seq))
    }
}

/// A robots.txt fetch waiting to follow a redirect.
#[derive(Debug)]
pub struct PendingRobots {
    /// The origin whose rules are being fetched.
    pub origin: String,
    /// Where to fetch next.
    pub url: Url,
    /// Redirect hops so far.
    pub hops: u32,
}

/// The state of one host.
#[derive(Debug)]
pub struct HostQueue {
    /// URLs waiting, lowest depth first.
    pub entries: BinaryHeap<Entry>,
    /// robots.txt state per origin (`scheme://host:port`) of this host.
    pub robots: HashMap<String, RobotsState>,
    /// A robots.txt redirect to follow before anything else.
    pub pending_robots: Option<PendingRobots>,
    /// Earliest time of the next request.
    pub next_allowed: Instant,
    /// Delay after each request (configured delay raised by Crawl-delay).
    pub delay: Duration,
    /// A fetch for this host is running; at most one at a time.
    pub in_flight: bool,
    /// The host sits in the frontier's ready or waiting set.
    pub scheduled: bool,
}

impl HostQueue {
    /// An empty queue that may be fetched from `now`.
    pub fn new(now: Instant, delay: Duration) -> Self {
        HostQueue {
            entries: BinaryHeap::new(),
            robots: HashMap::new(),
            pending_robots: None,
            next_allowed: now,
            delay,
            in_flight: false,
            scheduled: false,
        }
    }

    /// True when the host has work and is neither running nor already scheduled.
    pub fn wants_schedule(&self) -> bool {
        !self.in_flight
            && !self.scheduled
            && (!self.entries.is_empty() || self.pending_robots.is_some())
    }
}
