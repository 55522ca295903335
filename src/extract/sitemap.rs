//! Reads a sitemap (sitemaps.org protocol): a `<urlset>` of page URLs, a `<sitemapindex>` of
//! further sitemaps, or a plain-text list of URLs, gzip-compressed or not.
//!
//! Parsed with quick-xml, which expands no entities but the five predefined ones and
//! character references (a "billion laughs" document yields nothing, and costs nothing). The
//! protocol's limits are enforced and what lies beyond them is counted: at most 50,000 URLs
//! and 50 MB uncompressed per file. Pure: bytes in, URL strings out (not resolved or scoped).

use std::io::Read;

use super::lossy_utf8::LossyUtf8;
use super::xml_refs::reference_char;
use quick_xml::events::Event;
use quick_xml::Reader;

/// Most URLs taken from one sitemap file (sitemaps.org).
pub const MAX_SITEMAP_URLS: usize = 50_000;
/// Most uncompressed bytes read of one sitemap file (sitemaps.org: 50 MB).
pub const MAX_SITEMAP_BYTES: usize = 50 * 1024 * 1024;
/// Longest `<loc>` kept.
const MAX_LOC: usize = 2048;

/// What one sitemap file lists.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sitemap {
    /// Page URLs (`<urlset><url><loc>` or text lines), in order.
    pub pages: Vec<String>,
    /// Further sitemaps (`<sitemapindex><sitemap><loc>`).
    pub sitemaps: Vec<String>,
    /// URLs beyond [`MAX_SITEMAP_URLS`], and files cut at [`MAX_SITEMAP_BYTES`] (1 each).
    pub over_limits: u64,
    /// The file is not a sitemap (not XML of the protocol, broken XML, or undecodable gzip);
    /// what was read before the fault is kept.
    pub invalid: bool,
}

impl Sitemap {
    fn push(&mut self, loc: &str, in_index: bool) {
        let loc = loc.trim();
        if loc.is_empty() || loc.len() > MAX_LOC {
            return;
        }
        if self.pages.len() + self.sitemaps.len() >= MAX_SITEMAP_URLS {
            self.over_limits += 1;
        } else if in_index {
            self.sitemaps.push(loc.to_string());
        } else {
            self.pages.push(loc.to_string());
        }
    }
}

/// Reads a sitemap body (content coding already removed).
pub fn parse_sitemap(body: &[u8]) -> Sitemap {
    let mut out = Sitemap::default();
    if body.starts_with(&[0x1f, 0x8b]) {
        // A .xml.gz file served as application/gzip (not as Content-Encoding): read as it is
        // decompressed, so that a bomb costs no buffer of its decompressed size.
        parse_gzip(body, &mut out);
        return out;
    }
    let bytes = if body.len() > MAX_SITEMAP_BYTES {
        out.over_limits += 1;
        &body[..MAX_SITEMAP_BYTES]
    } else {
        body
    };
    // Read as text a piece at a time, not made text whole first: a body that is not text (a
    // server that answers every path with one large file) was copied, each byte that is not
    // UTF-8 growing to three.
    let start = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::io::BufReader::new(LossyUtf8::new(start.trim_ascii_start()));
    if start.trim_ascii_start().starts_with(b"<") {
        read_xml(Reader::from_reader(text), &mut out);
    } else {
        read_lines_from(text, &mut out);
    }
    out
}

/// A gzip sitemap, decompressed as it is read, up to [`MAX_SITEMAP_BYTES`].
fn parse_gzip(body: &[u8], out: &mut Sitemap) {
    let mut decoded = Faults {
        inner: flate2::read::MultiGzDecoder::new(body).take(MAX_SITEMAP_BYTES as u64),
        failed: false,
    };
    // Its first bytes tell XML from the text format (one URL per line).
    let mut head = Vec::new();
    let _ = (&mut decoded).take(HEAD_BYTES).read_to_end(&mut head);
    let text = String::from_utf8_lossy(&head);
    let start = text.trim_start_matches('\u{feff}').trim_start();
    let reader = std::io::BufReader::new(LossyUtf8::new(head.as_slice().chain(&mut decoded)));
    if start.starts_with('<') {
        read_xml(Reader::from_reader(reader), out);
    } else {
        read_lines_from(reader, out);
    }
    if decoded.failed {
        out.invalid = true;
    }
    // Cut at the limit: there is more past it.
    if decoded.inner.limit() == 0 {
        let mut more = [0u8; 1];
        if matches!(decoded.inner.into_inner().read(&mut more), Ok(1)) {
            out.over_limits += 1;
        }
    }
}

/// How much of a gzip sitemap is looked at to tell its format.
const HEAD_BYTES: u64 = 64 * 1024;

/// A reader that notes a fault and then reads as ended (what came before it is kept).
struct Faults<R> {
    inner: R,
    failed: bool,
}

impl<R: Read> Read for Faults<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.failed {
            return Ok(0);
        }
        self.inner.read(buf).or_else(|_| {
            self.failed = true;
            Ok(0)
        })
    }
}

/// [`read_lines`] as the text is read, a line at a time: a line longer than a URL that trawl
/// keeps ends the file as invalid (a file of zeros is one endless line).
fn read_lines_from<R: std::io::BufRead>(mut reader: R, out: &mut Sitemap) {
    use std::io::BufRead;
    let longest = MAX_LOC as u64 + 2;
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader).take(longest).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(n) if n as u64 == longest && !line.ends_with(b"\n") => {
                out.invalid = true;
                return;
            }
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        read_lines(text.trim_start_matches('\u{feff}'), out);
        if out.invalid {
            return;
        }
    }
}

/// The protocol's text format: one URL per line. A first line that is no URL (nor a `#`
/// comment) says the file is no sitemap (a server's catch-all page or file), and ends it; past
/// the first URL, a line that is none is passed over, not the end of the list.
fn read_lines(text: &str, out: &mut Sitemap) {
    for line in text.lines() {
        let line = line.trim();
        let scheme = line.split_once("://").map(|(s, _)| s);
        if scheme.is_some_and(|s| s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"))
        {
            out.push(line, false);
        } else if !line.is_empty()
            && !line.starts_with('#')
            && out.pages.is_empty()
            && out.over_limits == 0
        {
            out.invalid = true;
            break;
        }
    }
}

fn read_xml<R: std::io::BufRead>(mut reader: Reader<R>, out: &mut Sitemap) {
    let mut buf = Vec::new();
    let mut in_loc = false;
    let mut in_index = false;
    let mut saw_root = false;
    let mut loc = String::new();
    // A `<loc>` holding an entity that is not expanded (one a DTD declares) names no URL
    // trawl can know: it is dropped, not requested without the entity's text.
    let mut loc_broken = false;
    // Elements open, and how many were when the current `<url>`/`<sitemap>` entry opened: its
    // own `<loc>` is a child of it. An extension's (`<image:image><image:loc>`, which Yoast
    // SEO writes for each image of each page) names no page.
    let mut depth = 0usize;
    let mut entry_depth = None;
    loop {
        buf.clear();
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => {
                depth += 1;
                match e.local_name().as_ref() {
                    "sitemapindex" => {
                        in_index = true;
                        saw_root = true;
                    }
                    "urlset" => saw_root = true,
                    "url" | "sitemap" => entry_depth = Some(depth),
                    "loc" if entry_depth.is_some_and(|d| d + 1 == depth) => {
                        in_loc = true;
                        loc_broken = false;
                        loc.clear();
                    }
                    _ => {}
                }
            }
            Ok(Event::End(e)) => {
                if in_loc && e.local_name().as_ref() == "loc" {
                    in_loc = false;
                    if !loc_broken {
                        out.push(&loc, in_index);
                    }
                }
                if entry_depth == Some(depth) {
                    entry_depth = None;
                }
                depth = depth.saturating_sub(1);
            }
            Ok(Event::Text(t)) if in_loc => {
                if loc.len() <= MAX_LOC {
                    loc.push_str(&t.xml10_content());
                }
            }
            Ok(Event::CData(c)) if in_loc => {
                if loc.len() <= MAX_LOC {
                    loc.push_str(&c.into_inner());
                }
            }
            Ok(Event::GeneralRef(r)) if in_loc => {
                // Other entities are never expanded (a DTD cannot make the file grow).
                match reference_char(&r) {
                    Some(c) if loc.len() <= MAX_LOC => loc.push(c),
                    Some(_) => {}
                    None => {
                        out.invalid = true;
                        loc_broken = true;
                    }
                }
            }
            Ok(Event::Eof) => break,
            Err(_) => {
                out.invalid = true;
                break;
            }
            Ok(_) => {}
        }
    }
    if !saw_root {
        out.invalid = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn urlset_index_text_and_gzip() {
        let set = br#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://a.org/x?a=1&amp;b=2</loc><lastmod>2026-01-01</lastmod></url>
  <url><loc><![CDATA[https://a.org/y]]></loc></url>
</urlset>"#;
        let s = parse_sitemap(set);
        assert_eq!(s.pages, ["https://a.org/x?a=1&b=2", "https://a.org/y"]);
        assert!(!s.invalid);
        let index = br#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://a.org/s1.xml.gz</loc></sitemap></sitemapindex>"#;
        assert_eq!(parse_sitemap(index).sitemaps, ["https://a.org/s1.xml.gz"]);
        let text = b"https://a.org/1\nhttps://a.org/2\n";
        assert_eq!(parse_sitemap(text).pages.len(), 2);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(set).unwrap();
        assert_eq!(parse_sitemap(&gz.finish().unwrap()).pages.len(), 2);
    }

    #[test]
    fn only_an_entrys_own_loc_names_a_page() {
        // As Yoast SEO writes a WordPress site's sitemap: each page with its images.
        let yoast = br#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
  xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
 <url><loc>https://a.org/post/</loc><lastmod>2026-01-01T00:00:00+00:00</lastmod>
  <image:image><image:loc>https://a.org/wp-content/uploads/a.jpg</image:loc></image:image>
  <xhtml:link rel="alternate" hreflang="de" href="https://a.org/de/post/"/>
 </url>
 <url><image:image><image:loc>https://a.org/b.jpg</image:loc></image:image>
  <loc>https://a.org/page/</loc></url>
</urlset>"#;
        let s = parse_sitemap(yoast);
        assert_eq!(s.pages, ["https://a.org/post/", "https://a.org/page/"]);
        assert!(!s.invalid);
        // The protocol's namespace under a prefix.
        let prefixed = br#"<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>https://a.org/p</sm:loc></sm:url></sm:urlset>"#;
        assert_eq!(parse_sitemap(prefixed).pages, ["https://a.org/p"]);
    }

    #[test]
    fn hostile_inputs_are_bounded() {
        let laughs = br#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<urlset><url><loc>https://a.org/&lol3;</loc></url></urlset>"#;
        let s = parse_sitemap(laughs);
        assert!(s.invalid);
        // No URL is made up of what is left without the entity (it was `https://a.org/`).
        assert!(s.pages.is_empty(), "{:?}", s.pages);
        let declared =
            br#"<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY shop "https://a.org/shop">]>
<urlset><url><loc>&shop;/item-1.html</loc></url><url><loc>https://a.org/2</loc></url></urlset>"#;
        assert_eq!(parse_sitemap(declared).pages, ["https://a.org/2"]);
        let mut big = String::from("<urlset>");
        for i in 0..(MAX_SITEMAP_URLS + 10) {
            big.push_str(&format!("<url><loc>https://a.org/{i}</loc></url>"));
        }
        big.push_str("</urlset>");
        let s = parse_sitemap(big.as_bytes());
        assert_eq!((s.pages.len(), s.over_limits), (MAX_SITEMAP_URLS, 10));
        let junk: Vec<u8> = (0..10_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        assert!(parse_sitemap(&junk).invalid);
        assert!(parse_sitemap(b"<html><body>not a sitemap</body></html>").invalid);
        assert!(parse_sitemap(&[0x1f, 0x8b, 1, 2, 3]).invalid);
    }

    #[test]
    fn a_sitemap_is_read_from_its_bytes_bom_and_stray_bytes_included() {
        // A byte-order mark and blank lines before the declaration; a byte that is not UTF-8
        // in a comment and in a URL (read as U+FFFD, as before).
        let mut set = b"\xEF\xBB\xBF\r\n  <?xml version=\"1.0\"?>\n<!-- caf\xE9 -->".to_vec();
        set.extend_from_slice(b"<urlset><url><loc>https://a.org/1</loc></url>");
        set.extend_from_slice(b"<url><loc>https://a.org/\xE9</loc></url></urlset>");
        let s = parse_sitemap(&set);
        assert_eq!(s.pages, ["https://a.org/1", "https://a.org/\u{FFFD}"]);
        assert!(!s.invalid);
        let text = b"\xEF\xBB\xBF https://a.org/1\r\nhttps://a.org/2\r\n";
        assert_eq!(
            parse_sitemap(text).pages,
            ["https://a.org/1", "https://a.org/2"]
        );
        // A comment, an odd line past the first URL and an upper-case scheme lose nothing
        // (before, the first odd line ended the list).
        let text = b"# generated\nhttps://a.org/1\nnot a url\nHTTPS://a.org/2\n";
        let s = parse_sitemap(text);
        assert_eq!(s.pages, ["https://a.org/1", "HTTPS://a.org/2"]);
        assert!(!s.invalid);
        // A large answer that is no text (a server's catch-all file) ends at its first line.
        let mut file = b"%PDF-1.4\n".to_vec();
        file.extend((0..3_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
        let s = parse_sitemap(&file);
        assert!(s.invalid && s.pages.is_empty());
    }

    fn gzip(parts: &[&[u8]]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for part in parts {
            gz.write_all(part).unwrap();
        }
        gz.finish().unwrap()
    }

    #[test]
    fn a_gzip_sitemap_is_read_as_it_is_decompressed_up_to_the_limit() {
        // Past 50 MB decompressed: cut there and counted once, the URLs before kept. (Gzip
        // members one after another decompress as one file: 51 copies of 1 MiB of spaces.)
        let mut bomb = gzip(&[b"<urlset><url><loc>https://a.org/1</loc></url>"]);
        let spaces = gzip(&[&[b' '; 1 << 20]]);
        for _ in 0..MAX_SITEMAP_BYTES / (1 << 20) + 1 {
            bomb.extend_from_slice(&spaces);
        }
        let s = parse_sitemap(&bomb);
        assert_eq!((s.pages.len(), s.over_limits), (1, 1));
        // Exactly at the limit: not cut.
        let mut full = gzip(&[b"<urlset><url><loc>https://a.org/1</loc></url></urlset>"]);
        let whole_mibs = (MAX_SITEMAP_BYTES - 54) >> 20;
        for _ in 0..whole_mibs {
            full.extend_from_slice(&spaces);
        }
        full.extend(gzip(&[&vec![
            b' ';
            MAX_SITEMAP_BYTES - 54 - (whole_mibs << 20)
        ]]));
        assert_eq!(parse_sitemap(&full).over_limits, 0);
        // A stream cut short: what came before the fault is kept, and the file is invalid.
        let whole = gzip(&[
            b"\xef\xbb\xbf  <urlset><url><loc>https://a.org/1</loc></url>",
            &[b' '; 200_000],
            b"<url><loc>https://a.org/2</loc></url></urlset>",
        ]);
        let s = parse_sitemap(&whole[..whole.len() - 12]);
        assert!(s.invalid);
        assert_eq!(s.pages.first().map(String::as_str), Some("https://a.org/1"));
        assert_eq!(parse_sitemap(&whole).pages.len(), 2);
        // The text format, gzipped (a byte-order mark first), read a line at a time; an
        // endless line (a file of zeros) is invalid.
        let text = gzip(&[b"\xef\xbb\xbfhttps://a.org/x\r\nhttps://a.org/y\n"]);
        assert_eq!(
            parse_sitemap(&text).pages,
            ["https://a.org/x", "https://a.org/y"]
        );
        let zeros = parse_sitemap(&gzip(&[&[0u8; 100_000]]));
        assert!(zeros.invalid && zeros.pages.is_empty());
        // An empty file lists nothing and is not called invalid.
        let empty = parse_sitemap(&gzip(&[]));
        assert!(empty.pages.is_empty() && !empty.invalid);
    }
}
