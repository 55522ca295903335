//! Decodes an HTML body to text: BOM, then the Content-Type charset, then a `<meta charset>`
//! prescan of the first 1024 bytes (HTML standard section 13.2.3, `meta_prescan`), then an XML
//! declaration at its start, else UTF-8 when the bytes are UTF-8, windows-1252 when they are
//! ASCII, and otherwise the legacy encoding Firefox's detector (chardetng) finds.

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
    let declared = bom_or_header(body, header_charset)
        .or_else(|| meta_charset(&body[..body.len().min(PRESCAN_BYTES)]))
        .or_else(|| xml_declaration(body));
    decode_as(body, declared)
}

/// The encoding a byte-order mark at the start of `body` names, else its Content-Type's
/// charset: the first two steps of every kind of document here.
fn bom_or_header(body: &[u8], header_charset: Option<&str>) -> Option<&'static Encoding> {
    Encoding::for_bom(body)
        .map(|(e, _)| e)
        .or_else(|| header_charset.and_then(|l| Encoding::for_label(l.trim().as_bytes())))
}

/// The encoding an XML declaration at the very start names (`<?xml version="1.0"
/// encoding="Shift_JIS"?>`, which XHTML pages served as text/html carry): Chromium reads such
/// a page in it.
fn xml_declaration(body: &[u8]) -> Option<&'static Encoding> {
    let decl = body.strip_prefix(b"<?xml")?;
    let decl = &decl[..decl.iter().take(200).position(|&b| b == b'>')?];
    let at = decl.windows(8).position(|w| w == b"encoding")? + 8;
    let rest = decl[at..]
        .trim_ascii_start()
        .strip_prefix(b"=")?
        .trim_ascii_start();
    let quote = *rest.first().filter(|q| matches!(q, b'"' | b'\''))?;
    let label = &rest[1..];
    let label = &label[..label.iter().position(|&b| b == quote)?];
    // A UTF-16 label in a declaration the bytes show to be ASCII-compatible means UTF-8, as
    // for a `<meta charset>` (HTML standard).
    Encoding::for_label(label).map(Encoding::output_encoding)
}

/// Decodes a stylesheet as CSS Syntax 3 (section 3.2) says: BOM, then the Content-Type
/// charset, then an `@charset "...";` rule at its very start, else as an undeclared page is
/// (the referring document's encoding, CSS's next step, is not known to a stylesheet fetched
/// on its own; a legacy sheet that declares nothing is then detected, not read as UTF-8).
/// Returns the encoding too: its `url()` queries are written in it, as Chromium sends them.
pub fn decode_stylesheet<'a>(
    body: &'a [u8],
    header_charset: Option<&str>,
) -> (Cow<'a, str>, &'static Encoding) {
    let declared = bom_or_header(body, header_charset).or_else(|| {
        let rest = body.strip_prefix(b"@charset \"")?;
        let label = &rest[..rest.iter().take(64).position(|&b| b == b'"')?];
        rest[label.len()..].starts_with(b"\";").then_some(())?;
        // UTF-16 named in an ASCII-compatible sheet is UTF-8 (CSS Syntax 3).
        Encoding::for_label(label).map(|e| e.output_encoding())
    });
    decode_as(body, declared)
}

/// An XML document (a feed, a sitemap) as UTF-8 bytes for the XML reader, which reads UTF-8
/// only: in its BOM's encoding, else its Content-Type charset (RFC 7303 puts it first), else
/// its declaration's (`<?xml ... encoding="windows-1251"?>`, XML 1.0 section 4.3.3), else as
/// it is (UTF-8). Borrowed when it is UTF-8 already, or gzip (a `.xml.gz` sitemap, read as it
/// is decompressed).
pub fn xml_as_utf8<'a>(body: &'a [u8], header_charset: Option<&str>) -> Cow<'a, [u8]> {
    if body.starts_with(&[0x1f, 0x8b]) {
        return Cow::Borrowed(body);
    }
    let encoding =
        bom_or_header(body, header_charset).or_else(|| xml_declaration(body.trim_ascii_start()));
    match encoding {
        Some(e) if e != encoding_rs::UTF_8 => match e.decode(body).0 {
            Cow::Owned(text) => Cow::Owned(text.into_bytes()),
            Cow::Borrowed(_) => Cow::Borrowed(body),
        },
        _ => Cow::Borrowed(body),
    }
}

/// Decodes plain text: BOM, then the Content-Type charset, else as an undeclared HTML page.
pub fn decode_text<'a>(body: &'a [u8], header_charset: Option<&str>) -> Cow<'a, str> {
    let declared = bom_or_header(body, header_charset);
    decode_as(body, declared).0
}

/// Decodes `body` in the `declared` encoding, or when there is none as UTF-8 (valid UTF-8
/// beyond ASCII), windows-1252 (ASCII) or the encoding [`undeclared_encoding`] finds.
fn decode_as<'a>(
    body: &'a [u8],
    declared: Option<&'static Encoding>,
) -> (Cow<'a, str>, &'static Encoding) {
    let encoding = match declared {
        Some(encoding) => encoding,
        None => {
            match encoding_rs::UTF_8.decode_without_bom_handling_and_without_replacement(body) {
                // Valid UTF-8 is borrowed as it is: no copy of the page, one pass over it. An
                // ASCII page is read the same; its encoding, which the queries of its links
                // are written in (`&eacute;` in a query is `%E9`), is windows-1252, as in
                // Chromium (checked by an exploratory crawl: `q=caf%E9`).
                Some(text) if body.is_ascii() => return (text, encoding_rs::WINDOWS_1252),
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

/// How much of an undeclared page that is not UTF-8 its encoding is guessed from.
const DETECT_BYTES: usize = 64 * 1024;

/// The encoding of a document that declares none and is not UTF-8: still UTF-8 (with
/// replacement) when its UTF-8 characters beyond ASCII are more than twice the bytes that
/// are not UTF-8 (a UTF-8 page with a stray byte; in legacy bytes UTF-8 is rare and by
/// chance: Shift_JIS `画像` is a stray byte and one UTF-8 character), else what chardetng, the detector Firefox reads
/// undeclared pages with, finds: windows-1252 for a Western legacy page (as Chromium reads
/// it: `café` in a page without a charset is windows-1252 there, its link's path
/// `caf%C3%A9`, its query `%E9`), Shift_JIS, EUC-JP, GBK, Big5, EUC-KR, windows-1251 and
/// the others for theirs. Before, any UTF-8 sequence at all made the page UTF-8, and legacy
/// CJK bytes nearly always hold one by chance (Shift_JIS `の天` is `82 CC 93 56`, and `CC 93`
/// is UTF-8): such a page's text was U+FFFD and its links asked for `%EF%BF%BD`.
fn undeclared_encoding(body: &[u8]) -> &'static Encoding {
    let sample = &body[..body.len().min(DETECT_BYTES)];
    let (mut utf8, mut stray) = (0usize, 0usize);
    for chunk in sample.utf8_chunks() {
        utf8 += chunk.valid().chars().filter(|c| !c.is_ascii()).count();
        stray += chunk.invalid().len();
    }
    if utf8 > 2 * stray {
        return encoding_rs::UTF_8;
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(sample, sample.len() == body.len());
    detector.guess(None, chardetng::Utf8Detection::Deny)
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
            decode_html(b"na\xc3\xafve caf\xc3\xa9 a\xffb \xc3\xa0", None),
            "na\u{ef}ve caf\u{e9} a\u{fffd}b \u{e0}"
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
            page.extend_from_slice(b"<meta charset=\"windows-1251\"><p>caf\xe9 cr\xe8me</p>");
            page
        };
        let in_head = late(false);
        let (text, used) = decode_html_with_encoding(&in_head, None);
        assert_eq!(used, encoding_rs::WINDOWS_1251);
        assert!(text.ends_with("<p>caf\u{439} cr\u{438}me</p>"), "{text}");
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
        assert_eq!(used, encoding_rs::WINDOWS_1252);
    }

    #[test]
    fn an_xml_document_is_made_utf8_from_its_declaration_or_header() {
        let (cyrillic, _, _) = encoding_rs::WINDOWS_1251.encode("Москва");
        let feed = [
            b"<?xml version=\"1.0\" encoding=\"windows-1251\"?><rss>".as_slice(),
            &cyrillic,
        ]
        .concat();
        assert!(String::from_utf8(xml_as_utf8(&feed, None).into_owned())
            .unwrap()
            .ends_with("<rss>Москва"));
        let (koi, _, _) = encoding_rs::KOI8_R.encode("Москва");
        assert_eq!(&*xml_as_utf8(&koi, Some("koi8-r")), "Москва".as_bytes());
        let utf16: Vec<u8> = "\u{feff}<feed/>"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(&*xml_as_utf8(&utf16, None), b"<feed/>");
        assert!(matches!(xml_as_utf8(b"<urlset/>", None), Cow::Borrowed(_)));
        // A gzip body (a `.xml.gz` sitemap) is left for its reader to decompress.
        assert!(matches!(
            xml_as_utf8(b"\x1f\x8b\x08", Some("latin1")),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_stylesheet_is_read_in_its_charset_rule() {
        let (name, _, _) = encoding_rs::SHIFT_JIS.encode("画像");
        let sheet = [
            b"@charset \"Shift_JIS\";\na{background:url(/img/".as_slice(),
            &name,
            b".png)}",
        ]
        .concat();
        let (text, used) = decode_stylesheet(&sheet, None);
        assert_eq!(used, encoding_rs::SHIFT_JIS);
        assert!(text.contains("url(/img/画像.png)"), "{text}");
        // The header wins; a rule not at the very start is none.
        assert_eq!(
            decode_stylesheet(&sheet, Some("koi8-r")).1,
            encoding_rs::KOI8_R
        );
        let late = [b" ".as_slice(), &sheet].concat();
        assert_ne!(decode_stylesheet(&late, None).1, encoding_rs::SHIFT_JIS);
        assert_eq!(
            decode_stylesheet(b"@charset \"utf-16\";", None).1,
            encoding_rs::UTF_8
        );
    }

    #[test]
    fn an_undeclared_legacy_page_is_read_in_the_encoding_found() {
        // Japanese, Chinese and Russian text in their legacy encodings, none declared: UTF-8
        // sequences occur in them by chance, which made them UTF-8 before.
        let japanese = "北海道の天気は晴れです。東京都は日本の首都です。今日は良い天気ですね。";
        let chinese = "北京是中华人民共和国的首都，也是全国的政治中心和文化中心。";
        for (encoding, text) in [
            (encoding_rs::SHIFT_JIS, japanese),
            (encoding_rs::EUC_JP, japanese),
            (encoding_rs::GBK, chinese),
        ] {
            let (bytes, _, _) = encoding.encode(text);
            let page = [b"<html><body><p>".as_slice(), &bytes, b"</p></body></html>"].concat();
            let (decoded, used) = decode_html_with_encoding(&page, None);
            assert_eq!(used, encoding, "{}", encoding.name());
            assert!(decoded.contains(text), "{}: {decoded}", encoding.name());
        }
        let russian = "Москва — столица России, крупнейший город страны.";
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(russian);
        let (decoded, used) = decode_html_with_encoding(&bytes, None);
        assert_eq!(
            (decoded.as_ref(), used),
            (russian, encoding_rs::WINDOWS_1251)
        );
        // A UTF-8 page with a stray byte stays UTF-8; two legacy characters that hold a UTF-8
        // sequence by chance are not UTF-8.
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode("a{background:url(/img/画像.png)}");
        assert_ne!(decode_html_with_encoding(&sjis, None).1, encoding_rs::UTF_8);
        let mut stray = "日本語のページ、ここに一つだけ壊れた".as_bytes().to_vec();
        stray.push(0xff);
        assert_eq!(
            decode_html_with_encoding(&stray, None).1,
            encoding_rs::UTF_8
        );
        // An XML declaration at the start names the encoding.
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode("日本");
        let page = [
            b"<?xml version=\"1.0\" encoding='Shift_JIS'?><p>".as_slice(),
            &bytes,
        ]
        .concat();
        assert_eq!(
            decode_html_with_encoding(&page, None).0,
            "<?xml version=\"1.0\" encoding='Shift_JIS'?><p>日本"
        );
    }
}
