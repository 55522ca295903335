//! The rules of one robots.txt (RFC 9309): which URLs our agent may fetch and its
//! Crawl-delay. Only the first [`ROBOTS_PARSE_LIMIT`] bytes are parsed, cut at a line break
//! (the RFC asks for at least 500 KiB). The file is read into our group by
//! `robots_group.rs` and its rules compiled by `robots_match.rs`; here the lines are first put
//! in the form trawl's URLs have. What to do while a file is missing, failing or redirecting
//! is the state machine in `robots_state.rs`.

use std::sync::Arc;
use std::time::Instant;

use super::robots_group::group_for;
use super::robots_match::RuleSet;
use crate::url_rules::canonical::normalize_percent;

/// Bytes of robots.txt that are parsed.
pub const ROBOTS_PARSE_LIMIT: usize = 512 * 1024;

/// The parsed rules of one origin; `None` means "allow everything". Origins whose robots.txt
/// redirects to one already read share its rules.
#[derive(Debug, Clone)]
pub struct RobotsRules {
    parsed: Option<Arc<Parsed>>,
    /// When the file is to be fetched again (`None`: never, robots.txt ignored).
    refresh_at: Option<Instant>,
}

/// What a parsed file says to us.
#[derive(Debug)]
struct Parsed {
    rules: RuleSet,
    delay: Option<f32>,
    sitemaps: Vec<String>,
}

impl RobotsRules {
    /// Rules that allow everything (robots.txt missing, 4xx, or robots ignored).
    pub fn allow_all() -> Self {
        RobotsRules {
            parsed: None,
            refresh_at: None,
        }
    }

    /// The same rules, to be fetched again at `at`.
    pub fn refreshed_at(mut self, at: Instant) -> Self {
        self.refresh_at = Some(at);
        self
    }

    /// True when the file is due to be fetched again at `now`.
    pub fn refresh_due(&self, now: Instant) -> bool {
        self.refresh_at.is_some_and(|at| now >= at)
    }

    /// Parses a robots.txt body for `agent` (the product token of our user agent). RFC 9309
    /// says to use what can be parsed: lines that mean nothing are left out.
    pub fn parse(agent: &str, body: &[u8]) -> Self {
        let group = group_for(agent, &lines_as_matched(parsed_part(body)));
        RobotsRules {
            parsed: Some(Arc::new(Parsed {
                rules: RuleSet::new(group.rules),
                delay: group.delay,
                sitemaps: group.sitemaps,
            })),
            refresh_at: None,
        }
    }

    /// True when `url` may be fetched.
    pub fn allows(&self, url: &str) -> bool {
        self.parsed
            .as_ref()
            .is_none_or(|p| p.rules.allows(path_and_query(url)))
    }

    /// The `Sitemap:` URLs the file lists (for every agent), as written.
    pub fn sitemaps(&self) -> &[String] {
        self.parsed.as_ref().map_or(&[], |p| p.sitemaps.as_slice())
    }

    /// The Crawl-delay for our agent, in seconds.
    pub fn crawl_delay(&self) -> Option<f32> {
        self.parsed.as_ref().and_then(|p| p.delay)
    }
}

/// The path and query of an absolute URL as the `url` crate writes it, which is what the rules
/// are matched against; `/` when it has none.
fn path_and_query(url: &str) -> &str {
    let Some(authority) = url.find("://").map(|i| i + 3) else {
        return url;
    };
    match url[authority..].find('/') {
        Some(i) => &url[authority + i..],
        None => "/",
    }
}

/// The part of a robots.txt body that is parsed (and saved): the first
/// [`ROBOTS_PARSE_LIMIT`] bytes, cut after a line break.
pub fn parsed_part(body: &[u8]) -> &[u8] {
    cap_at_line(body, ROBOTS_PARSE_LIMIT)
}

/// `body` with the lines the group reader would misread rewritten, borrowed when there are none:
/// - each `User-agent:` value cut to its product token (its leading letters, `_` and `-`), as
///   Google's robots.txt parser reads it, RFC 9309's reference: `User-agent: trawl/0.1` is a
///   group for `trawl`, which an exact match would not see;
/// - each `Allow:`/`Disallow:` path with its percent-escapes in the form trawl's URLs have
///   (hex digits upper-cased, unreserved characters decoded, `|` and its kind escaped:
///   `url_rules::canonical`), so that
///   `Disallow: /wiki/Sp%c3%a9cial` or `/%7Euser` matches the URLs it names, as RFC 9309
///   section 2.2.2 compares them (decoded unreserved octets, the rest as escapes).
///
/// Public for the robots fuzz target, which hands the same text to its oracle.
#[doc(hidden)]
pub fn lines_as_matched(body: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut start = 0;
    for line in body.split(|&b| b == b'\n' || b == b'\r') {
        let end = start + line.len();
        if let Some(cut) = product_token_cut(line) {
            let out = out.get_or_insert_with(|| body[..start].to_vec());
            out.extend_from_slice(&line[..cut]);
        } else if let Some(rule) = rule_in_url_form(line) {
            let out = out.get_or_insert_with(|| body[..start].to_vec());
            out.extend_from_slice(&rule);
        } else if let Some(out) = &mut out {
            out.extend_from_slice(line);
        }
        if let Some(out) = &mut out {
            out.extend_from_slice(&body[end..(end + 1).min(body.len())]);
        }
        start = end + 1;
    }
    out.map_or(std::borrow::Cow::Borrowed(body), std::borrow::Cow::Owned)
}

/// Where a `User-agent:` line's value should end when it runs on past its product token
/// (`trawl/0.1`, `trawl(1.0)`); `None` for any other line, and for values that end there.
fn product_token_cut(line: &[u8]) -> Option<usize> {
    let key = b"user-agent";
    // A byte-order mark may open the file's first line.
    let bom = if line.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let lead = line.len() - line[bom..].trim_ascii_start().len();
    let rest = &line[lead..];
    if rest.len() < key.len() || !rest[..key.len()].eq_ignore_ascii_case(key) {
        return None;
    }
    let after_key = lead + key.len();
    let colon = after_key
        + line[after_key..]
            .iter()
            .position(|&b| b != b' ' && b != b'\t')?;
    if line[colon] != b':' {
        return None;
    }
    let value = colon
        + 1
        + line[colon + 1..]
            .iter()
            .position(|&b| b != b' ' && b != b'\t')?;
    let token = line[value..]
        .iter()
        .position(|&b| !(b.is_ascii_alphabetic() || b == b'_' || b == b'-'))?;
    let next = line[value + token];
    let ends_there = token == 0 || next == b' ' || next == b'\t' || next == b'#';
    (!ends_there).then_some(value + token)
}

/// An `Allow:` or `Disallow:` line whose path is not written as trawl's URLs are (its
/// percent-escapes, or a character they escape such as `|`), rewritten in that form; `None`
/// for any other line.
fn rule_in_url_form(line: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(line).ok()?;
    let (key, value) = text.split_once(':')?;
    let key = key.trim().trim_start_matches('\u{feff}');
    if !key.eq_ignore_ascii_case("allow") && !key.eq_ignore_ascii_case("disallow") {
        return None;
    }
    match normalize_percent(value) {
        std::borrow::Cow::Owned(value) => Some(format!("{key}:{value}").into_bytes()),
        std::borrow::Cow::Borrowed(_) => None,
    }
}

fn cap_at_line(body: &[u8], limit: usize) -> &[u8] {
    if body.len() <= limit {
        return body;
    }
    let cut = &body[..limit];
    match cut.iter().rposition(|&b| b == b'\n') {
        Some(nl) => &cut[..=nl],
        None => cut,
    }
}

/// The product token of a User-Agent string, lower-cased: `trawl` for `trawl/0.1 (+url)`.
pub fn product_token(user_agent: &str) -> String {
    user_agent
        .split(|c: char| c == '/' || c.is_whitespace())
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROBOTS: &[u8] = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 1\n\nUser-agent: trawl\nDisallow: /no-trawl\nAllow: /no-trawl/but-this\nCrawl-delay: 2\n";

    #[test]
    fn answers_as_texting_robots_did() {
        // The crate trawl matched with before `robots_match.rs`, kept as this test's oracle.
        // Where the two differ on purpose (an empty `Disallow:`, a `$` inside a pattern)
        // there are no such lines here.
        use texting_robots::Robot;
        let bodies = [
            "User-agent: *\nDisallow: /a%20b\nDisallow: /*?q=1$\nDisallow: /caf\u{e9}\nDisallow: /x`y\nAllow: /*.html$\nDisallow: /p\nDisallow: /robots\n",
            "User-agent: *\nDisallow: /\nAllow: /pub*\nAllow: /*.css$\nDisallow: /pub/*/private\n\nUser-agent: trawl\nDisallow: /only-us\n",
            "user-agent: Trawl\nDisallow: /*/x*y\nAllow: /a/*\nDisallow: /a/b$\nAllow: /a/b/\nDisallow: /*.php*\nAllow: /*.php?ok\n",
            "Disallow: /no-agent\nAllow: /no-agent/ok\nDisallow: *foo\nDisallow: /**bar**baz$\n",
            "User-agent: other\nDisallow: /\nUser-agent: *\nCrawl-delay: 3\nDisallow: /tmp/\nDisallow: /cgi-bin/\nSitemap: http://a.org/s.xml\n",
            "User agent: trawl\nDissalow /typo\nDisalow: /typo2 # comment\nAllow:/typo/ok\nDisallow: /q?x=*&y=1$\n",
        ];
        let urls = [
            "http://a.org",
            "http://a.org/",
            "http://a.org/a b",
            "http://a.org/a%20b",
            "http://a.org/x?q=1",
            "http://a.org/x?q=1&r",
            "http://a.org/x?q=`1`",
            "http://a.org/x`y",
            "http://a.org/caf\u{e9}",
            "http://user:pw@a.org:8080/p/q.html",
            "http://a.org/p/q.html#frag",
            "http://a.org/pq?r=/s",
            "https://xn--caf-dma.example/p",
            "http://a.org/robots.txt",
            "http://[::1]:81/p",
            "http://a.org/pub/x/private",
            "http://a.org/pub/style.css",
            "http://a.org/style.css?v=2",
            "http://a.org/only-us/1",
            "http://a.org/m/x/y",
            "http://a.org/a/b",
            "http://a.org/a/b/",
            "http://a.org/a/b/c",
            "http://a.org/index.php?ok=1",
            "http://a.org/index.php?no",
            "http://a.org/no-agent/ok/1",
            "http://a.org/no-agent/x",
            "http://a.org/xfoo",
            "http://a.org/1bar2baz",
            "http://a.org/1bar2baz/",
            "http://a.org/tmp/x",
            "http://a.org/typo/ok",
            "http://a.org/typo2",
            "http://a.org/q?x=5&y=1",
            "http://a.org/q?x=5&y=12",
        ];
        for body in bodies {
            let rules = RobotsRules::parse("trawl", body.as_bytes());
            let robot = Robot::new("trawl", &lines_as_matched(body.as_bytes())).unwrap();
            assert_eq!(rules.crawl_delay(), robot.delay, "{body}");
            assert_eq!(rules.sitemaps(), robot.sitemaps, "{body}");
            for raw in urls {
                let url = url::Url::parse(raw).unwrap();
                assert_eq!(
                    rules.allows(url.as_str()),
                    robot.allowed(url.as_str()),
                    "{url} in\n{body}"
                );
            }
        }
    }

    #[test]
    fn answers_as_texting_robots_did_on_random_rules() {
        // Patterns and paths from a small alphabet, so that they often match: wildcards
        // anywhere, `$` at the end only (inside a pattern the two differ on purpose).
        use texting_robots::Robot;
        let mut rng = fastrand::Rng::with_seed(9309);
        let text = |rng: &mut fastrand::Rng, stars: bool| -> String {
            let alphabet: &[char] = if stars {
                &['a', 'b', '/', '.', '*', '?', '=']
            } else {
                &['a', 'b', '/', '.', '?', '=']
            };
            let len = rng.usize(0..7);
            let body: String = (0..len)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect();
            format!("/{body}")
        };
        let (mut compared, mut refused) = (0, 0);
        for _ in 0..400 {
            let mut body = String::from("User-agent: *\n");
            for _ in 0..rng.usize(1..6) {
                let key = if rng.bool() { "Allow" } else { "Disallow" };
                let mut pattern = text(&mut rng, true);
                if rng.u8(..4) == 0 {
                    pattern.push('$');
                }
                body.push_str(&format!("{key}: {pattern}\n"));
            }
            let rules = RobotsRules::parse("trawl", body.as_bytes());
            let robot = Robot::new("trawl", body.as_bytes()).unwrap();
            for _ in 0..25 {
                let url = format!("http://a.org{}", text(&mut rng, false));
                let Ok(url) = url::Url::parse(&url) else {
                    continue;
                };
                assert_eq!(
                    rules.allows(url.as_str()),
                    robot.allowed(url.as_str()),
                    "{url} in\n{body}"
                );
                compared += 1;
                refused += usize::from(!robot.allowed(url.as_str()));
            }
        }
        assert!(compared > 9_000 && refused > 1_000, "{compared} {refused}");
    }

    #[test]
    fn a_user_agent_value_is_read_as_its_product_token() {
        let body = b"User-agent: *\nDisallow: /all\n\nUser-Agent: Trawl/0.1.0 (+https://x)\r\nDisallow: /versioned\n\nuser-agent:trawl_bot/2\rDisallow: /other\r";
        let rules = RobotsRules::parse("trawl", body);
        assert!(!rules.allows("http://a.org/versioned"));
        assert!(rules.allows("http://a.org/all"));
        let other = RobotsRules::parse("trawl_bot", body);
        assert!(!other.allows("http://a.org/other"));
        let cut = lines_as_matched(body);
        assert_eq!(
            String::from_utf8_lossy(&cut),
            "User-agent: *\nDisallow: /all\n\nUser-Agent: Trawl\r\nDisallow: /versioned\n\nuser-agent:trawl_bot\rDisallow: /other\r"
        );
        let bom = RobotsRules::parse("trawl", b"\xEF\xBB\xBFUser-agent: trawl/2\nDisallow: /x\n");
        assert!(!bom.allows("http://a.org/x"));
        // Nothing to cut: the body is not copied.
        assert!(matches!(
            lines_as_matched(ROBOTS),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn rule_paths_are_compared_in_the_form_urls_have() {
        let body = b"User-agent: *\nDisallow: /wiki/Sp%c3%a9cial\ndisallow : /%7Euser # home\nAllow: /%7euser/pub%2a\nDisallow: /%41%2F\n";
        let r = RobotsRules::parse("trawl", body);
        // What a link becomes (`url_rules::canonicalize`): upper-case escapes, `~` decoded.
        assert!(!r.allows("http://a.org/wiki/Sp%C3%A9cial:Search"));
        assert!(!r.allows("http://a.org/~user/private"));
        assert!(r.allows("http://a.org/~user/pub%2A"));
        assert!(!r.allows("http://a.org/A%2F"));
        assert!(r.allows("http://a.org/A/"));
        assert!(r.allows("http://a.org/wiki/Main"));
        // Characters the canonical form escapes (`|` as `%7C`) match their escaped spelling.
        let r = RobotsRules::parse(
            "trawl",
            b"User-agent: *\nDisallow: /a|b\nDisallow: /*?f=[1]\n",
        );
        assert!(!r.allows("http://a.org/a%7Cb.html"));
        assert!(!r.allows("http://a.org/list?f=%5B1%5D&p=2"));
        assert!(r.allows("http://a.org/list?f=1"));
    }

    #[test]
    fn specific_group_wins_over_star() {
        let r = RobotsRules::parse("trawl", ROBOTS);
        assert!(!r.allows("http://a.org/no-trawl/x"));
        assert!(r.allows("http://a.org/no-trawl/but-this/y"));
        // Our group has no /private/ rule: the * group does not apply to us.
        assert!(r.allows("http://a.org/private/x"));
        assert_eq!(r.crawl_delay(), Some(2.0));
        let other = RobotsRules::parse("otherbot", ROBOTS);
        assert!(!other.allows("http://a.org/private/x"));
        assert_eq!(other.crawl_delay(), Some(1.0));
    }

    #[test]
    fn robots_txt_itself_is_always_allowed_and_empty_allows_all() {
        let r = RobotsRules::parse("trawl", b"User-agent: *\nDisallow: /\n");
        assert!(!r.allows("http://a.org/"));
        assert!(r.allows("http://a.org/robots.txt"));
        assert!(RobotsRules::parse("trawl", b"").allows("http://a.org/x"));
        assert!(RobotsRules::allow_all().allows("http://a.org/x"));
    }

    #[test]
    fn parses_at_least_500_kib() {
        let mut body = b"User-agent: *\n".to_vec();
        while body.len() < 500 * 1024 {
            body.extend_from_slice(b"Disallow: /filler-path-that-matches-nothing-useful\n");
        }
        body.extend_from_slice(b"Disallow: /late\n");
        let r = RobotsRules::parse("trawl", &body);
        assert!(!r.allows("http://a.org/late"));
        // Beyond the limit, rules are ignored rather than misparsed.
        let mut huge = body.clone();
        huge.resize(ROBOTS_PARSE_LIMIT + 10, b'#');
        huge.extend_from_slice(b"\nDisallow: /too-late\n");
        assert!(RobotsRules::parse("trawl", &huge).allows("http://a.org/too-late"));
    }

    #[test]
    fn binary_garbage_does_not_disallow() {
        let r = RobotsRules::parse("trawl", &[0xff, 0x00, 0x13, 0x37, b'\n', 0x80]);
        assert!(r.allows("http://a.org/x"));
    }

    #[test]
    fn product_tokens() {
        assert_eq!(product_token("trawl/0.1.0 (+https://x)"), "trawl");
        assert_eq!(product_token("MyBot"), "mybot");
    }
}
