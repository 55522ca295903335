//! The frontier's side of persistence: rebuilding per-host state from storage when a crawl
//! opens, saving it at each save point, and taking out the URLs (queued ones, robots.txt and
//! sitemap probes) that crash replay finds archived already. Everything goes through the
//! [`FrontierStorage`] seam.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use url::Url;

use super::host::HostState;
use super::storage::{SavedHost, StoreError};
use super::{
    entry_kind, politeness, robots_job, Frontier, FrontierCounters, Job, RobotsRules, RobotsState,
};

/// A saved next-allowed time further ahead than this is not trusted after a restart, nor one
/// further ahead than the longest wait a host may be asked for (`--max-delay`, or `--delay`
/// when longer): a clock set back between two runs (an hour fast, then corrected) stalled a
/// resumed crawl for this long (found by an exploratory run with faketime).
const MAX_RESTORED_WAIT: Duration = Duration::from_secs(600);
/// Name of the frontier's counters in storage.
pub(super) const META_NAME: &str = "frontier";

/// What the frontier saves besides the storage's own tables.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct FrontierMeta {
    pub(super) counters: FrontierCounters,
    /// When it was saved (wall clock, ms since the epoch): a restart that finds it in the
    /// future knows the clock was set back since, and by how much.
    #[serde(default)]
    pub(super) saved_at_ms: Option<u64>,
}

impl Frontier {
    pub(super) fn restore(&mut self, now: Instant, meta: &FrontierMeta) -> Result<(), StoreError> {
        let wall = SystemTime::now();
        // The saved times as this clock reads them: set back by as much as the clock was
        // since the save (an hour fast, then set right by NTP).
        let saved_at = meta
            .saved_at_ms
            .map(|ms| UNIX_EPOCH + Duration::from_millis(ms));
        let set_back = saved_at
            .and_then(|at| at.duration_since(wall).ok())
            .unwrap_or_default();
        for (id, saved) in self.storage.hosts()? {
            if id as usize != self.hosts.len() {
                return Err(StoreError::Database {
                    path: Default::default(),
                    detail: format!("host ids are not contiguous at {id}"),
                });
            }
            let next_allowed = saved.next_allowed.checked_sub(set_back);
            let wait = (next_allowed.unwrap_or(wall))
                .duration_since(wall)
                .unwrap_or_default()
                .min(MAX_RESTORED_WAIT)
                .min(self.config.max_delay.max(self.config.delay));
            let mut q = HostState::new(saved.name.clone(), now + wait, self.config.delay);
            q.group = self.groups.membership_of(&saved.name, now);
            q.queued = saved.queued;
            q.has_pages = true;
            q.backlinks = saved.backlinks;
            q.dirty = false;
            self.queued += saved.queued;
            self.ids.insert(saved.name, id);
            self.hosts.push(q);
        }
        let agent = self.config.robots_agent.clone();
        let (base, max) = (self.config.delay, self.config.max_delay);
        let hosts = &mut self.hosts;
        let (opened, obey) = (std::time::Instant::now(), self.config.obey_robots);
        self.storage.robots(&mut |origin, id, text| {
            let Some(q) = hosts.get_mut(id as usize) else {
                return;
            };
            // Saved rules are of unknown age: each is fetched again when its origin's next
            // URL comes up, and holds meanwhile (a nightly crawl resumed for weeks sees a
            // site's new rules, RFC 9309's 24 hours at most between two runs).
            let rules = match text {
                Some(text) => RobotsRules::parse(&agent, text),
                None => RobotsRules::allow_all(),
            };
            let rules = match obey {
                true => rules.refreshed_at(opened),
                false => rules,
            };
            q.delay = politeness::host_delay(base, rules.crawl_delay(), max);
            q.robots
                .insert(origin.to_string(), RobotsState::Known(rules));
        })?;
        for id in 0..self.hosts.len() as u32 {
            self.schedule(id);
        }
        Ok(())
    }

    /// Makes the frontier durable at a save point, with `meta` (named blobs of the caller's)
    /// written in the same commit. Pages being fetched are saved as queued, so after a crash
    /// they are fetched again. Reports the first storage error since the last checkpoint.
    pub fn checkpoint(&mut self, meta: &[(&str, &[u8])]) -> Result<(), StoreError> {
        let (now, wall) = (Instant::now(), SystemTime::now());
        // Counted backlinks go into the queue's ranks before it is made durable.
        self.rerank(now);
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        self.save_hosts(now, wall)?;
        let own = FrontierMeta {
            counters: self.counters.clone(),
            saved_at_ms: wall
                .duration_since(UNIX_EPOCH)
                .ok()
                .map(|d| d.as_millis() as u64),
        };
        let own = serde_json::to_vec(&own).expect("plain data serializes");
        self.storage.meta_put(META_NAME, &own)?;
        for (name, value) in meta {
            self.storage.meta_put(name, value)?;
        }
        self.storage.checkpoint()?;
        self.saved_hosts();
        // Writing the batch found some of its links seen before: their hosts' counts, saved
        // with them, are set right and saved again.
        let found = self.late_found;
        self.settle_late_duplicates();
        if self.late_found != found {
            self.save_hosts(now, wall)?;
            self.storage.checkpoint()?;
            self.saved_hosts();
        }
        Ok(())
    }

    /// Writes the hosts changed since the last save point (and those fetching).
    fn save_hosts(&mut self, now: Instant, wall: SystemTime) -> Result<(), StoreError> {
        for (id, q) in self.hosts.iter().enumerate() {
            if q.dirty || q.in_flight {
                let saved = SavedHost {
                    name: q.name.clone(),
                    queued: q.queued,
                    next_allowed: wall + q.next_allowed.saturating_duration_since(now),
                    backlinks: q.backlinks,
                };
                self.storage.save_host(id as u32, &saved)?;
            }
        }
        Ok(())
    }

    /// Marks the hosts saved.
    fn saved_hosts(&mut self) {
        for q in &mut self.hosts {
            // A host with a fetch in flight was saved with that page counted as queued; its
            // row is rewritten once the fetch ends.
            q.dirty = q.in_flight;
        }
    }

    /// Reads a named blob saved by [`Frontier::checkpoint`].
    pub fn saved_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.storage.meta_get(name)
    }

    /// Takes a queued URL out of the frontier (it was completed before a crash, as the WARC
    /// files show). Returns its queue entry as a job of the kind it was queued as (a page, a
    /// requisite, a sitemap), or `None` when it is not queued.
    pub fn take_queued(&mut self, url: &Url) -> Option<Job> {
        let id = *self.ids.get(url.host_str()?)?;
        let entry = match self.storage.take(id, url.as_str()) {
            Ok(entry) => entry?,
            Err(e) => {
                self.fail(e);
                return None;
            }
        };
        let q = &mut self.hosts[id as usize];
        q.queued = q.queued.saturating_sub(1);
        q.dirty = true;
        self.queued = self.queued.saturating_sub(1);
        Some(Job {
            kind: entry_kind(&entry),
            url: url.clone(),
            host: q.name.clone(),
            depth: entry.depth,
            redirects: entry.redirects,
            attempt: entry.attempt,
            referer: entry.referer,
        })
    }

    /// Takes the robots.txt probe or the sitemap job that fetched `url` before a crash (its
    /// record is in the WARC files), when the frontier would run it now: a robots.txt whose
    /// origin's rules are not known yet (or the redirect a robots.txt led to), a sitemap
    /// queued on its host. So the replay applies it as the fetch did, and the resumed run does
    /// not fetch it again. `None` for any other URL.
    pub fn take_probe(&mut self, url: &Url) -> Option<Job> {
        let id = *self.ids.get(url.host_str()?)?;
        if let Some(at) = self.hosts[id as usize]
            .sitemaps
            .iter()
            .position(|(u, _)| u == url)
        {
            return self.sitemap_job_at(id, at);
        }
        let q = &mut self.hosts[id as usize];
        if q.pending_robots.as_ref().is_some_and(|p| p.url == *url) {
            let p = q.pending_robots.take()?;
            return Some(robots_job(q, p.origin, p.url, p.hops, 0));
        }
        if url.path() != "/robots.txt" || url.query().is_some() {
            return None;
        }
        let origin = url.origin().ascii_serialization();
        let attempts = match q.robots.get(&origin) {
            None | Some(RobotsState::Unknown) => 0,
            Some(RobotsState::Unavailable { attempts, .. }) => *attempts,
            Some(_) => return None,
        };
        q.robots
            .insert(origin.clone(), RobotsState::Fetching { attempts });
        Some(robots_job(q, origin, url.clone(), 0, attempts))
    }
}
