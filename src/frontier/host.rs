//! One host's in-memory state: how many URLs it has queued in storage, its politeness clock
//! and its robots state per origin. The queued URLs themselves live in storage.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use url::Url;

use super::groups::Membership;
use super::host_health::HostHealth;
use super::robots_state::RobotsState;

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
pub struct HostState {
    /// The politeness key (host name).
    pub name: String,
    /// URLs waiting in storage.
    pub queued: u64,
    /// Changed since the last save point.
    pub dirty: bool,
    /// robots.txt state per origin (`scheme://host:port`) of this host.
    pub robots: HashMap<String, RobotsState>,
    /// A robots.txt redirect to follow before anything else.
    pub pending_robots: Option<PendingRobots>,
    /// Earliest time of the next request.
    pub next_allowed: Instant,
    /// Delay after each request (configured delay raised by Crawl-delay).
    pub delay: Duration,
    /// Extra wait after the host answered 429/503 (`--retry-status`): it replaces `delay`
    /// while longer, grows with each such answer and halves with each other response.
    pub backoff: Duration,
    /// The job in flight got a last answer that asked to slow down: its end keeps the
    /// back-off rather than letting it recover a step.
    pub held: bool,
    /// A fetch for this host is running; at most one at a time.
    pub in_flight: bool,
    /// The host sits in the frontier's ready or waiting set.
    pub scheduled: bool,
    /// Its politeness group (`--politeness ip/domain`).
    pub group: Membership,
    /// Waiting for its group's request to finish (neither ready nor waiting).
    pub parked: bool,
    /// Sitemaps to fetch before pages, with their nesting level.
    pub sitemaps: std::collections::VecDeque<(Url, u32)>,
    /// Sitemap files of this host queued in this run ([`super::sitemaps::MAX_SITEMAPS_PER_HOST`]).
    pub sitemaps_queued: u32,
    /// Pages of other hosts that linked here (`--order backlinks`; counted once per page).
    pub backlinks: u64,
    /// Jobs started since its turn began (see [`super::scheduler`]).
    pub turn: u32,
    /// Its failed connections: down, given up (see [`super::host_health`]).
    pub health: HostHealth,
    /// A page (not only what pages need) was queued for it, or it came from a saved or
    /// shared state: a host whose pages are crawled, whose sitemaps are worth reading.
    pub has_pages: bool,
}

impl HostState {
    /// An empty queue that may be fetched from `now`.
    pub fn new(name: String, now: Instant, delay: Duration) -> Self {
        HostState {
            name,
            queued: 0,
            dirty: true,
            robots: HashMap::new(),
            pending_robots: None,
            next_allowed: now,
            delay,
            backoff: Duration::ZERO,
            held: false,
            in_flight: false,
            scheduled: false,
            group: Membership::Own,
            parked: false,
            sitemaps: Default::default(),
            sitemaps_queued: 0,
            backlinks: 0,
            turn: 0,
            health: HostHealth::default(),
            has_pages: false,
        }
    }

    /// True when the host has work and is neither running nor already scheduled.
    pub fn wants_schedule(&self) -> bool {
        !self.in_flight
            && !self.scheduled
            && !self.parked
            && (self.queued > 0 || self.pending_robots.is_some() || !self.sitemaps.is_empty())
    }
}
