//! One HTTP/1.1 connection to an origin, over TCP or rustls, with its byte recorder.
//!
//! The connection is owned by whichever fetch is using it; between fetches the crawl loop keeps
//! it idle for the same host (one connection per host, kept alive). hyper's connection driver
//! runs as its own task and ends when the [`Connection`] is dropped.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Empty;
use hyper::client::conn::http1::{Builder, SendRequest};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;
use url::Url;

use super::address_guard::AddressGuard;
use super::dns::Dns;
use super::error::FetchError;
use super::recorder::{Recorder, SharedTape};
use crate::fault::FaultKind;

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// A live HTTP/1.1 connection.
pub struct Connection {
    pub(super) sender: SendRequest<Empty<Bytes>>,
    pub(super) tape: SharedTape,
    /// The peer address.
    pub ip: IpAddr,
    /// `scheme://host:port` this connection talks to.
    pub origin: String,
    /// When the last exchange finished; used to expire idle connections.
    pub idle_since: Instant,
    driver: JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Closing the socket promptly matters when a body is abandoned mid-way.
        self.driver.abort();
    }
}

impl Connection {
    /// True when the connection can carry another request.
    pub fn is_reusable(&self) -> bool {
        !self.sender.is_closed() && !self.driver.is_finished()
    }
}

/// The origin key of a URL (`scheme://host:port`).
pub fn origin_key(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// What [`connect`] needs besides the URL.
pub struct Connector<'a> {
    /// The resolver.
    pub dns: &'a Dns,
    /// TLS configuration.
    pub tls: &'a Arc<rustls::ClientConfig>,
    /// The SSRF guard.
    pub guard: &'a AddressGuard,
    /// TCP connect and TLS handshake timeout.
    pub timeout: Duration,
    /// Largest response head.
    pub max_head_bytes: usize,
    /// Most header fields in a response.
    pub max_headers: usize,
}

/// Resolves, checks the addresses against the SSRF guard, connects (trying each allowed
/// address in turn), does the TLS handshake for https, and performs the HTTP/1.1 handshake
/// over a recording stream.
pub async fn connect(url: &Url, c: &Connector<'_>) -> Result<Connection, FetchError> {
    let addrs = c.dns.resolve(url).await?;
    let mut refused = None;
    let allowed: Vec<SocketAddr> = addrs
        .iter()
        .filter(|a| match c.guard.check(**a) {
            Ok(()) => true,
            Err(class) => {
                refused = Some((a.ip(), class));
                false
            }
        })
        .copied()
        .collect();
    if allowed.is_empty() {
        let (ip, class) = refused.expect("resolve returns at least one address");
        return Err(FetchError::Blocked(format!(
            "{} resolves to {ip}, a {} address (use --allow-private to crawl such addresses)",
            url.host_str().unwrap_or(""),
            class.name()
        )));
    }
    let connect_timeout = c.timeout;
    let (tcp, peer) = connect_any(&allowed, connect_timeout).await?;
    let _ = tcp.set_nodelay(true);
    let stream: Box<dyn Io> = if url.scheme() == "https" {
        let host = url
            .host_str()
            .unwrap_or("")
            .trim_start_matches('[')
            .trim_end_matches(']');
        let name = ServerName::try_from(host.to_string()).map_err(|e| FetchError::Tls {
            kind: FaultKind::TlsHandshake,
            detail: format!("invalid server name {host:?}: {e}"),
        })?;
        let connector = TlsConnector::from(c.tls.clone());
        let tls_stream = tokio::time::timeout(connect_timeout, connector.connect(name, tcp))
            .await
            .map_err(|_| FetchError::Tls {
                kind: FaultKind::TlsHandshake,
                detail: "handshake timed out".into(),
            })?
            .map_err(|e| FetchError::tls(&e))?;
        Box::new(tls_stream)
    } else {
        Box::new(tcp)
    };
    let tape = SharedTape::default();
    let io = TokioIo::new(Recorder::new(stream, tape.clone()));
    let (sender, conn) = Builder::new()
        .title_case_headers(true)
        // RFC 9112 section 5.2: accept obs-fold (unfolded to spaces when interpreted).
        .allow_obsolete_multiline_headers_in_responses(true)
        .max_buf_size(c.max_head_bytes.max(8192))
        .max_headers(c.max_headers)
        .handshake::<_, Empty<Bytes>>(io)
        .await
        .map_err(|e| FetchError::Connect {
            kind: FaultKind::Connect,
            detail: e.to_string(),
        })?;
    let driver = tokio::spawn(async move {
        // Errors surface to the request side; nothing to do with them here.
        let _ = conn.await;
    });
    Ok(Connection {
        sender,
        tape,
        ip: peer.ip(),
        origin: origin_key(url),
        idle_since: Instant::now(),
        driver,
    })
}

async fn connect_any(
    addrs: &[SocketAddr],
    timeout: Duration,
) -> Result<(TcpStream, SocketAddr), FetchError> {
    let mut last = FetchError::Connect {
        kind: FaultKind::Connect,
        detail: "no address".into(),
    };
    for addr in addrs {
        match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => return Ok((s, *addr)),
            Ok(Err(e)) => last = FetchError::connect(&e, format!("{addr}: {e}")),
            Err(_) => {
                last = FetchError::Connect {
                    kind: FaultKind::ConnectTimeout,
                    detail: format!("{addr}: timed out after {timeout:?}"),
                }
            }
        }
    }
    Err(last)
}
