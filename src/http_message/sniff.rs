//! What a payload is when its response gave no usable Content-Type: the WHATWG MIME Sniffing
//! standard's "rules for identifying an unknown MIME type" (as browsers apply them, scripts
//! allowed), over the first [`RESOURCE_HEADER`] bytes of the decoded payload.
//!
//! Signatures only, no heuristics beyond the standard's; one deviation: a UTF-8 byte-order
//! mark before HTML is skipped (the standard makes such a page text/plain; wget reads it as
//! HTML, and its links are worth having).

/// Bytes of the payload that are looked at (the standard's resource header).
pub const RESOURCE_HEADER: usize = 1445;

/// True when a response's media type (lower-case, no parameters; `None` without a
/// Content-Type) is one the standard sniffs: missing, empty, not `type/subtype`, or one of
/// the "unknown" types.
pub fn is_unknown(media_type: Option<&str>) -> bool {
    media_type.is_none_or(|m| is_unknown_media(m.as_bytes()))
}

/// [`is_unknown`] of a media type as bytes (trimmed, parameters cut), in any case.
pub fn is_unknown_media(m: &[u8]) -> bool {
    m.is_empty()
        || !m.contains(&b'/')
        || [&b"unknown/unknown"[..], b"application/unknown", b"*/*"]
            .iter()
            .any(|u| m.eq_ignore_ascii_case(u))
}

/// What a payload (transfer coding removed, content coding `content_encoding` kept) is, by its
/// first decoded bytes; `None` when nothing decodes.
pub fn identify_payload(content_encoding: Option<&str>, payload: &[u8]) -> Option<&'static str> {
    let of = |bytes: &[u8]| (!bytes.is_empty()).then(|| identify(bytes));
    match super::decode_content(content_encoding, payload, RESOURCE_HEADER) {
        Ok(decoded) => of(&decoded.data),
        Err(e) => of(&e.decoded_part()?),
    }
}

/// What the first bytes of a response's body identify, as received so far (`response` starts
/// with `head`; transfer coding included, and removed here).
pub fn identify_response(head: &super::ResponseHead, response: &[u8]) -> Option<&'static str> {
    let coding = head.header_list("content-encoding");
    identify_payload(coding.as_deref(), &head.payload(response))
}

/// The media type the first bytes of a payload identify.
pub fn identify(payload: &[u8]) -> &'static str {
    let head = &payload[..payload.len().min(RESOURCE_HEADER)];
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let text = &text[text.iter().take_while(|&&b| is_whitespace(b)).count()..];
    if HTML_TAGS.iter().any(|tag| tag_at_start(text, tag)) {
        return "text/html";
    }
    if starts_ignoring_case(text, b"<?xml") {
        return "text/xml";
    }
    if let Some(&(_, media)) = SIGNATURES.iter().find(|(sig, _)| head.starts_with(sig)) {
        return media;
    }
    if let Some(media) = container(head) {
        return media;
    }
    if [&b"\xFE\xFF"[..], b"\xFF\xFE", b"\xEF\xBB\xBF"]
        .iter()
        .any(|bom| head.starts_with(bom))
    {
        // UTF-16 or UTF-8 byte-order marks (text that is not HTML).
        return "text/plain";
    }
    if head.iter().any(|&b| is_binary(b)) {
        "application/octet-stream"
    } else {
        "text/plain"
    }
}

/// The HTML rows of the standard's table: each must be followed by a space or `>`.
const HTML_TAGS: [&[u8]; 17] = [
    b"<!DOCTYPE HTML",
    b"<HTML",
    b"<HEAD",
    b"<SCRIPT",
    b"<IFRAME",
    b"<H1",
    b"<DIV",
    b"<FONT",
    b"<TABLE",
    b"<A",
    b"<STYLE",
    b"<TITLE",
    b"<B",
    b"<BODY",
    b"<BR",
    b"<P",
    b"<!--",
];

/// Exact signatures at the payload's first byte.
const SIGNATURES: [(&[u8], &str); 16] = [
    (b"%PDF-", "application/pdf"),
    (b"%!PS-Adobe-", "application/postscript"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\x89PNG\r\n\x1A\n", "image/png"),
    (b"\xFF\xD8\xFF", "image/jpeg"),
    (b"BM", "image/bmp"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"\x00\x00\x02\x00", "image/x-icon"),
    (b"ID3", "audio/mpeg"),
    (b"OggS\x00", "application/ogg"),
    (b"\x1A\x45\xDF\xA3", "video/webm"),
    (b"\x1F\x8B\x08", "application/x-gzip"),
    (b"PK\x03\x04", "application/zip"),
    (b"Rar!\x1A\x07\x00", "application/x-rar-compressed"),
    (b"wOFF", "font/woff"),
];

/// RIFF containers (WebP, WAVE, AVI) and ISO media files (`ftyp` box: MP4).
fn container(head: &[u8]) -> Option<&'static str> {
    if head.len() >= 12 && head.starts_with(b"RIFF") {
        return match &head[8..12] {
            b"WEBP" => Some("image/webp"),
            b"WAVE" => Some("audio/wave"),
            b"AVI " => Some("video/avi"),
            _ => None,
        };
    }
    (head.len() >= 12 && &head[4..8] == b"ftyp").then_some("video/mp4")
}

fn tag_at_start(text: &[u8], tag: &[u8]) -> bool {
    starts_ignoring_case(text, tag) && matches!(text.get(tag.len()), Some(b' ' | b'>'))
}

fn starts_ignoring_case(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

/// The standard's binary data bytes.
fn is_binary(b: u8) -> bool {
    matches!(b, 0x00..=0x08 | 0x0B | 0x0E..=0x1A | 0x1C..=0x1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_by_its_first_tag_after_whitespace() {
        for page in [
            &b"<!DOCTYPE html><html>"[..],
            b"\n\t <HTML lang=en>",
            b"<p>para</p>",
            b"<!-- comment --><div>",
            b"\xEF\xBB\xBF<html>",
            b"<a href=/x>x</a>",
        ] {
            assert_eq!(
                identify(page),
                "text/html",
                "{:?}",
                String::from_utf8_lossy(page)
            );
        }
        // A tag name must end where the standard's row ends.
        assert_eq!(identify(b"<address>x</address>"), "text/plain");
        assert_eq!(identify(b"<pre>"), "text/plain");
        assert_eq!(identify(b"just text <a href=/x>x</a>"), "text/plain");
    }

    #[test]
    fn signatures_and_binary_data() {
        assert_eq!(identify(b"%PDF-1.7\n"), "application/pdf");
        assert_eq!(identify(b"\x89PNG\r\n\x1A\n\0\0"), "image/png");
        assert_eq!(identify(b"RIFF\0\0\0\0WEBPVP8 "), "image/webp");
        assert_eq!(identify(b"\0\0\0\x18ftypmp42"), "video/mp4");
        assert_eq!(identify(b"<?xml version='1.0'?><urlset>"), "text/xml");
        assert_eq!(identify(b"\xFF\xFEh\0i\0"), "text/plain");
        assert_eq!(identify(b"\xEF\xBB\xBFplain"), "text/plain");
        assert_eq!(identify(b"a\x00b"), "application/octet-stream");
        assert_eq!(identify(b"  \x00b"), "application/octet-stream");
        assert_eq!(identify(b""), "text/plain");
    }

    #[test]
    fn only_missing_or_unknown_types_are_sniffed() {
        assert!(is_unknown(None));
        assert!(is_unknown(Some("")));
        assert!(is_unknown(Some("html")));
        assert!(is_unknown(Some("unknown/unknown")));
        assert!(is_unknown(Some("*/*")));
        assert!(!is_unknown(Some("text/plain")));
        assert!(!is_unknown(Some("application/octet-stream")));
        assert!(is_unknown_media(b"Unknown/Unknown"));
        assert!(!is_unknown_media(b"Text/HTML"));
    }
}
