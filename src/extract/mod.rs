//! Reading archived HTML: charset detection, link extraction (an html5ever tokenizer pass), and
//! the title, text and metadata of a document for indexing.
//!
//! Pure functions: bytes and a page URL in, absolute canonical URLs out. The tokenizer (not a
//! tree builder) is used because it is faster and we need no DOM; see docs/DESIGN.md.

pub mod charset;
pub mod css_urls;
pub mod document;
mod feed;
pub mod link_header;
pub mod links;
mod lossy_utf8;
pub mod manifest;
mod meta_prescan;
mod refresh;
pub mod robots_tag;
pub mod script_urls;
pub mod sitemap;
mod srcset;
pub mod syndication;
mod text_buffer;
mod xml_refs;

pub use charset::{
    decode_html, decode_html_with_encoding, decode_stylesheet, decode_text, xml_as_utf8,
};
pub use document::{read_document, Document, DocumentOptions, HtmlLink, TextCut};
pub use link_header::link_header_targets;
pub use links::extract_links;
pub use refresh::meta_refresh_url;
