//! How many hosts of one site (registrable domain: `a.farm.test`, `b.farm.test` are
//! `farm.test`) the crawl takes links to: `--max-hosts-per-site`. A wildcard-DNS site whose
//! every page links thousands of new subdomains is in the default `--scope domain`, and each
//! host costs the frontier memory that stays for the run: found by an exploratory crawl, 6
//! million hosts and 4.2 GB in 60 s, growing until the machine ran out. Past the cap, links
//! to further hosts of the site are dropped, counted and said once; hosts already taken go on.

use std::collections::{HashMap, HashSet};

use url::Url;

use crate::url_rules::site_of;

/// The hosts taken, by site.
#[derive(Debug, Default)]
pub struct SiteHosts {
    /// Most hosts of one site (`None`: no limit).
    max: Option<usize>,
    /// The hosts taken of each site, at most `max` each.
    sites: HashMap<Box<str>, HashSet<Box<str>>>,
}

/// What [`SiteHosts::take`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostTaken {
    /// A host the crawl has, or a new one with room.
    Yes,
    /// A new host past the site's share.
    No,
    /// The first host refused for its site: said then.
    FirstRefused,
}

impl SiteHosts {
    /// At most `max` hosts per site (0: no limit).
    pub fn new(max: usize) -> Self {
        SiteHosts {
            max: (max > 0).then_some(max),
            sites: HashMap::new(),
        }
    }

    /// Takes `url`'s host if it is known or its site has room.
    pub fn take(&mut self, url: &Url) -> HostTaken {
        let (Some(max), Some(host), Some(site)) = (self.max, url.host_str(), site_of(url)) else {
            return HostTaken::Yes;
        };
        // Looked up before it is made: most links are to a site and host already taken.
        if !self.sites.contains_key(site) {
            self.sites.insert(site.into(), HashSet::new());
        }
        let hosts = self.sites.get_mut(site).expect("inserted above");
        if hosts.contains(host) {
            return HostTaken::Yes;
        }
        if hosts.len() < max {
            hosts.insert(host.into());
            return HostTaken::Yes;
        }
        // One past the share marks the site as said (a placeholder no host name can be).
        match hosts.insert("".into()) {
            true => HostTaken::FirstRefused,
            false => HostTaken::No,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn a_site_takes_its_share_of_hosts_and_no_more() {
        let mut hosts = SiteHosts::new(3);
        for h in ["a", "b", "c"] {
            assert_eq!(
                hosts.take(&u(&format!("http://{h}.farm.test/"))),
                HostTaken::Yes
            );
        }
        assert_eq!(hosts.take(&u("http://a.farm.test/again")), HostTaken::Yes);
        assert_eq!(hosts.take(&u("http://farm.test/")), HostTaken::FirstRefused);
        assert_eq!(hosts.take(&u("http://e.farm.test/")), HostTaken::No);
        // Other sites have their own share; each user of a public suffix is a site.
        assert_eq!(hosts.take(&u("http://www.other.test/")), HostTaken::Yes);
        for h in ["a", "b", "c", "d"] {
            assert_eq!(
                hosts.take(&u(&format!("http://{h}.github.io/"))),
                HostTaken::Yes
            );
        }
        assert_eq!(hosts.take(&u("http://127.0.0.1:8080/")), HostTaken::Yes);
        let mut unlimited = SiteHosts::new(0);
        for i in 0..10 {
            assert_eq!(
                unlimited.take(&u(&format!("http://h{i}.farm.test/"))),
                HostTaken::Yes
            );
        }
    }
}
