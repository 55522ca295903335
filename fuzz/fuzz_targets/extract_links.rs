//! Fuzz target: charset decoding and link extraction over arbitrary bytes. Invariants: never
//! panics; every link is an absolute http(s) URL; the per-page cap holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trawl::extract::{decode_html, extract_links};
use url::Url;

fuzz_target!(|data: &[u8]| {
    let page = Url::parse("https://example.com/a/b.html").unwrap();
    let text = decode_html(data, None);
    let links = extract_links(&text, &page, 50);
    assert!(links.urls.len() <= 50);
    for l in &links.urls {
        assert!(matches!(l.scheme(), "http" | "https"));
        assert!(l.fragment().is_none());
    }
});
