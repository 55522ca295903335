//! Reads a robots.txt into the group of rules that applies to one agent (RFC 9309 section
//! 2.2.1), its Crawl-delay and the file's `Sitemap:` URLs, as `texting_robots` read them
//! before `robots_match.rs` replaced its matching (the spellings it takes, and its grouping,
//! which the differential test in `robots_rules.rs` holds this to):
//!
//! - a line is a key, then a `:` or blanks, then a value up to a `#`; keys in any case, with
//!   the misspellings real files carry (`User agent`, `Dissalow`, `Site-map`, `Crawl delay`);
//!   any other line is left out and does not end a group;
//! - the agent's own groups (its product token, in any case) apply, all of them together;
//!   failing those, the `*` groups; a file with no `User-agent` line applies whole;
//! - a Crawl-delay in those groups, or else one before the first `User-agent` line;
//! - an empty `Disallow:` says nothing (where `texting_robots` made it `Allow: /`, which tied
//!   with a `Disallow: /` and won it), as Google's parser, the RFC's reference, reads it.

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

/// The characters of a rule's path that are percent-encoded before matching, as URLs have
/// them: controls, the space, `"`, `<`, `>`, a backtick, and all outside ASCII.
const ENCODED: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'<').add(b'>').add(b'`');

/// One line of a robots.txt that means something.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Line<'a> {
    Agent(&'a [u8]),
    Rule { allow: bool, pattern: &'a [u8] },
    Delay(f32),
    Sitemap(&'a [u8]),
}

/// What a robots.txt says to one agent.
#[derive(Debug, Default, PartialEq)]
pub struct Group {
    /// `(allow, pattern)`, patterns percent-encoded as URLs are.
    pub rules: Vec<(bool, String)>,
    /// The Crawl-delay, in seconds.
    pub delay: Option<f32>,
    /// Every `Sitemap:` URL of the file, whatever its group.
    pub sitemaps: Vec<String>,
}

/// The keys, each with its spellings.
const AGENT: &[&str] = &["user-agent", "user agent", "useragent"];
const ALLOW: &[&str] = &["allow"];
const DISALLOW: &[&str] = &[
    "disallow",
    "dissallow",
    "dissalow",
    "disalow",
    "diasllow",
    "disallaw",
];
const SITEMAP: &[&str] = &["sitemap", "site-map", "site map"];
const DELAY: &[&str] = &["crawl-delay", "crawl delay", "crawldelay"];

/// The group of `body` that applies to `agent` (a product token, lower case).
pub fn group_for(agent: &str, body: &[u8]) -> Group {
    let body = without_bom(body);
    let mut sitemaps = Vec::new();
    let mut lines = Vec::new();
    for line in body.split(|&b| b == b'\n' || b == b'\r' || b == 0) {
        match read_line(line) {
            Some(Line::Sitemap(url)) => {
                if let Ok(url) = std::str::from_utf8(url) {
                    sitemaps.push(url.to_string());
                }
            }
            Some(line) => lines.push(line),
            None => {}
        }
    }
    let is_agent = |value: &[u8], name: &str| value.eq_ignore_ascii_case(name.as_bytes());
    let names_us = lines
        .iter()
        .any(|l| matches!(l, Line::Agent(a) if is_agent(a, agent)));
    let target = if names_us { agent } else { "*" };
    let mut capturing = !lines.iter().any(|l| matches!(l, Line::Agent(_)));
    let mut in_agents = false;
    let mut ours = Vec::new();
    for line in &lines {
        match line {
            Line::Agent(value) => {
                if !in_agents {
                    capturing = false;
                    in_agents = true;
                }
                capturing |= is_agent(value, target);
            }
            other => {
                in_agents = false;
                if capturing {
                    ours.push(*other);
                }
            }
        }
    }
    let delay_of = |l: &Line<'_>| match l {
        Line::Delay(d) => Some(*d),
        _ => None,
    };
    let delay = ours.iter().find_map(delay_of).or_else(|| {
        lines
            .iter()
            .take_while(|l| !matches!(l, Line::Agent(_)))
            .filter_map(delay_of)
            .last()
    });
    let rules = ours
        .iter()
        .filter_map(|l| match l {
            Line::Rule { allow, pattern } => std::str::from_utf8(pattern)
                .ok()
                .map(|p| (*allow, utf8_percent_encode(p, ENCODED).to_string())),
            _ => None,
        })
        .collect();
    Group {
        rules,
        delay,
        sitemaps,
    }
}

/// `body` without a byte-order mark, or the part of one, at its start.
fn without_bom(body: &[u8]) -> &[u8] {
    let mut body = body;
    for b in [0xEF, 0xBB, 0xBF] {
        if body.first() == Some(&b) {
            body = &body[1..];
        }
    }
    body
}

/// The meaning of one line; `None` for a line that has none (a comment, a blank, an unknown
/// key, a Crawl-delay that is no number of seconds).
fn read_line(line: &[u8]) -> Option<Line<'_>> {
    let line = line.trim_ascii_start();
    if let Some(value) = value_of(line, AGENT) {
        return Some(Line::Agent(value));
    }
    if let Some(value) = value_of(line, ALLOW) {
        return Some(Line::Rule {
            allow: true,
            pattern: value,
        });
    }
    if let Some(value) = value_of(line, DISALLOW) {
        return Some(Line::Rule {
            allow: false,
            pattern: value,
        });
    }
    if let Some(value) = value_of(line, SITEMAP) {
        return Some(Line::Sitemap(value));
    }
    let seconds = std::str::from_utf8(value_of(line, DELAY)?).ok()?;
    match seconds.parse::<f32>() {
        Ok(d) if d >= 0.0 => Some(Line::Delay(d)),
        _ => None,
    }
}

/// The value of `line` when it starts with one of `keys` (in any case) followed by a `:`
/// (blanks before it allowed) or by blanks: the text up to a `#`, trimmed.
fn value_of<'a>(line: &'a [u8], keys: &[&str]) -> Option<&'a [u8]> {
    let key = keys.iter().find(|k| {
        line.get(..k.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(k.as_bytes()))
    })?;
    let after = &line[key.len()..];
    let blanks = after
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    let value = match after.get(blanks) {
        Some(b':') => &after[blanks + 1..],
        _ if blanks > 0 => &after[blanks..],
        _ => return None,
    };
    let value = match memchr::memchr(b'#', value) {
        Some(i) => &value[..i],
        None => value,
    };
    Some(value.trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(group: &Group) -> Vec<(bool, &str)> {
        group.rules.iter().map(|(a, p)| (*a, p.as_str())).collect()
    }

    #[test]
    fn lines_as_real_files_write_them() {
        let body = b"\xEF\xBB\xBFuser agent : trawl # us\n  Dissalow /a # old\r\nallow:/a/b\nCrawl delay: 2.5\nSite-map: http://a.org/s.xml\nDisallow:\nAllowed: /not-a-key\nnoise\nDisallow\t/tab\0Disallow: /after-nul\n";
        let g = group_for("trawl", body);
        assert_eq!(
            rules(&g),
            [
                (false, "/a"),
                (true, "/a/b"),
                (false, ""),
                (false, "/tab"),
                (false, "/after-nul")
            ]
        );
        assert_eq!(g.delay, Some(2.5));
        assert_eq!(g.sitemaps, ["http://a.org/s.xml"]);
    }

    #[test]
    fn our_groups_together_else_the_star_groups() {
        let body = b"Crawl-delay: 9\nUser-agent: *\nDisallow: /star\n\nUser-agent: other\nUser-agent: TRAWL\nDisallow: /one\n# a comment does not end it\nDisallow: /two\nUser-agent: x\nDisallow: /x\nUser-agent: trawl\nAllow: /three\nCrawl-delay: 1\n";
        let g = group_for("trawl", body);
        assert_eq!(
            rules(&g),
            [(false, "/one"), (false, "/two"), (true, "/three")]
        );
        assert_eq!(g.delay, Some(1.0));
        let star = group_for("bot", body);
        assert_eq!(rules(&star), [(false, "/star")]);
        assert_eq!(star.delay, Some(9.0), "the delay before any group");
        let no_agents = group_for("trawl", b"Disallow: /all\n");
        assert_eq!(rules(&no_agents), [(false, "/all")]);
        assert_eq!(
            group_for("trawl", b"User-agent: bot\nDisallow: /\n"),
            Group::default()
        );
    }

    #[test]
    fn rule_paths_are_percent_encoded_as_urls_are() {
        let g = group_for("trawl", "Disallow: /caf\u{e9} x\"`\n".as_bytes());
        assert_eq!(rules(&g), [(false, "/caf%C3%A9%20x%22%60")]);
        // A path that is not UTF-8 is left out; so is a delay that is no number.
        let g = group_for(
            "trawl",
            b"Disallow: /\xff\nCrawl-delay: soon\nCrawl-delay: -1\n",
        );
        assert_eq!(g, Group::default());
    }
}
