//! The shared model of one captured HTTP exchange: the exact bytes sent and received.
//!
//! Produced by `fetch`, consumed by `record` (WARC records) and by the crawl loop. Nothing in
//! here is re-serialized: `request` and `response` are the bytes as they crossed the socket
//! (inside TLS), including chunk framing and original header case and order.

use std::net::IpAddr;
use std::time::SystemTime;

use crate::spool::Spooled;

/// Why a captured response is shorter than what the server meant to send.
/// The names are the WARC-Truncated values of WARC 1.1 section 5.13.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truncation {
    /// The body hit `--max-body-size`.
    Length,
    /// The fetch hit its total time limit.
    Time,
    /// The server closed or reset the connection mid-body.
    Disconnect,
}

impl Truncation {
    /// The WARC-Truncated field value.
    pub fn as_warc_value(self) -> &'static str {
        match self {
            Truncation::Length => "length",
            Truncation::Time => "time",
            Truncation::Disconnect => "disconnect",
        }
    }

    /// The reason a WARC-Truncated value names (`unspecified` and unknown values read as
    /// `Disconnect`, the reason that says least about the server).
    pub fn from_warc_value(value: &str) -> Self {
        match value.trim() {
            "length" => Truncation::Length,
            "time" => Truncation::Time,
            _ => Truncation::Disconnect,
        }
    }
}

/// The TLS session an exchange went over: what `WARC-Protocol` and `WARC-Cipher-Suite` say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlsSession {
    /// The protocol as the IIPC proposal writes it: `tls/1.3`, `tls/1.2`.
    pub protocol: &'static str,
    /// The cipher suite's IANA name, e.g. `TLS_AES_128_GCM_SHA256`.
    pub cipher_suite: &'static str,
}

/// One request/response pair as recorded on the wire.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The URL that was requested (WARC-Target-URI).
    pub target_uri: String,
    /// The peer address the bytes came from (WARC-IP-Address).
    pub ip: Option<IpAddr>,
    /// The TLS session, for an https exchange.
    pub tls: Option<TlsSession>,
    /// When the request was sent; shared by the request and response records.
    pub date: SystemTime,
    /// Request bytes exactly as sent.
    pub request: Vec<u8>,
    /// Response bytes exactly as received: status line, headers, body as transferred. This is
    /// the final response; any 1xx interim responses before it are in `interim`. A long body's
    /// are read from its spool file (`spool.rs`).
    pub response: Spooled,
    /// The 1xx interim responses (100 Continue, 103 Early Hints) received before the final
    /// response, exactly as received; usually empty.
    pub interim: Vec<u8>,
    /// Set when the response is not complete.
    pub truncated: Option<Truncation>,
}

/// One name resolution made by the crawl (`--dns-records`), as Heritrix archives it: a
/// `response` record for `dns:NAME` whose block is the lookup time and the answers in
/// zone-file form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsLookup {
    /// The name looked up (no trailing dot).
    pub name: String,
    /// When it was looked up.
    pub date: SystemTime,
    /// The name server asked, when it is known which one answered (a single one configured).
    pub server: Option<IpAddr>,
    /// The answers, one zone-file line each (`name.\tTTL\tIN\tA\taddress`).
    pub answers: Vec<String>,
}
