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

use super::dns::Dns;
use super::error::FetchError;
use super::recorder::{Recorder, SharedTape};

/// Largest response head hyper will buffer.
pub const MAX_HEAD_BYTES: usize = 256 * 1024;
/// Most header fields in one response.
pub const MAX_HEADERS: usize = 256;

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

/// Resolves, connects (trying each address in turn), does the TLS handshake for https, and
/// performs the HTTP/1.1 handshake over a recording stream.
pub async fn connect(
    url: &Url,
    dns: &Dns,
    tls: &Arc<rustls::ClientConfig>,
    connect_timeout: Duration,
) -> Result<Connection, FetchError> {
    let addrs = dns.resolve(url).await?;
    let (tcp, peer) = connect_any(&addrs, connect_timeout).await?;
    let _ = tcp.set_nodelay(true);
    let stream: Box<dyn Io> = if url.scheme() == "https" {
        let host = url
            .host_str()
            .unwrap_or("")
            .trim_start_matches('[')
            .trim_end_matches(']');
        let name = ServerName::try_from(host.to_string())
            .map_err(|e| FetchError::Tls(format!("invalid server name {host:?}: {e}")))?;
        let connector = TlsConnector::from(tls.clone());
        let tls_stream = tokio::time::timeout(connect_timeout, connector.connect(name, tcp))
            .await
            .map_err(|_| FetchError::Tls("handshake timed out".into()))?
            .map_err(|e| FetchError::Tls(e.to_string()))?;
        Box::new(tls_stream)
    } else {
        Box::new(tcp)
    };
    let tape = SharedTape::default();
    let io = TokioIo::new(Recorder::new(stream, tape.clone()));
    let (sender, conn) = Builder::new()
        .title_case_headers(true)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .handshake::<_, Empty<Bytes>>(io)
        .await
        .map_err(|e| FetchError::Connect(e.to_string()))?;
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
    let mut last = String::from("no address");
    for addr in addrs {
        match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => return Ok((s, *addr)),
            Ok(Err(e)) => last = format!("{addr}: {e}"),
            Err(_) => last = format!("{addr}: timed out after {timeout:?}"),
        }
    }
    Err(FetchError::Connect(last))
}
