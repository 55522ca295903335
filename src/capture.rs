//! One capture as the processor chain sees it: the recorded exchange, its response head parsed
//! once, and its payload (the body with transfer coding removed) worked out once.
//!
//! Fetch builds it from a live exchange; crash replay builds it from an archived record. Every
//! stage of the chain reads the same parsed head and payload, so no stage parses the response
//! again and a replayed capture is judged exactly as a live one.

use crate::exchange::Exchange;
use crate::http_message::ResponseHead;

/// Where the payload is: the body as recorded, or a de-chunked copy of it.
#[derive(Debug)]
enum Payload {
    /// `exchange.response[head.len..]`: no transfer coding.
    Body,
    /// The chunked body with its framing removed.
    Dechunked(Vec<u8>),
}

/// An exchange with its parsed head and payload.
#[derive(Debug)]
pub struct Capture {
    /// The recorded bytes.
    pub exchange: Exchange,
    /// The head of `exchange.response`.
    pub head: ResponseHead,
    payload: Payload,
}

impl Capture {
    /// A capture of `exchange`, whose response starts with `head`.
    pub fn new(exchange: Exchange, head: ResponseHead) -> Self {
        let payload = if head.is_chunked() {
            Payload::Dechunked(head.payload(&exchange.response).into_owned())
        } else {
            Payload::Body
        };
        Capture {
            exchange,
            head,
            payload,
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

    /// Body bytes as recorded (with transfer coding), after the head.
    pub fn body_len(&self) -> usize {
        self.exchange.response.len().saturating_sub(self.head.len)
    }

    /// True when the response was received whole.
    pub fn is_complete(&self) -> bool {
        self.exchange.truncated.is_none()
    }
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
            response: response.to_vec(),
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
}
