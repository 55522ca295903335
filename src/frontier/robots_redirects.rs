//! robots.txt redirects to another host (a site's `www.`, old and `http://` names that all
//! move to its one robots.txt, RFC 9309 2.3.1.2): the file they move to is fetched by one of
//! them at a time, never while that host has a request of its own in flight, and its rules,
//! once read, are taken by the others without a fetch. Before, each name fetched (and
//! archived) the same file on its own clock, all at once.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use url::Url;

use super::host::{HostState, PendingRobots};
use super::{politeness, Frontier, Job, JobKind, RobotsRules, RobotsState};

/// How often a name waiting for another's fetch of the file it moves to looks again.
const WAIT: Duration = Duration::from_millis(250);

/// The robots.txt files that other hosts' robots.txt redirect to.
#[derive(Debug, Default)]
pub struct RobotsRedirects {
    /// Files being fetched by a host they were a redirect of.
    fetching: HashSet<String>,
    /// Rules read from such a file, by its URL.
    read: HashMap<String, RobotsRules>,
}

/// What a host's robots.txt redirect comes to.
pub(super) enum Followed {
    /// The rules were known: taken, nothing to fetch.
    Adopted,
    /// Fetch the redirect's target.
    Fetch(Job),
    /// Another name is fetching the target, or its host is busy: the host waits.
    Wait,
}

impl Frontier {
    /// Follows the robots.txt redirect `pending` of host `id`.
    pub(super) fn follow_robots_redirect(
        &mut self,
        id: u32,
        pending: PendingRobots,
        now: Instant,
    ) -> Followed {
        if self.robots_read_before(id, &pending, now) {
            return Followed::Adopted;
        }
        let target = pending.url.as_str();
        let elsewhere = pending
            .url
            .host_str()
            .filter(|h| *h != self.hosts[id as usize].name);
        if let Some(host) = elsewhere {
            let busy = self
                .ids
                .get(host)
                .is_some_and(|&t| self.hosts[t as usize].in_flight);
            if busy || self.robots_redirects.fetching.contains(target) {
                let q = &mut self.hosts[id as usize];
                q.next_allowed = q.next_allowed.max(now + WAIT);
                q.pending_robots = Some(pending);
                self.schedule(id);
                return Followed::Wait;
            }
            self.robots_redirects.fetching.insert(target.to_string());
        }
        let q = &self.hosts[id as usize];
        Followed::Fetch(robots_job(q, pending.origin, pending.url, pending.hops, 0))
    }

    /// A robots.txt job that followed a redirect (`hops` > 0) to `url` ended: another name
    /// that moves to it may fetch it now, and the host it was fetched from (another than the
    /// job's) waits its delay from now, as after a request of its own (two names whose
    /// robots.txt moved to each other's had one host asked twice 1 ms apart). Called first
    /// thing, whatever came of it.
    pub(super) fn robots_redirect_done(&mut self, url: &Url, hops: u32, now: Instant) {
        if hops == 0 {
            return;
        }
        self.robots_redirects.fetching.remove(url.as_str());
        if let Some(&t) = url.host_str().and_then(|h| self.ids.get(h)) {
            let q = &mut self.hosts[t as usize];
            q.next_allowed = q.next_allowed.max(now + q.delay);
        }
    }

    /// `rules` were read from `url`, a redirect's target (`hops` > 0): other names that move
    /// to it take them.
    pub(super) fn robots_redirect_read(&mut self, url: &Url, hops: u32, rules: &RobotsRules) {
        if hops > 0 {
            self.robots_redirects
                .read
                .insert(url.as_str().to_string(), rules.clone());
        }
    }

    /// A robots.txt redirect of host `id` to `pending.url`, when that is a robots.txt whose
    /// rules were read already, as its own origin's or as another redirect's target: the
    /// origin takes those rules, and nothing is fetched. Returns false when they are not
    /// known (the redirect is to be fetched).
    fn robots_read_before(&mut self, id: u32, pending: &PendingRobots, now: Instant) -> bool {
        let url = &pending.url;
        if url.path() != "/robots.txt" || url.query().is_some() {
            return false;
        }
        let target = url.origin().ascii_serialization();
        let known = url
            .host_str()
            .and_then(|h| self.ids.get(h))
            .and_then(|&t| self.hosts[t as usize].robots.get(&target));
        let rules = match known {
            Some(RobotsState::Known(rules)) if !rules.refresh_due(now) => rules.clone(),
            _ => match self.robots_redirects.read.get(url.as_str()) {
                Some(rules) if !rules.refresh_due(now) => rules.clone(),
                _ => return false,
            },
        };
        let q = &mut self.hosts[id as usize];
        q.delay = politeness::host_delay(
            self.config.delay,
            rules.crawl_delay(),
            self.config.max_delay,
        );
        q.robots
            .insert(pending.origin.clone(), RobotsState::Known(rules));
        true
    }
}

/// A robots.txt job for host `q`.
pub(super) fn robots_job(q: &HostState, origin: String, url: Url, hops: u32, attempt: u32) -> Job {
    Job {
        kind: JobKind::Robots { origin, hops },
        url,
        host: q.name.clone(),
        depth: 0,
        redirects: 0,
        attempt,
        referer: None,
    }
}
