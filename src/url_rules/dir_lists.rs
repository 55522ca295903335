//! wget's `--include-directories` (`-I`) and `--exclude-directories` (`-X`): lists of
//! directories a URL's directory must be in, or must not. As wget reads them: the directory is
//! the URL's path up to its last `/`, decoded, without the leading `/`; an entry without
//! wildcards takes itself and what is under it (`/forum` takes `forum/a/`, not `forums/`); an
//! entry with `*`, `?`, `[` or `]` is a shell pattern whose wildcards stop at a `/` (fnmatch with
//! `FNM_PATHNAME`, here the `glob` crate's `Pattern`).

use std::borrow::Cow;

use glob::{MatchOptions, Pattern};
use percent_encoding::percent_decode_str;

/// The two lists of one crawl; empty lists say nothing.
#[derive(Clone, Default)]
pub struct DirLists {
    include: Vec<DirEntry>,
    exclude: Vec<DirEntry>,
    /// wget's `--ignore-case`: entries and directories compared in lower case.
    fold_case: bool,
}

/// Written as the derived form was before `--ignore-case` (a shared crawl compares the lists
/// of its workers by this text, so a crawl started by an earlier build still matches).
impl std::fmt::Debug for DirLists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut lists = f.debug_struct("DirLists");
        lists
            .field("include", &self.include)
            .field("exclude", &self.exclude);
        if self.fold_case {
            lists.field("fold_case", &true);
        }
        lists.finish()
    }
}

#[derive(Debug, Clone)]
enum DirEntry {
    Under(String),
    Pattern(Pattern),
}

const PATHNAME: MatchOptions = MatchOptions {
    case_sensitive: true,
    require_literal_separator: true,
    require_literal_leading_dot: false,
};

impl DirLists {
    /// The lists from the flags' values; an entry that is no pattern is an error.
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self, String> {
        Ok(DirLists {
            include: entries(include, "--include-directories")?,
            exclude: entries(exclude, "--exclude-directories")?,
            fold_case: false,
        })
    }

    /// The same lists matching directories in any case (wget's `--ignore-case`).
    pub fn ignoring_case(self) -> Self {
        let fold = |list: Vec<DirEntry>| list.into_iter().map(DirEntry::lowercased).collect();
        DirLists {
            include: fold(self.include),
            exclude: fold(self.exclude),
            fold_case: true,
        }
    }

    /// True when neither list is given.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// True when the directory of `path` (a URL's path as the `url` crate writes it) is in the
    /// first list, if there is one, and in none of the second.
    pub fn allow(&self, path: &str) -> bool {
        let dir = &path[..path.rfind('/').unwrap_or(0)];
        let dir = dir.strip_prefix('/').unwrap_or(dir);
        let mut dir: Cow<'_, str> = percent_decode_str(dir).decode_utf8_lossy();
        if self.fold_case {
            dir = dir.to_lowercase().into();
        }
        (self.include.is_empty() || self.include.iter().any(|e| e.takes(&dir)))
            && !self.exclude.iter().any(|e| e.takes(&dir))
    }
}

impl DirEntry {
    fn lowercased(self) -> Self {
        match self {
            DirEntry::Under(top) => DirEntry::Under(top.to_lowercase()),
            DirEntry::Pattern(pattern) => Pattern::new(&pattern.as_str().to_lowercase())
                .map_or(DirEntry::Pattern(pattern), DirEntry::Pattern),
        }
    }

    fn takes(&self, dir: &str) -> bool {
        match self {
            DirEntry::Under(top) => dir
                .strip_prefix(top.as_str())
                .is_some_and(|rest| top.is_empty() || rest.is_empty() || rest.starts_with('/')),
            DirEntry::Pattern(pattern) => pattern.matches_with(dir, PATHNAME),
        }
    }
}

fn entries(list: &[String], flag: &str) -> Result<Vec<DirEntry>, String> {
    list.iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| {
            let entry = s.strip_prefix('/').unwrap_or(s);
            let entry = entry.strip_suffix('/').unwrap_or(entry);
            if entry.contains(['*', '?', '[', ']']) {
                Pattern::new(entry)
                    .map(DirEntry::Pattern)
                    .map_err(|e| format!("{flag}: {s:?} is not a pattern: {e}"))
            } else {
                Ok(DirEntry::Under(entry.to_string()))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(include: &[&str], exclude: &[&str]) -> DirLists {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        DirLists::new(&v(include), &v(exclude)).unwrap()
    }

    #[test]
    fn a_directory_takes_what_is_under_it_at_a_slash() {
        let x = lists(&[], &["/forum", "cgi-bin/"]);
        assert!(!x.allow("/forum/"));
        assert!(!x.allow("/forum/topic/1.html"));
        assert!(x.allow("/forums/index.html"));
        assert!(
            x.allow("/forum"),
            "a file named forum is in the root directory"
        );
        assert!(!x.allow("/cgi-bin/x.cgi"));
        assert!(x.allow("/index.html"));
        let i = lists(&["/pub", "/people/bozo"], &["/pub/worthless"]);
        assert!(i.allow("/pub/a.tar"));
        assert!(!i.allow("/pub/worthless/b.tar"));
        assert!(i.allow("/people/bozo/x/y.html"));
        assert!(!i.allow("/people/index.html"));
        assert!(!i.allow("/index.html"));
    }

    #[test]
    fn patterns_stop_at_a_slash_and_directories_are_decoded() {
        let x = lists(&[], &["/*/old", "/a?c", "/1. Council Meetings*"]);
        assert!(!x.allow("/docs/old/x.html"));
        assert!(x.allow("/docs/v1/old/x.html"), "* does not cross a /");
        assert!(!x.allow("/abc/x"));
        assert!(!x.allow("/1.%20Council%20Meetings%202024/minutes.pdf"));
        assert!(x.allow("/2.%20Agendas/x.pdf"));
        assert!(lists(&[], &[]).allow("/any/thing"));
        assert!(lists(&[], &[]).is_empty());
        assert!(DirLists::new(&["/[a".into()], &[]).is_err());
    }

    #[test]
    fn ignore_case_matches_directories_in_any_case() {
        let x = lists(&[], &["/Forum", "/*/OLD"]);
        assert!(x.allow("/forum/a.html"), "case counts by default");
        let x = x.ignoring_case();
        assert!(!x.allow("/forum/a.html"));
        assert!(!x.allow("/FORUM/a.html"));
        assert!(!x.allow("/Docs/old/a.html"));
        assert!(x.allow("/forums/a.html"));
    }

    #[test]
    fn the_lists_read_as_before_ignore_case_unless_it_is_given() {
        // A shared crawl compares its workers' lists by this text.
        let x = lists(&["/a"], &[]);
        assert_eq!(
            format!("{x:?}"),
            r#"DirLists { include: [Under("a")], exclude: [] }"#
        );
        assert!(format!("{:?}", x.ignoring_case()).ends_with("fold_case: true }"));
    }
}
