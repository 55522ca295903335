//! Extracts outlinks from HTML with the html5ever tokenizer.
//!
//! Taken: `a`/`area`/`link` href (an SVG `a`'s `xlink:href`; a `link`'s declared `type` kept
//! beside it, for the caller to leave feeds and JSON views it would not archive),
//! `frame`/`iframe` src, `<meta http-equiv=refresh>`, with the first `<base href>` as the base
//! URL, including those inside `noscript`, `noframes` and `noembed` (markup to a client
//! without scripts, frames or plugins).
//! Not taken: anything inside script, style, comments or other raw-text elements (the tokenizer
//! is switched into the same raw states a browser uses). A `<meta name="robots">` that says
//! `nofollow`, and the names of other metas that say it (a robot's own), are reported, for the
//! crawl to obey (`robots_tag.rs`).
//! With requisites asked for (`--page-requisites`), what a page needs to render is collected
//! apart: `img`/`source` `src`/`srcset`, `link rel=stylesheet|icon|preload` (then not a link)
//! and its `imagesrcset`, `script src`, media `src`/`poster`, `embed`/`object`, `input
//! type=image`, `background` of `body` and table parts, SVG `image`/`use` `href`,
//! `url()`/`@import` in `style` elements and attributes, the modules and asset paths an inline
//! script names (`script_urls.rs`), lazy-loading attributes (`data-src`,
//! `data-srcset`, ...), `frame`/`iframe` `src` (then not a link), and an SVG `script`'s
//! `href`. SVG documents are read the same way; inside SVG a self-closed element is closed.
//! An `iframe srcdoc` document is read as part of the page. In a document a browser reads as
//! XML (`application/xhtml+xml`), a self-closed element is closed too, and an
//! `<?xml-stylesheet?>` is a requisite. Which elements name requisites: `links/requisites.rs`.

use std::cell::RefCell;
use std::collections::HashSet;

use foldhash::fast::RandomState;
use indexmap::IndexSet;

use super::feed::{feed_document, Pace};
use super::link_header::hint_only;
use super::refresh::meta_refresh_url;
use super::robots_tag::says_nofollow;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use requisites::{is_requisite_rel, names_icon, xml_stylesheet_href, RawText};
use url::Url;

use crate::url_rules::canonical::{join_in, trim_href, unresolved, Unresolved};
use crate::url_rules::referrer::PagePolicy;
use crate::url_rules::resolve_link_in;

/// Most meta names (other than `robots`) kept from one page for saying `nofollow`.
pub const MAX_NAMED_NOFOLLOW: usize = 16;

/// The links of one page.
#[derive(Debug, Default, Clone)]
pub struct Links {
    /// Absolute, canonical, deduplicated http(s) URLs in document order.
    pub urls: Vec<Url>,
    /// How many links were dropped because of the per-page cap (distinct ones past the cap,
    /// plus distinct hrefs past the bound on collected ones).
    pub dropped: usize,
    /// Links longer than the longest URL trawl handles (16 KiB).
    pub too_long: usize,
    /// Non-empty hrefs that are not http(s) URLs (mailto:, javascript:, unparseable).
    pub unusable: usize,
    /// What the page needs to render (when asked for), absolute, canonical, deduplicated.
    pub requisites: Vec<Url>,
    /// The page asks robots not to follow its links: `<meta name="robots">` with `nofollow`
    /// or `none` (whether to obey is the caller's choice).
    pub nofollow: bool,
    /// The names (lower-cased) of other metas that said so, each a robot's own
    /// (`<meta name="trawl" content="nofollow">`); at most [`MAX_NAMED_NOFOLLOW`].
    pub nofollow_for: Vec<String>,
    /// The referrer policy a `<meta name="referrer">` sets (the last one known).
    pub referrer: Option<PagePolicy>,
    /// The page names its icon (`<link rel=icon>`), so a browser does not ask for
    /// `/favicon.ico`.
    pub names_icon: bool,
    /// Links among `urls` that only a `<link>` with a `type` names (a feed, an oEmbed or JSON
    /// view), with that type as written: the caller may leave those of types it would not
    /// archive. At most [`MAX_DECLARED`].
    pub declared: Vec<(Url, String)>,
    /// The page took far longer to tokenize than its length explains (a tag of countless
    /// attributes), and was read only up to there.
    pub cut_short: bool,
    /// Where the page's first `<meta http-equiv=refresh>` sends a browser (it is among `urls`
    /// too, as a link).
    pub refresh: Option<Url>,
}

/// Most `<link type>` links whose declared type is kept from one page.
pub const MAX_DECLARED: usize = 256;

#[derive(Default)]
struct Collected {
    /// Distinct hrefs without their fragments, in document order.
    hrefs: IndexSet<String, RandomState>,
    requisites: Vec<String>,
    /// Inside a `<style>`, or a `<script>` a browser runs, whose text is read for requisites.
    reading: Option<RawText>,
    /// That element's text so far (the tokenizer hands it over a line at a time).
    raw_text: String,
    /// `<svg>` elements open: inside one (or an SVG document) markup is XML-like, so a
    /// self-closed `<script/>` is closed, and a script's `href` is its source.
    svg_depth: u32,
    /// Raw hrefs not collected because `max_raw` was reached.
    over_raw: usize,
    base_href: Option<String>,
    /// Requisites collected before the `<base href>`: a browser asked for them as it met them,
    /// against the page's own URL.
    requisites_before_base: usize,
    /// A `<meta name="robots">` said `nofollow` or `none`.
    nofollow: bool,
    /// Other meta names whose content said it (lower-cased): robots'.
    nofollow_for: Vec<String>,
    referrer: Option<PagePolicy>,
    /// A `<link rel=icon>` was met.
    names_icon: bool,
    /// Hrefs only `<link type>` elements named so far, with the type: another element naming
    /// one makes it a plain link.
    declared: std::collections::HashMap<String, String, RandomState>,
    /// The first `<meta http-equiv=refresh>` URL.
    refresh: Option<String>,
}

impl Collected {
    /// Collects `href` unless it is one collected before: a menu repeated, or another
    /// fragment of a page (an API index's thousands of `#method.x` links), each of which would
    /// resolve to the same URL.
    fn push(&mut self, href: &str, max_raw: usize) {
        let href = without_fragment(href);
        if !self.declared.is_empty() {
            self.declared.remove(href);
        }
        self.insert(href, max_raw);
    }

    /// Collects the `href` of a `<link>` that declares its target's `media` type: kept as any
    /// link, and marked with its type unless another element named it first.
    fn push_declared(&mut self, href: &str, media: &str, max_raw: usize) {
        let href = without_fragment(href);
        if !self.hrefs.contains(href) && self.declared.len() < MAX_DECLARED {
            self.declared.insert(href.to_string(), media.to_string());
        }
        self.insert(href, max_raw);
    }

    /// Adds an href (without its fragment) not collected before, within `max_raw`.
    fn insert(&mut self, href: &str, max_raw: usize) {
        if self.hrefs.contains(href) {
            return;
        }
        if self.hrefs.len() < max_raw {
            self.hrefs.insert(href.to_string());
        } else {
            self.over_raw += 1;
        }
    }
}

/// `href` without its fragment, which resolving drops anyway (`a.html#x` is `a.html`); a
/// fragment alone (`#top`, the document itself) is `#`.
fn without_fragment(href: &str) -> &str {
    match href.find('#') {
        Some(i) if trim_href(&href[..i]).is_empty() => &href[i..=i],
        Some(i) => &href[..i],
        None => href,
    }
}

struct LinkSink<'p> {
    collected: RefCell<Collected>,
    max_raw: usize,
    requisites: bool,
    /// `iframe srcdoc` documents this sink's document is nested in.
    srcdoc_depth: u8,
    /// The tokenizer's time on the page, shared with its srcdoc documents.
    pace: &'p Pace,
    /// The document is XML (XHTML as `application/xhtml+xml`, SVG): self-closed elements
    /// are closed.
    xml: bool,
}

impl LinkSink<'_> {
    /// Collects the attribute `name` of `tag` as a link; false when the tag has none.
    fn take_attr(&self, tag: &Tag, name: &str) -> bool {
        let Some(attr) = tag.attrs.iter().find(|a| &*a.name.local == name) else {
            return false;
        };
        self.collected.borrow_mut().push(&attr.value, self.max_raw);
        true
    }

    /// What this sink collects from `doc`, tokenized whole.
    fn read(self, doc: &str) -> Collected {
        let pace = self.pace;
        let tokenizer = Tokenizer::new(self, TokenizerOpts::default());
        feed_document(&tokenizer, doc, pace);
        // An element left open at the end of the document still had its text read.
        tokenizer.sink.finish_raw_text();
        tokenizer.sink.collected.into_inner()
    }

    fn in_svg(&self) -> bool {
        self.collected.borrow().svg_depth > 0
    }

    fn attr<'t>(tag: &'t Tag, name: &str) -> Option<&'t str> {
        tag.attrs
            .iter()
            .find(|a| &*a.name.local == name)
            .map(|a| &*a.value)
    }

    fn start_tag(&self, tag: &Tag) -> TokenSinkResult<()> {
        if self.requisites {
            self.requisites_of(tag);
            let rel = (&*tag.name == "link")
                .then(|| Self::attr(tag, "rel"))
                .flatten();
            if let Some(rel) = rel.filter(|r| is_requisite_rel(r)) {
                if names_icon(rel) {
                    self.collected.borrow_mut().names_icon = true;
                }
                self.take_requisite(tag, "href");
                return TokenSinkResult::Continue;
            }
            self.start_raw_text(tag);
        }
        match &*tag.name {
            // An SVG link may still carry its target in the older `xlink:href`.
            "a" => {
                let _ = self.take_attr(tag, "href") || self.take_attr(tag, "xlink:href");
            }
            // `<link rel=preconnect href=https://fonts.example>` names an origin to connect to,
            // not a document, as in a `Link` field.
            "link" if Self::attr(tag, "rel").is_some_and(hint_only) => {}
            "link" => match (Self::attr(tag, "type"), Self::attr(tag, "href")) {
                (Some(media), Some(href)) if !media.trim().is_empty() => {
                    self.collected
                        .borrow_mut()
                        .push_declared(href, media.trim(), self.max_raw);
                }
                _ => {
                    self.take_attr(tag, "href");
                }
            },
            "area" => {
                self.take_attr(tag, "href");
            }
            "frame" => self.take_frame(tag),
            "iframe" => {
                self.take_frame(tag);
                return TokenSinkResult::RawData(RawKind::Rawtext);
            }
            "base" => {
                let mut c = self.collected.borrow_mut();
                if c.base_href.is_none() {
                    c.base_href = Self::attr(tag, "href").map(str::to_string);
                    c.requisites_before_base = c.requisites.len();
                }
            }
            "meta" => {
                let refresh = Self::attr(tag, "http-equiv")
                    .is_some_and(|v| v.trim().eq_ignore_ascii_case("refresh"));
                if let (true, Some(content)) = (refresh, Self::attr(tag, "content")) {
                    if let Some(target) = meta_refresh_url(content) {
                        let mut c = self.collected.borrow_mut();
                        c.refresh.get_or_insert_with(|| target.to_string());
                        c.push(target, self.max_raw);
                    }
                }
                let name = Self::attr(tag, "name").map(str::trim).unwrap_or_default();
                if Self::attr(tag, "content").is_some_and(says_nofollow) {
                    let mut collected = self.collected.borrow_mut();
                    if name.eq_ignore_ascii_case("robots") {
                        collected.nofollow = true;
                    } else if collected.nofollow_for.len() < MAX_NAMED_NOFOLLOW {
                        collected.nofollow_for.push(name.to_ascii_lowercase());
                    }
                }
                if name.eq_ignore_ascii_case("referrer") {
                    if let Some(policy) = Self::attr(tag, "content").and_then(PagePolicy::from_meta)
                    {
                        self.collected.borrow_mut().referrer = Some(policy);
                    }
                }
            }
            "svg" if !tag.self_closing => self.collected.borrow_mut().svg_depth += 1,
            "script" => return TokenSinkResult::RawData(RawKind::ScriptData),
            // `noframes` and `noembed` are raw text to a browser with frames and plugins, and
            // markup to one without: their links (often a frameset's pages, for clients without
            // frames) are taken, as GNU wget takes them; `noscript` is markup too (no
            // script runs here).
            "style" | "xmp" => return TokenSinkResult::RawData(RawKind::Rawtext),
            "title" | "textarea" => return TokenSinkResult::RawData(RawKind::Rcdata),
            "plaintext" => return TokenSinkResult::Plaintext,
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

impl TokenSink for LinkSink<'_> {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        match token {
            Token::TagToken(tag) if tag.kind == TagKind::StartTag => {
                // In SVG or XML a self-closed element (`<script href=x/>`, `<title/>`) has
                // no text to read raw.
                let closed = tag.self_closing && (self.xml || self.in_svg());
                match self.start_tag(&tag) {
                    TokenSinkResult::RawData(_) | TokenSinkResult::Plaintext if closed => {
                        let mut c = self.collected.borrow_mut();
                        c.reading = None;
                        c.raw_text.clear();
                        TokenSinkResult::Continue
                    }
                    result => result,
                }
            }
            Token::TagToken(tag) => {
                match &*tag.name {
                    "style" | "script" => self.finish_raw_text(),
                    "svg" => {
                        let mut c = self.collected.borrow_mut();
                        c.svg_depth = c.svg_depth.saturating_sub(1);
                    }
                    _ => {}
                }
                TokenSinkResult::Continue
            }
            Token::CharacterTokens(text) if self.collected.borrow().reading.is_some() => {
                self.collected.borrow_mut().raw_text.push_str(&text);
                TokenSinkResult::Continue
            }
            // To the HTML tokenizer an XML processing instruction is a bogus comment.
            Token::CommentToken(text) if self.xml && self.requisites => {
                if let Some(href) = xml_stylesheet_href(&text) {
                    self.push_requisite(href);
                }
                TokenSinkResult::Continue
            }
            _ => TokenSinkResult::Continue,
        }
    }
}

/// Extracts up to `max_links` distinct outlinks of `html`, a page fetched from `page_url`.
pub fn extract_links(html: &str, page_url: &Url, max_links: usize) -> Links {
    extract_links_and_requisites(html, page_url, max_links, false, encoding_rs::UTF_8)
}

/// [`extract_links`], and with `requisites` what the page needs to render (at most
/// `max_links` of those too), for a page written in `encoding` (the query of a link is
/// percent-encoded in it, see [`resolve_link_in`]).
pub fn extract_links_and_requisites(
    html: &str,
    page_url: &Url,
    max_links: usize,
    requisites: bool,
    encoding: &'static encoding_rs::Encoding,
) -> Links {
    extract_document(html, page_url, max_links, requisites, encoding, false)
}

/// [`extract_links_and_requisites`] of a document that is HTML, or with `xml` one that a
/// browser reads as XML (XHTML served as `application/xhtml+xml`, SVG): there a self-closed
/// element is closed, where HTML's `<title/>` or `<script/>` runs to its end tag.
pub fn extract_document(
    html: &str,
    page_url: &Url,
    max_links: usize,
    requisites: bool,
    encoding: &'static encoding_rs::Encoding,
    xml: bool,
) -> Links {
    let pace = Pace::default();
    let collected = LinkSink {
        collected: RefCell::new(Collected::default()),
        // Distinct hrefs, bounded so a page of a million anchors cannot exhaust memory; twice
        // the links, as a page may write one URL in two forms (`a.html`, `/dir/a.html`).
        max_raw: max_links.saturating_mul(2).max(1024),
        requisites,
        srcdoc_depth: 0,
        pace: &pace,
        xml,
    }
    .read(html);

    let base = collected
        .base_href
        .as_deref()
        .and_then(|b| join_in(page_url, b, encoding))
        .filter(|b| matches!(b.scheme(), "http" | "https"))
        .unwrap_or_else(|| page_url.clone());
    let mut links = Links {
        dropped: collected.over_raw,
        nofollow: collected.nofollow,
        nofollow_for: collected.nofollow_for,
        referrer: collected.referrer,
        names_icon: collected.names_icon,
        cut_short: pace.was_cut(),
        refresh: collected
            .refresh
            .as_deref()
            .and_then(|r| resolve_link_in(&base, r, encoding)),
        ..Links::default()
    };
    // Different hrefs can resolve to one URL (`a.html`, `./a.html`): kept once, in document
    // order. Past the cap a link is resolved only to be counted, not kept, so a page of many
    // links holds no more than `max_links` URLs at once. The page's hrefs are chosen by its
    // server, so the sets hash with a per-process random seed (foldhash: far cheaper than
    // SipHash on short keys).
    let mut kept: IndexSet<Url, RandomState> = IndexSet::with_capacity_and_hasher(
        collected.hrefs.len().min(max_links),
        RandomState::default(),
    );
    for href in &collected.hrefs {
        match resolve_link_in(&base, href, encoding) {
            Some(url) if kept.len() < max_links => {
                kept.insert(url);
            }
            Some(url) => links.dropped += usize::from(!kept.contains(&url)),
            None => match unresolved(&base, href) {
                Some(Unresolved::TooLong) => links.too_long += 1,
                Some(Unresolved::NotHttp) => links.unusable += 1,
                None => {}
            },
        }
    }
    links.urls = kept.into_iter().collect();
    for (href, media) in &collected.declared {
        if let Some(url) = resolve_link_in(&base, href, encoding) {
            links.declared.push((url, media.clone()));
        }
    }
    // A link is resolved when followed, against the document's base wherever the `<base>`
    // stands; a requisite was fetched as the browser met it, so one met before a `<base>`
    // (which belongs first in the head, but not every page puts it there) is the page's own.
    let mut seen_req = HashSet::new();
    for (i, href) in collected.requisites.iter().enumerate() {
        let against = match i < collected.requisites_before_base {
            true => page_url,
            false => &base,
        };
        if let Some(url) = resolve_link_in(against, href, encoding) {
            if links.requisites.len() < max_links && seen_req.insert(url.as_str().to_string()) {
                links.requisites.push(url);
            }
        }
    }
    links
}

mod requisites;
#[cfg(test)]
mod tests;
