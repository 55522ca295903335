//! Politeness groups (`--politeness ip|domain`): hosts that share a server are served as one.
//!
//! Under `host` (the default) each host keeps its own clock. Under `domain` the hosts of one
//! registrable domain (public suffix list) form a group; under `ip` the hosts that resolve to
//! one address do (shared hosting, one CDN address): a name's group is known once it has been
//! resolved, so a new name's first job is a DNS lookup, not a request. A group has at most one
//! request in flight, and its next request waits the delay of the host whose request finished
//! last: the server behind it never sees two requests closer than the delay, however many
//! names point at it. Hosts that find their group busy are parked and woken when it is free.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Instant;

/// What politeness is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PolitenessKey {
    /// Each host name.
    #[default]
    Host,
    /// Each resolved IP address.
    Ip,
    /// Each registrable domain.
    Domain,
}

/// A host's place among the groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Membership {
    /// Its own clock only (politeness by host, or a name that did not resolve).
    Own,
    /// Its address is not known yet (`ip`): the next job resolves it.
    Pending,
    /// In group `id`.
    In(u32),
}

#[derive(Debug)]
struct Group {
    busy: bool,
    next_allowed: Instant,
    parked: Vec<u32>,
}

/// The groups of a frontier.
#[derive(Debug)]
pub struct Groups {
    key: PolitenessKey,
    groups: Vec<Group>,
    ids: HashMap<String, u32>,
}

impl Groups {
    /// No groups yet.
    pub fn new(key: PolitenessKey) -> Self {
        Groups {
            key,
            groups: Vec::new(),
            ids: HashMap::new(),
        }
    }

    /// The membership of a host seen for the first time.
    pub fn membership_of(&mut self, host: &str, now: Instant) -> Membership {
        match self.key {
            PolitenessKey::Host => Membership::Own,
            PolitenessKey::Domain => {
                let trimmed = host.trim_end_matches('.');
                let domain = psl::domain_str(trimmed).unwrap_or(trimmed).to_string();
                self.join(&domain, now)
            }
            PolitenessKey::Ip => {
                let literal = host.trim_start_matches('[').trim_end_matches(']');
                match literal.parse::<IpAddr>() {
                    Ok(ip) => self.join(&ip.to_string(), now),
                    Err(_) => Membership::Pending,
                }
            }
        }
    }

    /// The group named `key`, created when new.
    pub fn join(&mut self, key: &str, now: Instant) -> Membership {
        if let Some(&id) = self.ids.get(key) {
            return Membership::In(id);
        }
        let id = self.groups.len() as u32;
        self.groups.push(Group {
            busy: false,
            next_allowed: now,
            parked: Vec::new(),
        });
        self.ids.insert(key.to_string(), id);
        Membership::In(id)
    }

    /// The group's clock, when the host is in a group.
    pub fn next_allowed(&self, m: Membership) -> Option<Instant> {
        match m {
            Membership::In(g) => Some(self.groups[g as usize].next_allowed),
            _ => None,
        }
    }

    /// True when the host's group has a request in flight.
    pub fn busy(&self, m: Membership) -> bool {
        matches!(m, Membership::In(g) if self.groups[g as usize].busy)
    }

    /// Parks `host` until its group's request finishes.
    pub fn park(&mut self, m: Membership, host: u32) {
        if let Membership::In(g) = m {
            self.groups[g as usize].parked.push(host);
        }
    }

    /// A request of the group starts.
    pub fn start(&mut self, m: Membership) {
        if let Membership::In(g) = m {
            self.groups[g as usize].busy = true;
        }
    }

    /// The group's request finished; its next may start at `at`. Returns the parked hosts.
    pub fn finish(&mut self, m: Membership, at: Instant) -> Vec<u32> {
        let Membership::In(g) = m else {
            return Vec::new();
        };
        let group = &mut self.groups[g as usize];
        group.busy = false;
        group.next_allowed = group.next_allowed.max(at);
        std::mem::take(&mut group.parked)
    }

    #[cfg(test)]
    fn count(&self) -> usize {
        self.groups.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        let now = Instant::now();
        let mut d = Groups::new(PolitenessKey::Domain);
        assert_eq!(
            d.membership_of("a.example.co.uk", now),
            d.membership_of("b.example.co.uk", now)
        );
        assert_ne!(
            d.membership_of("a.example.co.uk", now),
            d.membership_of("example.org", now)
        );
        let mut ip = Groups::new(PolitenessKey::Ip);
        assert_eq!(
            ip.membership_of("www.example.org", now),
            Membership::Pending
        );
        assert_eq!(ip.membership_of("127.0.0.1", now), Membership::In(0));
        assert_eq!(ip.membership_of("[::1]", now), Membership::In(1));
        let mut h = Groups::new(PolitenessKey::Host);
        assert_eq!(h.membership_of("a", now), Membership::Own);
        assert_eq!(h.count(), 0);
    }

    #[test]
    fn busy_park_finish() {
        let now = Instant::now();
        let mut g = Groups::new(PolitenessKey::Domain);
        let m = g.membership_of("a.example.org", now);
        g.start(m);
        assert!(g.busy(m));
        g.park(m, 7);
        let later = now + std::time::Duration::from_millis(100);
        assert_eq!(g.finish(m, later), [7]);
        assert!(!g.busy(m));
        assert_eq!(g.next_allowed(m), Some(later));
    }
}
