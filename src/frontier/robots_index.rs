//! The rules of a large robots.txt group by the literal start of their patterns (the part
//! before the first `*`), so that a URL is tested only against the rules that can match it.
//!
//! A rule matches only a URL that starts with its literal start, so the candidates for a URL
//! are the rules whose start is one of the URL's prefixes. The starts are kept sorted, and
//! the URL's prefixes among them are found from the longest down: the greatest start not
//! after the URL (a binary search) is either one of its prefixes, or shares its longest
//! common prefix with the URL, and every start that is a prefix of the URL is a prefix of it
//! too (it lies between that prefix and the URL). Each step shortens what is looked for. A
//! set built to make that walk long is given up on after [`MAX_STEPS`] steps, and the caller
//! tests every rule, as a small set always does.
//!
//! Why: a 500 KB robots.txt of 20,445 rules, each tested in turn, cost ~225 us for each page
//! fetched from its host (docs/PERFORMANCE.md, "A robots.txt of 20,000 rules").

/// Steps of the walk down the URL's prefixes before the caller is sent to test every rule.
const MAX_STEPS: usize = 64;

/// One distinct literal start and the rules that have it.
#[derive(Debug)]
struct Start {
    /// The start, at `at..at + len` of the rule set's bytes.
    at: u32,
    len: u32,
    /// Its rules are `grouped[from..until]`.
    from: u32,
    until: u32,
}

/// The rules of a set by their literal starts.
#[derive(Debug)]
pub struct StartIndex {
    /// Distinct non-empty starts, in byte order.
    starts: Box<[Start]>,
    /// Rule numbers by start, in the order of `starts`, each start's ascending (the set's
    /// rules are numbered best first).
    grouped: Box<[u32]>,
    /// Rules whose pattern starts with `*`: candidates for every URL, ascending.
    everywhere: Box<[u32]>,
}

impl StartIndex {
    /// The index of rules whose literal starts are `starts[n] = (at, len)` into `bytes`, rule
    /// `n` being the `n`th best.
    pub fn new(bytes: &[u8], starts: &[(u32, u32)]) -> StartIndex {
        let text = |at: u32, len: u32| &bytes[at as usize..(at + len) as usize];
        let mut everywhere = Vec::new();
        let mut by_start: Vec<(u32, u32, u32)> = Vec::with_capacity(starts.len());
        for (n, &(at, len)) in starts.iter().enumerate() {
            match len {
                0 => everywhere.push(n as u32),
                _ => by_start.push((at, len, n as u32)),
            }
        }
        by_start.sort_by(|a, b| text(a.0, a.1).cmp(text(b.0, b.1)).then(a.2.cmp(&b.2)));
        let mut index: Vec<Start> = Vec::new();
        let mut grouped = Vec::with_capacity(by_start.len());
        for (at, len, n) in by_start {
            let same = index
                .last()
                .is_some_and(|s| text(s.at, s.len) == text(at, len));
            if !same {
                let from = grouped.len() as u32;
                index.push(Start {
                    at,
                    len,
                    from,
                    until: from,
                });
            }
            grouped.push(n);
            if let Some(last) = index.last_mut() {
                last.until += 1;
            }
        }
        StartIndex {
            starts: index.into_boxed_slice(),
            grouped: grouped.into_boxed_slice(),
            everywhere: everywhere.into_boxed_slice(),
        }
    }

    /// The best rule (the lowest number) for which `matches` says yes among the rules that
    /// can match `url`: `Ok(None)` when none does; `Err(())` when the walk grew too long and
    /// every rule must be tested instead.
    pub fn best(
        &self,
        bytes: &[u8],
        url: &[u8],
        mut matches: impl FnMut(u32) -> bool,
    ) -> Result<Option<u32>, ()> {
        let text = |s: &Start| &bytes[s.at as usize..(s.at + s.len) as usize];
        let mut best = self.everywhere.iter().copied().find(|&n| matches(n));
        let mut query = url;
        for _ in 0..MAX_STEPS {
            let after = self.starts.partition_point(|s| text(s) <= query);
            let Some(start) = after.checked_sub(1).map(|i| &self.starts[i]) else {
                return Ok(best);
            };
            let found = text(start);
            let shorter = match query.starts_with(found) {
                true => {
                    let rules = &self.grouped[start.from as usize..start.until as usize];
                    let better = rules
                        .iter()
                        .copied()
                        .take_while(|&n| best.is_none_or(|b| n < b))
                        .find(|&n| matches(n));
                    best = better.or(best);
                    found.len() - 1
                }
                false => found.iter().zip(query).take_while(|(a, b)| a == b).count(),
            };
            if shorter == 0 {
                return Ok(best);
            }
            query = &query[..shorter];
        }
        Err(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The starts of `patterns` laid end to end, as a rule set lays them.
    fn index(patterns: &[&str]) -> (Vec<u8>, StartIndex) {
        let mut bytes = Vec::new();
        let mut starts = Vec::new();
        for p in patterns {
            let start = p.split('*').next().unwrap();
            starts.push((bytes.len() as u32, start.len() as u32));
            bytes.extend_from_slice(p.as_bytes());
        }
        let index = StartIndex::new(&bytes, &starts);
        (bytes, index)
    }

    /// The rules whose start is a prefix of `url`, as the index offers them (every one is
    /// asked, none matches).
    fn offered(patterns: &[&str], url: &str) -> Result<Vec<u32>, ()> {
        let (bytes, index) = index(patterns);
        let mut asked = Vec::new();
        index
            .best(&bytes, url.as_bytes(), |n| {
                asked.push(n);
                false
            })
            .map(|best| {
                assert_eq!(best, None);
                asked.sort();
                asked
            })
    }

    #[test]
    fn a_url_is_offered_exactly_the_rules_whose_start_it_has() {
        let patterns = [
            "/a", "/ab*c", "/abc", "/b", "*x", "/a/b", "/", "/abd", "/ab", "/a0", "/a",
        ];
        for url in [
            "/abc/x", "/a/b/c", "/b", "/c", "/ab", "/a", "/", "", "/abe", "/a00",
        ] {
            let want: Vec<u32> = patterns
                .iter()
                .enumerate()
                .filter(|(_, p)| url.starts_with(p.split('*').next().unwrap()))
                .map(|(n, _)| n as u32)
                .collect();
            assert_eq!(offered(&patterns, url), Ok(want), "{url}");
        }
    }

    #[test]
    fn the_best_match_wins_and_worse_rules_are_not_asked() {
        let (bytes, index) = index(&["/a/b/c", "/a/b", "/a", "*.php"]);
        let mut asked = Vec::new();
        let best = index.best(&bytes, b"/a/b/c/x.php", |n| {
            asked.push(n);
            n != 0
        });
        assert_eq!(best, Ok(Some(1)));
        // `*.php` (3) matched first; `/a/b/c` (0) was asked and did not; `/a` (2) was not
        // asked, being worse than `/a/b`.
        asked.sort();
        assert_eq!(asked, [0, 1, 3]);
    }

    #[test]
    fn a_walk_made_long_on_purpose_is_given_up() {
        // Starts `a0`, `aa0`, `aaa0`, ...: each step shortens the URL `aaa...` by one byte.
        let patterns: Vec<String> = (1..200).map(|k| format!("{}0", "a".repeat(k))).collect();
        let patterns: Vec<&str> = patterns.iter().map(|s| s.as_str()).collect();
        assert_eq!(offered(&patterns, &"a".repeat(300)), Err(()));
        assert_eq!(offered(&patterns, "b"), Ok(vec![]));
    }
}
