//! URL filters applied before a link enters the frontier: user regexes and the extension
//! pre-filter that keeps links of types `--accept` does not take out of the queue.

use regex::bytes::{RegexSet, RegexSetBuilder};
use url::Url;

/// Extensions whose URLs are almost never HTML, each with the media types servers usually
/// give them. Checked on the last path segment only, so `/download.php?file=x.pdf` still
/// passes (its type is decided by the server). An extension one of whose types `--accept`
/// takes is not filtered: `--accept application/pdf` fetches links ending in `.pdf`.
const USUAL_TYPES: &[(&str, &[&str])] = &[
    ("7z", &["application/x-7z-compressed"]),
    ("aac", &["audio/aac"]),
    ("apk", &["application/vnd.android.package-archive"]),
    ("avi", &["video/x-msvideo"]),
    ("bin", &["application/octet-stream"]),
    ("bmp", &["image/bmp"]),
    ("bz2", &["application/x-bzip2"]),
    ("css", &["text/css"]),
    ("csv", &["text/csv"]),
    ("deb", &["application/vnd.debian.binary-package"]),
    ("dmg", &["application/x-apple-diskimage"]),
    ("doc", &["application/msword"]),
    (
        "docx",
        &["application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
    ),
    ("eot", &["application/vnd.ms-fontobject"]),
    ("epub", &["application/epub+zip"]),
    (
        "exe",
        &[
            "application/vnd.microsoft.portable-executable",
            "application/x-msdownload",
        ],
    ),
    ("flac", &["audio/flac"]),
    ("flv", &["video/x-flv"]),
    ("gif", &["image/gif"]),
    ("gz", &["application/gzip", "application/x-gzip"]),
    ("ico", &["image/vnd.microsoft.icon", "image/x-icon"]),
    ("iso", &["application/x-iso9660-image"]),
    ("jar", &["application/java-archive"]),
    ("jpeg", &["image/jpeg"]),
    ("jpg", &["image/jpeg"]),
    ("js", &["text/javascript", "application/javascript"]),
    ("json", &["application/json"]),
    ("m4a", &["audio/mp4"]),
    ("m4v", &["video/mp4"]),
    ("mkv", &["video/x-matroska"]),
    ("mov", &["video/quicktime"]),
    ("mp3", &["audio/mpeg"]),
    ("mp4", &["video/mp4"]),
    ("mpeg", &["video/mpeg"]),
    ("mpg", &["video/mpeg"]),
    ("msi", &["application/x-msi"]),
    ("odp", &["application/vnd.oasis.opendocument.presentation"]),
    ("ods", &["application/vnd.oasis.opendocument.spreadsheet"]),
    ("odt", &["application/vnd.oasis.opendocument.text"]),
    ("ogg", &["audio/ogg", "video/ogg", "application/ogg"]),
    ("otf", &["font/otf"]),
    ("pdf", &["application/pdf"]),
    ("png", &["image/png"]),
    ("ppt", &["application/vnd.ms-powerpoint"]),
    (
        "pptx",
        &["application/vnd.openxmlformats-officedocument.presentationml.presentation"],
    ),
    ("ps", &["application/postscript"]),
    (
        "rar",
        &["application/vnd.rar", "application/x-rar-compressed"],
    ),
    ("rpm", &["application/x-rpm"]),
    ("rss", &["application/rss+xml"]),
    ("svg", &["image/svg+xml"]),
    ("tar", &["application/x-tar"]),
    ("tgz", &["application/gzip", "application/x-gzip"]),
    ("tif", &["image/tiff"]),
    ("tiff", &["image/tiff"]),
    ("ttf", &["font/ttf"]),
    ("txt", &["text/plain"]),
    ("wav", &["audio/wav", "audio/x-wav"]),
    ("webm", &["video/webm"]),
    ("webp", &["image/webp"]),
    ("wmv", &["video/x-ms-wmv"]),
    ("woff", &["font/woff"]),
    ("woff2", &["font/woff2"]),
    ("xls", &["application/vnd.ms-excel"]),
    (
        "xlsx",
        &["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
    ),
    ("xz", &["application/x-xz"]),
    ("zip", &["application/zip"]),
    ("zst", &["application/zstd"]),
];

/// An extension of at most 5 bytes as a number: its bytes lower-cased, little-endian. Distinct
/// for distinct extensions, as none contains a NUL byte.
fn ext_key(ext: &[u8]) -> u64 {
    ext.iter().enumerate().fold(0, |key, (i, b)| {
        key | (u64::from(b.to_ascii_lowercase()) << (8 * i))
    })
}

/// The media types servers usually give files ending in `.ext` (any case), if trawl knows it.
pub fn usual_types(ext: &str) -> Option<&'static [&'static str]> {
    USUAL_TYPES
        .iter()
        .find(|(e, _)| e.eq_ignore_ascii_case(ext))
        .map(|(_, types)| *types)
}

/// True when a file answered with `media` (lower-case, no parameters) is what a link ending in
/// `.ext` was guessed to be: one of the extension's usual types, a variant of one (the same
/// image, audio, video or font family; `x-` and `font-` prefixes aside, as in
/// `application/x-font-ttf` for `font/ttf`), or the type of "some bytes"
/// (`application/octet-stream`, S3's `binary/octet-stream`). Anything else says the server
/// types this kind by something other than its extension: Debian's dwww answers `.gz` links
/// with `application/pdf`, `text/x-rst` and HTML pages alike.
pub fn fits_extension(ext: &str, media: &str) -> bool {
    if matches!(media, "application/octet-stream" | "binary/octet-stream") {
        return true;
    }
    let (major, sub) = split_type(media);
    usual_types(ext).is_some_and(|types| {
        types.iter().any(|usual| {
            let (usual_major, usual_sub) = split_type(usual);
            let same_subtype = usual_sub == sub
                && (usual_major == major || major == "application" || usual_major == "application");
            let same_family =
                usual_major == major && matches!(major, "image" | "audio" | "video" | "font");
            same_subtype || same_family
        })
    })
}

/// A media type's major type and its subtype without an `x-` or `font-` prefix.
fn split_type(media: &str) -> (&str, &str) {
    let (major, sub) = media.split_once('/').unwrap_or((media, ""));
    let sub = sub.strip_prefix("x-").unwrap_or(sub);
    (major, sub.strip_prefix("font-").unwrap_or(sub))
}

/// The extension pre-filter: keeps links whose extension says "not a page of an accepted
/// type" out of the queue, so they are never fetched only to be skipped by Content-Type.
#[derive(Debug, Clone)]
pub struct ExtensionFilter {
    /// Keys ([`ext_key`]) of the filtered extensions, sorted: the check runs for every
    /// discovered link, and comparing one number per step is cheaper than comparing strings.
    skipped: Vec<u64>,
}

impl ExtensionFilter {
    /// Filters every known extension none of whose usual media types `accepts` takes.
    pub fn new(accepts: impl Fn(&str) -> bool) -> Self {
        let mut skipped: Vec<u64> = USUAL_TYPES
            .iter()
            .filter(|(_, types)| !types.iter().any(|t| accepts(t)))
            .map(|(ext, _)| ext_key(ext.as_bytes()))
            .collect();
        skipped.sort_unstable();
        ExtensionFilter { skipped }
    }

    /// True when the URL's last path segment ends in a filtered extension.
    pub fn skips(&self, url: &Url) -> bool {
        self.skipped_extension(url).is_some()
    }

    /// The filtered extension the URL's last path segment ends in, if it does.
    pub fn skipped_extension<'u>(&self, url: &'u Url) -> Option<&'u str> {
        let last = url.path().rsplit('/').next().unwrap_or("");
        match last.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() && ext.len() <= 5 => self
                .skipped
                .binary_search(&ext_key(ext.as_bytes()))
                .is_ok()
                .then_some(ext),
            _ => None,
        }
    }
}

impl Default for ExtensionFilter {
    /// Every known extension filtered (the default `--accept` takes none of them).
    fn default() -> Self {
        ExtensionFilter::new(|_| false)
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
        let compile = |p: &[String]| match p.is_empty() {
            true => Ok(None),
            false => compile_set(p).map(Some),
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

    /// True when an exclude pattern matches the URL (for files the crawl reads but that are
    /// no pages, sitemaps: `--include` names the pages wanted, `--exclude` what never to fetch).
    pub fn excludes_url(&self, url: &Url) -> bool {
        self.exclude
            .as_ref()
            .is_some_and(|set| set.is_match(url.as_str().as_bytes()))
    }

    /// True when the URL passes both lists.
    pub fn allows(&self, url: &Url) -> bool {
        let s = url.as_str().as_bytes();
        self.include.as_ref().is_none_or(|set| set.is_match(s))
            && !self.exclude.as_ref().is_some_and(|set| set.is_match(s))
    }
}

/// Compiles a list of patterns as one set. A URL is ASCII (its host in punycode, the rest
/// percent-encoded), so classes are ASCII (`[^/]` one byte, not any character): a blocklist
/// of 2,000 `^https?://([^/]*\.)?spamN\.com/` patterns outgrew regex's lazy DFA cache with
/// Unicode classes, and the crawl ran 60 times slower; 6,000 were refused as too large (found
/// by an exploratory run). A pattern that needs Unicode (`\p{L}`) compiles as before.
fn compile_set(patterns: &[String]) -> Result<RegexSet, regex::Error> {
    let set = |unicode: bool| {
        RegexSetBuilder::new(patterns)
            .unicode(unicode)
            .size_limit(64 << 20)
            .dfa_size_limit(32 << 20)
            .build()
    };
    set(false).or_else(|_| set(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    /// A blocklist of 10,000 domains in the usual form compiles (it was refused as too large)
    /// and matches as written; a pattern that needs Unicode still compiles.
    #[test]
    fn a_long_blocklist_of_domains_compiles_and_matches() {
        let list: Vec<String> = (0..10_000)
            .map(|i| format!(r"^https?://([^/]*\.)?spam{i}\.com/"))
            .collect();
        let f = UrlFilter::new(&[], &list).unwrap();
        assert!(!f.allows(&u("http://www.spam9999.com/x")));
        assert!(!f.allows(&u("https://spam0.com/")));
        assert!(f.allows(&u("http://spam10000.com/")));
        assert!(f.allows(&u("http://a.org/spam1.com/")));
        let unicode = UrlFilter::new(&[], &[r"\p{Greek}".to_string()]).unwrap();
        assert!(unicode.allows(&u("http://a.org/")));
    }

    #[test]
    fn a_file_fits_its_extension_by_its_usual_types_and_their_variants() {
        for (ext, media) in [
            ("gz", "application/x-gzip"),
            ("png", "image/x-png"),
            ("mp3", "audio/mp3"),
            ("ttf", "application/x-font-ttf"),
            ("woff", "application/font-woff"),
            ("js", "application/x-javascript"),
            ("zip", "application/octet-stream"),
            ("pdf", "binary/octet-stream"),
        ] {
            assert!(fits_extension(ext, media), "{ext} {media}");
        }
        // dwww's answers to `.gz` links; a script served as text.
        for (ext, media) in [
            ("gz", "application/pdf"),
            ("gz", "text/x-rst"),
            ("gz", "application/vnd.ieee.1905"),
            ("js", "text/plain"),
            ("png", "video/mp4"),
            ("nope", "image/png"),
        ] {
            assert!(!fits_extension(ext, media), "{ext} {media}");
        }
    }

    #[test]
    fn extension_table_is_sorted_and_every_entry_matches() {
        let names: Vec<&str> = USUAL_TYPES.iter().map(|(e, _)| *e).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, names);
        // The check packs at most 5 bytes into a number.
        assert!(names.iter().all(|e| e.len() <= 5));
        let all = ExtensionFilter::default();
        for ext in names {
            assert!(all.skips(&u(&format!("http://a.org/f.{ext}"))));
            assert!(!all.skips(&u(&format!("http://a.org/f.{ext}q"))));
        }
        assert!(all.skips(&u("http://a.org/font.WOFF2")));
    }

    #[test]
    fn extension_prefilter() {
        let all = ExtensionFilter::default();
        assert!(all.skips(&u("http://a.org/f/Report.PDF")));
        assert!(all.skips(&u("http://a.org/img.jpg?x=1")));
        assert!(!all.skips(&u("http://a.org/page.html")));
        assert!(!all.skips(&u("http://a.org/dl.php?f=x.pdf")));
        assert!(!all.skips(&u("http://a.org/.zip")));
        assert!(!all.skips(&u("http://a.org/v1.2/")));
    }

    #[test]
    fn an_accepted_type_lets_its_extensions_through() {
        let pdf = ExtensionFilter::new(|t| t == "application/pdf");
        assert!(!pdf.skips(&u("http://a.org/f/Report.PDF")));
        assert!(pdf.skips(&u("http://a.org/img.jpg")));
        let images = ExtensionFilter::new(|t| t.starts_with("image/"));
        for ext in ["jpg", "jpeg", "png", "gif", "svg", "webp", "ico", "tif"] {
            assert!(!images.skips(&u(&format!("http://a.org/i.{ext}"))), "{ext}");
        }
        assert!(images.skips(&u("http://a.org/a.pdf")));
        let everything = ExtensionFilter::new(|_| true);
        assert!(!everything.skips(&u("http://a.org/a.zip")));
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
