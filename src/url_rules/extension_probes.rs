//! What the answers to links the extension pre-filter would skip said, per kind of URL. A
//! link's extension is a guess at its type, and a wrong one on much of the web: MediaWiki's
//! `/wiki/File:Logo.png`, a repository browser's `/blob/main/app.js`, an article or a tag page
//! named `Node.js` are HTML pages. So the first link of a kind (its host, its directory, its
//! extension) is fetched as a probe, and the answer decides for the rest of its kind: a page
//! lets them all through, a file of the type its extension names keeps them out. A file of
//! another type proves nothing of its siblings (a server that types by content: Debian's dwww
//! serves `changelog.gz` as HTML next to `manual.pdf.gz` as a PDF), so it counts as an answer
//! without content, three of which keep the kind out.
//!
//! What is learned lives in memory, bounded: a resumed crawl probes again.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};

use foldhash::fast::RandomState;
use url::Url;

use super::filter::fits_extension;

/// Most kinds remembered (a few MB): when the table is full, it starts over, so a broad
/// crawl of ever new hosts keeps probing them at the price of probing its active kinds again,
/// and a web of ever new directories cannot grow it.
const MAX_KINDS: usize = 100_000;

/// Most probes one host may answer with files before links of its kinds not seen yet are
/// skipped unprobed: each costs a request.
const MAX_FILE_PROBES_PER_HOST: u32 = 256;

/// Answers that do not settle it (redirects, error statuses, failed attempts, files of a type
/// the extension does not name) a kind may get before it is taken for files: `/download/x.zip`
/// links that redirect, links that are all 404, a server that never answers them, or one
/// whose `.gz` files are text, PDFs and pages.
const MAX_MISSES: u8 = 3;

/// What a fetched URL of a filtered extension turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeAnswer<'a> {
    /// A 2xx of an accepted type, or HTML read for its links: its kind is fetched from now on.
    Page,
    /// A 2xx of a type not archived, this one (lower-case, no parameters) if it had one. When
    /// it is a type the extension names, the guess was right: its kind is skipped from now on;
    /// otherwise it counts as a [`ProbeAnswer::Miss`].
    File(Option<&'a str>),
    /// No content to judge by (a redirect, an error status, a failed attempt).
    Miss,
}

/// What is known of a kind of URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Its links are pages: fetch them.
    Pages,
    /// Its links are files of a type not archived: skip them.
    Files,
    /// Answered this many times without content.
    Misses(u8),
}

/// The probes' answers, by kind of URL (see the module's doc).
#[derive(Debug, Default)]
pub struct ExtensionProbes {
    /// Keyed by a hash of the kind, seeded per process: the URLs are the web's to choose.
    kinds: HashMap<u64, Kind, RandomState>,
    /// Probes answered with files, by host hash.
    file_probes: HashMap<u64, u32, RandomState>,
    hasher: RandomState,
}

impl ExtensionProbes {
    /// True when `url`, whose last segment ends in `.ext` (a filtered extension), is to be
    /// fetched: its kind gave pages, or it has not answered yet and may still be probed.
    pub fn may_fetch(&self, url: &Url, ext: &str) -> bool {
        let (host, kind) = self.keys(url, ext);
        match self.kinds.get(&kind) {
            Some(Kind::Pages) | Some(Kind::Misses(_)) => true,
            Some(Kind::Files) => false,
            None => self
                .file_probes
                .get(&host)
                .is_none_or(|&n| n < MAX_FILE_PROBES_PER_HOST),
        }
    }

    /// Takes what the fetch of `url` (of filtered extension `ext`) answered. A page lets its
    /// kind through for good, whatever came before (no page may be lost to a guess); a file of
    /// the type the extension names, or a third answer that does not settle it, keeps the kind
    /// out until a page of it is seen.
    pub fn learn(&mut self, url: &Url, ext: &str, answer: ProbeAnswer) {
        let answer = match answer {
            ProbeAnswer::File(media) if !media.is_some_and(|m| fits_extension(ext, m)) => {
                ProbeAnswer::Miss
            }
            answer => answer,
        };
        let (host, key) = self.keys(url, ext);
        let known = self.kinds.get(&key).copied();
        if known == Some(Kind::Pages) {
            return;
        }
        if known.is_none() && self.kinds.len() >= MAX_KINDS {
            self.kinds.clear();
            self.file_probes.clear();
        }
        let kind = match (answer, known) {
            (ProbeAnswer::Page, _) => Kind::Pages,
            (_, Some(Kind::Files)) => return,
            (ProbeAnswer::File(_), _) => Kind::Files,
            (ProbeAnswer::Miss, Some(Kind::Misses(n))) if n + 1 >= MAX_MISSES => Kind::Files,
            (ProbeAnswer::Miss, Some(Kind::Misses(n))) => Kind::Misses(n + 1),
            (ProbeAnswer::Miss, _) => Kind::Misses(1),
        };
        if kind == Kind::Files {
            *self.file_probes.entry(host).or_default() += 1;
        }
        self.kinds.insert(key, kind);
    }

    /// The hashes of `url`'s host (with its port) and of its kind: host, port, directory
    /// (numbered and hashed segments as one, [`numbered`]) and extension (any case). Hashed
    /// piece by piece: admission asks this of every link of a filtered extension.
    fn keys(&self, url: &Url, ext: &str) -> (u64, u64) {
        let host = (url.host_str().unwrap_or(""), url.port_or_known_default());
        let mut kind = self.hasher.build_hasher();
        host.hash(&mut kind);
        let path = url.path();
        for segment in path[..path.rfind('/').unwrap_or(0)].split('/') {
            match numbered(segment) {
                true => "*".hash(&mut kind),
                false => segment.hash(&mut kind),
            }
        }
        ext.len().hash(&mut kind);
        ext.bytes()
            .for_each(|b| b.to_ascii_lowercase().hash(&mut kind));
        (self.hasher.hash_one(host), kind.finish())
    }
}

/// True for a directory segment that numbers or hashes its siblings: WordPress files uploads
/// by year and month (`/uploads/2024/05/`), MediaWiki by the first hex digits of a name's
/// hash (`/images/7/79/`), repository browsers by commit (`/file/0492b439fdf1/docs/`). Such a
/// directory holds what its siblings hold, and one probe answers for all of them.
fn numbered(segment: &str) -> bool {
    !segment.is_empty()
        && (segment.bytes().all(|b| b.is_ascii_digit())
            || (segment.len() <= 2 || segment.len() >= 7)
                && segment.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file answer that fits every extension the tests use.
    const FILE: ProbeAnswer<'static> = ProbeAnswer::File(Some("application/octet-stream"));

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn the_first_answer_of_a_kind_decides_for_the_rest() {
        let mut p = ExtensionProbes::default();
        let (logo, page) = (
            u("http://w.org/images/a/Logo.png"),
            u("http://w.org/wiki/File:Logo.png"),
        );
        assert!(p.may_fetch(&logo, "png") && p.may_fetch(&page, "png"));
        p.learn(&logo, "png", FILE);
        p.learn(&page, "png", ProbeAnswer::Page);
        // The same directory and extension, in any case.
        assert!(!p.may_fetch(&u("http://w.org/images/a/Other.PNG"), "PNG"));
        assert!(p.may_fetch(&u("http://w.org/wiki/File:Other.png"), "png"));
        // Another directory, extension, host or port is another kind.
        assert!(p.may_fetch(&u("http://w.org/media/Logo.png"), "png"));
        assert!(p.may_fetch(&u("http://w.org/images/a/Logo.jpg"), "jpg"));
        assert!(p.may_fetch(&u("http://x.org/images/a/Logo.png"), "png"));
        assert!(p.may_fetch(&u("http://w.org:8080/images/a/Logo.png"), "png"));
    }

    #[test]
    fn numbered_and_hashed_directories_are_one_kind() {
        let mut p = ExtensionProbes::default();
        for (probe, sibling, other) in [
            (
                "http://w.org/images/7/79/A.png",
                "http://w.org/images/f/f0/B.png",
                "http://w.org/images/thumb/7/79/A.png",
            ),
            (
                "http://w.org/wp-content/uploads/2023/05/a.jpg",
                "http://w.org/wp-content/uploads/2024/11/b.jpg",
                "http://w.org/wp-content/themes/x/a.jpg",
            ),
            (
                "http://w.org/raw-file/0492b439fdf1/docs/a.css",
                "http://w.org/raw-file/1346f677e7b4/docs/b.css",
                "http://w.org/raw-file/tip/docs/b.css",
            ),
        ] {
            let ext = probe.rsplit('.').next().unwrap();
            p.learn(&u(probe), ext, FILE);
            assert!(!p.may_fetch(&u(sibling), ext), "{sibling}");
            assert!(p.may_fetch(&u(other), ext), "{other}");
        }
        // Words of hex letters are words: `/cafe/` and `/beef/` are two directories.
        p.learn(&u("http://w.org/cafe/a.png"), "png", FILE);
        assert!(p.may_fetch(&u("http://w.org/beef/a.png"), "png"));
    }

    #[test]
    fn a_page_is_final_and_a_file_is_final_but_for_a_page() {
        let mut p = ExtensionProbes::default();
        let (a, b) = (
            u("http://h.org/tags/node.js"),
            u("http://h.org/tags/vue.js"),
        );
        p.learn(&a, "js", ProbeAnswer::Page);
        p.learn(&b, "js", FILE);
        assert!(p.may_fetch(&b, "js"), "a page of the kind came first");
        let (c, d) = (u("http://h.org/static/a.js"), u("http://h.org/static/b.js"));
        p.learn(&c, "js", FILE);
        p.learn(&d, "js", ProbeAnswer::Miss);
        assert!(!p.may_fetch(&d, "js"));
        p.learn(&d, "js", ProbeAnswer::Page);
        assert!(
            p.may_fetch(&d, "js"),
            "a page among files lets the kind through"
        );
    }

    #[test]
    fn files_of_a_type_the_extension_does_not_name_count_as_misses() {
        let mut p = ExtensionProbes::default();
        // dwww: `ChangeLog.1.gz` as `application/vnd.ieee.1905`, `README.rst.gz` as rst text,
        // then `changelog.gz` as HTML.
        let dir = "http://h.org/doc/pkg/";
        let pdf = u(&format!("{dir}manual.pdf.gz"));
        p.learn(&pdf, "gz", ProbeAnswer::File(Some("application/pdf")));
        p.learn(
            &pdf,
            "gz",
            ProbeAnswer::File(Some("text/prs.fallenstein.rst")),
        );
        assert!(p.may_fetch(&u(&format!("{dir}changelog.gz")), "gz"));
        p.learn(&pdf, "gz", ProbeAnswer::File(None));
        assert!(
            !p.may_fetch(&u(&format!("{dir}changelog.gz")), "gz"),
            "a third one"
        );
        // The type the extension names settles it at once.
        let tarball = u("http://h.org/dist/a.tar.gz");
        p.learn(
            &tarball,
            "gz",
            ProbeAnswer::File(Some("application/x-gzip")),
        );
        assert!(!p.may_fetch(&u("http://h.org/dist/b.tar.gz"), "gz"));
    }

    #[test]
    fn answers_without_content_decide_after_three() {
        let mut p = ExtensionProbes::default();
        let url = u("http://h.org/download/x.zip");
        for _ in 0..2 {
            p.learn(&url, "zip", ProbeAnswer::Miss);
            assert!(p.may_fetch(&url, "zip"));
        }
        p.learn(&url, "zip", ProbeAnswer::Miss);
        assert!(!p.may_fetch(&url, "zip"));
    }

    #[test]
    fn a_host_whose_probes_keep_finding_files_stops_probing() {
        let mut p = ExtensionProbes::default();
        let pages = u("http://h.org/wiki/File:a.jpg");
        p.learn(&pages, "jpg", ProbeAnswer::Page);
        for i in 0..MAX_FILE_PROBES_PER_HOST {
            let url = u(&format!("http://h.org/uploads/u{i}/a.jpg"));
            assert!(p.may_fetch(&url, "jpg"));
            p.learn(&url, "jpg", FILE);
        }
        assert!(!p.may_fetch(&u("http://h.org/uploads/new/a.jpg"), "jpg"));
        // Kinds learned before stay as they were; other hosts probe as before.
        assert!(p.may_fetch(&pages, "jpg"));
        assert!(p.may_fetch(&u("http://other.org/uploads/new/a.jpg"), "jpg"));
    }

    #[test]
    fn the_table_is_bounded_and_starts_over_when_full() {
        let mut p = ExtensionProbes::default();
        let known = u("http://h.org/files/a.pdf");
        p.learn(&known, "pdf", FILE);
        for i in 0..MAX_KINDS - 1 {
            p.kinds.insert(i as u64, Kind::Misses(1));
        }
        assert_eq!(p.kinds.len(), MAX_KINDS);
        assert!(!p.may_fetch(&known, "pdf"));
        // A new kind is still probed; what it answers starts the table over.
        let url = u("http://h.org/new/a.pdf");
        assert!(p.may_fetch(&url, "pdf"));
        p.learn(&url, "pdf", ProbeAnswer::Page);
        assert_eq!(p.kinds.len(), 1);
        assert!(p.may_fetch(&url, "pdf") && p.may_fetch(&known, "pdf"));
    }
}
