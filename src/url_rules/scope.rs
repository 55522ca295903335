//! Crawl scope: which hosts a crawl may follow links into, derived from its seeds, and with
//! `--no-parent` which paths on a seed's own host.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;

use url::{Host, Url};

use super::{DirLists, HostLists};

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
    /// With `--no-parent`: the seeds' directories, by host.
    seed_dirs: Option<HashMap<String, Vec<SeedDir>>>,
    /// wget's `--domains` and `--exclude-domains`, on top of the kind.
    host_lists: HostLists,
    /// wget's `--include-directories` and `--exclude-directories`.
    dir_lists: DirLists,
    /// wget's `--https-only`: links and requisites to `http://` are not followed.
    https_only: bool,
}

/// A seed's directory (its path up to the last `/`) and the origin it holds for: wget's
/// `--no-parent` compares a URL with a start URL of the same host and, when their schemes are
/// the same, the same port (http and https of one host are one site).
#[derive(Debug, Clone, PartialEq, Eq)]
struct SeedDir {
    https: bool,
    port: Option<u16>,
    dir: String,
}

impl SeedDir {
    fn of(url: &Url) -> Self {
        let path = url.path();
        SeedDir {
            https: url.scheme() == "https",
            port: url.port_or_known_default(),
            dir: path[..path.rfind('/').map_or(0, |i| i + 1)].to_string(),
        }
    }

    /// True when this seed's directory limits `url` (wget: another scheme, or the same port).
    fn holds_for(&self, url: &Url) -> bool {
        self.https != (url.scheme() == "https") || self.port == url.port_or_known_default()
    }
}

impl Scope {
    /// An empty scope of the given kind; add seeds with [`Scope::add_seed`].
    pub fn new(kind: ScopeKind) -> Self {
        Scope {
            kind,
            allowed: HashSet::new(),
            seed_dirs: None,
            host_lists: HostLists::default(),
            dir_lists: DirLists::default(),
            https_only: false,
        }
    }

    /// wget's `--domains`/`--exclude-domains` and `--include-directories`/
    /// `--exclude-directories`: a URL's host and directory must also be in the first list of
    /// each pair (when given) and in none of the second, for links and page requisites alike.
    pub fn with_lists(mut self, hosts: HostLists, dirs: DirLists) -> Self {
        self.host_lists = hosts;
        self.dir_lists = dirs;
        self
    }

    /// wget's `--https-only`: only `https://` links and requisites are followed (seeds are
    /// fetched as given).
    pub fn https_only(mut self, only: bool) -> Self {
        self.https_only = only;
        self
    }

    /// True when wget's host and directory lists, and `--https-only`, let the URL in (always
    /// without them).
    pub fn lists_allow(&self, url: &Url) -> bool {
        self.scheme_allows(url) && self.host_lists_allow(url) && self.dir_lists_allow(url)
    }

    fn scheme_allows(&self, url: &Url) -> bool {
        !self.https_only || url.scheme() == "https"
    }

    fn host_lists_allow(&self, url: &Url) -> bool {
        self.host_lists.is_empty() || url.host_str().is_some_and(|h| self.host_lists.allow(h))
    }

    fn dir_lists_allow(&self, url: &Url) -> bool {
        self.dir_lists.is_empty() || self.dir_lists.allow(url.path())
    }

    /// `--no-parent` (wget's name): on a seed's host, links stay inside the seed's directory
    /// (the path up to its last `/`) or one of another seed of that host; other hosts in scope
    /// are not limited. Page requisites and sitemaps are not links and are not limited.
    pub fn no_parent(mut self) -> Self {
        self.seed_dirs = Some(HashMap::new());
        self
    }

    /// Puts the seed's host (or its registrable domain) in scope, and with `--no-parent` its
    /// directory; true when that widened the scope (the same scope is rebuilt from the seeds
    /// that widened it).
    pub fn add_seed(&mut self, seed: &Url) -> bool {
        let mut widened = false;
        if let (false, Some(key)) = (self.kind == ScopeKind::Any, self.key(seed)) {
            if !self.allowed.contains(key.as_ref()) {
                widened = self.allowed.insert(key.into_owned());
            }
        }
        if let (Some(dirs), Some(host)) = (&mut self.seed_dirs, seed.host_str()) {
            let dir = SeedDir::of(seed);
            let of_host = dirs.entry(host.to_string()).or_default();
            if !of_host.contains(&dir) {
                of_host.push(dir);
                widened = true;
            }
        }
        widened
    }

    /// True when a link to the URL may be followed.
    pub fn allows(&self, url: &Url) -> bool {
        self.scheme_allows(url)
            && self.allows_host(url)
            && self.inside_seed_dirs(url)
            && self.dir_lists_allow(url)
    }

    /// [`Scope::allows`] of where a seed redirects, which wget's directory lists (`-I`, `-X`)
    /// do not limit, as they do not limit the seed.
    pub fn allows_seed_redirect(&self, url: &Url) -> bool {
        self.scheme_allows(url) && self.allows_host(url) && self.inside_seed_dirs(url)
    }

    /// True when the URL's host is in scope, whatever its path: for the files a site keeps
    /// at its root for crawlers (sitemaps).
    pub fn allows_host(&self, url: &Url) -> bool {
        if !self.host_lists_allow(url) {
            return false;
        }
        match self.kind {
            ScopeKind::Any => true,
            _ => self
                .key(url)
                .is_some_and(|k| self.allowed.contains(k.as_ref())),
        }
    }

    /// True unless `--no-parent` limits the URL's host and its path is in none of the seeds'
    /// directories that hold for it.
    fn inside_seed_dirs(&self, url: &Url) -> bool {
        let Some(dirs) = &self.seed_dirs else {
            return true;
        };
        let Some(of_host) = url.host_str().and_then(|h| dirs.get(h)) else {
            return true;
        };
        let mut holding = of_host.iter().filter(|d| d.holds_for(url)).peekable();
        holding.peek().is_none() || holding.any(|d| url.path().starts_with(&d.dir))
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
    site_of(url).unwrap_or_default().to_string()
}

/// [`registrable_domain`] borrowed from the URL (whose host the `url` crate has lower-cased),
/// for what is asked once per request or link: the cookie jar's stores, the hosts of a site.
pub fn site_of(url: &Url) -> Option<&str> {
    match url.host()? {
        Host::Domain(d) => Some(domain_of(d)),
        _ => url.host_str(),
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
    fn no_parent_keeps_links_inside_the_seeds_directories_on_their_hosts() {
        let mut s = Scope::new(ScopeKind::Domain).no_parent();
        s.add_seed(&u("https://docs.a.org/guide/v2/index.html?x=1"));
        assert!(s.allows(&u("https://docs.a.org/guide/v2/a.html")));
        assert!(s.allows(&u("https://docs.a.org/guide/v2/sub/b.html")));
        assert!(!s.allows(&u("https://docs.a.org/guide/v2")));
        assert!(!s.allows(&u("https://docs.a.org/guide/v2x/c.html")));
        assert!(!s.allows(&u("https://docs.a.org/")));
        // The site's root files and other hosts of the domain are not limited.
        assert!(s.allows_host(&u("https://docs.a.org/sitemap.xml")));
        assert!(s.allows(&u("https://www.a.org/anything")));
        // http and https of the host are one site; another port of the same scheme is not.
        assert!(!s.allows(&u("http://docs.a.org/other/")));
        assert!(s.allows(&u("http://docs.a.org/guide/v2/")));
        assert!(s.allows(&u("https://docs.a.org:8443/other/")));
        // A second seed of the host adds its directory; a seed without a path adds the root.
        s.add_seed(&u("https://docs.a.org/api/"));
        assert!(s.allows(&u("https://docs.a.org/api/x")));
        assert!(!s.allows(&u("https://docs.a.org/blog/")));
        s.add_seed(&u("https://docs.a.org/guide"));
        assert!(s.allows(&u("https://docs.a.org/blog/")));
        // Without the option, paths are never limited.
        let mut plain = Scope::new(ScopeKind::Host);
        plain.add_seed(&u("https://docs.a.org/guide/v2/"));
        assert!(plain.allows(&u("https://docs.a.org/")));
    }

    #[test]
    fn any_scope_allows_everything() {
        let s = Scope::new(ScopeKind::Any);
        assert!(s.allows(&u("http://elsewhere.org/")));
    }
}
