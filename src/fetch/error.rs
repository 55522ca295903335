//! Why a fetch failed, grouped into the kinds the report counts.

/// A failed fetch: no usable HTTP response was received.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The host name did not resolve.
    #[error("DNS: {0}")]
    Dns(String),
    /// TCP connect failed (refused, unreachable) or timed out.
    #[error("connect: {0}")]
    Connect(String),
    /// TLS handshake failed (bad certificate, protocol mismatch).
    #[error("TLS: {0}")]
    Tls(String),
    /// No response head within the timeout.
    #[error("timeout: {0}")]
    Timeout(&'static str),
    /// The peer sent something that is not valid HTTP/1.x.
    #[error("protocol: {0}")]
    Protocol(String),
    /// The connection closed or reset before the response head was complete.
    #[error("disconnected: {0}")]
    Disconnected(String),
}

impl FetchError {
    /// A short stable name for the report.
    pub fn kind(&self) -> &'static str {
        match self {
            FetchError::Dns(_) => "dns",
            FetchError::Connect(_) => "connect",
            FetchError::Tls(_) => "tls",
            FetchError::Timeout(_) => "timeout",
            FetchError::Protocol(_) => "protocol",
            FetchError::Disconnected(_) => "disconnected",
        }
    }

    /// True when trying again later may help.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            FetchError::Connect(_) | FetchError::Timeout(_) | FetchError::Disconnected(_)
        )
    }

    /// Classifies a hyper error seen before the response head arrived.
    pub fn from_hyper(e: &hyper::Error) -> Self {
        if e.is_parse() || e.is_parse_status() {
            FetchError::Protocol(e.to_string())
        } else if e.is_timeout() {
            FetchError::Timeout("response head")
        } else {
            FetchError::Disconnected(e.to_string())
        }
    }
}
