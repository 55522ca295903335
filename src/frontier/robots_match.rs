//! The `Allow` and `Disallow` rules of one robots.txt group, compiled for matching URLs
//! (RFC 9309 section 2.2.2): the longest pattern that matches decides, an `Allow` winning a
//! tie, and a URL no rule matches is allowed. `*` matches any run of characters and a `$` at
//! a pattern's end anchors it at the URL's end; elsewhere `$` is itself, as Google's parser,
//! the RFC's reference, reads it.
//!
//! Written here rather than taken from `texting_robots`, which compiles a regular expression
//! for each pattern holding a `$` (its lazy DFA grows to ~30 KB once used) and tests every
//! rule against every URL: a 500 KB robots.txt of 20,445 such rules made one host cost 620 MB
//! and ~4 ms per URL (docs/DESIGN.md). Here a pattern is its parts between the `*`s, tested
//! longest first with a prefix comparison and substring searches, and the first that matches
//! decides. A set of more than [`INDEX_AT`] rules tests a URL only against the rules whose
//! literal start it has (`robots_index.rs`).

use memchr::memmem;

use super::robots_index::StartIndex;

/// Rules in a set past which it is indexed by their literal starts: below, testing each rule
/// in turn costs less than the walk.
const INDEX_AT: usize = 32;

/// One rule: where its pattern lies in the set's bytes, and what it says.
#[derive(Debug)]
struct Rule {
    /// The pattern without a final `$`, at `start..end` of [`RuleSet::bytes`].
    start: u32,
    end: u32,
    /// The pattern ended in `$`: it must match to the URL's end.
    anchored: bool,
    allow: bool,
}

/// The rules of one group, longest pattern first. Their patterns lie end to end in one
/// buffer, 12 bytes of rule beside each: a host's rules hold about its file's size, which
/// rules kept in a crawl for every host it met must (a vector of parts per rule came to an
/// estimated ~170 bytes a rule, 3.4 MB for the hostile file of 20,000 rules).
#[derive(Debug, Default)]
pub struct RuleSet {
    bytes: Box<[u8]>,
    /// By the pattern's length as written, longest first, `Allow` first among equals.
    rules: Box<[Rule]>,
    /// The rules by their literal starts, for a set of more than [`INDEX_AT`].
    index: Option<StartIndex>,
}

impl RuleSet {
    /// Compiles `(allow, pattern)` rules; empty patterns match nothing and are left out.
    pub fn new(rules: impl IntoIterator<Item = (bool, String)>) -> RuleSet {
        let mut sorted: Vec<(bool, String)> = rules
            .into_iter()
            .filter(|(_, pattern)| !pattern.is_empty())
            .collect();
        sorted.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(b.0.cmp(&a.0)));
        let mut bytes = Vec::with_capacity(sorted.iter().map(|(_, p)| p.len()).sum());
        let rules = sorted
            .iter()
            .map(|(allow, pattern)| {
                let (body, anchored) = match pattern.strip_suffix('$') {
                    Some(body) => (body, true),
                    None => (pattern.as_str(), false),
                };
                let start = bytes.len() as u32;
                bytes.extend_from_slice(body.as_bytes());
                Rule {
                    start,
                    end: bytes.len() as u32,
                    anchored,
                    allow: *allow,
                }
            })
            .collect();
        let rules: Box<[Rule]> = rules;
        let index = (rules.len() > INDEX_AT).then(|| {
            let starts: Vec<(u32, u32)> = rules
                .iter()
                .map(|r| {
                    let body = &bytes[r.start as usize..r.end as usize];
                    let len = memchr::memchr(b'*', body).unwrap_or(body.len());
                    (r.start, len as u32)
                })
                .collect();
            StartIndex::new(&bytes, &starts)
        });
        RuleSet {
            bytes: bytes.into_boxed_slice(),
            rules,
            index,
        }
    }

    /// True when `path` (a URL's path and query, as trawl writes URLs) may be fetched.
    pub fn allows(&self, path: &str) -> bool {
        if path == "/robots.txt" {
            return true;
        }
        let url = path.as_bytes();
        let test = |r: &Rule| {
            matches(
                &self.bytes[r.start as usize..r.end as usize],
                r.anchored,
                url,
            )
        };
        let indexed = self
            .index
            .as_ref()
            .map(|index| index.best(&self.bytes, url, |n| test(&self.rules[n as usize])));
        let decides = match indexed {
            Some(Ok(best)) => best.map(|n| &self.rules[n as usize]),
            None | Some(Err(())) => self.rules.iter().find(|r| test(r)),
        };
        decides.is_none_or(|r| r.allow)
    }
}

/// True when the pattern `body` (its final `$`, if any, taken off as `anchored`) matches
/// `url`: the part before its first `*` starts the URL, each later part follows the one
/// before, and when anchored the last part ends it. Taking each middle part at its leftmost
/// place leaves the most room for the rest.
fn matches(body: &[u8], anchored: bool, url: &[u8]) -> bool {
    let Some(last_star) = memchr::memrchr(b'*', body) else {
        return match anchored {
            true => url == body,
            false => url.starts_with(body),
        };
    };
    let (init, last) = (&body[..last_star], &body[last_star + 1..]);
    let mut parts = init.split(|&b| b == b'*');
    let first = parts.next().unwrap_or_default();
    if !url.starts_with(first) {
        return false;
    }
    let mut at = first.len();
    for part in parts {
        match memmem::find(&url[at..], part) {
            Some(i) => at += i + part.len(),
            None => return false,
        }
    }
    match anchored {
        true => url.len() - at >= last.len() && url.ends_with(last),
        false => memmem::find(&url[at..], last).is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(rules: &[(bool, &str)]) -> RuleSet {
        RuleSet::new(rules.iter().map(|(a, p)| (*a, p.to_string())))
    }

    #[test]
    fn patterns_as_rfc_9309_writes_them() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "/fish",
                &["/fish", "/fish.html", "/fish/salmon", "/fishheads?x"],
                &["/Fish", "/catfish", "/"],
            ),
            ("/fish*", &["/fish", "/fishheads"], &["/Fish.asp"]),
            (
                "/*.php",
                &["/index.php", "/a/b.php?x=1", "/x.php5"],
                &["/", "/windows.PHP"],
            ),
            (
                "/*.php$",
                &["/a.php", "/b/c.php"],
                &["/a.php?x", "/a.php5", "/a.phpx.php5"],
            ),
            (
                "/fish*.php",
                &["/fish.php", "/fishheads/catfish.php?p"],
                &["/Fish.PHP"],
            ),
            ("/a$", &["/a"], &["/a/", "/ab"]),
            ("/a*$", &["/a", "/abc"], &["/b"]),
            ("*/x", &["/a/x", "/x"], &["/a/y"]),
            ("/a**b", &["/ab", "/a/b"], &["/a"]),
            ("/a$b", &["/a$b", "/a$bc"], &["/a"]),
            ("/x*y*z$", &["/xyz", "/x1y2z", "/xzyz"], &["/xyz1", "/xzy"]),
            ("/x*yy$", &["/xyy", "/xyyy", "/xayyb/yy"], &["/xy"]),
        ];
        for (pattern, matched, not) in cases {
            let (body, anchored) = match pattern.strip_suffix('$') {
                Some(body) => (body, true),
                None => (*pattern, false),
            };
            for url in *matched {
                assert!(
                    matches(body.as_bytes(), anchored, url.as_bytes()),
                    "{pattern} {url}"
                );
            }
            for url in *not {
                assert!(
                    !matches(body.as_bytes(), anchored, url.as_bytes()),
                    "{pattern} {url}"
                );
            }
        }
    }

    #[test]
    fn the_longest_match_decides_and_allow_wins_a_tie() {
        let r = set(&[
            (false, "/a"),
            (true, "/a/b"),
            (false, "/a/b/c"),
            (true, "/*.html$"),
        ]);
        assert!(!r.allows("/a/x"));
        assert!(r.allows("/a/b/x"));
        assert!(!r.allows("/a/b/cd"));
        // `/*.html$` (8) is longer than `/a/b/c` (6).
        assert!(r.allows("/a/b/c.html"));
        assert!(r.allows("/elsewhere"));
        assert!(set(&[(false, "/p"), (true, "/p")]).allows("/p"));
        assert!(set(&[(true, "/p"), (false, "/p")]).allows("/p"));
        assert!(set(&[(false, "/")]).allows("/robots.txt"));
        assert!(set(&[(false, "")]).allows("/x"));
    }

    #[test]
    fn twenty_thousand_anchored_patterns_take_little_room() {
        let rules = (0..20_000).map(|i| (false, format!("/q{i}*z*y*x$")));
        let r = RuleSet::new(rules);
        assert!(r.bytes.len() < 20_000 * 16 && r.rules.len() == 20_000);
        assert!(!r.allows("/q19999/z/y/x"));
        assert!(r.allows("/q19999/z/y/x/"));
        assert!(r.allows("/p/1/a1b.html"));
    }

    #[test]
    fn an_indexed_set_decides_as_testing_every_rule_does() {
        let mut rng = fastrand::Rng::with_seed(7);
        let piece = |rng: &mut fastrand::Rng| -> String {
            let alphabet = ['/', 'a', 'b', '*', '$', '.'];
            let len = rng.usize(0..6);
            (0..len)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect()
        };
        for _ in 0..300 {
            let count = rng.usize(INDEX_AT + 1..200);
            let rules: Vec<(bool, String)> = (0..count)
                .map(|_| (rng.bool(), format!("/{}", piece(&mut rng))))
                .collect();
            let indexed = RuleSet::new(rules.clone());
            let mut every = RuleSet::new(rules);
            assert!(indexed.index.is_some());
            every.index = None;
            for _ in 0..50 {
                let url = format!("/{}{}", piece(&mut rng), piece(&mut rng)).replace('*', "x");
                assert_eq!(indexed.allows(&url), every.allows(&url), "{url}");
            }
        }
        // A set that makes the walk too long: every rule is tested instead.
        let starts = (1..200).map(|k| (false, format!("/{}0", "a".repeat(k))));
        let r = RuleSet::new(starts.chain([(false, "/aaa*".to_string())]));
        assert!(!r.allows(&format!("/{}", "a".repeat(300))));
        assert!(r.allows("/b"));
    }
}
