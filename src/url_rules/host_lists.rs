//! wget's `--domains` and `--exclude-domains`: lists of domain names that a URL's host must
//! end with, or must not, compared without case, names given in Unicode or punycode alike.
//! Stricter than wget's `sufmatch`, a plain suffix under which `-D a.org` also takes
//! `evila.org`: here the suffix must start at a label (`a.org` takes `a.org` and `www.a.org`),
//! since a list of domains names the sites to crawl, not strings of letters.

/// The two lists of one crawl; empty lists say nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostLists {
    only: Vec<String>,
    never: Vec<String>,
}

impl HostLists {
    /// The lists from the flags' values; an entry that is no host name is an error.
    pub fn new(only: &[String], never: &[String]) -> Result<Self, String> {
        Ok(HostLists {
            only: names(only, "--domains")?,
            never: names(never, "--exclude-domains")?,
        })
    }

    /// True when neither list is given.
    pub fn is_empty(&self) -> bool {
        self.only.is_empty() && self.never.is_empty()
    }

    /// True when `host` (as the `url` crate writes it: lower case, punycode) is in the first
    /// list, if there is one, and in none of the second.
    pub fn allow(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        (self.only.is_empty() || self.only.iter().any(|d| ends_with_domain(host, d)))
            && !self.never.iter().any(|d| ends_with_domain(host, d))
    }
}

/// `host` is `domain` or ends with `.domain`; a domain written with a leading dot (`.a.org`)
/// takes only names under it, as in wget.
fn ends_with_domain(host: &str, domain: &str) -> bool {
    match domain.strip_prefix('.') {
        Some(under) => host.len() > under.len() && host.ends_with(domain),
        None => {
            host == domain
                || host
                    .strip_suffix(domain)
                    .is_some_and(|rest| rest.ends_with('.'))
        }
    }
}

/// Each entry lower-cased and in ASCII (IDNA), a leading dot kept.
fn names(list: &[String], flag: &str) -> Result<Vec<String>, String> {
    list.iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| {
            let (dot, name) = match s.strip_prefix('.') {
                Some(name) => (".", name),
                None => ("", s),
            };
            let name = name.trim_end_matches('.');
            match url::Host::parse(name) {
                Ok(url::Host::Domain(ascii)) => Ok(format!("{dot}{ascii}")),
                Ok(ip) if dot.is_empty() => Ok(ip.to_string()),
                _ => Err(format!("{flag}: {s:?} is not a domain name")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(only: &[&str], never: &[&str]) -> HostLists {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        HostLists::new(&v(only), &v(never)).unwrap()
    }

    #[test]
    fn hosts_match_at_a_label_boundary_as_wget_matches_them() {
        let l = lists(&["A.org", "cdn.b.net"], &["ads.a.org"]);
        assert!(l.allow("a.org"));
        assert!(l.allow("www.a.org"));
        assert!(l.allow("www.a.org."));
        assert!(!l.allow("xa.org"));
        assert!(!l.allow("b.net"));
        assert!(l.allow("img.cdn.b.net"));
        assert!(!l.allow("ads.a.org"));
        assert!(!l.allow("x.ads.a.org"));
        let under = lists(&[".a.org"], &[]);
        assert!(under.allow("www.a.org"));
        assert!(!under.allow("a.org"));
    }

    #[test]
    fn names_are_read_as_urls_write_hosts() {
        let l = lists(&["Bücher.example", "127.0.0.1"], &[]);
        assert!(l.allow("xn--bcher-kva.example"));
        assert!(l.allow("www.xn--bcher-kva.example"));
        assert!(l.allow("127.0.0.1"));
        assert!(!l.allow("127.0.0.2"));
        assert!(lists(&[], &[]).is_empty());
        assert!(lists(&[], &[]).allow("any.host"));
        let bad = HostLists::new(&["a b.org".into()], &[]).unwrap_err();
        assert!(bad.contains("--domains"), "{bad}");
    }
}
