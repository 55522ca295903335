//! What a page needs to render (`--page-requisites`), as the link sink collects it: which
//! elements and attributes name a requisite (images, stylesheets, scripts, media, frames,
//! lazy loaders' `data-src`), the text of `style` elements and of scripts the page runs, and
//! the `iframe srcdoc` documents read as part of the page.

use std::cell::RefCell;

use html5ever::tokenizer::Tag;

use crate::extract::script_urls::script_urls;
use crate::http_message::media_type::{is_javascript, media_type};

use super::{Collected, LinkSink};

/// `iframe srcdoc` documents read inside one another: a nested one is written escaped in its
/// parent's attribute, so real pages stop at one or two.
const MAX_SRCDOC_DEPTH: u8 = 2;

/// `link rel` values whose target a page needs to render.
pub(super) fn is_requisite_rel(rel: &str) -> bool {
    rel.split_ascii_whitespace().any(|r| {
        [
            "stylesheet",
            "icon",
            "preload",
            "modulepreload",
            "apple-touch-icon",
            // Asked for by Chromium as it loads the page.
            "manifest",
        ]
        .iter()
        .any(|k| r.eq_ignore_ascii_case(k))
    })
}

/// A `link rel` that names the page's icon (`icon`, `shortcut icon`), the one a browser shows
/// instead of asking for `/favicon.ico`.
pub(super) fn names_icon(rel: &str) -> bool {
    rel.split_ascii_whitespace()
        .any(|r| r.eq_ignore_ascii_case("icon"))
}

/// The `href` pseudo-attribute of an `<?xml-stylesheet?>` processing instruction, as the HTML
/// tokenizer hands it over (a bogus comment, `?xml-stylesheet href="s.css" type="text/css"?`):
/// the stylesheet a browser loads for an XML document (an SVG, XHTML served as XML).
pub(super) fn xml_stylesheet_href(pi: &str) -> Option<&str> {
    let rest = pi.strip_prefix("?xml-stylesheet")?;
    let at = rest.find("href")?;
    let value = rest[at + 4..].trim_start().strip_prefix('=')?.trim_start();
    let quote = value.chars().next().filter(|&q| q == '"' || q == '\'')?;
    value[1..].split(quote).next().filter(|h| !h.is_empty())
}

/// An element whose text names requisites.
#[derive(Debug, Clone, Copy)]
pub(super) enum RawText {
    Style,
    /// A script a browser runs: a classic script, a module or an import map.
    Script,
}

/// True for a `<script>` whose `type` a browser runs (or reads as an import map): none, a
/// JavaScript media type, `module`, `importmap`. Templates and data blocks are not.
fn runs(tag: &Tag) -> bool {
    match LinkSink::attr(tag, "type").map(str::trim) {
        None | Some("") => true,
        Some(t) => {
            let t = media_type(t);
            t == "module" || t == "importmap" || is_javascript(&t)
        }
    }
}

impl LinkSink<'_> {
    /// At a `<style>` or a script the page runs: its text is gathered to be read at its end.
    pub(super) fn start_raw_text(&self, tag: &Tag) {
        let reading = match &*tag.name {
            "style" => RawText::Style,
            "script" if runs(tag) => RawText::Script,
            _ => return,
        };
        let mut c = self.collected.borrow_mut();
        c.reading = Some(reading);
        c.raw_text.clear();
    }

    /// At the end of a `<style>` or `<script>`: the URLs its text names are requisites,
    /// relative to the document (an inline module's `import.meta.url` is the document's).
    pub(super) fn finish_raw_text(&self) {
        let (reading, text) = {
            let mut c = self.collected.borrow_mut();
            (c.reading.take(), std::mem::take(&mut c.raw_text))
        };
        match reading {
            Some(RawText::Style) => self.style_urls(&text),
            Some(RawText::Script) => script_urls(&text)
                .iter()
                .for_each(|u| self.push_requisite(&u.text)),
            None => {}
        }
    }

    pub(super) fn push_requisite(&self, url: &str) {
        let mut c = self.collected.borrow_mut();
        if c.requisites.len() < self.max_raw {
            c.requisites.push(url.to_string());
        }
    }

    pub(super) fn take_requisite(&self, tag: &Tag, name: &str) {
        if let Some(v) = Self::attr(tag, name) {
            self.push_requisite(v);
        }
    }

    /// A frame's document is part of the page as a browser shows it: with requisites asked
    /// for, it is one (wget's inline link, Heritrix's embed), whatever its type or host;
    /// else it is a link.
    pub(super) fn take_frame(&self, tag: &Tag) {
        match self.requisites {
            true => self.take_requisite(tag, "src"),
            false => {
                self.take_attr(tag, "src");
            }
        }
        if let Some(doc) = Self::attr(tag, "srcdoc") {
            self.take_srcdoc(doc);
        }
    }

    /// An `iframe srcdoc`: a document written in the attribute, which a browser renders (and
    /// loads what it needs) with the page's base URL. Its links and requisites are the page's.
    fn take_srcdoc(&self, doc: &str) {
        if self.srcdoc_depth >= MAX_SRCDOC_DEPTH {
            return;
        }
        let found = LinkSink {
            collected: RefCell::new(Collected::default()),
            max_raw: self.max_raw,
            requisites: self.requisites,
            srcdoc_depth: self.srcdoc_depth + 1,
            pace: self.pace,
            // A srcdoc document is HTML whatever its page is.
            xml: false,
        }
        .read(doc);
        let mut c = self.collected.borrow_mut();
        for href in &found.hrefs {
            c.push(href, self.max_raw);
        }
        c.over_raw += found.over_raw;
        drop(c);
        found.requisites.iter().for_each(|r| self.push_requisite(r));
    }

    fn take_srcset(&self, tag: &Tag, name: &str) {
        if let Some(set) = Self::attr(tag, name) {
            crate::extract::srcset::srcset_urls(set).for_each(|url| self.push_requisite(url));
        }
    }

    pub(super) fn requisites_of(&self, tag: &Tag) {
        match &*tag.name {
            "img" | "source" => {
                self.take_requisite(tag, "src");
                self.take_srcset(tag, "srcset");
            }
            // Inside SVG a script names its source by `href` (or the older `xlink:href`).
            "script" if self.in_svg() => {
                let href = Self::attr(tag, "href").or_else(|| Self::attr(tag, "xlink:href"));
                href.into_iter().for_each(|h| self.push_requisite(h));
            }
            "script" | "audio" | "track" | "embed" => self.take_requisite(tag, "src"),
            "video" => {
                self.take_requisite(tag, "src");
                self.take_requisite(tag, "poster");
            }
            "object" => self.take_requisite(tag, "data"),
            "input" if Self::attr(tag, "type").is_some_and(|t| t.eq_ignore_ascii_case("image")) => {
                self.take_requisite(tag, "src")
            }
            // Background images, which Chromium still loads from these attributes.
            "body" | "table" | "thead" | "tbody" | "tfoot" | "tr" | "td" | "th" => {
                self.take_requisite(tag, "background")
            }
            // SVG images and `<use>` references (icon sprites in an external file); the
            // tokenizer leaves `xlink:href` as the attribute's whole name. Outside SVG an
            // `<image>` is an `<img>` to the HTML parser.
            "image" | "use" | "feimage" => {
                let href = Self::attr(tag, "href").or_else(|| Self::attr(tag, "xlink:href"));
                if let Some(href) = href.or_else(|| Self::attr(tag, "src")) {
                    self.push_requisite(href);
                }
            }
            "link" => self.take_srcset(tag, "imagesrcset"),
            _ => {}
        }
        if let Some(style) = Self::attr(tag, "style") {
            self.style_urls(style);
        }
        self.lazy_requisites(tag);
    }

    /// The URLs that lazy-loading scripts (lazysizes, WordPress plugins, jQuery lazyload) move
    /// into `src`/`srcset` when the element scrolls into view: a browser replaying the page
    /// runs the script and asks for them. Heritrix takes the same attributes as embeds.
    fn lazy_requisites(&self, tag: &Tag) {
        for a in &tag.attrs {
            let name = &*a.name.local;
            let Some(lazy) = name.strip_prefix("data-") else {
                continue;
            };
            match lazy {
                "src" | "src-small" | "src-medium" | "original" | "lazy" | "lazy-src"
                | "full-src" => self.push_requisite(&a.value),
                "srcset" | "original-set" | "lazy-srcset" | "full-srcset" => {
                    crate::extract::srcset::srcset_urls(&a.value)
                        .for_each(|url| self.push_requisite(url))
                }
                _ => {}
            }
        }
    }

    pub(super) fn style_urls(&self, css: &str) {
        let mut c = self.collected.borrow_mut();
        for url in crate::extract::css_urls::css_urls(css) {
            if c.requisites.len() < self.max_raw {
                c.requisites.push(url);
            }
        }
    }
}
