//! Stage 2, link extraction: what the crawl learns from a capture besides its bytes. The links
//! of an HTML page, the links a page's headers carry (`Link`, and `Location` /
//! `Content-Location` on a 2xx), the Location of a redirect, and the decoded text of a
//! robots.txt.
//!
//! Bodies are decoded (content coding removed, capped at `--max-decoded-size`) and HTML is
//! tokenized by [`crate::extract`]. Faults met on the way (an undecodable body, the decode cap,
//! the per-page link cap) are returned to be counted; the capture is archived regardless.

use std::borrow::Cow;

use url::Url;

use crate::capture::Capture;
use crate::extract::decode_html_with_encoding;
use crate::extract::links::extract_document;
use crate::extract::manifest::manifest_urls;
use crate::extract::robots_tag::field_says_nofollow;
use crate::extract::script_urls::script_urls;
use crate::extract::sitemap::{parse_sitemap, MAX_SITEMAP_URLS};
use crate::extract::syndication::{feed_links, may_be_feed};
use crate::fault::FaultKind;
use crate::http_message::decode_content;
use crate::http_message::media_type::{
    accepted_by, is_html, is_javascript, is_valid_essence, media_type, parsed_as_xml,
};
use crate::url_rules::canonical::resolve_as_spelled;
use crate::url_rules::canonical::{unresolved, Unresolved};
use crate::url_rules::referrer::PagePolicy;
use crate::url_rules::{resolve_link, resolve_link_in};

/// The stage's options.
#[derive(Debug, Clone)]
pub struct LinkRules {
    /// Links taken per page.
    pub max_links_per_page: usize,
    /// Most decoded bytes handed to the HTML tokenizer.
    pub max_decoded_size: usize,
    /// Most decoded bytes of a robots.txt kept.
    pub robots_max_decoded: usize,
    /// Most decoded bytes of a sitemap read (sitemaps.org: 50 MB).
    pub max_sitemap_decoded: usize,
    /// Collect page requisites (`--page-requisites`).
    pub page_requisites: bool,
    /// Follow what a page loads (`<img src>`, scripts, stylesheets) as links, held to the
    /// scope and depth as links are: wget's `-r` without `-p` does.
    pub inline_links: bool,
    /// Obey a page's `nofollow`, in a robots meta or an `X-Robots-Tag` field (not
    /// `--ignore-robots`).
    pub obey_meta_robots: bool,
    /// trawl's product token (lower-case), which a robots meta or field can name.
    pub robots_agent: String,
    /// The `--accept` list: a link whose declared type (`<link type>`, a `Link` field's
    /// `type`) it does not take, and that is not markup read for links, is left.
    pub accept: Vec<String>,
}

/// Links of a page that were not taken, by reason.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Declined {
    /// Past `--max-links-per-page`.
    pub over_cap: u64,
    /// Longer than any URL trawl handles (16 KiB).
    pub too_long: u64,
    /// Not http(s) URLs (mailto:, javascript:, unparseable).
    pub not_http: u64,
    /// Links of a page whose robots meta tag or `X-Robots-Tag` says `nofollow`.
    pub nofollow: u64,
    /// Links whose declared type `--accept` does not take (a feed, an oEmbed or JSON view):
    /// fetched, they would not be archived.
    pub declared_type: u64,
}

/// What a capture points to.
#[derive(Debug, Default)]
pub struct Outlinks {
    /// Links of a page, absolute and canonical, in document order.
    pub links: Vec<Url>,
    /// The redirect target of a 3xx.
    pub location: Option<Url>,
    /// A target that is the URL fetched, with its escapes as the server wrote them (see
    /// [`crate::url_rules::canonical::resolve_as_spelled`]); `None` for any other target.
    pub location_spelled: Option<Url>,
    /// The 3xx set cookies that change what the next request to the URL sends (the fetch
    /// knows; set by the caller): a redirect to its own URL is then worth following, as a
    /// site's cookie check expects.
    pub location_sets_cookie: bool,
    /// The decoded body of a robots.txt response.
    pub robots_body: Option<Vec<u8>>,
    /// The wait a robots.txt response's `Retry-After` asks for (set by the caller, which
    /// knows the time).
    pub robots_retry_after: Option<std::time::Duration>,
    /// Links declined here, by reason (each must be counted somewhere).
    pub declined: Declined,
    /// Faults met while decoding or extracting.
    pub faults: Vec<FaultKind>,
    /// What a sitemap lists.
    pub sitemap: Option<Box<SitemapLinks>>,
    /// What the page (or stylesheet) needs to render (`--page-requisites`).
    pub requisites: Vec<Url>,
    /// The referrer policy its links and requisites are requested under: a page's
    /// `<meta name="referrer">`, else the response's `Referrer-Policy`, else the default.
    pub referrer: PagePolicy,
    /// An HTML document was read and names no icon (`<link rel=icon>`).
    pub lacks_icon: bool,
    /// Where a page's refresh (its first `<meta http-equiv=refresh>`, else a `Refresh` field)
    /// sends a browser: a move, as a redirect is (it is among `links` too).
    pub refresh: Option<Url>,
}

impl Outlinks {
    /// With requisites asked for, a page shown on its own (not in a frame) that names no icon
    /// needs `/favicon.ico` of its origin: a browser asks for it, and shows it beside the
    /// page. The seen set makes that one fetch per origin.
    pub fn add_default_icon(&mut self, rules: &LinkRules, page_url: &Url) {
        if rules.page_requisites && self.lacks_icon {
            self.requisites
                .extend(resolve_link(page_url, "/favicon.ico"));
        }
    }
}

/// The URLs a sitemap file lists, resolved against it (scope is the crawl's business).
#[derive(Debug, Default)]
pub struct SitemapLinks {
    /// Page URLs.
    pub pages: Vec<Url>,
    /// Further sitemaps (of an index file).
    pub sitemaps: Vec<Url>,
    /// Entries past the protocol's limits (50,000 URLs, 50 MB).
    pub over_limits: u64,
    /// Not a sitemap, or broken part-way.
    pub invalid: bool,
}

/// True for a 2xx HTML or SVG response: a document, which a browser renders with what it
/// needs (an SVG shown in a frame or an `object` runs its scripts and loads its images), and
/// whose links a requisite follows as a page's are.
pub fn document(capture: &Capture) -> bool {
    (200..300).contains(&capture.status()) && capture.media_type().is_some_and(|m| is_markup(&m))
}

/// HTML, or SVG: markup the extractor reads.
fn is_markup(media_type: &str) -> bool {
    is_html(media_type) || media_type == "image/svg+xml"
}

/// What a requisite that is a stylesheet, a script or a web app manifest needs in turn,
/// resolved against it: a stylesheet's `url()` and `@import`, a script's modules, workers and
/// asset paths ([`script_urls`]), a manifest's icons ([`manifest_urls`]).
/// A stylesheet or manifest served with no type, or one that says nothing of it (a download's,
/// plain text), is known by its extension: Chromium reads a manifest whatever its type (stock
/// nginx has no type for `.webmanifest`), and applies an untyped sheet as wget reads it.
pub fn requisites_of_requisite(rules: &LinkRules, capture: &Capture, url: &Url) -> Vec<Url> {
    let media = capture.media_type();
    let kind = match media.as_deref() {
        Some("text/css") => Subresource::Stylesheet,
        Some("application/manifest+json" | "application/json") => Subresource::Manifest,
        Some(m) if is_javascript(m) => Subresource::Script,
        None | Some("application/octet-stream" | "text/plain") => {
            let name = url.path().rsplit('/').next().unwrap_or_default();
            let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
            match extension.as_deref() {
                Some("css") => Subresource::Stylesheet,
                Some("webmanifest" | "json") => Subresource::Manifest,
                _ => return Vec::new(),
            }
        }
        _ => return Vec::new(),
    };
    if !(200..300).contains(&capture.status()) {
        return Vec::new();
    }
    let mut faults = Vec::new();
    let body = decoded_body(capture, rules.max_decoded_size, &mut faults);
    let charset = capture.head.charset();
    match kind {
        Subresource::Stylesheet => {
            // In the sheet's own encoding (`@charset`); its `url()` queries are written in it.
            let (text, encoding) = crate::extract::decode_stylesheet(&body, charset.as_deref());
            crate::extract::css_urls::css_urls(&text)
                .iter()
                .filter_map(|u| resolve_link_in(url, u, encoding))
                .collect()
        }
        Subresource::Manifest => {
            let text = crate::extract::decode_html(&body, charset.as_deref());
            manifest_urls(&text)
                .iter()
                .filter_map(|u| resolve_link(url, u))
                .collect()
        }
        Subresource::Script => {
            let text = crate::extract::decode_html(&body, charset.as_deref());
            script_urls(&text)
                .iter()
                .filter_map(|u| u.resolve_in_script(url))
                .collect()
        }
    }
}

/// What a stylesheet fetched as a link names (`url()`, `@import`), as links: wget's `-r`
/// without `-p` reads a stylesheet for links as it reads a page ([`LinkRules::inline_links`]).
/// Nothing otherwise (with `-p`, a stylesheet is a requisite, read as one).
pub fn stylesheet_links(rules: &LinkRules, capture: &Capture, url: &Url) -> Vec<Url> {
    if !rules.inline_links || rules.page_requisites {
        return Vec::new();
    }
    if capture.media_type().as_deref() != Some("text/css") {
        return Vec::new();
    }
    let mut found = requisites_of_requisite(rules, capture, url);
    found.truncate(rules.max_links_per_page);
    found
}

/// A requisite whose body names further requisites.
enum Subresource {
    Stylesheet,
    Script,
    /// A web app manifest (a JSON requisite is one when it lists icons).
    Manifest,
}

/// The URLs of a sitemap capture (a 2xx; anything else lists nothing).
pub fn sitemap_links(rules: &LinkRules, capture: &Capture, url: &Url) -> SitemapLinks {
    let mut faults = Vec::new();
    if !(200..300).contains(&capture.status()) {
        return SitemapLinks::default();
    }
    let body = decoded_body(capture, rules.max_sitemap_decoded, &mut faults);
    // The protocol asks for UTF-8; one that declares another encoding is read in it.
    let body = crate::extract::xml_as_utf8(&body, capture.head.charset().as_deref());
    let found = parse_sitemap(&body);
    if found.invalid && found.pages.is_empty() && found.sitemaps.is_empty() {
        // An RSS or Atom feed named as a sitemap: the protocol takes one (sitemaps.org,
        // "Syndication feed"), its entries being the pages.
        let feed = feed_links(&body, url, MAX_SITEMAP_URLS);
        if !feed.urls.is_empty() {
            return SitemapLinks {
                pages: feed.urls,
                over_limits: feed.dropped as u64,
                ..SitemapLinks::default()
            };
        }
    }
    let resolve = |locs: Vec<String>| -> Vec<Url> {
        locs.iter().filter_map(|l| resolve_link(url, l)).collect()
    };
    SitemapLinks {
        pages: resolve(found.pages),
        sitemaps: resolve(found.sitemaps),
        over_limits: found.over_limits,
        invalid: found.invalid,
    }
}

/// Extracts what `capture` of `url` points to. `page`: the filter's verdict was a page (only
/// pages have their links followed); `robots`: the capture is a robots.txt fetch.
pub fn outlinks(
    rules: &LinkRules,
    capture: &Capture,
    url: &Url,
    page: bool,
    robots: bool,
) -> Outlinks {
    let mut out = Outlinks::default();
    out.location = location(capture, url, &mut out.declined);
    // Only a redirect to the URL itself (as the seen set reads it) is worth its spelling.
    if out.location.as_ref() == Some(url) {
        let target = capture.head.header_url("location");
        out.location_spelled = target.and_then(|t| resolve_as_spelled(url, &t));
    }
    if let Some(policy) = capture.head.header("referrer-policy") {
        let policy = PagePolicy::from_header(&String::from_utf8_lossy(policy));
        out.referrer = policy.unwrap_or_default();
    }
    // A 3xx without a Location lists the choices in its body (300 Multiple Choices,
    // RFC 9110 section 15.4.1, as Apache's content negotiation answers): read as a page is, as
    // wget reads it and browsers show it.
    let status = capture.status();
    let choices =
        (300..400).contains(&status) && status != 304 && capture.head.header("location").is_none();
    let page = page || choices;
    // Only a page's links are followed, so only a page's fields are read for `nofollow`.
    let field_nofollow =
        page && rules.obey_meta_robots && says_field_nofollow(capture, &rules.robots_agent);
    // Only a page's body is read for links: its type decides how.
    let media = (page && !robots).then(|| capture.media_type()).flatten();
    if robots {
        out.robots_body = Some(robots_body(
            capture,
            rules.robots_max_decoded,
            &mut out.faults,
        ));
    } else if let Some(media) = media.as_deref().filter(|m| is_markup(m)) {
        let body = decoded_body(capture, rules.max_decoded_size, &mut out.faults);
        let (text, encoding) = decode_html_with_encoding(&body, capture.head.charset().as_deref());
        let xml = parsed_as_xml(media);
        let links = extract_document(
            &text,
            url,
            rules.max_links_per_page,
            rules.page_requisites || rules.inline_links,
            encoding,
            xml,
        );
        out.requisites = links.requisites.clone();
        out.referrer = links.referrer.unwrap_or(out.referrer);
        out.lacks_icon = is_html(media) && !links.names_icon;
        if links.dropped > 0 {
            out.faults.push(FaultKind::LinksCapped);
        }
        if links.cut_short {
            out.faults.push(FaultKind::ExtractionTimeCapped);
        }
        out.declined.over_cap += links.dropped as u64;
        out.declined.too_long += links.too_long as u64;
        out.declined.not_http += links.unusable as u64;
        out.refresh = links.refresh.clone();
        let meta_nofollow = rules.obey_meta_robots
            && (links.nofollow || links.nofollow_for.contains(&rules.robots_agent));
        if field_nofollow || meta_nofollow {
            // The page asks robots not to follow its links (its header links too); what it
            // needs to render is still taken, as for any archived page.
            out.declined.nofollow += links.urls.len() as u64;
            return out;
        }
        out.links = links.urls;
        leave_refused_types(&mut out, &links.declared, &rules.accept);
        if rules.inline_links && !rules.page_requisites {
            // wget -r fetches what a page loads as it fetches its links (a repeated URL is
            // found seen by the admission).
            out.links.append(&mut out.requisites);
        }
    } else if media.as_deref().is_some_and(may_be_feed) {
        // A feed archived as a page (`--accept` takes its type): the posts it lists.
        let body = decoded_body(capture, rules.max_decoded_size, &mut out.faults);
        let body = crate::extract::xml_as_utf8(&body, capture.head.charset().as_deref());
        let feed = feed_links(&body, url, rules.max_links_per_page);
        if feed.dropped > 0 {
            out.faults.push(FaultKind::LinksCapped);
            out.declined.over_cap += feed.dropped as u64;
        }
        if field_nofollow {
            out.declined.nofollow += feed.urls.len() as u64;
            return out;
        }
        out.links = feed.urls;
    }
    if page && !field_nofollow {
        header_links::header_links(capture, url, rules, &mut out);
    }
    out
}

/// True when a link's declared type (as written: parameters and case allowed) names a type
/// `accept` does not take and that is not markup (read for links whatever `--accept` says).
/// A type that is not a valid media type says nothing.
pub fn refuses_declared(accept: &[String], declared: &str) -> bool {
    let media = media_type(declared);
    is_valid_essence(&media) && !is_markup(&media) && !accepted_by(accept, &media)
}

/// Leaves the links only a `<link type>` of a refused type names, counting them.
fn leave_refused_types(out: &mut Outlinks, declared: &[(Url, String)], accept: &[String]) {
    let refused: Vec<&Url> = declared
        .iter()
        .filter(|(_, media)| refuses_declared(accept, media))
        .map(|(url, _)| url)
        .collect();
    if refused.is_empty() {
        return;
    }
    let before = out.links.len();
    out.links.retain(|url| !refused.contains(&url));
    out.declined.declared_type += (before - out.links.len()) as u64;
}

/// An `X-Robots-Tag` field of the response forbids trawl to follow its links.
fn says_field_nofollow(capture: &Capture, agent: &str) -> bool {
    capture.head.headers.iter().any(|(name, value)| {
        name.eq_ignore_ascii_case("x-robots-tag")
            && field_says_nofollow(&String::from_utf8_lossy(value), agent)
    })
}

/// The resolved Location of a 3xx response; a Location that is not a URL trawl can follow is
/// counted in `declined`.
fn location(capture: &Capture, url: &Url, declined: &mut Declined) -> Option<Url> {
    // 304 (Not Modified), 305 (Use Proxy: its Location names a proxy) and 306 (unused) send
    // no one anywhere: neither browsers nor wget follow them. An unknown 3xx reads as 300
    // (RFC 9110 section 15.4), which is followed when it names a Location.
    let status = capture.status();
    if !(300..400).contains(&status) || (304..=306).contains(&status) {
        return None;
    }
    let target = capture.head.header_url("location")?;
    let resolved = resolve_link(url, &target);
    if resolved.is_none() {
        match unresolved(url, &target) {
            Some(Unresolved::TooLong) => declined.too_long += 1,
            Some(Unresolved::NotHttp) => declined.not_http += 1,
            None => {}
        }
    }
    resolved
}

/// A robots.txt's text: the payload with content coding removed, at most `cap` bytes, or the
/// payload as it came when it is labelled with a coding it does not carry (`Content-Encoding:
/// gzip` over plain `User-agent: *` lines, which a misconfigured server sends): nothing decodes
/// and the bytes read as text, so they are the rules, as wget, which asks for no coding, reads
/// them. Without this the rules were empty, which allows everything.
fn robots_body(capture: &Capture, cap: usize, faults: &mut Vec<FaultKind>) -> Vec<u8> {
    let body = decoded_body(capture, cap, faults);
    let raw = capture.payload();
    if body.is_empty() && faults.contains(&FaultKind::InvalidContentEncoding) && reads_as_text(raw)
    {
        return raw[..raw.len().min(cap)].to_vec();
    }
    body.into_owned()
}

/// True when the first bytes hold no control byte but white space: text, not a compressed
/// stream (gzip starts with 0x1F 0x8B, and deflate and brotli streams are full of such bytes).
fn reads_as_text(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes[..bytes.len().min(512)]
            .iter()
            .all(|&b| b >= 0x20 || matches!(b, b'\t' | b'\n' | b'\r' | b'\x0c'))
}

/// The payload with content coding removed, at most `cap` bytes; of a stream that breaks or is
/// cut, the part before the break (the fault is noted when the body was complete); empty for
/// a coding trawl does not implement.
fn decoded_body<'c>(
    capture: &'c Capture,
    cap: usize,
    faults: &mut Vec<FaultKind>,
) -> Cow<'c, [u8]> {
    let encoding = capture.head.header_list("content-encoding");
    match decode_content(encoding.as_deref(), capture.payload(), cap) {
        Ok(decoded) => {
            if decoded.capped {
                faults.push(FaultKind::DecodedSizeCapped);
            }
            decoded.data
        }
        Err(e) => {
            // A truncated body legitimately ends mid-stream; only a complete one is "invalid".
            if capture.is_complete() {
                faults.push(FaultKind::InvalidContentEncoding);
            }
            Cow::Owned(e.decoded_part().unwrap_or_default())
        }
    }
}

mod header_links;
#[cfg(test)]
mod tests;
