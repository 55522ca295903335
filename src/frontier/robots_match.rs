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
//! decides.

use memchr::memmem;

/// One rule's pattern, split at its `*`s.
#[derive(Debug)]
struct Pattern {
    /// The parts between the `*`s (runs of `*` count as one); the first must start the URL.
    parts: Vec<Box<[u8]>>,
    /// The pattern ended in `$`: the last part must end the URL.
    anchored: bool,
}

impl Pattern {
    fn new(pattern: &str) -> Pattern {
        let (body, anchored) = match pattern.strip_suffix('$') {
            Some(body) => (body, true),
            None => (pattern, false),
        };
        let mut parts: Vec<Box<[u8]>> = Vec::new();
        for (i, part) in body.split('*').enumerate() {
            // Between two `*`s an empty part says nothing; the first one (a leading `*`)
            // says the URL may start anywhere.
            if i == 0 || !part.is_empty() {
                parts.push(part.as_bytes().into());
            }
        }
        // A trailing `*` before `$` (`/a*$`): the URL may end anywhere.
        if anchored && body.ends_with('*') {
            parts.push(Box::default());
        }
        Pattern { parts, anchored }
    }

    fn matches(&self, url: &[u8]) -> bool {
        let (first, rest) = self
            .parts
            .split_first()
            .expect("a pattern has a first part");
        if !url.starts_with(first) {
            return false;
        }
        let mut at = first.len();
        if rest.is_empty() {
            return !self.anchored || at == url.len();
        }
        let (last, middle) = rest.split_last().expect("not empty");
        for part in middle {
            match memmem::find(&url[at..], part) {
                Some(i) => at += i + part.len(),
                None => return false,
            }
        }
        match self.anchored {
            // The leftmost place of each middle part leaves the most room for the last one.
            true => url.len() - at >= last.len() && url.ends_with(last),
            false => memmem::find(&url[at..], last).is_some(),
        }
    }
}

/// The rules of one group, longest pattern first.
#[derive(Debug, Default)]
pub struct RuleSet {
    /// (pattern, allow), by the pattern's length as written, longest first, `Allow` first
    /// among equals.
    rules: Vec<(Pattern, bool)>,
}

impl RuleSet {
    /// Compiles `(allow, pattern)` rules; empty patterns match nothing and are left out.
    pub fn new(rules: impl IntoIterator<Item = (bool, String)>) -> RuleSet {
        let mut sorted: Vec<(usize, bool, String)> = rules
            .into_iter()
            .filter(|(_, pattern)| !pattern.is_empty())
            .map(|(allow, pattern)| (pattern.len(), allow, pattern))
            .collect();
        sorted.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        RuleSet {
            rules: sorted
                .into_iter()
                .map(|(_, allow, pattern)| (Pattern::new(&pattern), allow))
                .collect(),
        }
    }

    /// True when `path` (a URL's path and query, as trawl writes URLs) may be fetched.
    pub fn allows(&self, path: &str) -> bool {
        if path == "/robots.txt" {
            return true;
        }
        self.rules
            .iter()
            .find(|(pattern, _)| pattern.matches(path.as_bytes()))
            .is_none_or(|(_, allow)| *allow)
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
            let p = Pattern::new(pattern);
            for url in *matched {
                assert!(p.matches(url.as_bytes()), "{pattern} {url}");
            }
            for url in *not {
                assert!(!p.matches(url.as_bytes()), "{pattern} {url}");
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
        assert!(!r.allows("/q19999/z/y/x"));
        assert!(r.allows("/q19999/z/y/x/"));
        assert!(r.allows("/p/1/a1b.html"));
    }
}
