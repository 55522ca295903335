//! The kinds of fault the crawl counts: failed fetches (no usable response) and faults met
//! while reading or decoding a response that is still archived.
//!
//! One closed list, so a new kind is a compile-time change everywhere it matters. Each kind has a
//! stable snake_case name: the report, the JSON stats and the saved crawl state use it, so the
//! names must never change.

use std::fmt;

/// One kind of fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// The host name did not resolve.
    Dns,
    /// Every address of the host is refused by the SSRF guard.
    BlockedAddress,
    /// TCP connect refused.
    ConnectRefused,
    /// TCP connect timed out.
    ConnectTimeout,
    /// No route to the host or network.
    ConnectUnreachable,
    /// TCP connect (or the HTTP handshake over it) failed otherwise.
    Connect,
    /// The TLS certificate was refused.
    TlsCertificate,
    /// The TLS handshake failed otherwise.
    TlsHandshake,
    /// No response head within the timeout.
    Timeout,
    /// The status line is not valid.
    InvalidStatusLine,
    /// The peer does not speak HTTP/1.x.
    NotHttp,
    /// Content-Length is not a number, or two disagree.
    InvalidContentLength,
    /// Transfer-Encoding cannot be used to frame the body.
    InvalidTransferEncoding,
    /// The response head is over the size or field-count limit.
    HeaderTooLarge,
    /// A header field is malformed.
    InvalidHeader,
    /// Any other violation of HTTP/1.x framing.
    Protocol,
    /// No request could be built for the URL.
    InvalidUrl,
    /// The connection was reset before the head was complete.
    Reset,
    /// The connection was closed before the head was complete.
    Closed,
    /// The whole fetch hit `--fetch-timeout` while reading the body (archived as truncated).
    FetchTimeout,
    /// The body stalled longer than `--timeout` (archived as truncated).
    BodyTimeout,
    /// The body ended before its framing said (archived as truncated).
    BodyIncomplete,
    /// The connection was reset mid-body (archived as truncated).
    BodyReset,
    /// The chunked framing of the body is invalid (archived as truncated).
    BadChunked,
    /// Reading the body failed otherwise (archived as truncated).
    BodyError,
    /// Decoding stopped at `--max-decoded-size` (archived; links from the decoded part).
    DecodedSizeCapped,
    /// The Content-Encoding could not be decoded (archived; no links).
    InvalidContentEncoding,
    /// More links than `--max-links-per-page` (archived; the rest dropped).
    LinksCapped,
}

impl FaultKind {
    /// Every kind, in declaration order.
    #[cfg(test)]
    pub const ALL: [FaultKind; 28] = {
        use FaultKind::*;
        [
            Dns,
            BlockedAddress,
            ConnectRefused,
            ConnectTimeout,
            ConnectUnreachable,
            Connect,
            TlsCertificate,
            TlsHandshake,
            Timeout,
            InvalidStatusLine,
            NotHttp,
            InvalidContentLength,
            InvalidTransferEncoding,
            HeaderTooLarge,
            InvalidHeader,
            Protocol,
            InvalidUrl,
            Reset,
            Closed,
            FetchTimeout,
            BodyTimeout,
            BodyIncomplete,
            BodyReset,
            BadChunked,
            BodyError,
            DecodedSizeCapped,
            InvalidContentEncoding,
            LinksCapped,
        ]
    };

    /// The stable name used in the report, JSON stats and saved state.
    pub fn name(self) -> &'static str {
        use FaultKind::*;
        match self {
            Dns => "dns",
            BlockedAddress => "blocked_address",
            ConnectRefused => "connect_refused",
            ConnectTimeout => "connect_timeout",
            ConnectUnreachable => "connect_unreachable",
            Connect => "connect",
            TlsCertificate => "tls_certificate",
            TlsHandshake => "tls_handshake",
            Timeout => "timeout",
            InvalidStatusLine => "invalid_status_line",
            NotHttp => "not_http",
            InvalidContentLength => "invalid_content_length",
            InvalidTransferEncoding => "invalid_transfer_encoding",
            HeaderTooLarge => "header_too_large",
            InvalidHeader => "invalid_header",
            Protocol => "protocol",
            InvalidUrl => "invalid_url",
            Reset => "reset",
            Closed => "closed",
            FetchTimeout => "fetch_timeout",
            BodyTimeout => "body_timeout",
            BodyIncomplete => "body_incomplete",
            BodyReset => "body_reset",
            BadChunked => "bad_chunked",
            BodyError => "body_error",
            DecodedSizeCapped => "decoded_size_capped",
            InvalidContentEncoding => "invalid_content_encoding",
            LinksCapped => "links_capped",
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_snake_case_and_distinct() {
        let names: std::collections::HashSet<_> = FaultKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), FaultKind::ALL.len());
        assert!(names
            .iter()
            .all(|n| n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')));
    }
}
