//! The HTTP message inside a `request` or `response` record, as derivatives describe it: start
//! line, header fields, head length and entity, and a response's document decoded to text.

use std::borrow::Cow;

use crate::extract::{decode_html, decode_text};
use crate::http_message::media_type::{charset, effective_content_type, is_html, media_type};
use crate::http_message::sniff;
use crate::http_message::{decode_content, parse_response_head};

/// Most header fields described per message.
const MAX_FIELDS: usize = 256;

/// A recorded HTTP/1.x message.
#[derive(Debug)]
pub struct HttpMessage<'a> {
    /// The three parts of the start line: method, path, version for a request; version,
    /// status, reason for a response.
    pub start: [String; 3],
    /// Header fields in order (values lossily decoded).
    pub fields: Vec<(String, String)>,
    /// Bytes of the head, the blank line included.
    pub head_len: usize,
    /// The entity: body with transfer coding removed (content coding kept).
    pub entity: Cow<'a, [u8]>,
    /// Body bytes as recorded (transfer coding kept).
    pub body_len: usize,
}

impl HttpMessage<'_> {
    /// The first value of a field, matched case-insensitively.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a list-valued field joined into one list, as RFC 9110 section 5.3
    /// combines repeated fields (`Content-Encoding: gzip` twice is `gzip, gzip`).
    pub fn field_list(&self, name: &str) -> Option<String> {
        let values: Vec<&str> = self
            .fields
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
    }

    /// The Content-Type the message is read by (the last valid one of several, as the crawl
    /// and browsers read it: [`effective_content_type`]).
    pub fn content_type(&self) -> Option<Cow<'_, str>> {
        let values: Vec<&str> = self
            .fields
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str())
            .collect();
        effective_content_type(&values)
    }

    /// The media type of Content-Type, lower-cased.
    pub fn media_type(&self) -> Option<String> {
        self.content_type()
            .map(|v| media_type(&v))
            .filter(|m| !m.is_empty())
    }
}

/// Parses a recorded message; `None` when the head is not HTTP/1.x.
pub fn parse_message(block: &[u8], response: bool) -> Option<HttpMessage<'_>> {
    // The head ends at its first blank line: CRLF CRLF, or bare LFs as some servers send and
    // warcio reads (such a head gave no metadata and no text).
    let crlf = block
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| (at, at + 4));
    let lf = block
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|at| (at, at + 2));
    let (head_end, end) = match (crlf, lf) {
        (Some(c), Some(l)) => c.min(l),
        (c, l) => c.or(l)?,
    };
    let head = String::from_utf8_lossy(&block[..head_end]);
    let mut lines = head.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let first = lines.next()?;
    let mut parts = first.splitn(3, ' ');
    let start = [
        parts.next()?.to_string(),
        parts.next().unwrap_or("").to_string(),
        parts.next().unwrap_or("").to_string(),
    ];
    let version = if response { &start[0] } else { &start[2] };
    if !version.starts_with("HTTP/") {
        return None;
    }
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in lines {
        // A line that starts with white space continues the field before it (obs-fold, RFC
        // 9112 5.2: one space in its place), as warcio reads it.
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = fields.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
            continue;
        }
        if fields.len() == MAX_FIELDS {
            break;
        }
        if let Some((n, v)) = line.split_once(':') {
            fields.push((n.trim().to_string(), v.trim().to_string()));
        }
    }
    let entity = if response {
        parse_response_head(block)
            .map(|h| h.payload(block))
            .unwrap_or(Cow::Borrowed(&block[end..]))
    } else {
        Cow::Borrowed(&block[end..])
    };
    Some(HttpMessage {
        start,
        fields,
        head_len: end,
        entity,
        body_len: block.len() - end,
    })
}

/// What kind of text a response holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// HTML (or XHTML): tokenized.
    Html,
    /// text/plain: taken as it is.
    Plain,
}

/// The response's document decoded to text (content coding removed, at most `max_decoded`
/// bytes decoded, charset from BOM, header or meta), when it is HTML or plain text.
pub fn decoded_text(message: &HttpMessage, max_decoded: usize) -> Option<(TextKind, String)> {
    let declared = message.media_type().filter(|m| !sniff::is_unknown(Some(m)));
    let kind_of = |media: &str| {
        if is_html(media) {
            Some(TextKind::Html)
        } else if media == "text/plain" {
            Some(TextKind::Plain)
        } else {
            None
        }
    };
    let declared_kind = match &declared {
        Some(media) => Some(kind_of(media)?),
        None => None,
    };
    // Of a cut or broken stream, the text of the part that decodes.
    let decoded = match decode_content(
        message.field_list("content-encoding").as_deref(),
        &message.entity,
        max_decoded,
    ) {
        Ok(decoded) => decoded.data,
        Err(e) => std::borrow::Cow::Owned(e.decoded_part()?),
    };
    // No usable Content-Type: what the payload's first bytes identify, as the crawl judged it.
    let kind = match declared_kind {
        Some(kind) => kind,
        None if decoded.is_empty() => return None,
        None => kind_of(sniff::identify(&decoded))?,
    };
    let header_charset = message.content_type().and_then(|v| charset(&v));
    let text = match kind {
        TextKind::Html => decode_html(&decoded, header_charset.as_deref()).into_owned(),
        TextKind::Plain => decode_text(&decoded, header_charset.as_deref()).into_owned(),
    };
    Some((kind, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_parts_and_dechunked_entity() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=iso-8859-1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n<p>\xe9\r\n0\r\n\r\n";
        let m = parse_message(raw, true).unwrap();
        assert_eq!(m.start, ["HTTP/1.1", "200", "OK"].map(String::from));
        assert_eq!(&*m.entity, b"<p>\xe9");
        let (kind, text) = decoded_text(&m, 1 << 20).unwrap();
        assert_eq!((kind, text.as_str()), (TextKind::Html, "<p>é"));
    }

    #[test]
    fn a_response_without_a_type_is_read_as_its_bytes_identify() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\n <p>hello</p>\n";
        let m = parse_message(raw, true).unwrap();
        let (kind, text) = decoded_text(&m, 1 << 20).unwrap();
        assert_eq!((kind, text.as_str()), (TextKind::Html, " <p>hello</p>\n"));
        let raw = b"HTTP/1.1 200 OK\r\n\r\n\x89PNG\r\n\x1a\n\0\0";
        assert!(decoded_text(&parse_message(raw, true).unwrap(), 1 << 20).is_none());
        // A declared type is not second-guessed.
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n<p>x</p>";
        assert!(decoded_text(&parse_message(raw, true).unwrap(), 1 << 20).is_none());
    }

    #[test]
    fn a_head_of_bare_line_feeds_and_a_folded_field_are_read() {
        let raw = b"HTTP/1.1 200 OK\nContent-Type: text/html\nX-Long: a\n  continued: here\n\n<p>lf only</p>";
        let m = parse_message(raw, true).unwrap();
        assert_eq!(m.start, ["HTTP/1.1", "200", "OK"].map(String::from));
        assert_eq!(m.field("x-long"), Some("a continued: here"));
        assert_eq!(m.fields.len(), 2);
        let (_, text) = decoded_text(&m, 1 << 20).unwrap();
        assert_eq!(text, "<p>lf only</p>");
    }

    #[test]
    fn request_parts() {
        let m = parse_message(b"GET /a?b HTTP/1.1\r\nHost: x\r\n\r\n", false).unwrap();
        assert_eq!(m.start, ["GET", "/a?b", "HTTP/1.1"].map(String::from));
        assert_eq!(m.field("host"), Some("x"));
        assert!(parse_message(b"garbage\r\n\r\n", false).is_none());
    }
}
