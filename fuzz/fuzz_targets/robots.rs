//! Fuzz target: robots.txt parsing and decisions. Invariants: never panics; robots.txt itself
//! is always allowed; a Crawl-delay, if any, yields a bounded politeness delay; and each
//! decision is the one `texting_robots` (the crate trawl matched with before its own
//! `robots_match.rs`) makes, except where the two differ on purpose (an empty `Disallow:`, a
//! `$` inside a pattern: see `robots_group.rs`), which such files are not compared on.
//!
//! Input: a robots.txt, then optionally a 0xFF byte and paths to ask about, one per line.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use trawl::frontier::politeness::host_delay;
use trawl::frontier::robots_rules::lines_as_matched;
use trawl::frontier::RobotsRules;

fuzz_target!(|data: &[u8]| {
    let (body, paths) = match data.iter().position(|&b| b == 0xFF) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let rules = RobotsRules::parse("trawl", body);
    assert!(rules.allows("http://example.com/robots.txt"));
    let _ = rules.allows("http://example.com/some/path?x=1");
    let _ = rules.allows("/");
    let max = Duration::from_secs(30);
    let d = host_delay(Duration::from_millis(100), rules.crawl_delay(), max);
    assert!(d >= Duration::from_millis(100) && d <= max);

    if !comparable(body) {
        return;
    }
    let Ok(robot) = texting_robots::Robot::new("trawl", &lines_as_matched(body)) else {
        return;
    };
    for path in paths.split(|&b| b == b'\n').take(64) {
        let Ok(path) = std::str::from_utf8(path) else {
            continue;
        };
        let Ok(url) = url::Url::parse(&format!("http://a.org/{path}")) else {
            continue;
        };
        let url = url.as_str();
        assert_eq!(rules.allows(url), robot.allowed(url), "{url}");
    }
});

/// False for a file holding a line where trawl and `texting_robots` differ on purpose: a
/// `Disallow` whose value is empty, or a `$` that does not end its pattern; and for a file
/// holding control characters other than tabs and line ends, which the two split and trim
/// differently (a NUL ends a line for trawl), and no real file holds.
fn comparable(body: &[u8]) -> bool {
    if body
        .iter()
        .any(|&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7F)
    {
        return false;
    }
    let text = String::from_utf8_lossy(body);
    !text.split(['\n', '\r']).any(|line| {
        // As `robots_group.rs` reads a line: a key, then a `:` or blanks, then the value.
        let line = line.split('#').next().unwrap_or("").trim();
        let (key, rest) = line.split_at(line.find([':', ' ', '\t']).unwrap_or(line.len()));
        let rest = rest.trim_start_matches([' ', '\t']);
        let value = rest.strip_prefix(':').unwrap_or(rest).trim();
        let key = key.to_ascii_lowercase();
        let dis = key.starts_with("dis") || key.starts_with("dias");
        (dis && value.is_empty()) || value.strip_suffix('$').unwrap_or(value).contains('$')
    })
}
