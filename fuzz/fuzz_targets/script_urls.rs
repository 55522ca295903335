//! Fuzz target: the script reader over arbitrary text. Invariants: never panics; at most
//! `MAX_SCRIPT_URLS` URLs; each is whitespace-free; each resolves, if at all, to an http(s)
//! URL.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trawl::extract::script_urls::{script_urls, MAX_SCRIPT_URLS};
use url::Url;

fuzz_target!(|data: &[u8]| {
    let js = String::from_utf8_lossy(data);
    let script = Url::parse("https://example.com/assets/js/app.js").unwrap();
    let found = script_urls(&js);
    assert!(found.len() <= MAX_SCRIPT_URLS);
    for u in &found {
        assert!(!u.text.is_empty() && !u.text.contains(char::is_whitespace));
        if let Some(url) = u.resolve_in_script(&script) {
            assert!(matches!(url.scheme(), "http" | "https"));
        }
    }
});
