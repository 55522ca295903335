//! Parses the status line and headers of a recorded HTTP/1.x response.

use std::borrow::Cow;

use super::media_type::effective_content_type;

/// Most header fields we look at in one response; more are kept in the record but not parsed.
const MAX_PARSED_HEADERS: usize = 256;

/// Most fields of a recorded head that [`parse_response_head`] makes room for.
const MAX_RECORDED_HEADERS: usize = 65_536;

/// The parsed head of a response, pointing back into the recorded bytes by offset.
#[derive(Debug, Clone)]
pub struct ResponseHead {
    /// HTTP status code.
    pub status: u16,
    /// Length of the head including the blank line that ends it; the body starts here.
    pub len: usize,
    /// The status line says `HTTP/1.0`.
    pub http10: bool,
    /// Header fields in received order, names as received.
    pub headers: Vec<(String, Vec<u8>)>,
}

impl ResponseHead {
    /// The first value of a header, matched case-insensitively.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// True when the Content-Type gives no usable media type (missing, empty, `unknown/unknown`:
    /// [`super::sniff::is_unknown`]). It is asked of every response, so one field is read in
    /// place.
    pub fn type_is_unknown(&self) -> bool {
        self.content_type().is_none_or(|v| {
            super::sniff::is_unknown_media(super::media_type::essence_of(&v).as_bytes())
        })
    }

    /// The Content-Type the response is read by: of several fields or a comma-separated list,
    /// the last valid one, as browsers read it
    /// ([`super::media_type::effective_content_type`]); one field is borrowed as it is.
    pub fn content_type(&self) -> Option<Cow<'_, str>> {
        let mut fields = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| String::from_utf8_lossy(v));
        let first = fields.next()?;
        let rest: Vec<Cow<str>> = fields.collect();
        if rest.is_empty() {
            return match first {
                Cow::Borrowed(v) => effective_content_type(&[v]),
                Cow::Owned(v) => effective_content_type(&[&v]).map(|t| Cow::Owned(t.into_owned())),
            };
        }
        let all: Vec<&str> = std::iter::once(&*first)
            .chain(rest.iter().map(|v| &**v))
            .collect();
        effective_content_type(&all).map(|t| Cow::Owned(t.into_owned()))
    }

    /// Every value of a list-valued header (Content-Encoding, say) joined into one list, as RFC
    /// 9110 section 5.3 combines repeated fields: `Content-Encoding: gzip` twice is
    /// `gzip, gzip`, a body gzipped twice. Trimmed text (lossy for non-UTF-8 bytes).
    pub fn header_list(&self, name: &str) -> Option<String> {
        let mut values = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| String::from_utf8_lossy(v));
        let mut list = values.next()?.trim().to_string();
        for value in values {
            list.push_str(", ");
            list.push_str(value.trim());
        }
        Some(list)
    }

    /// The first value of a header as trimmed text (lossy for non-UTF-8 bytes).
    pub fn header_str(&self, name: &str) -> Option<String> {
        self.header(name)
            .map(|v| String::from_utf8_lossy(v).trim().to_string())
    }

    /// The first value of a header that holds a URL (Location, Content-Location, Link), as
    /// trimmed text: a value that is not UTF-8 (a Latin-1 `é`, say) has each byte above 0x7F
    /// percent-encoded as it is, which is the URL Chromium requests for it, where a lossy
    /// reading would ask for U+FFFD instead.
    pub fn header_url(&self, name: &str) -> Option<String> {
        self.header(name).map(url_text)
    }

    /// True when the server lets the connection take another request after this response, as
    /// far as its HTTP version says: an HTTP/1.0 response only with `Connection: keep-alive`
    /// (RFC 9112 section 9.3; a `Connection: close` on any version is hyper's to see).
    pub fn keeps_alive(&self) -> bool {
        !self.http10
            || self.headers.iter().any(|(n, v)| {
                n.eq_ignore_ascii_case("connection")
                    && v.split(|&b| b == b',')
                        .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"keep-alive"))
            })
    }

    /// The media type of Content-Type, lower-cased, without parameters (see
    /// [`super::media_type`]).
    pub fn media_type(&self) -> Option<String> {
        let media = super::media_type::media_type(&self.content_type()?);
        (!media.is_empty()).then_some(media)
    }

    /// The `charset` parameter of Content-Type, if any.
    pub fn charset(&self) -> Option<String> {
        super::media_type::charset(&self.content_type()?)
    }
}

/// A header value that holds URLs, as text for the URL parser (see
/// [`ResponseHead::header_url`]); also a seed line that is not UTF-8.
pub fn url_text(value: &[u8]) -> String {
    let text = match std::str::from_utf8(value) {
        Ok(text) => text.to_string(),
        Err(_) => {
            let mut out = String::with_capacity(value.len() * 3);
            for &b in value {
                match b.is_ascii() {
                    true => out.push(char::from(b)),
                    false => out.push_str(&format!("%{b:02X}")),
                }
            }
            out
        }
    };
    // Only C0 controls and spaces, as the URL standard strips them (and HTTP its white
    // space): a no-break or ideographic space at either end belongs to the URL.
    text.trim_matches(|c: char| c <= ' ').to_string()
}

/// Parses the head of a recorded response; `None` when the bytes hold no complete, valid head.
pub fn parse_response_head(bytes: &[u8]) -> Option<ResponseHead> {
    parse_response_head_with_limit(bytes, MAX_PARSED_HEADERS).or_else(|| {
        // A recorded head of more fields than that (another tool's WARC, whose limit was
        // higher): room for each of its lines. Before, its status and type were lost.
        let end = memchr::memmem::find(bytes, b"\r\n\r\n")?;
        let lines = memchr::memchr_iter(b'\n', &bytes[..end]).count() + 1;
        (lines > MAX_PARSED_HEADERS && lines <= MAX_RECORDED_HEADERS)
            .then(|| parse_response_head_with_limit(bytes, lines))
            .flatten()
    })
}

/// As [`parse_response_head`], with room for `max_headers` header fields (at least the
/// default), so a head that the fetcher's own limit allowed always parses.
pub fn parse_response_head_with_limit(bytes: &[u8], max_headers: usize) -> Option<ResponseHead> {
    let lenient = super::status_line::with_lenient_line(bytes);
    let bytes = lenient.as_deref().unwrap_or(bytes);
    parse_grammatical(bytes, max_headers).or_else(|| {
        // Only a head that does not parse is looked at again, for a CR that ends no line.
        let spaced = super::bare_cr::replaced(bytes)?;
        parse_grammatical(&spaced, max_headers)
    })
}

/// [`parse_response_head_with_limit`] of a head whose status line httparse reads as it is.
fn parse_grammatical(bytes: &[u8], max_headers: usize) -> Option<ResponseHead> {
    // Most heads have a few dozen fields: room for them on the stack first, and the full
    // room (8 KiB at the default limit, zeroed) only for a head with more.
    let mut few = [httparse::EMPTY_HEADER; FEW_HEADERS];
    match parse_into(bytes, &mut few) {
        Err(httparse::Error::TooManyHeaders) => {}
        parsed => return parsed.ok().flatten(),
    }
    let mut storage = vec![httparse::EMPTY_HEADER; max_headers.max(MAX_PARSED_HEADERS)];
    parse_into(bytes, &mut storage).ok().flatten()
}

/// How trawl reads a response head: leniently where a page would otherwise be lost and the
/// reading is unambiguous (the recorded bytes keep every line as received). The fetcher's hyper
/// is set the same way (`fetch/connection.rs`), so that the head it frames the body by and the
/// head trawl archives and reads agree:
/// - obs-fold is accepted and read as spaces (RFC 9112 section 5.2: a user agent must);
/// - whitespace between a field name and its colon (`Content-Type : text/html`) is accepted
///   (RFC 9112 section 5.1 makes servers and proxies reject it, not user agents);
/// - a line that is no field (no colon, a space in the name) is left out, with any line folded
///   onto it, instead of losing the whole response (GNU wget keeps such pages too);
/// - a CR that ends no line is read as a space (`bare_cr.rs`: the parser retries a head that
///   does not parse without them, and the fetcher hands hyper the head that way);
/// - a NUL still refuses the head.
pub fn response_parser() -> httparse::ParserConfig {
    let mut config = httparse::ParserConfig::default();
    config
        .allow_obsolete_multiline_headers_in_responses(true)
        .allow_spaces_after_header_name_in_responses(true)
        .ignore_invalid_headers_in_responses(true);
    config
}

/// Header fields a head is first parsed with room for.
const FEW_HEADERS: usize = 48;

/// The head in `bytes`, its fields parsed into `storage`: `Ok(None)` when incomplete or
/// without a status, an error when not a valid head or with more fields than `storage` holds.
fn parse_into<'b>(
    bytes: &'b [u8],
    storage: &mut [httparse::Header<'b>],
) -> Result<Option<ResponseHead>, httparse::Error> {
    let mut response = httparse::Response::new(storage);
    let parsed = response_parser().parse_response(&mut response, bytes)?;
    let httparse::Status::Complete(len) = parsed else {
        return Ok(None);
    };
    let headers = response
        .headers
        .iter()
        .map(|h| (h.name.to_string(), unfold(h.value)))
        .collect();
    Ok(response.code.map(|status| ResponseHead {
        status,
        len,
        http10: response.version == Some(0),
        headers,
    }))
}

/// A field value with each obs-fold (CRLF or LF followed by spaces or tabs) replaced by a space.
fn unfold(value: &[u8]) -> Vec<u8> {
    if !value.contains(&b'\n') {
        return value.to_vec();
    }
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        match value[i] {
            b'\r' | b'\n' => {
                while i < value.len() && matches!(value[i], b'\r' | b'\n' | b' ' | b'\t') {
                    i += 1;
                }
                out.push(b' ');
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Skips the 1xx interim responses (100 Continue, 103 Early Hints, ...; RFC 9110 section 15.2)
/// at the start of `bytes` and parses the final response head. Returns the length of the
/// interim part and the final head, whose offsets count from the end of the interim part.
/// 101 Switching Protocols is final. At most `max_interim` interim responses are skipped, and
/// the empty lines a server may send before a status line.
pub fn parse_final_head(
    bytes: &[u8],
    max_headers: usize,
    max_interim: usize,
) -> Option<(usize, ResponseHead)> {
    let mut offset = 0;
    for _ in 0..=max_interim {
        // Empty lines before a status line are no part of the response (httparse skips them
        // too): they are left with the interim part, so the record starts at the status line.
        offset += bytes[offset..]
            .iter()
            .take_while(|&&b| matches!(b, b'\r' | b'\n'))
            .count();
        let head = parse_response_head_with_limit(&bytes[offset..], max_headers)?;
        if !(100..200).contains(&head.status) || head.status == 101 {
            return Some((offset, head));
        }
        offset += head.len;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_in_a_field_loses_only_controls_and_spaces_at_its_ends() {
        assert_eq!(url_text(b" \t/a b\r"), "/a b");
        // A no-break space and an ideographic space are the URL's (Chromium requests them).
        assert_eq!(url_text("/t/nbsp\u{a0}".as_bytes()), "/t/nbsp\u{a0}");
        assert_eq!(url_text("\u{3000}/t".as_bytes()), "\u{3000}/t");
    }

    #[test]
    fn a_recorded_head_of_more_fields_than_the_default_room_parses() {
        let mut raw = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..300 {
            raw.extend_from_slice(format!("X-F{i}: {i}\r\n").as_bytes());
        }
        raw.extend_from_slice(b"Content-Type: text/html\r\n\r\nbody");
        let head = parse_response_head(&raw).unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.media_type().as_deref(), Some("text/html"));
        assert_eq!(&raw[head.len..], b"body");
    }

    #[test]
    fn parses_status_headers_and_body_offset() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: Text/HTML; Charset=\"ISO-8859-1\"\r\nTransfer-Encoding: gzip, chunked\r\n\r\nbody";
        let head = parse_response_head(raw).unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(&raw[head.len..], b"body");
        assert_eq!(head.media_type().as_deref(), Some("text/html"));
        assert_eq!(head.charset().as_deref(), Some("ISO-8859-1"));
        assert!(head.is_chunked());
        assert_eq!(head.headers[0].0, "Content-Type");
    }

    #[test]
    fn an_http10_response_keeps_the_connection_only_when_it_says_so() {
        let keeps = |raw: &[u8]| parse_response_head(raw).unwrap().keeps_alive();
        assert!(keeps(b"HTTP/1.1 200 OK\r\n\r\n"));
        assert!(!keeps(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"));
        assert!(keeps(
            b"HTTP/1.0 200 OK\r\nConnection: Upgrade, Keep-Alive\r\n\r\n"
        ));
        assert!(!keeps(b"HTTP/1.0 200 OK\r\nConnection: close\r\n\r\n"));
    }

    #[test]
    fn obs_fold_is_unfolded_for_interpretation() {
        let raw = b"HTTP/1.1 200 OK\r\nX-A: 1\r\n  continued\r\nContent-Type: text/html;\r\n\tcharset=utf-8\r\n\r\n";
        let head = parse_response_head(raw).unwrap();
        assert_eq!(head.header_str("x-a").as_deref(), Some("1 continued"));
        assert_eq!(head.media_type().as_deref(), Some("text/html"));
        assert_eq!(head.charset().as_deref(), Some("utf-8"));
        assert_eq!(head.len, raw.len());
    }

    #[test]
    fn heads_are_read_as_browsers_read_them() {
        // Bare LF, a space before a colon, lines that are no field (left out, with what folds
        // onto them).
        let raw = b"HTTP/1.1 200 OK\nContent-Type : text/html\nno colon here\nBad Name: x\n\tfolded\nTransfer-Encoding\t: chunked\n\n0\r\n\r\n";
        let head = parse_response_head(raw).unwrap();
        let names: Vec<&str> = head.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Content-Type", "Transfer-Encoding"]);
        assert_eq!(
            head.header_str("content-type").as_deref(),
            Some("text/html")
        );
        assert_eq!(head.media_type().as_deref(), Some("text/html"));
        assert!(head.is_chunked());
        assert_eq!(
            crate::http_message::message_length(&head, raw),
            Some(raw.len())
        );
        // A NUL byte is no lenience's business: the head is refused.
        assert!(parse_response_head(b"HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n").is_none());
    }

    #[test]
    fn a_url_header_keeps_bytes_that_are_not_utf8_as_escapes() {
        let head = parse_response_head(
            b"HTTP/1.1 302 Found\r\nLocation:  /caf\xe9?q=\xe9 \r\nLink: </caf\xc3\xa9>\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            head.header_url("location").as_deref(),
            Some("/caf%E9?q=%E9")
        );
        // UTF-8 is text as it is (the URL parser percent-encodes it the same way).
        assert_eq!(head.header_url("link").as_deref(), Some("</café>"));
        assert_eq!(head.header_url("content-location"), None);
    }

    #[test]
    fn interim_responses_are_skipped() {
        let raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let (interim, head) = parse_final_head(raw, 100, 8).unwrap();
        assert!(raw[interim..].starts_with(b"HTTP/1.1 200 OK"));
        assert_eq!((head.status, &raw[interim + head.len..]), (200, &b"ok"[..]));
        assert!(parse_final_head(raw, 100, 1).is_none());
        let plain = b"HTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(parse_final_head(plain, 100, 8).unwrap().0, 0);
        let blank = b"\r\n\nHTTP/1.1 100 Continue\r\n\r\n\r\nHTTP/1.1 200 OK\r\n\r\nok";
        let (interim, head) = parse_final_head(blank, 100, 8).unwrap();
        assert!(blank[interim..].starts_with(b"HTTP/1.1 200 OK"));
        assert_eq!(
            (head.status, &blank[interim + head.len..]),
            (200, &b"ok"[..])
        );
    }

    #[test]
    fn a_head_with_more_fields_than_the_first_room_still_parses_up_to_the_limit() {
        let head_with = |n: usize| {
            let mut raw = b"HTTP/1.1 200 OK\r\n".to_vec();
            for i in 0..n {
                raw.extend_from_slice(format!("X-Field-{i}: {i}\r\n").as_bytes());
            }
            raw.extend_from_slice(b"Content-Length: 2\r\n\r\nok");
            raw
        };
        for n in [FEW_HEADERS - 1, FEW_HEADERS, 3 * FEW_HEADERS] {
            let raw = head_with(n);
            let head = parse_response_head(&raw).unwrap_or_else(|| panic!("{n} fields"));
            assert_eq!(head.headers.len(), n + 1);
            assert_eq!(head.content_length(), Some(2));
            assert_eq!(&raw[head.len..], b"ok");
        }
        // Past the given limit, no head; a recorded head gets room for each of its lines.
        assert!(parse_response_head_with_limit(&head_with(400), 300).is_none());
        assert!(parse_response_head_with_limit(&head_with(400), 500).is_some());
        assert!(parse_response_head(&head_with(MAX_PARSED_HEADERS)).is_some());
    }

    #[test]
    fn incomplete_head_is_none() {
        assert!(parse_response_head(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n").is_none());
        assert!(parse_response_head(b"garbage\r\n\r\n").is_none());
    }
}
