//! One capture as the processor chain sees it: the recorded exchange, its response head parsed
//! once, and its payload (the body with transfer coding removed) worked out once.
//!
//! Fetch builds it from a live exchange; crash replay builds it from an archived record. Every
//! stage of the chain reads the same parsed head and payload, so no stage parses the response
//! again and a replayed capture is judged exactly as a live one.

use std::io::Write;

use crate::exchange::Exchange;
use crate::http_message::chunked::{dechunk, dechunk_into};
use crate::http_message::sniff;
use crate::http_message::ResponseHead;
use crate::spool::{Spooled, Windows};

/// Where the payload is: the body as recorded, or a de-chunked copy of it.
#[derive(Debug)]
enum Payload {
    /// `exchange.response[head.len..]`: no transfer coding.
    Body,
    /// The chunked body with its framing removed (in a spool file of its own when the
    /// response is in one).
    Dechunked(Spooled),
}

/// An exchange with its parsed head and payload.
#[derive(Debug)]
pub struct Capture {
    /// The recorded bytes.
    pub exchange: Exchange,
    /// The head of `exchange.response`.
    pub head: ResponseHead,
    payload: Payload,
    /// What the payload was identified as by its first bytes, when the head gave no usable
    /// Content-Type (`http_message::sniff`).
    identified: Option<&'static str>,
}

impl Capture {
    /// A capture of `exchange`, whose response starts with `head`.
    pub fn new(exchange: Exchange, head: ResponseHead) -> Self {
        let payload = if head.is_chunked() {
            Payload::Dechunked(dechunked(&exchange.response, head.len))
        } else {
            Payload::Body
        };
        let mut capture = Capture {
            exchange,
            head,
            payload,
            identified: None,
        };
        if capture.head.type_is_unknown() {
            capture.identified = capture.identify();
        }
        capture
    }

    /// The media type the first bytes of the decoded payload identify; `None` for an empty
    /// payload or a content coding that yields nothing.
    fn identify(&self) -> Option<&'static str> {
        let coding = self.head.header_list("content-encoding");
        sniff::identify_payload(coding.as_deref(), self.payload())
    }

    /// The media type the payload was identified as, when its head gave none usable.
    pub fn identified_type(&self) -> Option<&'static str> {
        self.identified
    }

    /// The media type of the payload, lower-case: the Content-Type's, or when that is missing
    /// or unknown, what the payload's first bytes identify.
    pub fn media_type(&self) -> Option<String> {
        match self.identified {
            Some(identified) => Some(identified.to_string()),
            None => self.head.media_type(),
        }
    }

    /// The HTTP status code.
    pub fn status(&self) -> u16 {
        self.head.status
    }

    /// The payload: the entity body with transfer coding removed and content coding kept
    /// (WARC 1.1 section 5.9); what WARC-Payload-Digest covers.
    pub fn payload(&self) -> &[u8] {
        match &self.payload {
            Payload::Body => {
                &self.exchange.response[self.head.len.min(self.exchange.response.len())..]
            }
            Payload::Dechunked(data) => data,
        }
    }

    /// [`Capture::payload`] a window at a time, for one pass over it (`Spooled::windows`): a
    /// long payload's pages are let go as the pass goes.
    pub fn payload_windows(&self) -> Windows<'_> {
        match &self.payload {
            Payload::Body => {
                let response = &self.exchange.response;
                response.windows(self.head.len.min(response.len())..response.len())
            }
            Payload::Dechunked(data) => data.windows(0..data.len()),
        }
    }

    /// Body bytes as recorded (with transfer coding), after the head.
    pub fn body_len(&self) -> usize {
        self.exchange.response.len().saturating_sub(self.head.len)
    }

    /// Lets go of the pages of a long response's spool files that reading it brought into the
    /// process (`Spooled::release_pages`); its bytes read back from the files when needed.
    pub fn release_pages(&self) {
        self.exchange.response.release_pages();
        if let Payload::Dechunked(payload) = &self.payload {
            payload.release_pages();
        }
    }

    /// True when the response was received whole.
    pub fn is_complete(&self) -> bool {
        self.exchange.truncated.is_none()
    }
}

/// The chunk data of the body of `response`, whose head is `head_len` bytes long: into a spool
/// file when the response is in one, so a long chunked body is not held in memory once more.
fn dechunked(response: &Spooled, head_len: usize) -> Spooled {
    let body = &response[head_len.min(response.len())..];
    if let Some(Ok(spool)) = response.spool_dir().map(|dir| dir.create()) {
        // Gathered before each write: a body of 1-byte chunks would otherwise make a system
        // call of each byte.
        let mut out = std::io::BufWriter::with_capacity(256 << 10, spool);
        let mut written = true;
        let mut read_to = response.release_behind(head_len.min(response.len()));
        dechunk_into(body, |at, piece| {
            written = written && out.write_all(piece).is_ok();
            read_to(at);
        });
        let spooled = written
            .then(|| out.into_inner().ok()?.finish().ok())
            .flatten();
        // This pass, and the fetcher's search for the body's end before it, read the whole
        // map: its pages are let go (`Spooled::release_pages`).
        response.release_pages();
        if let Some(payload) = spooled {
            return payload;
        }
    }
    Spooled::Memory(dechunk(body).data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_message::parse_response_head;

    fn capture(response: &[u8]) -> Capture {
        let exchange = Exchange {
            target_uri: "http://a.org/".into(),
            ip: None,
            tls: None,
            date: std::time::SystemTime::UNIX_EPOCH,
            request: Vec::new(),
            response: response.to_vec().into(),
            truncated: None,
            interim: Vec::new(),
        };
        let head = parse_response_head(response).unwrap();
        Capture::new(exchange, head)
    }

    #[test]
    fn payload_is_the_dechunked_body() {
        let c = capture(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        );
        assert_eq!(c.payload(), b"hello");
        assert_eq!(c.body_len(), 15);
        let c = capture(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!((c.payload(), c.status()), (&b"hello"[..], 200));
    }

    #[test]
    fn a_payload_without_a_usable_type_is_identified_by_its_first_bytes() {
        let c = capture(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n <p>hello</p>");
        assert_eq!(c.identified_type(), Some("text/html"));
        assert_eq!(c.media_type().as_deref(), Some("text/html"));
        let c = capture(b"HTTP/1.1 200 OK\r\nContent-Type: unknown/unknown\r\n\r\n%PDF-1.4");
        assert_eq!(c.media_type().as_deref(), Some("application/pdf"));
        // A given type is kept as it is; an empty payload is not identified.
        let c = capture(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n<p>x</p>");
        assert_eq!(
            (c.identified_type(), c.media_type().as_deref()),
            (None, Some("text/plain"))
        );
        let c = capture(b"HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n");
        assert_eq!(c.identified_type(), None);
        // Compressed: identified after the content coding is removed.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, b"<!DOCTYPE html><title>t</title>").unwrap();
        let mut response = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        response.extend(gz.finish().unwrap());
        assert_eq!(capture(&response).identified_type(), Some("text/html"));
    }
}
