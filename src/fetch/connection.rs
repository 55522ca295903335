//! One HTTP/1.1 connection to an origin, over TCP or rustls, with its byte recorder.
//!
//! The connection is owned by whichever fetch is using it; between fetches the crawl loop keeps
//! it idle for the same host (one connection per host, kept alive). While a fetch uses it,
//! hyper runs over it ([`Connection::activate`]), driven by the fetch's own task: every wait of
//! the exchange goes through [`Connection::drive`], which polls hyper's connection beside what
//! the fetch waits for (no driver task, no hand-over between tasks). While it is idle only the
//! socket is kept ([`Connection::park`]): hyper keeps a read buffer sized by the largest read
//! (up to the head cap) and a write buffer for a connection's whole life, ~39 KB per idle
//! connection, which was half of a 2,000-host crawl's memory (docs/PERFORMANCE.md). The
//! HTTP/1.1 handshake that starts hyper again on the next fetch does no I/O.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::FutureExt;
use http_body_util::Empty;
use hyper::client::conn::http1::{self, Builder, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_rustls::TlsConnector;
use url::Url;

use super::address_guard::AddressGuard;
use super::dns::Dns;
use super::error::FetchError;
use super::happy_eyeballs::connect_first;
use super::proxy::{literal_address, Proxy, ProxyKind, Tunnel};
use super::recorder::Recorder;
use super::tape::SharedTape;
use crate::exchange::TlsSession;
use crate::fault::FaultKind;

pub(super) trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The socket with its recorder, as hyper reads and writes it.
pub(super) type RecordedIo = TokioIo<Recorder<Box<dyn Io>>>;

/// hyper's side of an active connection.
type Http1 = http1::Connection<RecordedIo, Empty<Bytes>>;

/// How long parking waits for hyper to finish (it does so at its first poll after the request
/// side is dropped, with nothing left to read or write).
const PARK_WAIT: Duration = Duration::from_secs(1);

/// A live HTTP/1.1 connection.
pub struct Connection {
    state: State,
    pub(super) tape: SharedTape,
    /// The origin's address (none when a proxy resolved its name).
    pub ip: Option<IpAddr>,
    /// Requests go to an HTTP proxy in absolute form (an http URL through `--proxy http://`).
    pub absolute_form: bool,
    /// The TLS session of an https connection.
    pub tls: Option<TlsSession>,
    /// `scheme://host:port` this connection talks to.
    pub origin: String,
    /// When the last exchange finished; used to expire idle connections.
    pub idle_since: Instant,
}

enum State {
    /// Between fetches: the socket only.
    Idle(RecordedIo),
    /// During a fetch: hyper's connection, polled by [`Connection::drive`]; `ended` once it
    /// has finished (closed, failed, or done after the request side was dropped).
    Active { http: Box<Http1>, ended: bool },
    /// Taken apart (a failed handshake or park); never reused.
    Gone,
}

impl Connection {
    /// True when the connection can carry another request: while active, hyper has not closed
    /// it; while idle, the peer has sent nothing (neither a close nor stray bytes) since.
    pub fn is_reusable(&mut self) -> bool {
        match &mut self.state {
            State::Active { ended, .. } => !*ended,
            State::Idle(io) => quiet(io),
            State::Gone => false,
        }
    }

    /// Starts hyper over the socket for a fetch (an idle connection's next one, or a new
    /// connection's first) and returns its request side. No I/O: the HTTP/1.1 handshake only
    /// sets up state. Every wait of the exchange then goes through [`Connection::drive`].
    pub(super) async fn activate(
        &mut self,
        builder: &Builder,
    ) -> Result<SendRequest<Empty<Bytes>>, FetchError> {
        let State::Idle(io) = std::mem::replace(&mut self.state, State::Gone) else {
            return Err(FetchError::Connect {
                kind: FaultKind::Connect,
                detail: "connection no longer usable".into(),
            });
        };
        let (sender, http) = builder
            .handshake::<_, Empty<Bytes>>(io)
            .await
            .map_err(|e| FetchError::Connect {
                kind: FaultKind::Connect,
                detail: e.to_string(),
            })?;
        self.state = State::Active {
            http: Box::new(http),
            ended: false,
        };
        Ok(sender)
    }

    /// Waits for `fut` (a step of the exchange: the request, the next body frame) while
    /// polling hyper's connection, which reads and writes the socket for it. hyper reports its
    /// errors to the request side, so they reach `fut`; here they only end the connection.
    pub(super) async fn drive<F: Future>(&mut self, fut: F) -> F::Output {
        let mut fut = pin!(fut);
        std::future::poll_fn(|cx| {
            if let State::Active { http, ended } = &mut self.state {
                if !*ended && http.poll_without_shutdown(cx).is_ready() {
                    *ended = true;
                }
            }
            fut.as_mut().poll(cx)
        })
        .await
    }

    /// The socket of a connection whose response head hyper refused, for the fetch to read the
    /// rest of the response from by itself (`body_source.rs`); the connection is not reused.
    pub(super) fn take_refused(&mut self) -> Option<RecordedIo> {
        match std::mem::replace(&mut self.state, State::Gone) {
            State::Active { http, .. } => Some(http.into_parts().io),
            _ => None,
        }
    }

    /// True between fetches, when only the socket is kept.
    #[cfg(test)]
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Idle(_))
    }

    /// Ends hyper's part after a complete exchange (dropping its request side, `sender`) and
    /// keeps the socket alone, for the host's next fetch. `None` when hyper does not finish
    /// clean (bytes it read beyond the response, an error, or not within [`PARK_WAIT`]): the
    /// connection is closed.
    pub(super) async fn park(mut self, sender: SendRequest<Empty<Bytes>>) -> Option<Connection> {
        drop(sender);
        let State::Active { mut http, ended } = std::mem::replace(&mut self.state, State::Gone)
        else {
            return None;
        };
        if ended {
            return None;
        }
        // hyper is done at its first poll, nearly always: the timer is set up only when not.
        let mut done = std::future::poll_fn(|cx| http.poll_without_shutdown(cx));
        let finished = match (&mut done).now_or_never() {
            Some(result) => result.is_ok(),
            None => matches!(tokio::time::timeout(PARK_WAIT, done).await, Ok(Ok(()))),
        };
        if !finished {
            return None;
        }
        let parts = http.into_parts();
        if !parts.read_buf.is_empty() {
            return None;
        }
        self.state = State::Idle(parts.io);
        self.tape.release_room();
        self.idle_since = Instant::now();
        Some(self)
    }
}

/// True when nothing is waiting to be read on an idle socket: the peer has neither closed it
/// nor sent anything. Reads without waiting (a no-op waker) and without recording: what a read
/// finds ends the connection.
fn quiet(io: &mut RecordedIo) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    let mut byte = [0u8; 1];
    let mut buf = ReadBuf::new(&mut byte);
    matches!(
        io.inner_mut().poll_read_unrecorded(&mut cx, &mut buf),
        Poll::Pending
    )
}

/// The origin key of a URL (`scheme://host:port`).
pub fn origin_key(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// True when `url` has the origin `key` (an [`origin_key`]); allocates only for a URL with
/// credentials.
pub fn has_origin(url: &Url, key: &str) -> bool {
    match crate::url_rules::origin_prefix(url) {
        Some(prefix) => prefix == key,
        None => origin_key(url) == key,
    }
}

/// Longest wait for this machine's lookup of a name an HTTP proxy resolves (for the guard).
const LOCAL_LOOKUP_FOR_PROXY: Duration = Duration::from_secs(1);

/// What [`connect`] needs besides the URL.
pub struct Connector<'a> {
    /// The resolver.
    pub dns: &'a Dns,
    /// TLS configuration.
    pub tls: &'a super::tls::TlsClient,
    /// The SSRF guard.
    pub guard: &'a AddressGuard,
    /// `--proxy`.
    pub proxy: Option<&'a Proxy>,
    /// TCP connect and TLS handshake timeout.
    pub timeout: Duration,
}

/// Resolves, checks the addresses against the SSRF guard, connects (racing the allowed
/// addresses as browsers do, `happy_eyeballs.rs`, or through `--proxy`) and does the TLS
/// handshake for https, over a recording stream. The connection is returned idle;
/// [`Connection::activate`] starts HTTP on it.
pub async fn connect(url: &Url, c: &Connector<'_>) -> Result<Connection, FetchError> {
    let Some(proxy) = c.proxy else {
        let mut allowed = allowed_addresses(url, c, c.dns.resolve(url).await?)?;
        // A TLS handshake that the network ended on one address (it accepted the connection,
        // then reset it or went silent: a broken IPv6 path, one bad machine behind a name)
        // moves on to the name's other addresses, as the connect itself does, up to three.
        for tried in 1.. {
            let (tcp, peer) = connect_first(&allowed, c.timeout).await?;
            let _ = tcp.set_nodelay(true);
            match over(url, c, tcp, Some(peer.ip()), false).await {
                Err(FetchError::Connect { .. }) if allowed.len() > 1 && tried < 3 => {
                    allowed.retain(|a| *a != peer);
                }
                result => return result,
            }
        }
        unreachable!("the loop returns");
    };
    // Where the origin's address is known here, the guard applies to it: an IP literal, a
    // name resolved here for socks5://, a name this machine resolves for an HTTP proxy (so
    // that a page cannot send the proxy to `localhost`), within a second: where only the
    // proxy reaches the network, the lookup waited its full timeout before every new
    // connection (4 requests took 61 s; found by an exploratory crawl). A socks5h:// name is
    // never looked up here (Tor: no DNS leak).
    let known = match (literal_address(url), proxy.kind) {
        (Some(ip), _) => Some(vec![SocketAddr::new(
            ip,
            url.port_or_known_default().unwrap_or(80),
        )]),
        (None, ProxyKind::Socks5 { remote_dns: false }) => Some(c.dns.resolve(url).await?),
        (None, ProxyKind::Socks5 { remote_dns: true }) => None,
        (None, ProxyKind::Http) => {
            let lookup = tokio::time::timeout(LOCAL_LOOKUP_FOR_PROXY, c.dns.resolve(url));
            lookup.await.ok().and_then(Result::ok)
        }
    };
    let allowed = match known {
        Some(addrs) => Some(allowed_addresses(url, c, addrs)?),
        None => None,
    };
    let first = allowed.as_ref().and_then(|a| a.first().copied());
    // The address reaches the record only when it is sure to be the one connected to: an IP
    // literal, or the address handed to a SOCKS5 proxy.
    let sent_to = first.filter(|_| !proxy.resolves_names());
    let ip = literal_address(url).or(sent_to.map(|a| a.ip()));
    let absolute = proxy.takes_absolute_form(url);
    match proxy.open(url, sent_to, (c.dns, c.timeout)).await? {
        Tunnel::Proxy(tcp) => over(url, c, tcp, ip, absolute).await,
        Tunnel::Socks(stream) => over(url, c, stream, ip, absolute).await,
    }
}

/// The addresses of `addrs` the SSRF guard allows; an error when it allows none.
fn allowed_addresses(
    url: &Url,
    c: &Connector<'_>,
    addrs: Vec<SocketAddr>,
) -> Result<Vec<SocketAddr>, FetchError> {
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
    Ok(allowed)
}

/// The connection over `stream` (TLS first for https), recorded.
async fn over<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    url: &Url,
    c: &Connector<'_>,
    stream: S,
    ip: Option<IpAddr>,
    absolute_form: bool,
) -> Result<Connection, FetchError> {
    let mut tls = None;
    let stream: Box<dyn Io> = if url.scheme() == "https" {
        let host = url
            .host_str()
            .unwrap_or("")
            .trim_start_matches('[')
            .trim_end_matches(']');
        let (name, config) = c.tls.for_host(host).map_err(|e| FetchError::Tls {
            kind: FaultKind::TlsHandshake,
            detail: format!("invalid server name {host:?}: {e}"),
        })?;
        let connector = TlsConnector::from(config);
        let framed = super::tls_records::RecordFraming::new(stream);
        let tls_stream = tokio::time::timeout(c.timeout, connector.connect(name, framed))
            .await
            .map_err(|_| {
                let silent = std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer in time");
                FetchError::tls_network(&silent)
            })?
            .map_err(|e| FetchError::tls(&e))?;
        tls = super::tls::session_of(tls_stream.get_ref().1);
        Box::new(tls_stream)
    } else {
        Box::new(stream)
    };
    let tape = SharedTape::default();
    let io = TokioIo::new(Recorder::new(stream, tape.clone()));
    Ok(Connection {
        state: State::Idle(io),
        tape,
        ip,
        absolute_form,
        tls,
        origin: origin_key(url),
        idle_since: Instant::now(),
    })
}

/// hyper's HTTP/1.1 settings for a connection: the head limits, obs-fold accepted (RFC 9112
/// section 5.2: unfolded to spaces when interpreted), header names sent in title case.
pub fn http1_builder(max_head_bytes: usize, max_headers: usize) -> Builder {
    let mut builder = Builder::new();
    builder
        .title_case_headers(true)
        // As lenient as trawl's own reading of the head (`http_message::response_parser`).
        .allow_obsolete_multiline_headers_in_responses(true)
        .allow_spaces_after_header_name_in_responses(true)
        .ignore_invalid_headers_in_responses(true)
        .max_buf_size(max_head_bytes.max(8192))
        .max_headers(max_headers);
    builder
}
