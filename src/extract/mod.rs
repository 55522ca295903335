//! Link extraction from archived HTML: charset detection and an html5ever tokenizer pass.
//!
//! Pure functions: bytes and a page URL in, absolute canonical URLs out. The tokenizer (not a
//! tree builder) is used because it is faster and we need no DOM; see docs/DESIGN.md.

pub mod charset;
pub mod links;

pub use charset::decode_html;
pub use links::extract_links;
