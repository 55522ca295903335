//! The `Referer` a request carries: the URL of the document its URL was found in, as a
//! browser sends it under its default policy (W3C Referrer Policy,
//! `strict-origin-when-cross-origin`) or the document's own (a `Referrer-Policy` header or a
//! `<meta name="referrer">`: [`PagePolicy`]), or the operator's `--referer` for seeds.
//!
//! Within one origin the whole URL goes (without fragment or credentials); to another origin
//! only the origin (`https://a.example/`); from https to http nothing. A URL over 4,096 bytes
//! is cut to its origin, as Chromium cuts it. wget and Heritrix send the whole parent URL to
//! every host; the browser's policy is what servers that check the header see from visitors,
//! and it does not hand a page's query string (session ids, search terms) to other sites.

use url::Url;

/// Longest `Referer` sent whole; a longer one is cut to its origin (Chromium's limit).
pub const MAX_REFERER: usize = 4096;

/// What `Referer` a crawl sends (`--no-referer`, `--referer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefererPolicy {
    /// Links, requisites, redirects and sitemap entries carry one (off: `--no-referer`).
    pub enabled: bool,
    /// `--referer`: the field sent, as given, with the seeds.
    pub seeds: Option<Box<str>>,
}

impl Default for RefererPolicy {
    fn default() -> Self {
        RefererPolicy {
            enabled: true,
            seeds: None,
        }
    }
}

/// A document's own referrer policy (W3C Referrer Policy, section 3), which its links and
/// requisites are requested under instead of the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PagePolicy {
    /// No `Referer`.
    NoReferrer,
    /// The whole URL, but none from https to http.
    NoReferrerWhenDowngrade,
    /// The whole URL within the origin, none elsewhere.
    SameOrigin,
    /// The origin alone.
    Origin,
    /// The origin alone, none from https to http.
    StrictOrigin,
    /// The whole URL within the origin, the origin elsewhere.
    OriginWhenCrossOrigin,
    /// The browsers' default (and the crawl's).
    #[default]
    StrictOriginWhenCrossOrigin,
    /// The whole URL everywhere.
    UnsafeUrl,
}

impl PagePolicy {
    /// The policy a `Referrer-Policy` field names: the last token known, since a list lets
    /// newer values fall back on older ones; `None` when none is known.
    pub fn from_header(value: &str) -> Option<Self> {
        value.rsplit(',').find_map(|t| Self::token(t.trim()))
    }

    /// The policy a `<meta name="referrer" content>` names, with the legacy values HTML still
    /// maps (`never`, `always`, `default`, `origin-when-crossorigin`).
    pub fn from_meta(content: &str) -> Option<Self> {
        let content = content.trim();
        let legacy = |name: &str| content.eq_ignore_ascii_case(name);
        match () {
            _ if legacy("never") => Some(PagePolicy::NoReferrer),
            _ if legacy("always") => Some(PagePolicy::UnsafeUrl),
            _ if legacy("default") => Some(PagePolicy::StrictOriginWhenCrossOrigin),
            _ if legacy("origin-when-crossorigin") => Some(PagePolicy::OriginWhenCrossOrigin),
            _ => Self::token(content),
        }
    }

    fn token(token: &str) -> Option<Self> {
        let is = |name: &str| token.eq_ignore_ascii_case(name);
        Some(match () {
            _ if is("no-referrer") => PagePolicy::NoReferrer,
            _ if is("no-referrer-when-downgrade") => PagePolicy::NoReferrerWhenDowngrade,
            _ if is("same-origin") => PagePolicy::SameOrigin,
            _ if is("origin") => PagePolicy::Origin,
            _ if is("strict-origin") => PagePolicy::StrictOrigin,
            _ if is("origin-when-cross-origin") => PagePolicy::OriginWhenCrossOrigin,
            _ if is("strict-origin-when-cross-origin") => PagePolicy::StrictOriginWhenCrossOrigin,
            _ if is("unsafe-url") => PagePolicy::UnsafeUrl,
            _ => return None,
        })
    }
}

impl RefererPolicy {
    /// The `Referer` of `to`, found in the document at `from`, whose own policy is `page`.
    pub fn found_in(&self, from: &Url, page: PagePolicy, to: &Url) -> Option<Box<str>> {
        self.enabled
            .then(|| referer_under(page, from, to))
            .flatten()
    }

    /// The `Referer` of `to`, a redirect target of a request that carried `sent`: the
    /// original referrer, under the policy again for the new URL (as browsers do). A value
    /// that does not parse as a URL (none the crawl makes: `--referer` must be one) is kept
    /// as it is.
    pub fn redirected(&self, sent: Option<&str>, to: &Url) -> Option<Box<str>> {
        let sent = sent.filter(|_| self.enabled)?;
        match Url::parse(sent) {
            Ok(from) => referer(&from, to),
            Err(_) => Some(sent.into()),
        }
    }

    /// The `Referer` of a seed.
    pub fn seed(&self) -> Option<Box<str>> {
        self.seeds.clone()
    }
}

/// How a queue entry stores the `Referer` of `url`: the length of the start it shares with
/// `url`, and the rest. A page's links mostly share its origin and directory, so little is
/// left (`/docs/v2/` linking `/docs/v2/api.html`: nothing at all).
pub fn stored<'r>(referer: &'r str, url: &str) -> (usize, &'r str) {
    let mut shared = referer
        .bytes()
        .zip(url.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !referer.is_char_boundary(shared) {
        shared -= 1;
    }
    (shared, &referer[shared..])
}

/// A `Referer` stored by [`stored`] for `url`, whole again; `None` when `url` is shorter
/// than what it was to share.
pub fn restored(url: &str, shared: usize, rest: &str) -> Option<Box<str>> {
    Some(format!("{}{rest}", url.get(..shared)?).into_boxed_str())
}

/// `from` as the `Referer` of a request for `to` under `strict-origin-when-cross-origin`.
pub fn referer(from: &Url, to: &Url) -> Option<Box<str>> {
    referer_under(PagePolicy::StrictOriginWhenCrossOrigin, from, to)
}

/// `from` as the `Referer` of a request for `to` under `policy`.
pub fn referer_under(policy: PagePolicy, from: &Url, to: &Url) -> Option<Box<str>> {
    if !matches!(from.scheme(), "http" | "https") {
        return None;
    }
    let downgrade = from.scheme() == "https" && to.scheme() != "https";
    let bare = from.username().is_empty() && from.password().is_none();
    let origin = || match bare {
        true => format!("{}/", &from[..url::Position::BeforePath]).into_boxed_str(),
        false => format!("{}/", from.origin().ascii_serialization()).into_boxed_str(),
    };
    // (Compared in place: `Url::origin` copies the host.)
    let same_origin = from.scheme() == to.scheme()
        && from.host_str() == to.host_str()
        && from.port_or_known_default() == to.port_or_known_default();
    let whole_url = match policy {
        PagePolicy::NoReferrer => return None,
        PagePolicy::UnsafeUrl => true,
        PagePolicy::NoReferrerWhenDowngrade if downgrade => return None,
        PagePolicy::NoReferrerWhenDowngrade => true,
        PagePolicy::SameOrigin if !same_origin => return None,
        PagePolicy::SameOrigin => true,
        PagePolicy::Origin => false,
        PagePolicy::StrictOrigin if downgrade => return None,
        PagePolicy::StrictOrigin => false,
        PagePolicy::OriginWhenCrossOrigin => same_origin,
        PagePolicy::StrictOriginWhenCrossOrigin if downgrade => return None,
        PagePolicy::StrictOriginWhenCrossOrigin => same_origin,
    };
    if !whole_url {
        return Some(origin());
    }
    let whole: Box<str> = match bare {
        true => from[..url::Position::AfterQuery].into(),
        false => {
            let mut url = from.clone();
            // Credentials can be removed from an http(s) URL, which `from` is.
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url[..url::Position::AfterQuery].into()
        }
    };
    Some(match whole.len() > MAX_REFERER {
        true => origin(),
        false => whole,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn sent(from: &str, to: &str) -> Option<String> {
        referer(&url(from), &url(to)).map(String::from)
    }

    #[test]
    fn a_pages_own_policy_decides_what_its_links_carry() {
        let page = url("https://a.org/docs/page.html?q=1");
        let (same, other, plain) = (
            url("https://a.org/img.png"),
            url("https://b.org/x"),
            url("http://c.org/"),
        );
        let sent = |policy: PagePolicy, to: &Url| referer_under(policy, &page, to);
        let whole = Some("https://a.org/docs/page.html?q=1".into());
        let origin = Some("https://a.org/".into());
        use PagePolicy::*;
        for to in [&same, &other, &plain] {
            assert_eq!(sent(NoReferrer, to), None);
            assert_eq!(sent(UnsafeUrl, to), whole);
        }
        assert_eq!(sent(SameOrigin, &same), whole);
        assert_eq!(sent(SameOrigin, &other), None);
        assert_eq!(sent(Origin, &same), origin);
        assert_eq!(sent(Origin, &plain), origin);
        assert_eq!(sent(StrictOrigin, &other), origin);
        assert_eq!(sent(StrictOrigin, &plain), None);
        assert_eq!(sent(NoReferrerWhenDowngrade, &other), whole);
        assert_eq!(sent(NoReferrerWhenDowngrade, &plain), None);
        assert_eq!(sent(OriginWhenCrossOrigin, &same), whole);
        assert_eq!(sent(OriginWhenCrossOrigin, &plain), origin);
        assert_eq!(
            sent(StrictOriginWhenCrossOrigin, &other),
            referer(&page, &other)
        );
        // How pages name them.
        assert_eq!(
            PagePolicy::from_header("no-referrer, bogus"),
            Some(NoReferrer)
        );
        assert_eq!(
            PagePolicy::from_header("origin, Same-Origin"),
            Some(SameOrigin)
        );
        assert_eq!(PagePolicy::from_header("bogus"), None);
        assert_eq!(PagePolicy::from_meta(" never "), Some(NoReferrer));
        assert_eq!(PagePolicy::from_meta("always"), Some(UnsafeUrl));
        assert_eq!(
            PagePolicy::from_meta("origin-when-crossorigin"),
            Some(OriginWhenCrossOrigin)
        );
        assert_eq!(PagePolicy::from_meta("no-referrer, origin"), None);
    }

    #[test]
    fn the_whole_url_goes_within_an_origin_and_the_origin_alone_elsewhere() {
        let page = "http://a.org:8080/docs/p?q=1#top";
        assert_eq!(
            sent(page, "http://a.org:8080/x.png").as_deref(),
            Some("http://a.org:8080/docs/p?q=1")
        );
        // Another port, scheme or host is another origin.
        for other in [
            "http://a.org/x",
            "http://b.org:8080/x",
            "https://a.org:8080/x",
        ] {
            assert_eq!(
                sent(page, other).as_deref(),
                Some("http://a.org:8080/"),
                "{other}"
            );
        }
        assert_eq!(
            sent("https://a.org/p?s=secret", "https://cdn.org/i.png").as_deref(),
            Some("https://a.org/")
        );
        assert_eq!(
            sent("http://[::1]:8080/p", "http://[::2]:8080/").as_deref(),
            Some("http://[::1]:8080/")
        );
        assert_eq!(
            sent("https://bücher.example/p", "https://cdn.example/").as_deref(),
            Some("https://xn--bcher-kva.example/")
        );
        assert_eq!(
            sent("https://a.org:443/p", "https://a.org/x").as_deref(),
            Some("https://a.org/p")
        );
    }

    #[test]
    fn a_referer_is_stored_as_what_it_shares_with_the_url_and_the_rest() {
        let url = "http://a.org:8080/docs/v2/api.html?y";
        for (referer, kept) in [
            ("http://a.org:8080/docs/v2/", ""),
            ("http://a.org:8080/docs/v2/intro.html", "intro.html"),
            ("http://a.org:8080/", ""),
            ("http://a.org/", "/"),
            ("https://b.org/", "s://b.org/"),
            ("http://a.org:8080/docs/v2/api.html?y&more", "&more"),
        ] {
            let (shared, rest) = stored(referer, url);
            assert_eq!(rest, kept, "{referer}");
            assert_eq!(restored(url, shared, rest).as_deref(), Some(referer));
        }
        assert_eq!(restored("http://a.org/", 40, ""), None);
        // A character is never split.
        let (shared, rest) = stored("http://a.org/é", "http://a.org/è");
        assert_eq!((shared, rest), ("http://a.org/".len(), "é"));
    }

    #[test]
    fn nothing_goes_from_https_to_http() {
        assert_eq!(sent("https://a.org/p", "http://a.org/p2"), None);
        assert_eq!(sent("https://a.org/p", "http://b.org/"), None);
        assert_eq!(
            sent("http://a.org/p", "https://a.org/p").as_deref(),
            Some("http://a.org/")
        );
    }

    #[test]
    fn credentials_fragments_and_long_urls_are_not_sent() {
        assert_eq!(
            sent("http://u:pw@a.org/p#f", "http://a.org/x").as_deref(),
            Some("http://a.org/p")
        );
        let long = format!("http://a.org/p?{}", "q".repeat(MAX_REFERER));
        assert_eq!(
            sent(&long, "http://a.org/x").as_deref(),
            Some("http://a.org/")
        );
        let fits = format!("http://a.org/?{}", "q".repeat(MAX_REFERER - 14));
        assert_eq!(fits.len(), MAX_REFERER);
        assert_eq!(sent(&fits, "http://a.org/x"), Some(fits));
    }

    #[test]
    fn a_redirect_keeps_the_original_referrer_under_the_policy() {
        let policy = RefererPolicy::default();
        let to = url("http://b.org/moved");
        assert_eq!(
            policy
                .redirected(Some("http://a.org/page?x"), &url("http://a.org/y"))
                .as_deref(),
            Some("http://a.org/page?x")
        );
        assert_eq!(
            policy
                .redirected(Some("http://a.org/page?x"), &to)
                .as_deref(),
            Some("http://a.org/")
        );
        assert_eq!(policy.redirected(Some("https://a.org/"), &to), None);
        assert_eq!(policy.redirected(None, &to), None);
        // The operator's value for seeds, not a URL, is kept.
        assert_eq!(
            policy.redirected(Some("none"), &to).as_deref(),
            Some("none")
        );
        let off = RefererPolicy {
            enabled: false,
            seeds: None,
        };
        assert_eq!(off.redirected(Some("http://a.org/"), &to), None);
        assert_eq!(
            off.found_in(&url("http://a.org/"), PagePolicy::UnsafeUrl, &to),
            None
        );
    }
}
