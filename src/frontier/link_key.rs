//! What the frontier asks first of each link of a page, worked out by the job that found it:
//! the link's fingerprint, and whether it is on the page's own host.
//!
//! The crawl loop offers a page's ~35 links to the seen cache and, for the few it has not
//! seen, to admission. Computed in the loop, both answers read each link's text, which the
//! job wrote on another thread or long before (gzip and the WARC write come between); the
//! job computes them right after extraction, while the text is hot. The loop then reads the
//! text of a link only when the seen cache does not know it, or under `--order backlinks` for
//! a cached link on another host, whose id its count needs (docs/PERFORMANCE.md: the loop's
//! share 2.83% -> 1.88% of samples).

use url::Url;

use super::storage::{fingerprint, Fingerprint};

/// The frontier's key for one link (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkKey {
    /// The fingerprint of the canonical URL.
    pub fingerprint: Fingerprint,
    /// The link's host is the page's own.
    pub on_page_host: bool,
}

impl LinkKey {
    /// The key of `url`, a link of a page on `page_host`.
    pub fn of(url: &Url, page_host: &str) -> Self {
        LinkKey {
            fingerprint: fingerprint(url.as_str()),
            on_page_host: url.host_str().unwrap_or("") == page_host,
        }
    }
}

/// The keys of `links`, the links of a page on `page_host`, in their order.
pub fn link_keys(links: &[Url], page_host: &str) -> Vec<LinkKey> {
    links
        .iter()
        .map(|url| LinkKey::of(url, page_host))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_the_fingerprint_and_whether_the_host_is_the_pages() {
        let on = Url::parse("http://a.org/x?y=1").unwrap();
        let off = Url::parse("http://b.a.org/x").unwrap();
        let keys = link_keys(&[on.clone(), off.clone()], "a.org");
        assert_eq!(keys[0].fingerprint, fingerprint(on.as_str()));
        assert!(keys[0].on_page_host);
        assert_eq!(keys[1].fingerprint, fingerprint(off.as_str()));
        assert!(!keys[1].on_page_host, "a subdomain is another host");
        // The port is not part of the host: the loop's host ids are by name.
        let port = Url::parse("http://a.org:8080/").unwrap();
        assert!(LinkKey::of(&port, "a.org").on_page_host);
    }
}
