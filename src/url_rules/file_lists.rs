//! wget's `-A` and `-R`: lists of file-name suffixes or shell patterns that a URL's file name
//! (its last path segment, decoded, without the query) must match, or must not. As wget reads
//! them: an entry without `*`, `?`, `[` or `]` is a suffix (`pdf` takes `a.pdf`, and `xpdf`); a URL
//! with no file name (a directory) always passes; a file named `.html`, `.htm` or `.?html`
//! (`.shtml`, `.xhtml`) passes too
//! while its links will be followed (wget downloads such a page to read its links, and its
//! WARC keeps it), and is held to the lists only at the last level of `-l` without `-p`.

use glob::Pattern;
use percent_encoding::percent_decode_str;

/// The two lists of one crawl; empty lists say nothing.
#[derive(Clone, Default)]
pub struct FileLists {
    accept: Vec<FileEntry>,
    reject: Vec<FileEntry>,
    /// `-p`: every page's links and requisites are read, so no HTML page is a leaf.
    no_leaves: bool,
    /// wget's `--ignore-case`: entries and names compared in lower case.
    fold_case: bool,
}

/// Written as the derived form was before `--ignore-case` (a shared crawl compares the lists
/// of its workers by this text, so a crawl started by an earlier build still matches).
impl std::fmt::Debug for FileLists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut lists = f.debug_struct("FileLists");
        lists
            .field("accept", &self.accept)
            .field("reject", &self.reject)
            .field("no_leaves", &self.no_leaves);
        if self.fold_case {
            lists.field("fold_case", &true);
        }
        lists.finish()
    }
}

#[derive(Debug, Clone)]
enum FileEntry {
    Suffix(String),
    Pattern(Pattern),
}

impl FileLists {
    /// The lists from the flags' values (`requisites`: `-p` was given); an entry that is no
    /// pattern is an error.
    pub fn new(accept: &[String], reject: &[String], requisites: bool) -> Result<Self, String> {
        Ok(FileLists {
            accept: entries(accept, "-A")?,
            reject: entries(reject, "-R")?,
            no_leaves: requisites,
            fold_case: false,
        })
    }

    /// The same lists matching names in any case (wget's `--ignore-case`).
    pub fn ignoring_case(self) -> Self {
        let fold = |list: Vec<FileEntry>| list.into_iter().map(FileEntry::lowercased).collect();
        FileLists {
            accept: fold(self.accept),
            reject: fold(self.reject),
            no_leaves: self.no_leaves,
            fold_case: true,
        }
    }

    /// True when neither list is given.
    pub fn is_empty(&self) -> bool {
        self.accept.is_empty() && self.reject.is_empty()
    }

    /// True when the file of `path` (a URL's path as the `url` crate writes it) may be
    /// fetched; `last_level`: the URL is at the last level of the depth limit, so a page
    /// there is read for nothing.
    pub fn allow(&self, path: &str, last_level: bool) -> bool {
        let file = &path[path.rfind('/').map_or(0, |i| i + 1)..];
        if file.is_empty() {
            return true;
        }
        let mut file = percent_decode_str(file).decode_utf8_lossy();
        if self.fold_case {
            file = file.to_lowercase().into();
        }
        if (self.no_leaves || !last_level) && has_html_suffix(&file) {
            return true;
        }
        (self.accept.is_empty() || self.accept.iter().any(|e| e.takes(&file)))
            && !self.reject.iter().any(|e| e.takes(&file))
    }
}

impl FileEntry {
    fn lowercased(self) -> Self {
        match self {
            FileEntry::Suffix(suffix) => FileEntry::Suffix(suffix.to_lowercase()),
            FileEntry::Pattern(pattern) => Pattern::new(&pattern.as_str().to_lowercase())
                .map_or(FileEntry::Pattern(pattern), FileEntry::Pattern),
        }
    }

    fn takes(&self, file: &str) -> bool {
        match self {
            FileEntry::Suffix(suffix) => file.ends_with(suffix.as_str()),
            FileEntry::Pattern(pattern) => pattern.matches(file),
        }
    }
}

/// wget's `has_html_suffix_p`: the part after the last `.` is `html`, `htm` or one character
/// and `html` (`shtml`, `xhtml`), in any case.
fn has_html_suffix(file: &str) -> bool {
    file.rsplit_once('.').is_some_and(|(_, ext)| {
        let ext = ext.as_bytes();
        ext.eq_ignore_ascii_case(b"html")
            || ext.eq_ignore_ascii_case(b"htm")
            || (ext.len() == 5 && ext[1..].eq_ignore_ascii_case(b"html"))
    })
}

fn entries(list: &[String], flag: &str) -> Result<Vec<FileEntry>, String> {
    list.iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| match s.contains(['*', '?', '[', ']']) {
            true => Pattern::new(s)
                .map(FileEntry::Pattern)
                .map_err(|e| format!("{flag}: {s:?} is not a pattern: {e}")),
            false => Ok(FileEntry::Suffix(s.to_string())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(accept: &[&str], reject: &[&str], requisites: bool) -> FileLists {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        FileLists::new(&v(accept), &v(reject), requisites).unwrap()
    }

    #[test]
    fn suffixes_and_patterns_match_the_file_name_as_wget_matches_them() {
        let a = lists(&["pdf", "*.jp?g"], &["draft.pdf"], false);
        assert!(a.allow("/papers/a.pdf", false));
        assert!(a.allow("/papers/xpdf", false), "a suffix, not an extension");
        assert!(!a.allow("/papers/old-draft.pdf", false));
        assert!(a.allow("/img/p.jpeg", false));
        assert!(!a.allow("/img/p.png", false));
        assert!(
            !a.allow("/list.php", false),
            "a page without an HTML suffix is a file"
        );
        assert!(a.allow("/papers/", false), "a directory has no file name");
        assert!(a.allow("/%E6%97%A5.pdf", false));
        let r = lists(&[], &["*.zip", "iso"], false);
        assert!(!r.allow("/dl/x.zip", false));
        assert!(!r.allow("/dl/debian.iso", false));
        assert!(r.allow("/dl/readme.txt", false));
    }

    #[test]
    fn html_pages_pass_while_their_links_are_followed() {
        let a = lists(&["pdf"], &[], false);
        assert!(a.allow("/docs/index.html", false));
        assert!(a.allow("/docs/INDEX.HTM", false));
        assert!(a.allow("/cgi/page.shtml", false));
        assert!(!a.allow("/cgi/page.xhtmlx", false));
        // At the last level of -l, nothing of the page would be read: held to the list.
        assert!(!a.allow("/docs/index.html", true));
        // With -p its requisites are read: passes at every level.
        assert!(lists(&["pdf"], &[], true).allow("/docs/index.html", true));
        // -R on an HTML suffix holds only where the page is a leaf, as in wget.
        let r = lists(&[], &["html"], false);
        assert!(r.allow("/a.html", false));
        assert!(!r.allow("/a.html", true));
        assert!(FileLists::new(&["[x".into()], &[], false).is_err());
        assert!(lists(&[], &[], false).is_empty());
    }

    #[test]
    fn ignore_case_matches_names_in_any_case() {
        let a = lists(&["PDF", "*.Jp?g"], &["draft.pdf"], false);
        assert!(!a.allow("/a.pdf", false), "case counts by default");
        let a = a.ignoring_case();
        assert!(a.allow("/a.pdf", false));
        assert!(a.allow("/A.PDF", false));
        assert!(a.allow("/P.JPEG", false));
        assert!(!a.allow("/DRAFT.PDF", false));
        assert!(!a.allow("/x.png", false));
    }

    #[test]
    fn the_lists_read_as_before_ignore_case_unless_it_is_given() {
        let a = lists(&["pdf"], &[], true);
        assert_eq!(
            format!("{a:?}"),
            r#"FileLists { accept: [Suffix("pdf")], reject: [], no_leaves: true }"#
        );
        assert!(format!("{:?}", a.ignoring_case()).ends_with("fold_case: true }"));
    }
}
