//! The crawl's cookie jar (RFC 6265, kept by the cookie_store crate): what every response's
//! `Set-Cookie` fields set, sent back in a `Cookie` field on the requests they match, as a
//! browser, wget and Heritrix do. Shared by every fetch of a process.
//!
//! Servers are untrusted, so the jar is capped: a cookie over 4 KiB, more than 50 per
//! response or per URL, more than 180 per site (Chromium's and Firefox's limit), or a
//! `Domain` that is a public suffix (`.com`, `github.io`: a cookie for every site under it),
//! and the cookie is ignored; the `Cookie` field sent is at most 8 KiB. The jar holds at most
//! 10,000 cookies (Chromium keeps 3,300): a new one past that makes room by dropping the
//! cookies of the site least recently sent or set any, as a browser evicts the least recently
//! used. Before (2026-11-29, found by an exploratory crawl), one site could fill the jar's
//! 100,000 alone with cookies of their own paths: 1 GB of memory, a state file rewritten at
//! 800 MB, and from the cap on, every `Set-Cookie` rebuilt every store under the jar's lock,
//! which stalled the whole crawl past `--shutdown-timeout`. Expired cookies are cleared at
//! most once per [`PURGE_EVERY`] cookies stored.
//!
//! The cookies are kept apart by site (registrable domain: `www.a.org` and `b.a.org` are
//! `a.org`; an IP address or a name with none is its own), a store each: a cookie is only
//! set from and sent to hosts of its own site (a `Domain` above the site is a public suffix,
//! refused), while cookie_store answers a request by walking every domain it holds. One store
//! for the crawl made each request cost ~250 us on a crawl of 3,000 hosts that set cookies,
//! growing with the hosts (docs/DESIGN.md).

use std::collections::HashMap;
use std::sync::Mutex;

use cookie_store::{Cookie, CookieStore, RawCookie, StoreAction};
use http::HeaderValue;
use url::Url;

use super::cookies_txt;
use crate::http_message::ResponseHead;
use crate::url_rules::site_of;

/// Largest `Set-Cookie` value taken (browsers keep cookies up to 4096 bytes).
const MAX_COOKIE_BYTES: usize = 4096;
/// Most `Set-Cookie` fields taken from one response.
const MAX_PER_RESPONSE: usize = 50;
/// Most cookies sent to, or kept for, one URL.
const MAX_PER_URL: usize = 50;
/// Most cookies kept for one site.
const MAX_PER_SITE: usize = 180;
/// Most cookies in the jar.
const MAX_COOKIES: usize = 10_000;
/// Cookies stored into a full jar between two clearings of the expired ones.
const PURGE_EVERY: u32 = 1_000;
/// Largest `Cookie` field sent.
const MAX_HEADER_BYTES: usize = 8192;

/// The cookie jar; cheap to lock, held only while a header is built or stored.
#[derive(Debug, Default)]
pub struct CookieJar {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// A store for each site that set a cookie, by [`site_of`].
    sites: HashMap<String, Site>,
    /// Cookies inserted (an upper bound of those in the stores).
    count: usize,
    /// A clock of uses (stores and sends), for the least recently used site.
    tick: u64,
    /// Cookies stored into a full jar since its expired ones were last cleared.
    since_purge: u32,
    /// Bumped by every change, so a save point writes the jar only when it changed.
    changes: u64,
    /// `changes` when the jar was last taken for saving.
    saved: u64,
}

/// One site's cookies.
#[derive(Debug, Default)]
struct Site {
    store: CookieStore,
    /// Cookies inserted (an upper bound: some may have expired).
    cookies: usize,
    /// [`Inner::tick`] when the site last set or was sent a cookie.
    used: u64,
}

impl CookieJar {
    /// An empty jar.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `cookies` (from a cookies.txt file or saved state), replacing any of the same
    /// domain, path and name. Returns how many were taken.
    pub fn load(&self, cookies: &[Cookie<'static>]) -> usize {
        let mut inner = self.lock();
        let mut taken = 0;
        for cookie in cookies {
            let Some(url) = origin_of(cookie) else {
                continue;
            };
            if inner.count >= MAX_COOKIES {
                break;
            }
            let site = inner.site_mut(&url);
            if site.cookies >= MAX_PER_SITE {
                continue;
            }
            if matches!(
                site.store.insert(cookie.clone(), &url),
                Ok(StoreAction::Inserted | StoreAction::UpdatedExisting)
            ) {
                site.cookies += 1;
                inner.count += 1;
                taken += 1;
            }
        }
        inner.changes += 1;
        taken
    }

    /// The `Cookie` field for a request to `url`, if any cookie matches; `with` is a
    /// `Cookie` value the operator set with `--header`, which comes first.
    pub fn header_for(&self, url: &Url, with: Option<&HeaderValue>) -> Option<HeaderValue> {
        let mut inner = self.lock();
        if inner.sites.is_empty() {
            return None;
        }
        inner.tick += 1;
        let tick = inner.tick;
        let site = inner.sites.get_mut(site_of(url)?)?;
        site.used = tick;
        let mut matched = site.store.matches(url);
        if matched.is_empty() {
            return None;
        }
        // RFC 6265 5.4: longer paths first.
        matched.sort_by_key(|c| std::cmp::Reverse(String::from(&c.path).len()));
        let mut value: Vec<u8> = with.map(|v| v.as_bytes().to_vec()).unwrap_or_default();
        for cookie in matched.into_iter().take(MAX_PER_URL) {
            let (name, val) = cookie.name_value();
            let pair_len = name.len() + val.len() + 3;
            if value.len() + pair_len > MAX_HEADER_BYTES {
                break;
            }
            if !value.is_empty() {
                value.extend_from_slice(b"; ");
            }
            value.extend_from_slice(name.as_bytes());
            value.push(b'=');
            value.extend_from_slice(val.as_bytes());
        }
        HeaderValue::from_bytes(&value).ok()
    }

    /// Keeps the cookies the `Set-Cookie` fields of `head` (the response to `url`) set.
    pub fn store_from(&self, url: &Url, head: &ResponseHead) {
        let mut fields = head
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
            .take(MAX_PER_RESPONSE)
            .peekable();
        if fields.peek().is_none() {
            return;
        }
        let mut inner = self.lock();
        for (_, value) in fields {
            if value.len() > MAX_COOKIE_BYTES {
                continue;
            }
            let Ok(text) = std::str::from_utf8(value) else {
                continue;
            };
            let Ok(raw) = RawCookie::parse(text.to_string()) else {
                continue;
            };
            if !domain_allowed(&raw, url) {
                continue;
            }
            let Ok(cookie) = Cookie::try_from_raw_cookie(&raw, url) else {
                continue;
            };
            inner.store_one(cookie.into_owned(), url);
        }
    }

    /// The jar in the cookies.txt format if it changed since the last call (for a save point).
    pub fn unsaved(&self) -> Option<String> {
        let mut inner = self.lock();
        if inner.changes == inner.saved {
            return None;
        }
        inner.saved = inner.changes;
        Some(inner.cookies_txt())
    }

    /// The unexpired cookies, session cookies included, in the cookies.txt format.
    pub fn to_cookies_txt(&self) -> String {
        self.lock().cookies_txt()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while the lock was held leaves plain data: keep using it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Inner {
    /// The store of `url`'s site, made if it has none, marked as used now.
    fn site_mut(&mut self, url: &Url) -> &mut Site {
        let site = site_of(url).unwrap_or_default();
        if !self.sites.contains_key(site) {
            self.sites.insert(site.to_string(), Site::default());
        }
        self.tick += 1;
        let entry = self.sites.get_mut(site).expect("inserted above");
        entry.used = self.tick;
        entry
    }

    /// Every site's unexpired cookies, in the cookies.txt format, in the order of their
    /// domain, path and name (the stores keep no order), so the same jar is the same file.
    fn cookies_txt(&self) -> String {
        let mut cookies: Vec<(String, String, &Cookie<'static>)> = self
            .sites
            .values()
            .flat_map(|site| site.store.iter_unexpired())
            .map(|c| {
                let domain = c.domain.as_cow().unwrap_or_default().into_owned();
                (domain, String::from(&c.path), c)
            })
            .collect();
        cookies.sort_unstable_by(|a, b| (&a.0, &a.1, a.2.name()).cmp(&(&b.0, &b.1, b.2.name())));
        cookies_txt::write(cookies.into_iter().map(|(_, _, c)| c))
    }

    fn store_one(&mut self, cookie: Cookie<'static>, url: &Url) {
        if self.count >= MAX_COOKIES {
            self.since_purge += 1;
            if self.since_purge >= PURGE_EVERY {
                self.purge_expired();
            }
        }
        let name = site_of(url).unwrap_or_default().to_string();
        let site = self.site_mut(url);
        let known = site
            .store
            .get(
                &cookie.domain.as_cow().unwrap_or_default(),
                &String::from(&cookie.path),
                cookie.name(),
            )
            .is_some();
        if !known {
            if site.cookies >= MAX_PER_SITE {
                // Counted again before the cookie is refused: some may have expired.
                site.cookies = site.store.iter_unexpired().count();
            }
            if site.cookies >= MAX_PER_SITE || site.store.matches(url).len() >= MAX_PER_URL {
                return;
            }
            if self.count >= MAX_COOKIES && !self.evict_least_used(&name) {
                return;
            }
        }
        let site = self.sites.get_mut(&name).expect("made above");
        match site.store.insert(cookie, url) {
            Ok(StoreAction::Inserted) => {
                site.cookies += 1;
                self.count += 1;
                self.changes += 1;
            }
            Ok(StoreAction::ExpiredExisting) => {
                site.cookies = site.cookies.saturating_sub(1);
                self.count = self.count.saturating_sub(1);
                self.changes += 1;
            }
            Ok(_) => self.changes += 1,
            Err(_) => {}
        }
    }

    /// Drops the cookies of the site least recently used, other than `keep`: false when
    /// there is none.
    fn evict_least_used(&mut self, keep: &str) -> bool {
        let Some(oldest) = self
            .sites
            .iter()
            .filter(|(name, _)| name.as_str() != keep)
            .min_by_key(|(_, site)| site.used)
            .map(|(name, _)| name.clone())
        else {
            return false;
        };
        let gone = self.sites.remove(&oldest).map_or(0, |s| s.cookies);
        self.count = self.count.saturating_sub(gone);
        self.changes += 1;
        true
    }

    /// Drops expired cookies and counts again.
    fn purge_expired(&mut self) {
        self.since_purge = 0;
        self.count = 0;
        for site in self.sites.values_mut() {
            let kept: Vec<Cookie<'static>> = site.store.iter_unexpired().cloned().collect();
            site.cookies = kept.len();
            self.count += kept.len();
            site.store = CookieStore::from_cookies(kept.into_iter().map(Ok::<_, ()>), false)
                .unwrap_or_default();
        }
        self.sites.retain(|_, site| site.cookies > 0);
    }
}

/// RFC 6265 5.3 step 5: a `Domain` attribute that is a public suffix is refused, unless it is
/// the request's own host (then the cookie is host-only, as cookie_store makes it).
fn domain_allowed(raw: &RawCookie<'_>, url: &Url) -> bool {
    let Some(domain) = raw.domain() else {
        return true;
    };
    let domain = domain.trim_start_matches('.').to_ascii_lowercase();
    if domain.is_empty() || url.host_str() == Some(domain.as_str()) {
        return true;
    }
    psl::domain(domain.as_bytes()).is_some()
}

/// A URL the cookie could have come from, for the store's checks.
fn origin_of(cookie: &Cookie<'_>) -> Option<Url> {
    let host = cookie.domain.as_cow()?;
    Url::parse(&format!("https://{host}{}", String::from(&cookie.path))).ok()
}

/// True when `capture` is a redirect whose cookies change the `Cookie` field a request to
/// `url` sends (`cookies`: the operator's and the one sent). Only redirects with a
/// `Set-Cookie` ask the jar, so other responses cost nothing.
pub(super) fn changes_redirect(
    jar: Option<&CookieJar>,
    url: &Url,
    capture: &crate::capture::Capture,
    (operator, sent): (Option<HeaderValue>, Option<HeaderValue>),
) -> bool {
    let redirect = (300..400).contains(&capture.status());
    jar.is_some_and(|jar| {
        redirect
            && capture.head.header("set-cookie").is_some()
            && jar.header_for(url, operator.as_ref()).or(operator) != sent
    })
}

#[cfg(test)]
mod tests;
