//! Why a fetch failed, grouped into the kinds the report counts.

use std::error::Error as _;
use std::io;

/// A failed fetch: no usable HTTP response head was received.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The host name did not resolve.
    #[error("DNS: {0}")]
    Dns(String),
    /// Every address of the host is refused by the SSRF guard.
    #[error("blocked: {0}")]
    Blocked(String),
    /// TCP connect failed or timed out; `kind` says how.
    #[error("connect ({kind}): {detail}")]
    Connect {
        /// `connect_refused`, `connect_timeout`, `connect_unreachable` or `connect`.
        kind: &'static str,
        /// Details.
        detail: String,
    },
    /// TLS handshake failed; `kind` is `tls_certificate` or `tls_handshake`.
    #[error("TLS ({kind}): {detail}")]
    Tls {
        /// Which part failed.
        kind: &'static str,
        /// Details.
        detail: String,
    },
    /// No response head within the timeout.
    #[error("timeout: {0}")]
    Timeout(&'static str),
    /// The peer sent something that is not valid HTTP/1.x; `kind` says what.
    #[error("protocol ({kind}): {detail}")]
    Protocol {
        /// e.g. `invalid_status_line`, `invalid_content_length`, `header_too_large`.
        kind: &'static str,
        /// Details.
        detail: String,
    },
    /// The connection closed or reset before the response head was complete.
    #[error("disconnected ({kind}): {detail}")]
    Disconnected {
        /// `reset` or `closed`.
        kind: &'static str,
        /// Details.
        detail: String,
    },
}

impl FetchError {
    /// A short stable name for the report.
    pub fn kind(&self) -> &'static str {
        match self {
            FetchError::Dns(_) => "dns",
            FetchError::Blocked(_) => "blocked_address",
            FetchError::Connect { kind, .. }
            | FetchError::Tls { kind, .. }
            | FetchError::Protocol { kind, .. }
            | FetchError::Disconnected { kind, .. } => kind,
            FetchError::Timeout(_) => "timeout",
        }
    }

    /// True when trying again later may help.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            FetchError::Connect { .. } | FetchError::Timeout(_) | FetchError::Disconnected { .. }
        )
    }

    /// True when the host cannot be reached at all on this origin (for the https→http
    /// fallback of bare-host seeds).
    pub fn is_unreachable_origin(&self) -> bool {
        matches!(self, FetchError::Connect { .. } | FetchError::Tls { .. })
    }

    /// Classifies a connect error.
    pub fn connect(e: &io::Error, detail: String) -> Self {
        let kind = match e.kind() {
            io::ErrorKind::ConnectionRefused => "connect_refused",
            io::ErrorKind::TimedOut => "connect_timeout",
            io::ErrorKind::HostUnreachable | io::ErrorKind::NetworkUnreachable => {
                "connect_unreachable"
            }
            _ => "connect",
        };
        FetchError::Connect { kind, detail }
    }

    /// Classifies a TLS handshake error.
    pub fn tls(e: &io::Error) -> Self {
        let certificate = e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            .is_some_and(|r| {
                matches!(
                    r,
                    rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented
                )
            });
        FetchError::Tls {
            kind: if certificate {
                "tls_certificate"
            } else {
                "tls_handshake"
            },
            detail: e.to_string(),
        }
    }

    /// Classifies a hyper error seen before the response head was complete.
    pub fn from_hyper(e: &hyper::Error) -> Self {
        let detail = e.to_string();
        if e.is_parse() || e.is_parse_status() {
            let text = detail.to_ascii_lowercase();
            let kind = if e.is_parse_status() || text.contains("status") {
                "invalid_status_line"
            } else if text.contains("version") {
                "not_http"
            } else if text.contains("content-length") {
                "invalid_content_length"
            } else if text.contains("transfer-encoding") {
                "invalid_transfer_encoding"
            } else if text.contains("too large") {
                "header_too_large"
            } else if text.contains("header") {
                "invalid_header"
            } else {
                "protocol"
            };
            return FetchError::Protocol { kind, detail };
        }
        if e.is_timeout() {
            return FetchError::Timeout("response head");
        }
        let reset = io_kind(e) == Some(io::ErrorKind::ConnectionReset);
        FetchError::Disconnected {
            kind: if reset { "reset" } else { "closed" },
            detail,
        }
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

/// Names a failure while reading a body (after the head arrived); such responses are archived
/// as truncated and the fault is counted under this name.
pub fn body_fault(e: &hyper::Error) -> &'static str {
    if e.is_incomplete_message() {
        return "body_incomplete";
    }
    match io_kind(e) {
        Some(io::ErrorKind::ConnectionReset) => "body_reset",
        Some(io::ErrorKind::UnexpectedEof) => "body_incomplete",
        Some(io::ErrorKind::InvalidData) | Some(io::ErrorKind::InvalidInput) => "bad_chunked",
        _ if e.to_string().to_ascii_lowercase().contains("chunk") => "bad_chunked",
        _ => "body_error",
    }
}
