//! Reads an HTML document for indexing: its title, its visible text (for WET), and its head
//! metadata and links with their anchor text (for WAT), in one html5ever tokenizer pass.
//!
//! Text rules, close to what a browser renders and what text extractors emit: the contents of
//! `script`, `style`, `noscript`, `template` and other raw-text elements are dropped; block
//! elements (`p`, `div`, `li`, headings, table rows, `br`, ...) end a line, table cells are
//! separated by a space; runs of whitespace collapse to one space, and inside `pre` line breaks
//! are kept; entities are decoded by the tokenizer; empty lines are dropped. The title is the
//! first `<title>` outside `<svg>`, and is not part of the text. Every list and string is
//! capped: a hostile page cannot make this allocate more than a few times `max_text`.

use std::cell::RefCell;

use super::feed::{feed_document, Pace};
use super::text_buffer::TextBuffer;
use elements::{is_block, is_head_element};
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// Longest title kept, in bytes.
const MAX_TITLE: usize = 2048;
/// Longest anchor text or attribute value kept, in bytes.
const MAX_VALUE: usize = 2048;
/// Longest link URL listed (the crawl's own cap on a URL it reads).
const MAX_LINK_URL: usize = 16 * 1024;
/// Most `<meta>` elements kept.
const MAX_METAS: usize = 512;

/// What to collect besides the title.
#[derive(Debug, Clone, Copy)]
pub struct DocumentOptions {
    /// Collect the visible text.
    pub text: bool,
    /// Collect metas, head links, scripts and links.
    pub metadata: bool,
    /// Most bytes of text kept.
    pub max_text: usize,
    /// Most links kept (head links, scripts and body links together).
    pub max_links: usize,
    /// The document is XML to a browser (`application/xhtml+xml`): self-closed elements are
    /// closed, where HTML's `<title/>` or `<script/>` runs to its end tag.
    pub xml: bool,
}

impl DocumentOptions {
    /// Only the title.
    pub fn title_only() -> Self {
        DocumentOptions {
            text: false,
            metadata: false,
            max_text: 0,
            max_links: 0,
            xml: false,
        }
    }
}

/// A link-like attribute of an element, as WAT records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HtmlLink {
    /// `ELEMENT@/attribute`, e.g. `A@/href`, `IMG@/src`.
    pub path: &'static str,
    /// The attribute's value as written (trimmed), not resolved.
    pub url: String,
    /// Anchor text (for `a`), collapsed.
    pub text: Option<String>,
    /// Other attributes WAT keeps: rel, type, title, alt, target, hreflang, media.
    pub attrs: Vec<(&'static str, String)>,
}

/// Why a document's text is cut short, as a WARC-Truncated reason names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextCut {
    /// At the text's cap.
    Length,
    /// The page was read no further: its tokenizing took longer than its length allows.
    Time,
}

impl TextCut {
    /// The WARC-Truncated value.
    pub fn reason(self) -> &'static str {
        match self {
            TextCut::Length => "length",
            TextCut::Time => "time",
        }
    }
}

/// What one pass over a document found.
#[derive(Debug, Default, Clone)]
pub struct Document {
    /// The title, whitespace collapsed.
    pub title: Option<String>,
    /// Visible text, one block per line.
    pub text: String,
    /// Why the text is not all of the page's: cut at `max_text`, or the page read only in part
    /// (a tag of countless attributes: `feed::Pace`).
    pub text_cut: Option<TextCut>,
    /// `<meta>` elements: their attributes in order.
    pub metas: Vec<Vec<(String, String)>>,
    /// `<link>` elements.
    pub head_links: Vec<HtmlLink>,
    /// `<script src>` in the head.
    pub scripts: Vec<HtmlLink>,
    /// The first `<base href>`.
    pub base: Option<String>,
    /// Links of the body: a, area, img, iframe, frame, form, embed, script, ...
    pub links: Vec<HtmlLink>,
    /// Links not kept because of `max_links`.
    pub links_dropped: usize,
}

/// The `ELEMENT@/attribute` of a body link, for the elements WAT lists.
fn link_attribute(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "a" => ("A@/href", "href"),
        "area" => ("AREA@/href", "href"),
        "img" => ("IMG@/src", "src"),
        "iframe" => ("IFRAME@/src", "src"),
        "frame" => ("FRAME@/src", "src"),
        "form" => ("FORM@/action", "action"),
        "embed" => ("EMBED@/src", "src"),
        "source" => ("SOURCE@/src", "src"),
        "video" => ("VIDEO@/src", "src"),
        "audio" => ("AUDIO@/src", "src"),
        "object" => ("OBJECT@/data", "data"),
        "script" => ("SCRIPT@/src", "src"),
        _ => return None,
    })
}

const KEPT_ATTRS: [&str; 7] = ["rel", "type", "title", "alt", "target", "hreflang", "media"];

/// An open `<a>` whose text is being collected.
struct OpenAnchor {
    link: usize,
    text: TextBuffer,
}

struct State {
    options: DocumentOptions,
    doc: Document,
    text: TextBuffer,
    /// Inside a raw-text element whose content is dropped (script, style, noscript, ...).
    dropping: Option<String>,
    in_title: bool,
    title: TextBuffer,
    title_done: bool,
    template_depth: usize,
    svg_depth: usize,
    pre_depth: usize,
    in_head: bool,
    anchor: Option<OpenAnchor>,
    links_seen: usize,
}

struct DocumentSink {
    state: RefCell<State>,
}

fn attr<'t>(tag: &'t Tag, name: &str) -> Option<&'t str> {
    tag.attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| &*a.value)
}

fn capped(value: &str) -> String {
    let mut end = value.len().min(MAX_VALUE);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    value[..end].to_string()
}

impl State {
    fn make_link(&self, path: &'static str, url: &str, tag: &Tag) -> HtmlLink {
        HtmlLink {
            path,
            url: url.trim().to_string(),
            text: None,
            attrs: KEPT_ATTRS
                .iter()
                .filter_map(|&n| attr(tag, n).map(|v| (n, capped(v.trim()))))
                .collect(),
        }
    }

    /// Counts a link against `max_links`; false when it must be dropped. A URL longer than
    /// [`MAX_LINK_URL`] is dropped whole: cut, it would be listed as a URL the page does not
    /// hold.
    fn room_for_link(&mut self, url: &str) -> bool {
        if url.trim().len() > MAX_LINK_URL {
            self.doc.links_dropped += 1;
            return false;
        }
        self.links_seen += 1;
        if self.links_seen > self.options.max_links {
            self.doc.links_dropped += 1;
            return false;
        }
        true
    }

    fn start_tag(&mut self, tag: &Tag) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        if self.template_depth > 0 {
            if name == "template" {
                self.template_depth += 1;
            }
            return TokenSinkResult::Continue;
        }
        if name == "svg" && !tag.self_closing {
            self.svg_depth += 1;
        }
        if self.in_head && !is_head_element(name) {
            self.in_head = false;
        }
        if is_block(name) {
            self.text.block_break();
        } else if name == "td" || name == "th" {
            self.text.space();
        }
        if name == "pre" || name == "textarea" || name == "listing" {
            self.pre_depth += 1;
        }
        if self.options.metadata {
            self.metadata_of(tag, name);
        }
        match name {
            "title" if self.svg_depth == 0 && !self.title_done => {
                self.in_title = true;
                TokenSinkResult::RawData(RawKind::Rcdata)
            }
            // An SVG's title, or a second one: no text of the page (a browser shows neither).
            "title" => {
                self.dropping = Some("title".into());
                TokenSinkResult::RawData(RawKind::Rcdata)
            }
            "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
            "template" => {
                self.template_depth = 1;
                TokenSinkResult::Continue
            }
            "script" => {
                self.dropping = Some("script".into());
                TokenSinkResult::RawData(RawKind::ScriptData)
            }
            "style" | "noscript" | "noembed" | "noframes" | "iframe" => {
                self.dropping = Some(name.to_string());
                TokenSinkResult::RawData(RawKind::Rawtext)
            }
            // Raw text a browser shows as it is, markup included.
            "xmp" => TokenSinkResult::RawData(RawKind::Rawtext),
            "plaintext" => TokenSinkResult::Plaintext,
            _ => TokenSinkResult::Continue,
        }
    }

    fn metadata_of(&mut self, tag: &Tag, name: &str) {
        match name {
            "meta" => {
                if self.doc.metas.len() < MAX_METAS {
                    let attrs = tag
                        .attrs
                        .iter()
                        .map(|a| (a.name.local.to_string(), capped(&a.value)))
                        .collect();
                    self.doc.metas.push(attrs);
                }
            }
            "base" => {
                if self.doc.base.is_none() {
                    self.doc.base = attr(tag, "href").map(|h| capped(h.trim()));
                }
            }
            "link" => {
                if let Some(href) = attr(tag, "href") {
                    if self.room_for_link(href) {
                        let link = self.make_link("LINK@/href", href, tag);
                        self.doc.head_links.push(link);
                    }
                }
            }
            _ => {
                let Some((path, attribute)) = link_attribute(name) else {
                    return;
                };
                let Some(url) = attr(tag, attribute) else {
                    return;
                };
                if !self.room_for_link(url) {
                    return;
                }
                let link = self.make_link(path, url, tag);
                if name == "script" && self.in_head {
                    self.doc.scripts.push(link);
                    return;
                }
                self.doc.links.push(link);
                if name == "a" {
                    self.close_anchor();
                    self.anchor = Some(OpenAnchor {
                        link: self.doc.links.len() - 1,
                        text: TextBuffer::with_cap(MAX_VALUE),
                    });
                }
            }
        }
    }

    fn close_anchor(&mut self) {
        if let Some(a) = self.anchor.take() {
            if !a.text.out.is_empty() {
                self.doc.links[a.link].text = Some(a.text.out);
            }
        }
    }

    fn end_tag(&mut self, tag: &Tag) {
        let name: &str = &tag.name;
        if self.template_depth > 0 {
            if name == "template" {
                self.template_depth -= 1;
            }
            return;
        }
        if self.dropping.as_deref() == Some(name) {
            self.dropping = None;
            return;
        }
        match name {
            "title" if self.in_title => {
                self.in_title = false;
                self.title_done = true;
                if !self.title.out.is_empty() {
                    self.doc.title = Some(std::mem::take(&mut self.title.out));
                }
            }
            "svg" => self.svg_depth = self.svg_depth.saturating_sub(1),
            "pre" | "textarea" | "listing" => self.pre_depth = self.pre_depth.saturating_sub(1),
            "a" => self.close_anchor(),
            "head" => self.in_head = false,
            _ => {}
        }
        if is_block(name) {
            self.text.block_break();
        }
    }

    fn characters(&mut self, text: &str) {
        if self.dropping.is_some() || self.template_depth > 0 {
            return;
        }
        if self.in_title {
            self.title.push(text, false);
            return;
        }
        if self.options.text {
            self.text.push(text, self.pre_depth > 0);
        }
        if let Some(a) = &mut self.anchor {
            a.text.push(text, false);
        }
    }
}

impl TokenSink for DocumentSink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut state = self.state.borrow_mut();
        match token {
            Token::TagToken(tag) if tag.kind == TagKind::StartTag => {
                let closed = tag.self_closing && (state.options.xml || state.svg_depth > 0);
                match state.start_tag(&tag) {
                    // In XML or SVG a self-closed element has no content to read raw.
                    TokenSinkResult::RawData(_) if closed => {
                        state.end_tag(&tag);
                        TokenSinkResult::Continue
                    }
                    result => result,
                }
            }
            Token::TagToken(tag) => {
                state.end_tag(&tag);
                TokenSinkResult::Continue
            }
            Token::CharacterTokens(text) => {
                state.characters(&text);
                TokenSinkResult::Continue
            }
            _ => TokenSinkResult::Continue,
        }
    }
}

/// Reads `html` (already decoded to text) for its title and, as `options` ask, its text and
/// metadata.
pub fn read_document(html: &str, options: DocumentOptions) -> Document {
    let sink = DocumentSink {
        state: RefCell::new(State {
            options,
            doc: Document::default(),
            text: TextBuffer::with_cap(options.max_text),
            dropping: None,
            in_title: false,
            title: TextBuffer::with_cap(MAX_TITLE),
            title_done: false,
            template_depth: 0,
            svg_depth: 0,
            pre_depth: 0,
            in_head: true,
            anchor: None,
            links_seen: 0,
        }),
    };
    let tokenizer = Tokenizer::new(sink, TokenizerOpts::default());
    let pace = Pace::default();
    feed_document(&tokenizer, html, &pace);
    let mut state = tokenizer.sink.state.into_inner();
    state.close_anchor();
    if state.in_title && !state.title.out.is_empty() {
        state.doc.title = Some(std::mem::take(&mut state.title.out));
    }
    state.doc.text = state.text.out;
    state.doc.text_cut = if pace.was_cut() {
        Some(TextCut::Time)
    } else {
        state.text.truncated.then_some(TextCut::Length)
    };
    state.doc
}

/// The title of the HTML page in a recorded HTTP response (content coding removed, at most
/// `max_decoded` bytes decoded, charset as link extraction detects it).
pub fn title_of_response(response: &[u8], max_decoded: usize) -> Option<String> {
    let head = crate::http_message::parse_response_head(response)?;
    let payload = head.payload(response);
    let encoding = head.header_list("content-encoding");
    // Of a cut or broken stream, the part that decodes.
    let decoded =
        match crate::http_message::decode_content(encoding.as_deref(), &payload, max_decoded) {
            Ok(decoded) => decoded.data,
            Err(e) => std::borrow::Cow::Owned(e.decoded_part()?),
        };
    let html = super::decode_html(&decoded, head.charset().as_deref());
    read_document(&html, DocumentOptions::title_only()).title
}

mod elements;
#[cfg(test)]
mod tests;
