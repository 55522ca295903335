//! The kinds of fault the crawl counts: failed fetches (no usable response) and faults met
//! while reading or decoding a response that is still archived.
//!
//! One closed list, so a new kind is a compile-time change everywhere it matters. Each kind has a
//! stable snake_case name: the report, the JSON stats and the saved crawl state use it, so the
//! names must never change.

use std::fmt;

/// Declares [`FaultKind`] from one table of `Variant => "name"` entries, so the enum, its names
/// and the list of every kind cannot disagree.
macro_rules! fault_kinds {
    ($($(#[$doc:meta])* $kind:ident => $name:literal,)*) => {
        /// One kind of fault.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum FaultKind {
            $($(#[$doc])* $kind,)*
        }

        impl FaultKind {
            /// Every kind, in declaration order.
            #[cfg(test)]
            pub const ALL: &'static [FaultKind] = &[$(FaultKind::$kind,)*];

            /// The stable name used in the report, JSON stats and saved state.
            pub fn name(self) -> &'static str {
                match self {
                    $(FaultKind::$kind => $name,)*
                }
            }
        }
    };
}

fault_kinds! {
    /// The host name did not resolve.
    Dns => "dns",
    /// The name service did not answer, failed (SERVFAIL) or could not be reached: nothing
    /// was learnt about the name.
    DnsUnavailable => "dns_unavailable",
    /// Every address of the host is refused by the SSRF guard.
    BlockedAddress => "blocked_address",
    /// The `--proxy` itself could not be connected to: no fault of the site's.
    ProxyConnect => "proxy_connect",
    /// TCP connect refused.
    ConnectRefused => "connect_refused",
    /// TCP connect timed out.
    ConnectTimeout => "connect_timeout",
    /// No route to the host or network.
    ConnectUnreachable => "connect_unreachable",
    /// TCP connect (or the HTTP handshake over it) failed otherwise.
    Connect => "connect",
    /// The TLS certificate was refused.
    TlsCertificate => "tls_certificate",
    /// The TLS handshake failed otherwise.
    TlsHandshake => "tls_handshake",
    /// No response head within the timeout.
    Timeout => "timeout",
    /// The status line is not valid.
    InvalidStatusLine => "invalid_status_line",
    /// The peer does not speak HTTP/1.x.
    NotHttp => "not_http",
    /// Content-Length is not a number, or two disagree.
    InvalidContentLength => "invalid_content_length",
    /// Transfer-Encoding cannot be used to frame the body.
    InvalidTransferEncoding => "invalid_transfer_encoding",
    /// The response head is over the size or field-count limit.
    HeaderTooLarge => "header_too_large",
    /// A header field is malformed.
    InvalidHeader => "invalid_header",
    /// Any other violation of HTTP/1.x framing.
    Protocol => "protocol",
    /// No request could be built for the URL.
    InvalidUrl => "invalid_url",
    /// The connection was reset before the head was complete.
    Reset => "reset",
    /// The connection was closed before the head was complete.
    Closed => "closed",
    /// The whole fetch hit `--fetch-timeout` while reading the body (archived as truncated).
    FetchTimeout => "fetch_timeout",
    /// The body stalled longer than `--timeout` (archived as truncated).
    BodyTimeout => "body_timeout",
    /// The body ended before its framing said (archived as truncated).
    BodyIncomplete => "body_incomplete",
    /// The connection was reset mid-body (archived as truncated).
    BodyReset => "body_reset",
    /// The chunked framing of the body is invalid (archived as truncated).
    BadChunked => "bad_chunked",
    /// The TLS layer failed mid-body: a record that does not decrypt, a fatal alert
    /// (archived as truncated).
    BodyTls => "body_tls",
    /// Reading the body failed otherwise (archived as truncated).
    BodyError => "body_error",
    /// Decoding stopped at `--max-decoded-size` (archived; links from the decoded part).
    DecodedSizeCapped => "decoded_size_capped",
    /// The Content-Encoding could not be decoded (archived; no links).
    InvalidContentEncoding => "invalid_content_encoding",
    /// More links than `--max-links-per-page` (archived; the rest dropped).
    LinksCapped => "links_capped",
    /// The page took far longer to tokenize than its length explains, such as a tag of
    /// countless attributes (archived; links from the part read before).
    ExtractionTimeCapped => "extraction_time_capped",
    /// A long body's spool file could not be read back (a disk failure; `spool.rs`).
    SpoolFile => "spool_file",
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
