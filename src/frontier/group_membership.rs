//! How a host name joins its politeness group under `--politeness ip`: a `Resolve` job (a DNS
//! lookup, no request) for the URL it would fetch next, and the answer that places it.

use std::time::Instant;

use url::Url;

use super::groups::Membership;
use super::{record_failure, Frontier, Job, JobKind};

impl Frontier {
    /// The DNS lookup that puts a host in its group (`--politeness ip`), for the URL it would
    /// fetch next (its port matters to `--resolve` pins).
    pub(super) fn resolve_job(&mut self, id: u32) -> Option<Job> {
        let q = &mut self.hosts[id as usize];
        let next_sitemap = q.sitemaps.front().map(|(u, _)| u.clone());
        let url = match &q.pending_robots {
            Some(p) => Some(p.url.clone()),
            None if next_sitemap.is_some() => next_sitemap,
            None if q.queued > 0 => {
                let entry = match self.storage.pop(id) {
                    Ok(entry) => entry,
                    Err(e) => {
                        record_failure(&mut self.failure, e);
                        return None;
                    }
                };
                if let Err(e) = self.storage.put_back(id) {
                    record_failure(&mut self.failure, e);
                    return None;
                }
                entry.and_then(|e| Url::parse(&e.url).ok())
            }
            None => None,
        };
        let Some(url) = url else {
            // Nothing to fetch after all: no group needed yet.
            self.schedule(id);
            return None;
        };
        Some(Job {
            kind: JobKind::Resolve,
            url,
            host: q.name.clone(),
            depth: 0,
            redirects: 0,
            attempt: 0,
            referer: None,
        })
    }

    /// The result of a [`JobKind::Resolve`] job: the host joins the group of `address` (its
    /// own clock when the name did not resolve: the fetch will report the DNS error). No
    /// request was made, so no delay starts.
    pub fn resolved(&mut self, host: &str, address: Option<std::net::IpAddr>, now: Instant) {
        let Some(&id) = self.ids.get(host) else {
            return;
        };
        let group = match address {
            Some(ip) => self.groups.join(&ip.to_string(), now),
            None => Membership::Own,
        };
        let q = &mut self.hosts[id as usize];
        q.group = group;
        if q.in_flight {
            q.in_flight = false;
            self.in_flight -= 1;
        }
        self.schedule(id);
    }
}
