//! Hosts that come and go: the frontier's side of a shared crawl (Redis mode), where a worker
//! serves only the hosts it holds a lease on. A host arrives (adopted with its politeness clock,
//! robots.txt texts with their ages and a first batch of URLs), gets more URLs, and leaves
//! (released when it has no work, or lost when its lease went to another worker). The storage
//! behind the frontier holds the URLs; this file keeps the per-host state in step with it.

use std::time::{Duration, Instant};

use super::robots_state::ROBOTS_MAX_AGE;
use super::{politeness, Frontier, RobotsRules, RobotsState};

/// A host handed to this worker.
#[derive(Debug)]
pub struct Adopted {
    /// The politeness key (host name).
    pub name: String,
    /// How long to wait before its next request (its previous owner's politeness clock).
    pub wait: Duration,
    /// Saved robots.txt texts by origin.
    pub robots: Vec<AdoptedRobots>,
    /// URLs handed over with it (already in the storage's buffer).
    pub queued: u64,
}

/// An origin's robots.txt, as a host's previous owner saved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdoptedRobots {
    /// `scheme://host:port`.
    pub origin: String,
    /// The file (`None`: allow everything).
    pub text: Option<Vec<u8>>,
    /// How long ago it was fetched (`None`: not known, saved by an older worker).
    pub age: Option<Duration>,
}

impl Frontier {
    /// Takes over a host: its clock, robots rules and `adopted.queued` URLs from storage.
    pub fn adopt(&mut self, adopted: Adopted, now: Instant) {
        let id = self.host_id(&adopted.name, now);
        self.hosts[id as usize].has_pages = true;
        let (agent, base, max) = (
            self.config.robots_agent.clone(),
            self.config.delay,
            self.config.max_delay,
        );
        let obey = self.config.obey_robots;
        let q = &mut self.hosts[id as usize];
        for saved in adopted.robots {
            let rules = match saved.text {
                Some(text) => RobotsRules::parse(&agent, &text),
                None => RobotsRules::allow_all(),
            };
            // Fetched again 24 hours after its fetch, wherever the host went meanwhile; one
            // of unknown age when its origin's next URL comes up (as on resume).
            let rules = match (obey, saved.age) {
                (false, _) => rules,
                (true, Some(age)) => rules.refreshed_at(now + ROBOTS_MAX_AGE.saturating_sub(age)),
                (true, None) => rules.refreshed_at(now),
            };
            q.delay = politeness::host_delay(base, rules.crawl_delay(), max);
            q.robots.insert(saved.origin, RobotsState::Known(rules));
        }
        q.next_allowed = q.next_allowed.max(now + adopted.wait);
        self.add_queued(&adopted.name, adopted.queued);
    }

    /// `n` more URLs of a host arrived in storage.
    pub fn add_queued(&mut self, host: &str, n: u64) {
        let Some(&id) = self.ids.get(host) else {
            return;
        };
        let q = &mut self.hosts[id as usize];
        q.queued += n;
        q.dirty = true;
        self.queued += n;
        self.schedule(id);
    }

    /// The host went to another worker: forget its queued URLs (the storage dropped them) and
    /// any robots.txt redirect it was following. A fetch in flight ends normally.
    pub fn lose(&mut self, host: &str) {
        self.suspend(host);
        if let Some(&id) = self.ids.get(host) {
            self.hosts[id as usize].pending_robots = None;
        }
    }

    /// Nothing more of the host starts until [`Frontier::resume`]: Redis could not be reached
    /// and its lease may have run out. Its URLs stay in storage; a fetch in flight ends
    /// normally.
    pub fn suspend(&mut self, host: &str) {
        let Some(&id) = self.ids.get(host) else {
            return;
        };
        let q = &mut self.hosts[id as usize];
        self.queued -= q.queued;
        q.queued = 0;
    }

    /// A suspended host's lease was renewed: its `queued` URLs in storage run again.
    pub fn resume(&mut self, host: &str, queued: u64) {
        self.suspend(host);
        self.add_queued(host, queued);
    }

    /// True when a host has nothing queued, nothing in flight and no robots.txt redirect to
    /// follow: it needs more URLs from storage, or can be released.
    pub fn is_idle(&self, host: &str) -> bool {
        self.ids.get(host).is_none_or(|&id| {
            let q = &self.hosts[id as usize];
            q.queued == 0 && !q.in_flight && q.pending_robots.is_none()
        })
    }

    /// How long a host must still wait before its next request.
    pub fn wait_of(&self, host: &str, now: Instant) -> Duration {
        self.ids.get(host).map_or(Duration::ZERO, |&id| {
            self.hosts[id as usize]
                .next_allowed
                .saturating_duration_since(now)
        })
    }
}
