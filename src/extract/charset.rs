//! Decodes an HTML body to text: BOM, then the Content-Type charset, then a `<meta charset>`
//! prescan of the first 1024 bytes (HTML standard section 13.2.3), else UTF-8 with replacement.

use std::borrow::Cow;

use encoding_rs::Encoding;

/// How many bytes the meta prescan looks at, per the HTML standard.
const PRESCAN_BYTES: usize = 1024;

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
    let encoding = Encoding::for_bom(body)
        .map(|(e, _)| e)
        .or_else(|| header_charset.and_then(|l| Encoding::for_label(l.trim().as_bytes())))
        .or_else(|| prescan_meta_charset(&body[..body.len().min(PRESCAN_BYTES)]))
        .unwrap_or(encoding_rs::UTF_8);
    // Valid UTF-8 without a BOM is borrowed as it is: no copy of the page.
    let (text, used, _) = encoding.decode(body);
    (text, used)
}

/// Finds `charset=` in a `<meta>` tag in the first bytes of a document.
fn prescan_meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut from = 0;
    while let Some(pos) = find(&lower[from..], b"<meta") {
        let start = from + pos;
        let end = lower[start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(lower.len(), |p| start + p);
        let tag = &lower[start..end];
        if let Some(cs) = find(tag, b"charset") {
            let rest = &tag[cs + 7..];
            let rest = rest.trim_ascii_start();
            if let Some(rest) = rest.strip_prefix(b"=") {
                let rest = rest.trim_ascii_start();
                let rest = rest
                    .strip_prefix(b"\"")
                    .or_else(|| rest.strip_prefix(b"'"))
                    .unwrap_or(rest);
                let label_end = rest
                    .iter()
                    .position(|&b| matches!(b, b'"' | b'\'' | b';' | b' ' | b'/' | b'>'))
                    .unwrap_or(rest.len());
                if let Some(enc) = Encoding::for_label(&rest[..label_end]) {
                    // A meta claiming UTF-16 in an ASCII-compatible document means UTF-8.
                    return Some(
                        if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
                            encoding_rs::UTF_8
                        } else {
                            enc
                        },
                    );
                }
            }
        }
        from = end.max(start + 1);
        if from >= lower.len() {
            break;
        }
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
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
    fn bom_wins_and_invalid_utf8_is_replaced() {
        assert_eq!(decode_html(b"\xef\xbb\xbfok", Some("iso-8859-1")), "ok");
        assert_eq!(decode_html(b"a\xffb", None), "a\u{fffd}b");
    }
}
