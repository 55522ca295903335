//! The canonical form of a URL, the key of the seen set.
//!
//! The `url` crate already lower-cases scheme and host, converts IDNA hosts to ASCII, removes
//! the default port and resolves dot segments. On top of that we drop the fragment and
//! normalize percent-encoding (RFC 3986 section 6.2.2: upper-case hex digits, decode
//! unreserved characters), and write a `%` that starts no escape as `%25`, as wget and the
//! SURT form pywb looks captures up by do (a browser sends it bare, which nginx and Apache
//! answer with 400: Boost's `operator%.html` is fetched only so). The characters RFC 3986
//! allows nowhere in a path or query that the WHATWG parser leaves bare (`|`, `^`, `[`, `]`,
//! `{`, `}`, `` ` ``, `\` in a query) are escaped too, as wget escapes most of them: Tomcat
//! answers 400 to a request target holding one, and a WARC-Target-URI must be a URI. A server
//! decodes either spelling to the same bytes, and pywb's SURT keys write both alike. We
//! deliberately do not reorder query parameters or strip
//! "session ids" from it: both change which resource a server returns. (The seen set does not
//! count session ids: `session_ids.rs`.)

use std::borrow::Cow;

use url::Url;

/// Hard ceiling on URL length (memory safety); the crawl's own, lower limit is
/// `--max-url-length`, applied when links are admitted so that they are counted.
pub const MAX_URL_LEN: usize = 16 * 1024;

/// Returns the canonical form of an http(s) URL, or `None` for other schemes, URLs without a
/// host, and URLs longer than [`MAX_URL_LEN`].
pub fn canonicalize(url: &Url) -> Option<Url> {
    into_canonical(url.clone())
}

/// `href` joined to `base` with its escapes as written (no fragment, no credentials): the
/// spelling a server that redirects to another spelling of the same URL (`%c3%a9` for
/// `%C3%A9`, `%7E` for `~`) wants requested. `None` for what [`resolve_link`] refuses too.
pub fn resolve_as_spelled(base: &Url, href: &str) -> Option<Url> {
    let mut out = join_in(base, href, encoding_rs::UTF_8)?;
    out.set_fragment(None);
    let _ = out.set_username("");
    let _ = out.set_password(None);
    (out.as_str().len() <= MAX_URL_LEN).then_some(out)
}

/// [`canonicalize`] of a URL the caller no longer needs (no copy is made).
fn into_canonical(mut out: Url) -> Option<Url> {
    if !matches!(out.scheme(), "http" | "https") || out.host_str().is_none_or(str::is_empty) {
        return None;
    }
    out.set_fragment(None);
    if let Cow::Owned(path) = normalize_percent(out.path()) {
        out.set_path(&path);
    }
    if let Some(query) = out.query() {
        if let Cow::Owned(query) = normalize_percent(query) {
            out.set_query(Some(&query));
        }
    }
    if out.username() != "" || out.password().is_some() {
        // Credentials in links are almost never intended for a crawler; never send them.
        let _ = out.set_username("");
        let _ = out.set_password(None);
    }
    (out.as_str().len() <= MAX_URL_LEN).then_some(out)
}

/// Resolves an `href`-like attribute value against `base` and canonicalizes it.
pub fn resolve_link(base: &Url, href: &str) -> Option<Url> {
    resolve_link_in(base, href, encoding_rs::UTF_8)
}

/// [`resolve_link`] for an href in a document written in `encoding`: the href's query is
/// percent-encoded in that encoding, as Chromium sends it (WHATWG URL, "encoding override"; a
/// character it cannot write becomes an HTML character reference); its path is UTF-8 whatever
/// the document's encoding. A server that reads `?q=` in Shift_JIS or windows-1251 answers the
/// query the page meant only in that form. UTF-8 and UTF-16 documents, and hrefs in ASCII,
/// resolve exactly as [`resolve_link`] does.
pub fn resolve_link_in(
    base: &Url,
    href: &str,
    encoding: &'static encoding_rs::Encoding,
) -> Option<Url> {
    if href.len() > MAX_URL_LEN {
        return None;
    }
    into_canonical(join_in(base, href, encoding)?)
}

/// `href` joined to `base` as a document in `encoding` joins it (see [`resolve_link_in`]),
/// not canonicalized: also the document's base URL from its `<base href>`, which may be as long
/// as the page makes it. `None` for an empty href and for a relative one whose result would be
/// over [`MAX_URL_LEN`] because `base` is (a page's `<base href>` of megabytes would otherwise
/// be copied into each of its relative links, only for each to be dropped as too long).
pub fn join_in(base: &Url, href: &str, encoding: &'static encoding_rs::Encoding) -> Option<Url> {
    let href = trim_href(href);
    if href.is_empty() {
        return None;
    }
    if base.as_str().len() > MAX_URL_LEN && uses_base_path(base, href) {
        return None;
    }
    let utf8 = [
        encoding_rs::UTF_8,
        encoding_rs::UTF_16LE,
        encoding_rs::UTF_16BE,
    ];
    if href.is_ascii() || utf8.contains(&encoding) {
        return base.join(href).ok();
    }
    let encode = query_encoder(move |text| Cow::Owned(encode_query(encoding, text)));
    Url::options()
        .base_url(Some(base))
        .encoding_override(Some(&encode))
        .parse(href)
        .ok()
}

/// `href` without the leading and trailing C0 controls and spaces the URL parser strips; other
/// white space (a no-break space, U+3000) is part of the URL, as a browser requests it.
pub fn trim_href(href: &str) -> &str {
    href.trim_matches(|c: char| c <= ' ')
}

/// Whether `href` (trimmed) takes more than `base`'s scheme and host when joined to it: false
/// for a path-absolute or scheme-relative href (`/p`, `//host/p`, `\p`) and an absolute URL
/// (`https://h/`, `mailto:x`), true for the rest (`p`, `?q`, `#f`, `http:p` on an http base).
fn uses_base_path(base: &Url, href: &str) -> bool {
    if href.starts_with(['/', '\\']) {
        return false;
    }
    let scheme_end = href
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .filter(|&i| {
            i > 0 && href.as_bytes()[0].is_ascii_alphabetic() && href[i..].starts_with(':')
        });
    match scheme_end {
        Some(i) => {
            let after = &href[i + 1..];
            href[..i].eq_ignore_ascii_case(base.scheme()) && !after.starts_with(['/', '\\'])
        }
        None => true,
    }
}

/// `text` in `encoding` as a URL's query is written (WHATWG URL, "percent-encode after
/// encoding"): a character the encoding cannot write becomes `%26%23` + its code point in
/// decimal + `%3B` (an HTML character reference, escaped), as Chromium sends it.
fn encode_query(encoding: &'static encoding_rs::Encoding, text: &str) -> Vec<u8> {
    let mut encoder = encoding.new_encoder();
    let mut out = Vec::with_capacity(text.len() * 2 + 16);
    let mut rest = text;
    loop {
        let room = encoder
            .max_buffer_length_from_utf8_without_replacement(rest.len())
            .unwrap_or(rest.len() * 4 + 16);
        out.reserve(room);
        let (result, read) =
            encoder.encode_from_utf8_to_vec_without_replacement(rest, &mut out, true);
        rest = &rest[read..];
        match result {
            encoding_rs::EncoderResult::InputEmpty => return out,
            encoding_rs::EncoderResult::OutputFull => {}
            encoding_rs::EncoderResult::Unmappable(c) => {
                out.extend_from_slice(format!("%26%23{}%3B", u32::from(c)).as_bytes());
            }
        }
    }
}

/// `encode` as the url crate takes an encoding override (a closure's signature spelled out).
fn query_encoder<F: for<'a> Fn(&'a str) -> Cow<'a, [u8]>>(encode: F) -> F {
    encode
}

/// A URL's origin as it is spelled in the URL itself (`scheme://host[:port]`, the same text as
/// `url.origin().ascii_serialization()` for http(s)), without allocating; `None` when the URL
/// carries credentials, which come between the scheme and the host.
pub fn origin_prefix(url: &Url) -> Option<&str> {
    (url.username().is_empty() && url.password().is_none())
        .then(|| &url[..url::Position::AfterPort])
}

/// Why [`resolve_link`] found no URL in a non-empty href.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unresolved {
    /// The link, or the URL it resolves to, is longer than [`MAX_URL_LEN`].
    TooLong,
    /// Not an http(s) URL (mailto:, javascript:, data:, unparseable).
    NotHttp,
}

/// Why `resolve_link(base, href)` returned `None`; `None` for an empty href (a link to the
/// page itself, not a URL declined). Called only on that failure path.
pub fn unresolved(base: &Url, href: &str) -> Option<Unresolved> {
    let href = trim_href(href);
    if href.is_empty() {
        None
    } else if href.len() > MAX_URL_LEN
        || base.as_str().len() > MAX_URL_LEN && uses_base_path(base, href)
        || base
            .join(href)
            .is_ok_and(|u| u.as_str().len() > MAX_URL_LEN)
    {
        Some(Unresolved::TooLong)
    } else {
        Some(Unresolved::NotHttp)
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Bytes that [`normalize_percent`] writes as `%XX`: printable ASCII that RFC 3986 allows
/// nowhere in a path or query. (Space and controls are escaped by the WHATWG parser, and by
/// `frontier/robots_group.rs` in robots.txt rules; `#` ends the query before we see it.)
fn is_escaped(b: u8) -> bool {
    matches!(
        b,
        b'"' | b'<' | b'>' | b'[' | b'\\' | b']' | b'^' | b'`' | b'{' | b'|' | b'}'
    )
}

/// Upper-cases the hex digits of percent-escapes, decodes escaped unreserved characters,
/// escapes a `%` that starts no escape (`%25`) and the characters of [`is_escaped`] (`|` as
/// `%7C`). The result is a fixed point.
pub fn normalize_percent(s: &str) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    // A fold without an early exit, which the compiler vectorizes: as fast as `contains(&b'%')`
    // on a link's path (measured), where `any` took five times as long.
    if !bytes
        .iter()
        .fold(false, |seen, &b| seen | (b == b'%') | is_escaped(b))
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' && i + 2 < bytes.len() {
            let (h, l) = (bytes[i + 1], bytes[i + 2]);
            if let (Some(hv), Some(lv)) = (hex_value(h), hex_value(l)) {
                let decoded = hv * 16 + lv;
                if is_unreserved(decoded) {
                    out.push(decoded as char);
                } else {
                    out.push('%');
                    out.push(h.to_ascii_uppercase() as char);
                    out.push(l.to_ascii_uppercase() as char);
                }
                i += 3;
                continue;
            }
        }
        if b == b'%' || is_escaped(b) {
            // A stray '%' is escaped so that it cannot join what follows into an escape.
            out.push('%');
            out.push(char::from(HEX_DIGITS[usize::from(b >> 4)]));
            out.push(char::from(HEX_DIGITS[usize::from(b & 0xf)]));
            i += 1;
            continue;
        }
        // Safe: we only split at ASCII bytes, so multi-byte characters are copied whole.
        let ch_len = utf8_len(b);
        out.push_str(&s[i..i + ch_len]);
        i += ch_len;
    }
    if out == s {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(out)
    }
}

const HEX_DIGITS: &[u8; 16] = b"0123456789ABCDEF";

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        canonicalize(&Url::parse(s).unwrap()).unwrap().to_string()
    }

    #[test]
    fn lowercases_scheme_and_host_and_drops_default_port_and_fragment() {
        assert_eq!(
            canon("HTTP://Example.COM:80/a#frag"),
            "http://example.com/a"
        );
        assert_eq!(canon("https://example.com:443"), "https://example.com/");
        assert_eq!(
            canon("https://example.com:8443/"),
            "https://example.com:8443/"
        );
    }

    #[test]
    fn resolves_dot_segments() {
        assert_eq!(canon("http://a.org/b/c/../d/./e"), "http://a.org/b/d/e");
        assert_eq!(canon("http://a.org/../../x"), "http://a.org/x");
    }

    #[test]
    fn normalizes_percent_encoding() {
        assert_eq!(
            canon("http://a.org/%7euser/%2fx%2F"),
            "http://a.org/~user/%2Fx%2F"
        );
        assert_eq!(
            canon("http://a.org/p?q=%41%3d%3D"),
            "http://a.org/p?q=A%3D%3D"
        );
        assert_eq!(canon("http://a.org/caf%c3%a9"), "http://a.org/caf%C3%A9");
    }

    #[test]
    fn normalization_is_a_fixed_point_next_to_stray_percents() {
        // Found by the canonical_url fuzz target.
        let once = canon("http://a.org/?=%%%44e?2");
        assert_eq!(canon(&once), once);
        assert_eq!(once, "http://a.org/?=%25%25De?2");
    }

    #[test]
    fn a_percent_that_starts_no_escape_is_escaped() {
        assert_eq!(
            canon("http://a.org/yap/operator%.html"),
            "http://a.org/yap/operator%25.html"
        );
        assert_eq!(
            canon("http://a.org/p?off=50%&x=%zz%4"),
            "http://a.org/p?off=50%25&x=%25zz%254"
        );
        // Already escaped: unchanged.
        assert_eq!(canon("http://a.org/a%25b"), "http://a.org/a%25b");
        let base = Url::parse("http://a.org/doc/yap/x.html").unwrap();
        assert_eq!(
            resolve_link(&base, "operator%.html").unwrap().as_str(),
            "http://a.org/doc/yap/operator%25.html"
        );
    }

    #[test]
    fn characters_no_uri_holds_are_escaped_as_wget_escapes_them() {
        // Bare in WHATWG's serialization (a browser sends them so), refused by Tomcat.
        assert_eq!(
            canon("http://a.org/lib/a|b^c[1]{2}.html?x={1}|2&y=[a]^b`c\\d"),
            "http://a.org/lib/a%7Cb%5Ec%5B1%5D%7B2%7D.html?x=%7B1%7D%7C2&y=%5Ba%5D%5Eb%60c%5Cd"
        );
        let base = Url::parse("http://a.org/libraries/Cabal/x.html").unwrap();
        let once = resolve_link(&base, "|").unwrap();
        assert_eq!(once.as_str(), "http://a.org/libraries/Cabal/%7C");
        assert_eq!(canon(once.as_str()), once.as_str());
        // An IPv6 host keeps its brackets; escapes of these characters are kept as they are.
        assert_eq!(canon("http://[::1]:8080/a%7cb"), "http://[::1]:8080/a%7Cb");
        assert_eq!(
            normalize_percent("/plain/path?q=1"),
            Cow::Borrowed("/plain/path?q=1")
        );
    }

    #[test]
    fn unicode_and_spaces_are_encoded_and_idna_hosts_become_ascii() {
        assert_eq!(
            canon("http://Bücher.example/ä b"),
            "http://xn--bcher-kva.example/%C3%A4%20b"
        );
    }

    #[test]
    fn equivalent_spellings_share_one_canonical_form() {
        let forms = [
            "http://EXAMPLE.com/a/%62/../c?x=%7E#top",
            "http://example.com:80/a/c?x=~",
            "http://example.com/a/./c?x=%7e",
        ];
        let canon_forms: Vec<String> = forms.iter().map(|f| canon(f)).collect();
        assert!(
            canon_forms
                .iter()
                .all(|c| c == "http://example.com/a/c?x=~"),
            "{canon_forms:?}"
        );
    }

    #[test]
    fn rejects_non_http_and_overlong() {
        for bad in [
            "mailto:a@b.c",
            "javascript:alert(1)",
            "ftp://x.org/",
            "data:text/html,hi",
        ] {
            assert!(canonicalize(&Url::parse(bad).unwrap()).is_none(), "{bad}");
        }
        let long = format!("http://a.org/{}", "x".repeat(MAX_URL_LEN));
        assert!(canonicalize(&Url::parse(&long).unwrap()).is_none());
    }

    #[test]
    fn strips_credentials() {
        assert_eq!(canon("http://user:pw@a.org/"), "http://a.org/");
    }

    #[test]
    fn origin_prefix_is_the_serialized_origin() {
        for u in [
            "http://a.org/x?y#z",
            "HTTP://A.ORG:80/x",
            "https://a.org:8443",
            "http://[::1]:8080/p",
            "http://bücher.example/",
            "http://a.org./x",
            "https://127.1.0.9:443/",
        ] {
            let url = Url::parse(u).unwrap();
            assert_eq!(
                origin_prefix(&url),
                Some(url.origin().ascii_serialization().as_str()),
                "{u}"
            );
        }
        assert_eq!(
            origin_prefix(&Url::parse("http://u:p@a.org/").unwrap()),
            None
        );
    }

    #[test]
    fn a_query_is_written_in_the_document_encoding_as_browsers_send_it() {
        let base = Url::parse("http://a.org/dir/page.html").unwrap();
        let sjis = encoding_rs::SHIFT_JIS;
        // What headless Chromium requested for the same href in a Shift_JIS page: the path in
        // UTF-8, the query in Shift_JIS, the euro sign (not in Shift_JIS) as an escaped
        // character reference. Chromium sends the byte 0x7B bare ('{'); we escape it.
        assert_eq!(
            resolve_link_in(&base, "/img/日本?q=日本&e=€", sjis)
                .unwrap()
                .as_str(),
            "http://a.org/img/%E6%97%A5%E6%9C%AC?q=%93%FA%96%7B&e=%26%238364%3B"
        );
        assert_eq!(
            resolve_link_in(&base, "?q=привет#top", encoding_rs::WINDOWS_1251)
                .unwrap()
                .as_str(),
            "http://a.org/dir/page.html?q=%EF%F0%E8%E2%E5%F2"
        );
        // UTF-8 and UTF-16 pages, and ASCII hrefs, as resolve_link.
        for encoding in [encoding_rs::UTF_8, encoding_rs::UTF_16LE] {
            assert_eq!(
                resolve_link_in(&base, "?q=日本", encoding),
                resolve_link(&base, "?q=日本")
            );
        }
        assert_eq!(
            resolve_link_in(&base, " ../x?y=%7e ", sjis),
            resolve_link(&base, " ../x?y=%7e ")
        );
        assert!(resolve_link_in(&base, "mailto:日本@a.org", sjis).is_none());
    }

    #[test]
    fn resolve_link_joins_and_trims() {
        let base = Url::parse("http://a.org/dir/page.html").unwrap();
        assert_eq!(
            resolve_link(&base, "  ../x.html\n").unwrap().as_str(),
            "http://a.org/x.html"
        );
        assert_eq!(
            resolve_link(&base, "//b.org/y").unwrap().as_str(),
            "http://b.org/y"
        );
        assert!(resolve_link(&base, "").is_none());
        assert!(resolve_link(&base, "javascript:void(0)").is_none());
    }
}
