//! Crawl scope: which hosts a crawl may follow links into, derived from its seeds.

use std::borrow::Cow;
use std::collections::HashSet;
use std::net::IpAddr;

use url::{Host, Url};

/// How far from its seeds a crawl may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScopeKind {
    /// Only the exact hosts of the seeds.
    Host,
    /// Any host under the registrable domain of a seed (e.g. `www.ufmg.br` and `ufmg.br`).
    Domain,
    /// Any host.
    Any,
}

/// The set of hosts or registrable domains that are in scope.
#[derive(Debug, Clone)]
pub struct Scope {
    kind: ScopeKind,
    allowed: HashSet<String>,
}

impl Scope {
    /// An empty scope of the given kind; add seeds with [`Scope::add_seed`].
    pub fn new(kind: ScopeKind) -> Self {
        Scope {
            kind,
            allowed: HashSet::new(),
        }
    }

    /// Puts the seed's host (or its registrable domain) in scope.
    pub fn add_seed(&mut self, seed: &Url) {
        if let Some(key) = self.key(seed) {
            self.allowed.insert(key.into_owned());
        }
    }

    /// True when the URL may be crawled.
    pub fn allows(&self, url: &Url) -> bool {
        match self.kind {
            ScopeKind::Any => true,
            _ => self
                .key(url)
                .is_some_and(|k| self.allowed.contains(k.as_ref())),
        }
    }

    /// The URL's host or registrable domain, borrowed from the URL where it can be: this runs
    /// for every link a page offers that was not seen moments ago.
    fn key<'u>(&self, url: &'u Url) -> Option<Cow<'u, str>> {
        let host = url.host_str()?;
        match (self.kind, url.host()) {
            (ScopeKind::Host | ScopeKind::Any, _) => Some(Cow::Borrowed(host)),
            (ScopeKind::Domain, Some(Host::Domain(name))) => Some(Cow::Borrowed(domain_of(name))),
            (ScopeKind::Domain, _) => Some(Cow::Owned(registrable_domain(url))),
        }
    }
}

/// The registrable domain of a domain name (a name that is an IP address, or is itself a
/// public suffix, is its own domain).
fn domain_of(name: &str) -> &str {
    let trimmed = name.trim_end_matches('.');
    if trimmed.parse::<IpAddr>().is_ok() {
        return trimmed;
    }
    psl::domain_str(trimmed).unwrap_or(trimmed)
}

/// The registrable domain ("eTLD+1") of a URL's host; IP hosts and hosts that are themselves a
/// public suffix are their own domain.
pub fn registrable_domain(url: &Url) -> String {
    match url.host() {
        Some(Host::Domain(d)) => domain_of(d).to_string(),
        Some(Host::Ipv4(ip)) => ip.to_string(),
        Some(Host::Ipv6(ip)) => format!("[{ip}]"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn registrable_domains() {
        assert_eq!(
            registrable_domain(&u("https://www.dcc.ufmg.br/x")),
            "ufmg.br"
        );
        assert_eq!(
            registrable_domain(&u("https://a.b.example.co.uk/")),
            "example.co.uk"
        );
        assert_eq!(
            registrable_domain(&u("http://127.0.0.2:8080/")),
            "127.0.0.2"
        );
        assert_eq!(registrable_domain(&u("http://[::1]/")), "[::1]");
        assert_eq!(registrable_domain(&u("http://localhost/")), "localhost");
    }

    #[test]
    fn domain_scope_follows_subdomains_not_siblings() {
        let mut s = Scope::new(ScopeKind::Domain);
        s.add_seed(&u("https://www.ufmg.br/"));
        assert!(s.allows(&u("https://dcc.ufmg.br/a")));
        assert!(s.allows(&u("http://ufmg.br/")));
        assert!(!s.allows(&u("https://usp.br/")));
        assert!(!s.allows(&u("https://notufmg.br/")));
        // A fully qualified name (trailing dot) is the same domain.
        assert!(s.allows(&u("https://dcc.ufmg.br./a")));
        // An IP host is its own domain.
        s.add_seed(&u("http://127.0.0.2/"));
        assert!(s.allows(&u("http://127.0.0.2:8080/x")));
        assert!(!s.allows(&u("http://127.0.0.3/")));
    }

    #[test]
    fn host_scope_is_exact_and_ip_hosts_are_separate() {
        let mut s = Scope::new(ScopeKind::Host);
        s.add_seed(&u("http://127.0.0.2:9000/"));
        assert!(s.allows(&u("http://127.0.0.2:9000/x")));
        assert!(!s.allows(&u("http://127.0.0.3:9000/x")));
        let mut d = Scope::new(ScopeKind::Domain);
        d.add_seed(&u("http://127.0.0.2/"));
        assert!(!d.allows(&u("http://127.0.0.3/")));
    }

    #[test]
    fn any_scope_allows_everything() {
        let s = Scope::new(ScopeKind::Any);
        assert!(s.allows(&u("http://elsewhere.org/")));
    }
}
