//! URL filters applied before a link enters the frontier: user regexes and the extension
//! pre-filter that keeps obvious non-HTML out of the queue.

use regex::RegexSet;
use url::Url;

/// Extensions whose URLs are almost never HTML. Checked on the last path segment only, so
/// `/download.php?file=x.pdf` still passes (its type is decided by the server).
const NON_HTML_EXTENSIONS: &[&str] = &[
    "7z", "aac", "apk", "avi", "bin", "bmp", "bz2", "css", "csv", "deb", "dmg", "doc", "docx",
    "eot", "epub", "exe", "flac", "flv", "gif", "gz", "ico", "iso", "jar", "jpeg", "jpg", "js",
    "json", "m4a", "m4v", "mkv", "mov", "mp3", "mp4", "mpeg", "mpg", "msi", "odp", "ods", "odt",
    "ogg", "otf", "pdf", "png", "ppt", "pptx", "ps", "rar", "rpm", "rss", "svg", "tar", "tgz",
    "tif", "tiff", "ttf", "txt", "wav", "webm", "webp", "wmv", "woff", "woff2", "xls", "xlsx",
    "xz", "zip", "zst",
];

/// [`NON_HTML_EXTENSIONS`] as numbers (see [`ext_key`]), sorted: the check runs for every
/// discovered link, and comparing one number per step is cheaper than comparing strings.
const EXTENSION_KEYS: [u64; NON_HTML_EXTENSIONS.len()] = {
    let mut keys = [0u64; NON_HTML_EXTENSIONS.len()];
    let mut i = 0;
    while i < keys.len() {
        keys[i] = ext_key(NON_HTML_EXTENSIONS[i].as_bytes());
        i += 1;
    }
    // Insertion sort, at compile time.
    let mut i = 1;
    while i < keys.len() {
        let mut j = i;
        while j > 0 && keys[j - 1] > keys[j] {
            let t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
            j -= 1;
        }
        i += 1;
    }
    keys
};

/// An extension of at most 5 bytes as a number: its bytes lower-cased, little-endian. Distinct
/// for distinct extensions, as none contains a NUL byte.
const fn ext_key(ext: &[u8]) -> u64 {
    let mut key = 0u64;
    let mut i = 0;
    while i < ext.len() {
        key |= (ext[i].to_ascii_lowercase() as u64) << (8 * i);
        i += 1;
    }
    key
}

/// True when the URL's last path segment ends in a known non-HTML extension.
pub fn has_non_html_extension(url: &Url) -> bool {
    let last = url.path().rsplit('/').next().unwrap_or("");
    match last.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && ext.len() <= 5 => EXTENSION_KEYS
            .binary_search(&ext_key(ext.as_bytes()))
            .is_ok(),
        _ => false,
    }
}

/// User `--include` / `--exclude` regexes over the full URL.
#[derive(Debug, Clone)]
pub struct UrlFilter {
    include: Option<RegexSet>,
    exclude: Option<RegexSet>,
    include_patterns: Vec<String>,
    exclude_patterns: Vec<String>,
}

impl UrlFilter {
    /// Compiles the patterns; an empty include list means "include everything".
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self, regex::Error> {
        let compile = |p: &[String]| -> Result<Option<RegexSet>, regex::Error> {
            if p.is_empty() {
                Ok(None)
            } else {
                RegexSet::new(p).map(Some)
            }
        };
        Ok(UrlFilter {
            include: compile(include)?,
            exclude: compile(exclude)?,
            include_patterns: include.to_vec(),
            exclude_patterns: exclude.to_vec(),
        })
    }

    /// The exclude patterns, in order.
    pub fn excludes(&self) -> &[String] {
        &self.exclude_patterns
    }

    /// The same include patterns with `exclude` instead.
    pub fn with_excludes(&self, exclude: &[String]) -> Result<Self, regex::Error> {
        UrlFilter::new(&self.include_patterns, exclude)
    }

    /// True when the URL passes both lists.
    pub fn allows(&self, url: &Url) -> bool {
        let s = url.as_str();
        self.include.as_ref().is_none_or(|set| set.is_match(s))
            && !self.exclude.as_ref().is_some_and(|set| set.is_match(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn extension_list_is_sorted_and_every_entry_matches() {
        let mut sorted = NON_HTML_EXTENSIONS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, NON_HTML_EXTENSIONS);
        // The check packs at most 5 bytes into a number.
        assert!(NON_HTML_EXTENSIONS.iter().all(|e| e.len() <= 5));
        for ext in NON_HTML_EXTENSIONS {
            assert!(has_non_html_extension(&u(&format!("http://a.org/f.{ext}"))));
            assert!(!has_non_html_extension(&u(&format!(
                "http://a.org/f.{ext}q"
            ))));
        }
        assert!(has_non_html_extension(&u("http://a.org/font.WOFF2")));
    }

    #[test]
    fn extension_prefilter() {
        assert!(has_non_html_extension(&u("http://a.org/f/Report.PDF")));
        assert!(has_non_html_extension(&u("http://a.org/img.jpg?x=1")));
        assert!(!has_non_html_extension(&u("http://a.org/page.html")));
        assert!(!has_non_html_extension(&u("http://a.org/dl.php?f=x.pdf")));
        assert!(!has_non_html_extension(&u("http://a.org/.zip")));
        assert!(!has_non_html_extension(&u("http://a.org/v1.2/")));
    }

    #[test]
    fn include_and_exclude() {
        let f = UrlFilter::new(&["/docs/".into()], &["\\.php$".into()]).unwrap();
        assert!(f.allows(&u("http://a.org/docs/x")));
        assert!(!f.allows(&u("http://a.org/blog/x")));
        assert!(!f.allows(&u("http://a.org/docs/x.php")));
        let all = UrlFilter::new(&[], &[]).unwrap();
        assert!(all.allows(&u("http://a.org/anything")));
    }
}
