//! Fuzz target: robots.txt parsing and decisions. Invariants: never panics; robots.txt itself
//! is always allowed; a Crawl-delay, if any, yields a bounded politeness delay.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use trawl::frontier::politeness::host_delay;
use trawl::frontier::RobotsRules;

fuzz_target!(|data: &[u8]| {
    let rules = RobotsRules::parse("trawl", data);
    assert!(rules.allows("http://example.com/robots.txt"));
    let _ = rules.allows("http://example.com/some/path?x=1");
    let _ = rules.allows("/");
    let max = Duration::from_secs(30);
    let d = host_delay(Duration::from_millis(100), rules.crawl_delay(), max);
    assert!(d >= Duration::from_millis(100) && d <= max);
});
