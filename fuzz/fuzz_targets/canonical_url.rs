//! Fuzz target: URL resolution and canonicalization. Invariants: never panics; the canonical
//! form is http(s), has no fragment, and is a fixed point (canonicalizing it again changes
//! nothing).
#![no_main]

use libfuzzer_sys::fuzz_target;
use trawl::url_rules::{canonicalize, resolve_link};
use url::Url;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let base = Url::parse("http://example.com/dir/page.html?q=1").unwrap();
    if let Some(c) = resolve_link(&base, &text) {
        assert!(matches!(c.scheme(), "http" | "https"));
        assert!(c.fragment().is_none());
        let again = canonicalize(&c).expect("canonical URL stays valid");
        assert_eq!(again.as_str(), c.as_str(), "canonical form is not a fixed point");
        let reparsed = Url::parse(c.as_str()).expect("canonical URL re-parses");
        assert_eq!(canonicalize(&reparsed).unwrap().as_str(), c.as_str());
    }
});
