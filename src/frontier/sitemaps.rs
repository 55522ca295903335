//! Sitemaps in the frontier (`--sitemaps`, on by default): when an origin's robots.txt becomes
//! known, the sitemaps it lists are queued (on whatever host they live: a site declares them),
//! else the origin's `/sitemap.xml` when its robots rules allow it. A host fetches its queued
//! sitemaps before its pages, under the same politeness. Index files queue their sitemaps one
//! level deeper, at most [`MAX_SITEMAP_NESTING`] levels; a sitemap URL is fetched once per run
//! (an index that lists itself ends there), at most [`MAX_SITEMAPS_PER_HOST`] of one host and
//! [`MAX_SITEMAPS`] in all per run: one site that lists 20,000 sitemaps does not take the
//! run's share of the others (found by an exploratory crawl: another site's one sitemap was
//! never fetched, and nothing said so). Those past a share are counted over the limits and
//! said, once for each host.
//!
//! The list of sitemaps still to fetch is not saved: a crawl resumed after a kill re-discovers
//! the sitemaps of origins whose robots.txt it fetches again, not of the others.

use std::time::Instant;

use url::Url;

use super::storage::{fingerprint, Admit, QueuedUrl};
use super::{robots_job, Frontier, Gate, Job, JobKind, RobotsState};

/// Index files nest at most this deep (the protocol has one level; some sites use two).
pub const MAX_SITEMAP_NESTING: u32 = 2;
/// Most sitemap files fetched in one run.
pub const MAX_SITEMAPS: usize = 10_000;
/// Most sitemap files of one host fetched in one run (each may list 50,000 URLs).
pub const MAX_SITEMAPS_PER_HOST: u32 = 1_000;

impl Frontier {
    /// Queues the sitemaps of `origin`, whose robots rules just became known: those its
    /// robots.txt `listed`, else `/sitemap.xml` when `guess_allowed` by the rules.
    pub(super) fn discover_sitemaps(
        &mut self,
        origin: &str,
        listed: Vec<String>,
        guess_allowed: bool,
        now: Instant,
    ) {
        if !self.config.sitemaps {
            return;
        }
        let Ok(base) = Url::parse(origin) else {
            return;
        };
        // An empty `Sitemap:` line names nothing (joined, it would be the site's root).
        let listed: Vec<Url> = listed
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .filter_map(|s| base.join(s).ok())
            .collect();
        if listed.is_empty() {
            if let (true, Ok(guess)) = (guess_allowed, base.join("/sitemap.xml")) {
                self.queue_sitemap(guess, 0, now);
            }
            return;
        }
        for url in listed {
            self.queue_sitemap(url, 0, now);
        }
    }

    /// Queues one sitemap file at `nesting` levels below robots.txt (once per run).
    pub fn queue_sitemap(&mut self, url: Url, nesting: u32, now: Instant) {
        // After the page target only page requisites are fetched (`requisites_only`).
        if self.requisites_only
            || !matches!(url.scheme(), "http" | "https")
            || nesting > MAX_SITEMAP_NESTING
            || self.sitemaps_seen.contains(url.as_str())
        {
            return;
        }
        // Past the run's share, no host is made for it (a host costs memory for the run).
        if self.sitemaps_seen.len() >= MAX_SITEMAPS {
            self.counters.sitemaps_over_budget += 1;
            if !self.sitemaps_all_said {
                tracing::warn!("{MAX_SITEMAPS} sitemaps queued in this run: no more are");
                self.sitemaps_all_said = true;
            }
            return;
        }
        let id = self.host_id(url.host_str().unwrap_or(""), now);
        let q = &mut self.hosts[id as usize];
        if q.sitemaps_queued >= MAX_SITEMAPS_PER_HOST {
            self.counters.sitemaps_over_budget += 1;
            if q.sitemaps_queued == MAX_SITEMAPS_PER_HOST {
                // Said once: the count goes one past the share.
                tracing::warn!(
                    "{} lists more than {MAX_SITEMAPS_PER_HOST} sitemaps: the rest are not fetched",
                    q.name
                );
                q.sitemaps_queued += 1;
            }
            return;
        }
        self.sitemaps_seen.insert(url.as_str().to_string());
        self.hosts[id as usize].sitemaps_queued += 1;
        if self.storage.queues_sitemaps() {
            // A shared crawl: an entry of the host's queue, fetched by whoever holds the host.
            let entry = QueuedUrl {
                url: url.into(),
                sitemap: nesting as u8 + 1,
                ..QueuedUrl::default()
            };
            let fp = fingerprint(&entry.url);
            match self.storage.admit(id, &fp, &entry) {
                Ok(Admit::Queued) => self.queued_one(id),
                Ok(_) => {}
                Err(e) => self.fail(e),
            }
            return;
        }
        self.hosts[id as usize].sitemaps.push_back((url, nesting));
        self.schedule(id);
    }

    /// The host's next sitemap job, or the robots.txt fetch its origin needs first, if it has
    /// a sitemap queued that may run now. A sitemap file answers to its own origin's
    /// robots.txt, as any URL does: one that robots.txt names on another host waits for
    /// that host's rules, and is dropped where they disallow it.
    pub(super) fn next_sitemap(&mut self, id: u32, now: Instant) -> Option<Job> {
        let obey = self.config.obey_robots;
        let q = &mut self.hosts[id as usize];
        while let Some((url, _)) = q.sitemaps.front() {
            let origin = url.origin().ascii_serialization();
            let state = q
                .robots
                .entry(origin.clone())
                .or_insert_with(|| RobotsState::initial(obey));
            match state.gate(url.as_str(), now) {
                Gate::Allowed => return self.sitemap_job_at(id, 0),
                Gate::Denied | Gate::GaveUp => {
                    self.counters.robots_denied += 1;
                    q.sitemaps.pop_front();
                }
                Gate::FetchRobots(attempts) => {
                    let robots_url = Url::parse(&format!("{origin}/robots.txt")).ok()?;
                    return Some(robots_job(q, origin, robots_url, 0, attempts));
                }
                Gate::Wait(retry_at) => {
                    if let Some(at) = retry_at {
                        q.next_allowed = q.next_allowed.max(at);
                    }
                    return None;
                }
            }
        }
        None
    }

    /// The sitemap job at `at` in the host's queue, taken out of it.
    pub(super) fn sitemap_job_at(&mut self, id: u32, at: usize) -> Option<Job> {
        let q = &mut self.hosts[id as usize];
        let (url, nesting) = q.sitemaps.remove(at)?;
        Some(Job {
            kind: JobKind::Sitemap { nesting },
            url,
            host: q.name.clone(),
            depth: 0,
            redirects: 0,
            attempt: 0,
            referer: None,
        })
    }
}
