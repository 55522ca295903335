//! `--proxy URL`: every connection goes through one proxy.
//!
//! - `http://[user:pass@]host:port`: an http URL's request is sent to the proxy in absolute
//!   form (`GET http://host/path HTTP/1.1`, with `Proxy-Authorization: Basic` when
//!   credentials are given); an https URL gets a tunnel (`CONNECT host:443`) and TLS to the
//!   origin inside it. The CONNECT exchange is a few lines, written here (hyper's client would
//!   need a second connection type for it).
//! - `socks5h://[user:pass@]host:port`: a SOCKS5 tunnel (the tokio-socks crate) to the name,
//!   which the proxy resolves (Tor's .onion names); `socks5://` resolves the name here and
//!   sends the address.
//!
//! The SSRF guard still applies where the origin's address is known here: an IP-literal URL,
//! a `--resolve` pin, a name resolved here (`socks5://`; for an HTTP proxy, a name this
//! machine can resolve). A `socks5h://` name is never looked up here (no DNS leak past Tor),
//! and a name only the proxy can resolve goes to it unchecked; such a capture has no
//! `WARC-IP-Address` (the proxy chose the address), nor has any capture through an HTTP
//! proxy or `socks5h://` except of an IP-literal URL.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use http::HeaderValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use url::Url;

use super::dns::Dns;
use super::error::FetchError;
use crate::fault::FaultKind;

/// Largest CONNECT response head read from an HTTP proxy.
const MAX_CONNECT_HEAD: usize = 16 * 1024;

/// What kind of proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyKind {
    /// An HTTP proxy: absolute form for http, CONNECT for https.
    Http,
    /// A SOCKS5 proxy; `remote_dns`: the proxy resolves names (`socks5h`).
    Socks5 {
        /// Names are sent to the proxy, not resolved here.
        remote_dns: bool,
    },
}

/// The proxy every connection goes through.
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    /// Its kind.
    pub kind: ProxyKind,
    /// Its host name or address.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// User name and password, percent-decoded.
    auth: Option<(String, String)>,
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Proxy({self})")
    }
}

/// Shown without the password.
impl fmt::Display for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.kind {
            ProxyKind::Http => "http",
            ProxyKind::Socks5 { remote_dns: true } => "socks5h",
            ProxyKind::Socks5 { remote_dns: false } => "socks5",
        };
        let user = match &self.auth {
            Some((user, _)) => format!("{user}:***@"),
            None => String::new(),
        };
        write!(
            f,
            "{scheme}://{user}{}:{}",
            bracketed(&self.host),
            self.port
        )
    }
}

impl Proxy {
    /// Parses `--proxy`: `http://[user:pass@]host:port`, `socks5h://...` or `socks5://...`.
    /// A bare `host:port` is an HTTP proxy, as curl reads it.
    pub fn parse(s: &str) -> Result<Proxy, String> {
        let written = match s.contains("://") {
            true => s.trim().to_string(),
            false => format!("http://{}", s.trim()),
        };
        let url = Url::parse(&written).map_err(|e| {
            format!("--proxy {s:?}: {e} (examples: http://proxy:3128, socks5h://127.0.0.1:9050)")
        })?;
        let kind = match url.scheme() {
            "http" => ProxyKind::Http,
            "socks5h" => ProxyKind::Socks5 { remote_dns: true },
            "socks5" => ProxyKind::Socks5 { remote_dns: false },
            other => {
                return Err(format!(
                    "--proxy {other}:// is not supported: use http://, socks5h:// or socks5://"
                ))
            }
        };
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| format!("--proxy {s:?} has no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = url
            .port_or_known_default()
            .or(match kind {
                ProxyKind::Socks5 { .. } => Some(1080),
                ProxyKind::Http => None,
            })
            .ok_or_else(|| format!("--proxy {s:?} has no port"))?;
        if url.path() != "/" && !url.path().is_empty() || url.query().is_some() {
            return Err(format!("--proxy {s:?}: a proxy URL has no path"));
        }
        let decode = |p: &str| {
            percent_encoding::percent_decode_str(p)
                .decode_utf8_lossy()
                .to_string()
        };
        let auth = (!url.username().is_empty()).then(|| {
            (
                decode(url.username()),
                decode(url.password().unwrap_or_default()),
            )
        });
        Ok(Proxy {
            kind,
            host,
            port,
            auth,
        })
    }

    /// `scheme://host:port`, without credentials (for the warcinfo record).
    pub fn address(&self) -> String {
        let shown = Proxy {
            auth: None,
            ..self.clone()
        };
        shown.to_string()
    }

    /// True when the proxy resolves the origin's name (an HTTP proxy, `socks5h`).
    pub fn resolves_names(&self) -> bool {
        !matches!(self.kind, ProxyKind::Socks5 { remote_dns: false })
    }

    /// True when an http URL's request goes to this proxy in absolute form.
    pub fn takes_absolute_form(&self, url: &Url) -> bool {
        self.kind == ProxyKind::Http && url.scheme() == "http"
    }

    /// `request` as this HTTP proxy takes it: the URL in absolute form, and the proxy's
    /// credentials.
    pub fn to_absolute_form<B>(&self, url: &Url, request: &mut http::Request<B>) {
        // No user:password@ (hyper writes the URI as it is).
        let absolute = format!(
            "{}://{}{}",
            url.scheme(),
            &url[url::Position::BeforeHost..url::Position::AfterPort],
            &url[url::Position::BeforePath..url::Position::AfterQuery]
        );
        if let Ok(uri) = absolute.parse::<http::Uri>() {
            *request.uri_mut() = uri;
        }
        if let Some(auth) = self.authorization() {
            request
                .headers_mut()
                .insert(http::header::PROXY_AUTHORIZATION, auth);
        }
    }

    /// `Proxy-Authorization` for an HTTP proxy with credentials.
    pub fn authorization(&self) -> Option<HeaderValue> {
        let (user, pass) = self.auth.as_ref()?;
        super::site_login::basic_credentials(user, pass)
    }

    /// A TCP connection to the proxy itself, its name looked up as the sites' are (`--resolve`
    /// and `--dns-server` apply, as curl's `--resolve` does to a proxy; the system's resolver
    /// was asked before): its addresses in turn.
    async fn connect_to_proxy(
        &self,
        dns: &Dns,
        timeout: Duration,
    ) -> Result<TcpStream, FetchError> {
        let unknown = |e: String| FetchError::Connect {
            kind: FaultKind::Connect,
            detail: format!("proxy {self}: its name was not found: {e}"),
        };
        let at = Url::parse(&format!("http://{}:{}/", bracketed(&self.host), self.port))
            .map_err(|e| unknown(e.to_string()))?;
        let addrs = dns.resolve(&at).await.map_err(|e| unknown(e.to_string()))?;
        let connect = async {
            let mut last = None;
            for addr in addrs {
                match TcpStream::connect(addr).await {
                    Ok(s) => return Ok(s),
                    Err(e) => last = Some(e),
                }
            }
            Err(last.unwrap_or_else(|| std::io::Error::other("no address")))
        };
        match tokio::time::timeout(timeout, connect).await {
            Ok(Ok(s)) => {
                let _ = s.set_nodelay(true);
                Ok(s)
            }
            Ok(Err(e)) => Err(FetchError::Connect {
                kind: FaultKind::ProxyConnect,
                detail: format!("proxy {self}: {e}"),
            }),
            Err(_) => Err(FetchError::Connect {
                kind: FaultKind::ProxyConnect,
                detail: format!("proxy {self}: timed out after {timeout:?}"),
            }),
        }
    }

    /// A stream to `url`'s origin through the proxy: for an HTTP proxy and an http URL, the
    /// connection to the proxy itself (requests go in absolute form); otherwise a tunnel to
    /// `host:port`, or to `addr` when the name was resolved here.
    pub(super) async fn open(
        &self,
        url: &Url,
        addr: Option<SocketAddr>,
        (dns, timeout): (&Dns, Duration),
    ) -> Result<Tunnel, FetchError> {
        let host = url
            .host_str()
            .unwrap_or("")
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = url.port_or_known_default().unwrap_or(80);
        let tcp = self.connect_to_proxy(dns, timeout).await?;
        let failed = |detail: String| FetchError::Connect {
            kind: FaultKind::Connect,
            detail: format!("proxy {self}: {detail}"),
        };
        match self.kind {
            ProxyKind::Http if url.scheme() == "http" => Ok(Tunnel::Proxy(tcp)),
            ProxyKind::Http => {
                let tcp = tokio::time::timeout(timeout, self.http_connect(tcp, &host, port))
                    .await
                    .map_err(|_| failed(format!("CONNECT timed out after {timeout:?}")))??;
                Ok(Tunnel::Proxy(tcp))
            }
            ProxyKind::Socks5 { .. } => {
                let handshake = async {
                    // An IP literal is sent as an address (RFC 1928's ATYP 1 or 4, as curl
                    // does), not as a name for the proxy to resolve.
                    let literal = literal_address(url).map(|ip| SocketAddr::new(ip, port));
                    let target = match addr.or(literal) {
                        Some(a) => tokio_socks::TargetAddr::Ip(a),
                        None => tokio_socks::TargetAddr::Domain(host.clone().into(), port),
                    };
                    match &self.auth {
                        Some((user, pass)) => {
                            tokio_socks::tcp::Socks5Stream::connect_with_password_and_socket(
                                tcp, target, user, pass,
                            )
                            .await
                        }
                        None => {
                            tokio_socks::tcp::Socks5Stream::connect_with_socket(tcp, target).await
                        }
                    }
                };
                let stream = tokio::time::timeout(timeout, handshake)
                    .await
                    .map_err(|_| failed(format!("SOCKS5 handshake timed out after {timeout:?}")))?
                    .map_err(|e| failed(format!("SOCKS5 to {host}:{port}: {e}")))?;
                Ok(Tunnel::Socks(Box::new(stream)))
            }
        }
    }

    /// Asks an HTTP proxy for a tunnel to `host:port`; the stream is the tunnel once the
    /// proxy answered 2xx.
    async fn http_connect(
        &self,
        mut tcp: TcpStream,
        host: &str,
        port: u16,
    ) -> Result<TcpStream, FetchError> {
        let authority = format!("{}:{port}", bracketed(host));
        let mut head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
        if let Some(auth) = self.authorization() {
            head.push_str("Proxy-Authorization: ");
            head.push_str(auth.to_str().unwrap_or_default());
            head.push_str("\r\n");
        }
        head.push_str("\r\n");
        let io = |e: std::io::Error| FetchError::connect(&e, format!("proxy {self}: {e}"));
        tcp.write_all(head.as_bytes()).await.map_err(io)?;
        // Read byte by byte up to the blank line: nothing of the tunnel may be read here. A
        // line may end in a bare LF (RFC 9112 2.2; curl and wget take such proxies' tunnels).
        let mut answer = Vec::with_capacity(256);
        while !(answer.ends_with(b"\n\n") || answer.ends_with(b"\n\r\n")) {
            if answer.len() >= MAX_CONNECT_HEAD {
                return Err(FetchError::Connect {
                    kind: FaultKind::Connect,
                    detail: format!("proxy {self}: CONNECT answer over {MAX_CONNECT_HEAD} bytes"),
                });
            }
            let mut byte = [0u8; 1];
            if tcp.read(&mut byte).await.map_err(io)? == 0 {
                return Err(FetchError::Connect {
                    kind: FaultKind::Connect,
                    detail: format!("proxy {self}: closed the connection on CONNECT"),
                });
            }
            answer.push(byte[0]);
        }
        let status_line = String::from_utf8_lossy(&answer);
        let status_line: String = status_line
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(200)
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
        let status: Option<u16> = status_line.split(' ').nth(1).and_then(|s| s.parse().ok());
        match status {
            Some(200..=299) => Ok(tcp),
            _ => Err(FetchError::Connect {
                kind: FaultKind::Connect,
                detail: format!("proxy {self} refused CONNECT {authority}: {status_line}"),
            }),
        }
    }
}

/// The error of a request an HTTP proxy answered 407: the proxy's answer, not the site's
/// (RFC 9110 15.5.8), so not archived under the site's URL, and a failed connection as a
/// CONNECT answered 407 is (before, the proxy's page was archived as the site's robots.txt
/// and pages, and the crawl exited 0).
pub(super) fn asks_credentials(proxy: &Option<Proxy>) -> FetchError {
    let proxy = proxy.as_ref().map_or_else(String::new, |p| format!(" {p}"));
    FetchError::Connect {
        kind: FaultKind::Connect,
        detail: format!(
            "proxy{proxy} answered 407 Proxy Authentication Required: give its credentials in --proxy http://USER:PASS@HOST:PORT"
        ),
    }
}

/// A host as it is written in an authority: an IPv6 address in brackets.
fn bracketed(host: &str) -> String {
    match host.contains(':') {
        true => format!("[{host}]"),
        false => host.to_string(),
    }
}

/// A stream to an origin through a proxy.
pub(super) enum Tunnel {
    /// The TCP connection to an HTTP proxy (absolute form, or a CONNECT tunnel).
    Proxy(TcpStream),
    /// A SOCKS5 tunnel.
    Socks(Box<tokio_socks::tcp::Socks5Stream<TcpStream>>),
}

/// The request head `sent` to an HTTP proxy in absolute form, as the origin would have been
/// sent it: the request target in origin form (`/path?query`) and no `Proxy-Authorization`
/// (the operator's credentials stay out of the archive). Replay tools index the request
/// records by the origin's view; the proxy hop is transport.
pub fn origin_form(sent: &[u8]) -> Vec<u8> {
    let Some(head_end) = sent.windows(4).position(|w| w == b"\r\n\r\n") else {
        return sent.to_vec();
    };
    let head = &sent[..head_end + 2];
    let mut out = Vec::with_capacity(sent.len());
    for (i, line) in head.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        if i == 0 {
            out.extend_from_slice(&origin_request_line(line));
        } else if line.len() >= 20 && line[..20].eq_ignore_ascii_case(b"proxy-authorization:") {
            continue;
        } else {
            out.extend_from_slice(line);
        }
        out.push(b'\n');
    }
    out.extend_from_slice(&sent[head_end + 2..]);
    out
}

/// `GET http://host:port/p?q HTTP/1.1\r` as `GET /p?q HTTP/1.1\r`.
fn origin_request_line(line: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(line);
    let mut parts = text.splitn(3, ' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return line.to_vec();
    };
    let Some(rest) = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    else {
        return line.to_vec();
    };
    let path = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => rest[i..].to_string(),
        Some(i) => format!("/{}", &rest[i..]),
        None => "/".to_string(),
    };
    format!("{method} {path} {version}").into_bytes()
}

/// The address of `url` when known here without DNS (an IP literal).
pub fn literal_address(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(a) => Some(IpAddr::V4(a)),
        url::Host::Ipv6(a) => Some(IpAddr::V6(a)),
        url::Host::Domain(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proxy_urls_and_hides_passwords() {
        let p = Proxy::parse("http://user:p%40ss@proxy.example:3128").unwrap();
        assert_eq!(p.kind, ProxyKind::Http);
        assert_eq!((p.host.as_str(), p.port), ("proxy.example", 3128));
        assert_eq!(
            p.authorization().unwrap(),
            format!("Basic {}", data_encoding::BASE64.encode(b"user:p@ss"))
        );
        assert_eq!(p.to_string(), "http://user:***@proxy.example:3128");
        assert!(!format!("{p:?}").contains("p@ss"));
        let s = Proxy::parse("socks5h://127.0.0.1:9050").unwrap();
        assert_eq!(s.kind, ProxyKind::Socks5 { remote_dns: true });
        assert!(s.resolves_names());
        assert_eq!(Proxy::parse("socks5://[::1]").unwrap().port, 1080);
        assert!(Proxy::parse("ftp://x:21").is_err());
        let bare = Proxy::parse("localhost:3128").unwrap();
        assert_eq!((bare.kind, bare.port), (ProxyKind::Http, 3128));
        assert_eq!(
            Proxy::parse("http://[::1]:3128").unwrap().address(),
            "http://[::1]:3128"
        );
        assert!(Proxy::parse("http://x:3128/path").is_err());
        assert!(Proxy::parse("not a url").is_err());
    }

    #[test]
    fn request_records_hold_the_origin_form() {
        let sent = b"GET http://a.test:8080/p?q=1 HTTP/1.1\r\nHost: a.test:8080\r\nProxy-Authorization: Basic eDp5\r\nUser-Agent: t\r\n\r\n";
        assert_eq!(
            origin_form(sent),
            b"GET /p?q=1 HTTP/1.1\r\nHost: a.test:8080\r\nUser-Agent: t\r\n\r\n"
        );
        assert_eq!(
            origin_request_line(b"GET http://a.test?x HTTP/1.1\r"),
            b"GET /?x HTTP/1.1\r"
        );
        let plain = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_eq!(origin_form(plain), plain);
    }
}
