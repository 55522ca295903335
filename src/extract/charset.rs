//! Decodes an HTML body to text: BOM, then the Content-Type charset, then a `<meta charset>`
//! prescan of the first 1024 bytes (HTML standard section 13.2.3, `meta_prescan`), else UTF-8, or
//! windows-1252 for a document whose bytes hold no UTF-8 beyond ASCII and are not UTF-8.

use std::borrow::Cow;

use encoding_rs::Encoding;

use super::meta_prescan::meta_charset;

/// How many bytes the meta prescan looks at, per the HTML standard.
const PRESCAN_BYTES: usize = 1024;
/// How far a page that is not UTF-8 and declared nothing in its first [`PRESCAN_BYTES`] is
/// searched for a later `<meta charset>` (a browser's parser changes the encoding when it meets
/// one in the head).
const LATE_META_BYTES: usize = 64 * 1024;

/// Decodes `body` to a string using the best-known encoding.
pub fn decode_html<'a>(body: &'a [u8], header_charset: Option<&str>) -> Cow<'a, str> {
    decode_html_with_encoding(body, header_charset).0
}

/// [`decode_html`], and the encoding it decoded with: the document's encoding, which the
/// query of a URL in the page is written in (`url_rules::resolve_link_in`).
pub fn decode_html_with_encoding<'a>(
    body: &'a [u8],
    header_charset: Option<&str>,
) -> (Cow<'a, str>, &'static Encoding) {
    let declared = Encoding::for_bom(body)
        .map(|(e, _)| e)
        .or_else(|| header_charset.and_then(|l| Encoding::for_label(l.trim().as_bytes())))
        .or_else(|| meta_charset(&body[..body.len().min(PRESCAN_BYTES)]));
    decode_as(body, declared)
}

/// Decodes plain text: BOM, then the Content-Type charset, else as an undeclared HTML page.
pub fn decode_text<'a>(body: &'a [u8], header_charset: Option<&str>) -> Cow<'a, str> {
    let declared = Encoding::for_bom(body)
        .map(|(e, _)| e)
        .or_else(|| header_charset.and_then(|l| Encoding::for_label(l.trim().as_bytes())));
    decode_as(body, declared).0
}

/// Decodes `body` in the `declared` encoding, or when there is none as UTF-8 or windows-1252.
fn decode_as<'a>(
    body: &'a [u8],
    declared: Option<&'static Encoding>,
) -> (Cow<'a, str>, &'static Encoding) {
    let encoding = match declared {
        Some(encoding) => encoding,
        None => {
            match encoding_rs::UTF_8.decode_without_bom_handling_and_without_replacement(body) {
                // Valid UTF-8 is borrowed as it is: no copy of the page, one pass over it.
                Some(text) => return (text, encoding_rs::UTF_8),
                None => late_meta_charset(body).unwrap_or_else(|| undeclared_encoding(body)),
            }
        }
    };
    let (text, used, _) = encoding.decode(body);
    (text, used)
}

/// A `<meta charset>` past the first [`PRESCAN_BYTES`], in the head (before `<body`) of the
/// first [`LATE_META_BYTES`]: a browser's parser changes to the encoding it names (checked:
/// headless Chromium read a page whose `<meta charset="windows-1251">` came after a 3,000-byte
/// comment as windows-1251). Asked only of pages that are not UTF-8.
fn late_meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(LATE_META_BYTES)];
    let end = head
        .windows(5)
        .position(|w| w.eq_ignore_ascii_case(b"<body"))
        .unwrap_or(head.len());
    (end > PRESCAN_BYTES)
        .then(|| meta_charset(&head[..end]))
        .flatten()
}

/// The encoding of a document that declares none and is not UTF-8: still UTF-8 (with
/// replacement) when it holds any multi-byte UTF-8 character (a UTF-8 page with a stray
/// byte), else windows-1252, the HTML standard's default for an undeclared document in most
/// locales and what Chromium reads an undeclared Western legacy page as (checked: `café` in a
/// page without a charset is windows-1252 there, its link's path `caf%C3%A9`, its query
/// `%E9`). Before, such a page read `caf\u{fffd}` and its links asked for `%EF%BF%BD`.
fn undeclared_encoding(body: &[u8]) -> &'static Encoding {
    match body.utf8_chunks().any(|chunk| !chunk.valid().is_ascii()) {
        true => encoding_rs::UTF_8,
        false => encoding_rs::WINDOWS_1252,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_charset_wins_over_default() {
        assert_eq!(decode_html(b"caf\xe9", Some("iso-8859-1")), "café");
    }

    #[test]
    fn meta_charset_prescan() {
        let html = b"<html><head><meta charset=\"windows-1252\"></head><body>\x93hi\x94</body>";
        assert!(decode_html(html, None).contains("\u{201c}hi\u{201d}"));
        let html = b"<meta http-equiv=Content-Type content='text/html; charset=koi8-r'>\xc1";
        assert!(decode_html(html, None).ends_with('\u{0430}'));
    }

    #[test]
    fn bom_wins_and_invalid_utf8_with_utf8_in_it_is_replaced() {
        assert_eq!(decode_html(b"\xef\xbb\xbfok", Some("iso-8859-1")), "ok");
        assert_eq!(
            decode_html(b"na\xc3\xafve a\xffb", None),
            "na\u{ef}ve a\u{fffd}b"
        );
        // A declared UTF-8 page is read as UTF-8 whatever its bytes.
        assert_eq!(decode_html(b"caf\xe9", Some("utf-8")), "caf\u{fffd}");
    }

    #[test]
    fn a_meta_charset_after_the_first_kilobyte_still_counts_in_the_head() {
        let late = |at_body: bool| {
            let mut page = b"<html><head><!-- ".to_vec();
            page.extend(std::iter::repeat_n(b'x', 3000));
            page.extend_from_slice(b" -->");
            if at_body {
                page.extend_from_slice(b"<body>");
            }
            page.extend_from_slice(b"<meta charset=\"windows-1251\"><p>\xcf\xf0\xe8</p>");
            page
        };
        let in_head = late(false);
        let (text, used) = decode_html_with_encoding(&in_head, None);
        assert_eq!(used, encoding_rs::WINDOWS_1251);
        assert!(text.ends_with("<p>\u{41f}\u{440}\u{438}</p>"), "{text}");
        // In the body it is no declaration.
        let (_, used) = decode_html_with_encoding(&late(true), None);
        assert_eq!(used, encoding_rs::WINDOWS_1252);
    }

    #[test]
    fn an_undeclared_page_that_is_not_utf8_is_windows_1252() {
        let (text, used) = decode_html_with_encoding(b"Caf\xe9 cr\xe8me \x93quoted\x94", None);
        assert_eq!(text, "Caf\u{e9} cr\u{e8}me \u{201c}quoted\u{201d}");
        assert_eq!(used, encoding_rs::WINDOWS_1252);
        assert_eq!(decode_text(b"caf\xe9", None), "caf\u{e9}");
        assert_eq!(decode_text(b"caf\xe9", Some("utf-8")), "caf\u{fffd}");
        let (text, used) = decode_html_with_encoding(b"plain ascii", None);
        assert!(matches!(text, Cow::Borrowed("plain ascii")));
        assert_eq!(used, encoding_rs::UTF_8);
    }
}
