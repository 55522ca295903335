//! Why a fetch failed, as a [`FaultKind`] the report counts.
//!
//! Errors are classified by type, never by the text of a message: I/O errors by their
//! `io::ErrorKind` (found along the source chain), rustls errors by variant, hyper errors by
//! hyper's accessors (`is_parse_status`, `is_timeout`, `is_incomplete_message`, ...). hyper does
//! not say which part of a response head it could not parse, so that part is found by parsing
//! the recorded bytes again with httparse, whose errors are typed.

use std::error::Error as _;
use std::io;

use crate::fault::FaultKind;
use crate::http_message::framing::length_value;
use crate::http_message::response_parser;

/// The limits a response head is read under.
#[derive(Debug, Clone, Copy)]
pub struct HeadLimits {
    /// Largest head in bytes.
    pub max_bytes: usize,
    /// Most header fields.
    pub max_headers: usize,
}

/// What a connect that ran past the fetch's deadline is called ([`FetchError::Timeout`]).
pub const CONNECT_TIMEOUT: &str = "connect";

/// What a request that got not one byte back within the timeout is called
/// ([`FetchError::Timeout`]): the host took the connection but does not answer (hung, or a
/// tarpit), which says more about the host than about the URL.
pub const SILENT_TIMEOUT: &str = "no answer";

/// A failed fetch: no usable HTTP response head was received.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The host name did not resolve.
    #[error("DNS: {0}")]
    Dns(String),
    /// The name service did not answer, failed (SERVFAIL) or could not be reached: a passing
    /// fault, retried as a failed connect is.
    #[error("DNS unavailable: {0}")]
    DnsUnavailable(String),
    /// Every address of the host is refused by the SSRF guard.
    #[error("blocked: {0}")]
    Blocked(String),
    /// TCP connect failed or timed out; `kind` says how.
    #[error("connect ({kind}): {detail}")]
    Connect {
        /// One of the `Connect*` kinds.
        kind: FaultKind,
        /// Details.
        detail: String,
    },
    /// TLS handshake failed; `kind` is `TlsCertificate` or `TlsHandshake`.
    #[error("TLS ({kind}): {detail}")]
    Tls {
        /// Which part failed.
        kind: FaultKind,
        /// Details.
        detail: String,
    },
    /// No response head within the timeout.
    #[error("timeout: {0}")]
    Timeout(&'static str),
    /// The peer sent something that is not valid HTTP/1.x; `kind` says what.
    #[error("protocol ({kind}): {detail}")]
    Protocol {
        /// e.g. `InvalidStatusLine`, `InvalidContentLength`, `HeaderTooLarge`.
        kind: FaultKind,
        /// Details.
        detail: String,
    },
    /// A long body's spool file could not be read back.
    #[error("spool file: {0}")]
    Spool(String),
    /// The connection closed or reset before the response head was complete.
    #[error("disconnected ({kind}): {detail}")]
    Disconnected {
        /// `Reset` or `Closed`.
        kind: FaultKind,
        /// Details.
        detail: String,
    },
}

impl FetchError {
    /// The kind counted in the report.
    pub fn kind(&self) -> FaultKind {
        match self {
            FetchError::Dns(_) => FaultKind::Dns,
            FetchError::DnsUnavailable(_) => FaultKind::DnsUnavailable,
            FetchError::Blocked(_) => FaultKind::BlockedAddress,
            FetchError::Connect { kind, .. }
            | FetchError::Tls { kind, .. }
            | FetchError::Protocol { kind, .. }
            | FetchError::Disconnected { kind, .. } => *kind,
            FetchError::Timeout(_) => FaultKind::Timeout,
            FetchError::Spool(_) => FaultKind::SpoolFile,
        }
    }

    /// True when trying again later may help.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            FetchError::Connect { .. }
                | FetchError::DnsUnavailable(_)
                | FetchError::Timeout(_)
                | FetchError::Disconnected { .. }
                | FetchError::Spool(_)
        )
    }

    /// True when no connection to the host could be made (refused, unreachable, silent, a
    /// TLS handshake the network ended, or its name not looked up for a resolver fault): the
    /// host failed, whatever the URL.
    pub fn is_connect_failure(&self) -> bool {
        matches!(
            self,
            FetchError::Connect { .. }
                | FetchError::DnsUnavailable(_)
                | FetchError::Timeout(CONNECT_TIMEOUT)
        )
    }

    /// No response head within the timeout, after `received` bytes of it.
    pub fn head_timeout(received: usize) -> Self {
        match received {
            0 => FetchError::Timeout(SILENT_TIMEOUT),
            _ => FetchError::Timeout("response head"),
        }
    }

    /// True when the host took the connection and the request but sent nothing back before
    /// the timeout.
    pub fn is_silence(&self) -> bool {
        matches!(self, FetchError::Timeout(SILENT_TIMEOUT))
    }

    /// True when the failure came after the host answered something: the host is up.
    pub fn reached_host(&self) -> bool {
        match self {
            FetchError::Tls { .. } | FetchError::Protocol { .. } => true,
            FetchError::Disconnected { .. } => true,
            FetchError::Timeout(what) => *what != CONNECT_TIMEOUT && *what != SILENT_TIMEOUT,
            _ => false,
        }
    }

    /// True when the host cannot be reached at all on this origin (for the https→http
    /// fallback of bare-host seeds).
    pub fn is_unreachable_origin(&self) -> bool {
        matches!(self, FetchError::Connect { .. } | FetchError::Tls { .. })
    }

    /// Classifies a connect error.
    pub fn connect(e: &io::Error, detail: String) -> Self {
        let kind = match e.kind() {
            io::ErrorKind::ConnectionRefused => FaultKind::ConnectRefused,
            io::ErrorKind::TimedOut => FaultKind::ConnectTimeout,
            io::ErrorKind::HostUnreachable | io::ErrorKind::NetworkUnreachable => {
                FaultKind::ConnectUnreachable
            }
            _ => FaultKind::Connect,
        };
        FetchError::Connect { kind, detail }
    }

    /// Classifies a TLS handshake error. One that carries no TLS error (the connection was
    /// reset, closed or went silent before the server said anything in TLS) is a network
    /// fault, retried as a failed connect is: a reset during the handshake used to give the
    /// whole origin up at once. A certificate the crawl does not trust, an alert or a
    /// protocol the server does not speak are lasting, and give it up.
    pub fn tls(e: &io::Error) -> Self {
        let Some(tls) = e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        else {
            return FetchError::tls_network(e);
        };
        let kind = match tls {
            rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented => {
                FaultKind::TlsCertificate
            }
            _ => FaultKind::TlsHandshake,
        };
        let detail = match tls {
            rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType) => format!(
                "the server answered in plain HTTP, not TLS (an http:// port under an https:// \
                 URL?): {e}"
            ),
            _ => e.to_string(),
        };
        FetchError::Tls { kind, detail }
    }

    /// A TLS handshake that the network ended (see [`FetchError::tls`]), or that timed out.
    pub fn tls_network(e: &io::Error) -> Self {
        let kind = match e.kind() {
            io::ErrorKind::TimedOut => FaultKind::ConnectTimeout,
            _ => FaultKind::Connect,
        };
        FetchError::Connect {
            kind,
            detail: format!("during the TLS handshake: {e}"),
        }
    }

    /// A head hyper accepted but that the recorded bytes do not hold as a parsable head.
    pub fn unreadable_head(status: http::StatusCode) -> Self {
        FetchError::Protocol {
            kind: FaultKind::Protocol,
            detail: format!(
                "the {status} response head could not be read back from the recorded bytes"
            ),
        }
    }

    /// Classifies a hyper error seen before the response head was complete; `received` is
    /// what the connection recorded of the response so far, `limits` the head limits hyper
    /// was given.
    pub fn from_hyper(e: &hyper::Error, received: &[u8], limits: HeadLimits) -> Self {
        let detail = e.to_string();
        let protocol = |kind| FetchError::Protocol {
            kind,
            detail: detail.clone(),
        };
        if e.is_parse_status() {
            return protocol(FaultKind::InvalidStatusLine);
        }
        if e.is_parse() {
            return protocol(head_fault(received, limits));
        }
        if e.is_timeout() {
            return FetchError::Timeout("response head");
        }
        // The recorder stops reading once a head (with interim responses) outgrows the limit.
        if received.len() > limits.max_bytes {
            return protocol(FaultKind::HeaderTooLarge);
        }
        // A TLS 1.3 server that refuses the crawl (it requires a client certificate) says so
        // in an alert after the handshake, before any answer: the origin refused TLS, as a
        // handshake alert under TLS 1.2 says (no retries; a bare-host seed falls back to
        // http). It read as a closed connection, retried for half a minute.
        if let Some(rustls::Error::AlertReceived(alert)) = rustls_error_in(e) {
            let ends_only = matches!(
                alert,
                rustls::AlertDescription::CloseNotify | rustls::AlertDescription::UserCanceled
            );
            if received.is_empty() && !ends_only {
                let kind = match alert {
                    rustls::AlertDescription::CertificateRequired
                    | rustls::AlertDescription::BadCertificate
                    | rustls::AlertDescription::UnknownCA => FaultKind::TlsCertificate,
                    _ => FaultKind::TlsHandshake,
                };
                return FetchError::Tls {
                    kind,
                    detail: format!(
                        "the server ended TLS with the alert {alert:?} before answering{}",
                        match alert {
                            rustls::AlertDescription::CertificateRequired =>
                                " (it requires a client certificate)",
                            _ => "",
                        }
                    ),
                };
            }
        }
        let reset = io_kind(e) == Some(io::ErrorKind::ConnectionReset);
        FetchError::Disconnected {
            kind: if reset {
                FaultKind::Reset
            } else {
                FaultKind::Closed
            },
            detail,
        }
    }
}

/// What is wrong with a response head that hyper refused to parse, from the recorded bytes
/// (past any 1xx interim responses that parse, as hyper skipped them).
fn head_fault(received: &[u8], limits: HeadLimits) -> FaultKind {
    let mut rest = received;
    loop {
        match message_fault(rest, limits) {
            Ok(kind) => return kind,
            Err(interim) => rest = &rest[interim..],
        }
    }
}

/// [`head_fault`] of the message at the start of `received`, or `Err` with the length of a
/// complete 1xx interim head there.
fn message_fault(received: &[u8], limits: HeadLimits) -> Result<FaultKind, usize> {
    let mut storage = vec![httparse::EMPTY_HEADER; limits.max_headers];
    let mut response = httparse::Response::new(&mut storage);
    Ok(
        match response_parser().parse_response(&mut response, received) {
            Err(httparse::Error::Version) => FaultKind::NotHttp,
            Err(httparse::Error::Status) => FaultKind::InvalidStatusLine,
            Err(httparse::Error::TooManyHeaders) => FaultKind::HeaderTooLarge,
            Err(
                httparse::Error::HeaderName
                | httparse::Error::HeaderValue
                | httparse::Error::NewLine
                | httparse::Error::Token,
            ) => FaultKind::InvalidHeader,
            Ok(httparse::Status::Complete(len))
                if response
                    .code
                    .is_some_and(|c| (100..200).contains(&c) && c != 101) =>
            {
                return Err(len);
            }
            Ok(httparse::Status::Complete(_)) => framing_fault(&response),
            Ok(httparse::Status::Partial) if received.len() >= limits.max_bytes => {
                FaultKind::HeaderTooLarge
            }
            Ok(httparse::Status::Partial) => FaultKind::Protocol,
        },
    )
}

/// The framing fault of a head that parses as HTTP but that hyper still refused.
fn framing_fault(response: &httparse::Response<'_, '_>) -> FaultKind {
    let has = |name: &str| {
        response
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case(name))
    };
    let numbers: Option<Vec<usize>> = response
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("content-length"))
        .flat_map(|h| h.value.split(|&b| b == b','))
        .map(length_value)
        .collect();
    match numbers {
        None => FaultKind::InvalidContentLength,
        Some(n) if n.windows(2).any(|w| w[0] != w[1]) => FaultKind::InvalidContentLength,
        Some(_) if has("transfer-encoding") => FaultKind::InvalidTransferEncoding,
        Some(_) => FaultKind::Protocol,
    }
}

/// The io::ErrorKind behind a hyper error, if any.
pub fn io_kind(e: &hyper::Error) -> Option<io::ErrorKind> {
    let mut source = e.source();
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            return Some(io.kind());
        }
        source = s.source();
    }
    None
}

/// True when a rustls error is in `e`'s chain of sources.
fn tls_error_in(e: &hyper::Error) -> bool {
    rustls_error_in(e).is_some()
}

/// The rustls error in `e`'s causes, if any.
fn rustls_error_in(e: &hyper::Error) -> Option<&rustls::Error> {
    let mut source = e.source();
    while let Some(s) = source {
        let in_io = s
            .downcast_ref::<io::Error>()
            .and_then(io::Error::get_ref)
            .and_then(|inner| inner.downcast_ref::<rustls::Error>());
        if let Some(tls) = in_io.or_else(|| s.downcast_ref::<rustls::Error>()) {
            return Some(tls);
        }
        source = s.source();
    }
    None
}

/// Names a failure while reading a body (after the head arrived); such responses are archived
/// as truncated and the fault is counted under this kind.
pub fn body_fault(e: &hyper::Error) -> FaultKind {
    if e.is_incomplete_message() {
        return FaultKind::BodyIncomplete;
    }
    // tokio-rustls reports a record that does not decrypt, or a fatal alert, as InvalidData,
    // as hyper reports bad chunk framing: the TLS error in the chain tells them apart.
    if tls_error_in(e) {
        return FaultKind::BodyTls;
    }
    match io_kind(e) {
        Some(io::ErrorKind::ConnectionReset) => FaultKind::BodyReset,
        // A close inside a TLS record (`tls_records.rs`) is a cut body too.
        Some(io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionAborted) => {
            FaultKind::BodyIncomplete
        }
        // hyper reports bad chunk framing as an InvalidInput/InvalidData I/O error.
        Some(io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput) => FaultKind::BadChunked,
        _ => FaultKind::BodyError,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_heads_are_classified_from_their_bytes() {
        let cases: [(&[u8], FaultKind); 6] = [
            (b"SSH-2.0-OpenSSH\r\n\r\n", FaultKind::NotHttp),
            (b"HTTP/1.1 abc Bogus\r\n\r\n", FaultKind::InvalidStatusLine),
            (
                b"HTTP/1.1 200 OK\r\nX-Nul: a\0b\r\n\r\n",
                FaultKind::InvalidHeader,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
                FaultKind::InvalidContentLength,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
                FaultKind::InvalidContentLength,
            ),
            (b"HTTP/1.1 200 OK\r\nX-A: 1\r\n", FaultKind::Protocol),
        ];
        let limits = HeadLimits {
            max_bytes: 4096,
            max_headers: 4,
        };
        for (bytes, kind) in cases {
            assert_eq!(
                head_fault(bytes, limits),
                kind,
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
        let many = b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nE: 1\r\n\r\n";
        assert_eq!(head_fault(many, limits), FaultKind::HeaderTooLarge);
        let long = [&b"HTTP/1.1 200 OK\r\nA: "[..], &[b'x'; 5000]].concat();
        assert_eq!(head_fault(&long, limits), FaultKind::HeaderTooLarge);
    }
}
