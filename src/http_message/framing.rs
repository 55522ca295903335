//! Where a recorded response's body ends: its transfer coding and Content-Length (RFC 9112
//! section 6), read as the fetcher's hyper reads them, and the payload they frame.

use std::borrow::Cow;

use super::head::ResponseHead;

impl ResponseHead {
    /// True when the body is sent with chunked transfer coding: chunked is its final coding
    /// (the last value of the last Transfer-Encoding field), as hyper frames it. A body whose
    /// codings do not end in chunked (`chunked, gzip`) runs to the close (RFC 9112 section
    /// 6.3) and is not de-chunked.
    pub fn is_chunked(&self) -> bool {
        let last = self
            .headers
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"));
        last.is_some_and(|(_, v)| {
            let coding = v.rsplit(|&b| b == b',').next().unwrap_or_default();
            coding.trim_ascii().eq_ignore_ascii_case(b"chunked")
        })
    }

    /// True when the response names a transfer coding that [`ResponseHead::payload`] does not
    /// remove: anything but one `chunked` (and `identity`, which is none) over all its
    /// Transfer-Encoding fields (`gzip, chunked`, `chunked, chunked`, `x-chunked`). Browsers
    /// refuse such responses; what their payload is, no two readers agree, so the records
    /// state no WARC-Payload-Digest for them (`chain/build_records.rs`).
    pub fn has_other_transfer_coding(&self) -> bool {
        let mut codings = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"))
            .flat_map(|(_, v)| v.split(|&b| b == b','))
            .map(<[u8]>::trim_ascii)
            .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case(b"identity"));
        match codings.next() {
            None => false,
            Some(first) => !first.eq_ignore_ascii_case(b"chunked") || codings.next().is_some(),
        }
    }

    /// The payload of the response whose recorded bytes are `bytes` (this head included): the
    /// body with transfer coding removed, content coding kept (WARC 1.1 section 5.9).
    pub fn payload<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let body = &bytes[self.len.min(bytes.len())..];
        if self.is_chunked() {
            Cow::Owned(super::chunked::dechunk(body).data)
        } else {
            Cow::Borrowed(body)
        }
    }

    /// Every value of every Content-Length field (a field may hold a comma-separated list),
    /// each read by [`length_value`].
    fn declared_lengths(&self) -> impl Iterator<Item = Option<usize>> + '_ {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .flat_map(|(_, v)| v.split(|&b| b == b','))
            .map(length_value)
    }

    /// True when the response has a Transfer-Encoding field.
    fn has_transfer_coding(&self) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"))
    }

    /// The body length that Content-Length declares, when every value it gives (in one field
    /// or several, RFC 9110 section 8.6) is the same number, and the body is not chunked.
    pub fn content_length(&self) -> Option<usize> {
        if self.is_chunked() {
            return None;
        }
        let mut lengths = self.declared_lengths();
        let first = lengths.next()??;
        lengths.all(|l| l == Some(first)).then_some(first)
    }

    /// True when the response declares a Content-Length of which no value is a number
    /// (`-1`, `ten`, empty) and no Transfer-Encoding frames it. hyper refuses such a head, as
    /// RFC 9112 section 6.3 says a user agent must; Chromium reads the body to the close of
    /// the connection instead, and so does trawl (`fetch/body_source.rs`).
    /// Values that are numbers and differ still refuse the head, as in Chromium and curl.
    pub fn length_is_unreadable(&self) -> bool {
        let mut lengths = self.declared_lengths().peekable();
        !self.has_transfer_coding() && lengths.peek().is_some() && lengths.all(|l| l.is_none())
    }

    /// The Content-Length of a response whose Transfer-Encoding does not frame it (`identity`,
    /// or a coding without `chunked`) and that declares one. RFC 9112 section 6.3 reads such
    /// a body to the close of the connection, and hyper does; Chromium and GNU wget read it
    /// by its Content-Length, and a server that sends it keeps the connection open, so that
    /// the fetch would otherwise wait out the read timeout for bytes that never come.
    pub fn length_beside_transfer_coding(&self) -> Option<usize> {
        self.has_transfer_coding()
            .then(|| self.content_length())
            .flatten()
    }
}

/// One Content-Length value (an element of its list) as a number: digits only, as hyper reads
/// it (`+3`, which Rust's integer parsing takes, is no number), `None` otherwise. The fetcher's
/// fault classifier reads values the same way (`fetch/error.rs`).
pub fn length_value(value: &[u8]) -> Option<usize> {
    let v = value.trim_ascii();
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

/// The length of the complete response message at the start of `bytes` (head plus body as
/// framed by Transfer-Encoding or Content-Length), or `None` when the body runs to the end of
/// the connection, is incomplete, or its framing cannot be read.
pub fn message_length(head: &ResponseHead, bytes: &[u8]) -> Option<usize> {
    message_length_as_read(head, bytes, |_| {})
}

/// [`message_length`], telling `reached` how far into `bytes` the search has read, chunk by
/// chunk, when it walks a chunked body (whose pages a long body's reader lets go as it goes).
pub fn message_length_as_read(
    head: &ResponseHead,
    bytes: &[u8],
    mut reached: impl FnMut(usize),
) -> Option<usize> {
    if head.status < 200 || head.status == 204 || head.status == 304 {
        return Some(head.len);
    }
    if head.is_chunked() {
        let body = &bytes[head.len..];
        return super::chunked::dechunk_into(body, |at, _| reached(head.len + at))
            .map(|e| head.len + e);
    }
    head.content_length()
        .map(|len| head.len.saturating_add(len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_message::parse_response_head;

    #[test]
    fn message_length_by_framing() {
        let cl = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcEXTRA";
        assert_eq!(
            message_length(&parse_response_head(cl).unwrap(), cl),
            Some(cl.len() - 5)
        );
        let ch = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\nX";
        assert_eq!(
            message_length(&parse_response_head(ch).unwrap(), ch),
            Some(ch.len() - 1)
        );
        let eof = b"HTTP/1.0 200 OK\r\n\r\nuntil close";
        assert_eq!(
            message_length(&parse_response_head(eof).unwrap(), eof),
            None
        );
        let nobody = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n";
        assert_eq!(
            message_length(&parse_response_head(nobody).unwrap(), nobody),
            Some(nobody.len())
        );
        let dup = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd";
        assert_eq!(
            message_length(&parse_response_head(dup).unwrap(), dup),
            None
        );
    }

    #[test]
    fn declared_content_length() {
        let length = |raw: &[u8]| parse_response_head(raw).unwrap().content_length();
        assert_eq!(
            length(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"),
            Some(12)
        );
        let same = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n";
        assert_eq!(length(same), Some(3));
        let conflict = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n";
        assert_eq!(length(conflict), None);
        let chunked = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert_eq!(length(chunked), None);
        assert_eq!(
            length(b"HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\n"),
            None
        );
        assert_eq!(length(b"HTTP/1.0 200 OK\r\n\r\n"), None);
        // A list of one number, as hyper reads it; a sign is no number.
        let list = b"HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\nContent-Length: 3\r\n\r\n";
        assert_eq!(length(list), Some(3));
        assert_eq!(
            length(b"HTTP/1.1 200 OK\r\nContent-Length: 3,4\r\n\r\n"),
            None
        );
        assert_eq!(
            length(b"HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\n"),
            None
        );
        // Beside a transfer coding that does not frame the body, and only there.
        let beside = |raw: &[u8]| {
            parse_response_head(raw)
                .unwrap()
                .length_beside_transfer_coding()
        };
        let identity =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 3\r\n\r\n";
        assert_eq!(beside(identity), Some(3));
        assert_eq!(beside(chunked), None);
        assert_eq!(
            beside(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"),
            None
        );
        assert_eq!(
            beside(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n"),
            None
        );
    }

    #[test]
    fn only_a_final_chunked_coding_frames_the_body() {
        let chunked = |te: &str| {
            let raw = format!("HTTP/1.1 200 OK\r\n{te}\r\n\r\n");
            parse_response_head(raw.as_bytes()).unwrap().is_chunked()
        };
        assert!(chunked("Transfer-Encoding: chunked"));
        assert!(chunked("Transfer-Encoding: gzip, Chunked "));
        assert!(chunked(
            "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked"
        ));
        assert!(!chunked("Transfer-Encoding: chunked, gzip"));
        assert!(!chunked(
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip"
        ));
        assert!(!chunked("Transfer-Encoding: chunked,"));
        assert!(!chunked("X-Transfer-Encoding: chunked"));
    }

    #[test]
    fn a_length_that_is_no_number_is_unreadable_and_the_body_runs_to_the_close() {
        let unreadable = |raw: &[u8]| parse_response_head(raw).unwrap().length_is_unreadable();
        for value in [
            "-1",
            "ten",
            "",
            " ",
            "+3",
            "3 bytes",
            "99999999999999999999999",
        ] {
            let raw = format!("HTTP/1.1 200 OK\r\nContent-Length: {value}\r\n\r\nbody");
            assert!(unreadable(raw.as_bytes()), "{value:?}");
            let head = parse_response_head(raw.as_bytes()).unwrap();
            assert_eq!(message_length(&head, raw.as_bytes()), None, "{value:?}");
        }
        let none = b"HTTP/1.1 200 OK\r\nContent-Length: x\r\nContent-Length: -1, y\r\n\r\n";
        assert!(unreadable(none));
        // A number among them, or none at all, or a transfer coding that frames the body.
        for raw in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: x\r\nContent-Length: 3\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n",
        ] {
            assert!(!unreadable(raw), "{}", String::from_utf8_lossy(raw));
        }
    }
}
