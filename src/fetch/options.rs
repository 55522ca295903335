//! What every fetch of a crawl is told ([`FetchOptions`]: identity, limits, trust, the way to
//! the network), and the resolver they ask for.

use std::sync::Arc;
use std::time::Duration;

use super::dns::{Dns, Families};
use super::{pins, proxy, rate_limit, tls, AddressGuard, SiteLogin};
use crate::spool::SpoolDir;

/// Limits and identity for every fetch.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// The User-Agent header.
    pub user_agent: String,
    /// `--header`: fields added to every request (Accept and Accept-Encoding replace trawl's).
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
    /// TCP connect (and TLS handshake) timeout.
    pub connect_timeout: Duration,
    /// Longest silence while waiting for the response head or the next body bytes.
    pub read_timeout: Duration,
    /// Longest time for the whole fetch; a body cut by it is archived as truncated (time).
    pub total_timeout: Duration,
    /// Largest response head (status line + headers).
    pub max_head_bytes: usize,
    /// Most header fields in a response.
    pub max_headers: usize,
    /// Which TLS certificates are accepted (`--insecure`, `--ca-certificate`).
    pub trust: tls::Trust,
    /// Which addresses may be connected to.
    pub guard: AddressGuard,
    /// Names pinned to addresses (`--resolve`).
    pub pins: Vec<pins::Pin>,
    /// `--proxy`: every connection goes through it.
    pub proxy: Option<proxy::Proxy>,
    /// `--dns-server`: resolvers asked instead of the system's.
    pub dns_servers: Vec<std::net::SocketAddr>,
    /// wget's `-4`, `-6`, `--prefer-family`: which addresses of a name are used, in which order.
    pub families: Families,
    /// wget's `--dns-timeout`: the longest a name's lookup may take.
    pub dns_timeout: Option<Duration>,
    /// `--dns-records`: note every lookup for the archive.
    pub dns_records: bool,
    /// `--http-user`, `--http-password`: the credentials, shared with the crawl loop, which
    /// names the hosts that get them.
    pub login: Option<Arc<SiteLogin>>,
    /// `--limit-rate`: the crawl's bytes per second, shared by its fetches.
    pub rate: Option<Arc<rate_limit::RateLimit>>,
    /// Where a body longer than `spool::SPOOL_AT` goes on being recorded (the output
    /// directory); `None` keeps every body in memory.
    pub spool: Option<SpoolDir>,
}

/// The resolver `options` ask for.
pub(super) fn dns_of(options: &FetchOptions) -> Dns {
    let dns = match options.dns_servers.is_empty() {
        true => Dns::from_system(options.families),
        false => Dns::from_servers(&options.dns_servers, options.families),
    };
    let dns = dns
        .with_pins(options.pins.clone())
        .with_timeout(options.dns_timeout);
    match options.dns_records {
        true => dns.recording(),
        false => dns,
    }
}
