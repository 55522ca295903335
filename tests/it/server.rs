//! A raw HTTP/1.1 test server on loopback: exact control over the bytes (chunked framing,
//! gzip, odd headers), keep-alive, and a log of every request with its arrival time.

use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One canned response.
#[derive(Clone, Debug)]
pub struct Route {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub chunked: bool,
    pub gzip: bool,
}

impl Route {
    pub fn html(body: &str) -> Route {
        Route {
            status: 200,
            headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
            body: body.as_bytes().to_vec(),
            chunked: false,
            gzip: false,
        }
    }
    pub fn typed(status: u16, content_type: &str, body: &[u8]) -> Route {
        Route {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.to_vec(),
            chunked: false,
            gzip: false,
        }
    }
    pub fn redirect(status: u16, location: &str) -> Route {
        Route {
            status,
            headers: vec![
                ("Location".into(), location.into()),
                ("Content-Type".into(), "text/html".into()),
            ],
            body: b"moved".to_vec(),
            chunked: false,
            gzip: false,
        }
    }
    pub fn chunked(mut self) -> Route {
        self.chunked = true;
        self
    }
    pub fn gzip(mut self) -> Route {
        self.gzip = true;
        self
    }

    /// The exact bytes this route sends.
    pub fn wire_bytes(&self) -> Vec<u8> {
        let body = if self.gzip {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(&self.body).unwrap();
            enc.finish().unwrap()
        } else {
            self.body.clone()
        };
        let mut out = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status)).into_bytes();
        for (k, v) in &self.headers {
            out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
        }
        if self.gzip {
            out.extend_from_slice(b"Content-Encoding: gzip\r\n");
        }
        if self.chunked {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            for piece in body.chunks(7) {
                out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
                out.extend_from_slice(piece);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
        } else {
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            out.extend_from_slice(&body);
        }
        out
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Other",
    }
}

/// How the server answers one path, beyond a canned well-formed response.
#[derive(Clone, Debug)]
pub enum Behavior {
    /// A well-formed response.
    Respond(Route),
    /// Exactly these bytes, then close (or reset) the connection.
    Raw { bytes: Vec<u8>, reset: bool },
    /// These bytes, then keep the connection open for more requests.
    RawKeepAlive(Vec<u8>),
    /// Read the request, then never answer (until the client gives up).
    Hang,
    /// These responses in turn, one per request; the last one for every later request.
    Answers(Vec<Route>),
    /// `with` to a request whose Cookie field holds `cookie` (e.g. "session=abc"), else
    /// `without`.
    Gated {
        cookie: String,
        with: Route,
        without: Route,
    },
    /// `with` to a request whose Authorization is `authorization`, else a 401 asking for
    /// Basic credentials.
    Login { authorization: String, with: Route },
    /// `with` to a request whose Digest `Authorization` answers the host's current nonce for
    /// `account` (`digest_login.rs`), else a 401 with a Digest (and a Basic) challenge.
    DigestLogin {
        account: (String, String),
        with: Route,
        nonces: Arc<Mutex<crate::digest_login::Nonces>>,
    },
    /// `with` to a request whose Referer starts with `referer` (hotlink protection), else
    /// `without`.
    Hotlinked {
        referer: String,
        with: Route,
        without: Route,
    },
    /// Send `head` at once, then each part after its delay (counted from the one before).
    Parts {
        head: Vec<u8>,
        parts: Vec<(std::time::Duration, Vec<u8>)>,
    },
    /// Send `head` at once, then `body` one byte every `every`.
    Drip {
        head: Vec<u8>,
        body: Vec<u8>,
        every: std::time::Duration,
    },
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Hit {
    pub host: String,
    pub path: String,
    pub at: Instant,
    /// The request head as received.
    pub head: String,
    /// The connection it came on, numbered from 1 per host in the order they were accepted.
    pub conn: u64,
}

/// One host: an address on loopback with its routes.
pub struct Host {
    pub addr: SocketAddr,
    routes: Arc<Mutex<HashMap<String, Behavior>>>,
}

impl Host {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
    pub fn route(&self, path: &str, route: Route) {
        self.behave(path, Behavior::Respond(route));
    }
    pub fn behave(&self, path: &str, behavior: Behavior) {
        self.routes
            .lock()
            .unwrap()
            .insert(path.to_string(), behavior);
    }
    pub fn wire_bytes(&self, path: &str) -> Vec<u8> {
        match &self.routes.lock().unwrap()[path] {
            Behavior::Respond(r) => r.wire_bytes(),
            other => panic!("{path} is not a canned route: {other:?}"),
        }
    }
}

/// A set of hosts sharing one request log.
#[derive(Clone, Default)]
pub struct Web {
    pub log: Arc<Mutex<Vec<Hit>>>,
}

impl Web {
    /// Starts a host on `ip` (e.g. "127.0.0.2") on a free port.
    pub async fn host(&self, ip: &str) -> Host {
        self.host_on(ip, 0).await
    }

    /// Starts a host on `ip` and `port` (port 80 for what a bare-host seed falls back to).
    pub async fn host_on(&self, ip: &str, port: u16) -> Host {
        let listener = TcpListener::bind((ip, port)).await.expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let routes: Arc<Mutex<HashMap<String, Behavior>>> = Arc::default();
        let (r, log, label) = (routes.clone(), self.log.clone(), addr.to_string());
        tokio::spawn(async move {
            for conn in 1.. {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve(stream, r.clone(), log.clone(), (label.clone(), conn)));
            }
        });
        Host { addr, routes }
    }

    /// Starts an https host on `ip` with a fresh self-signed certificate.
    pub async fn tls_host(&self, ip: &str) -> Host {
        let key = rcgen::generate_simple_self_signed(vec![ip.to_string()]).unwrap();
        let cert = key.cert.der().clone();
        self.tls_host_with(ip, cert, key.signing_key.serialize_der())
            .await
    }

    /// Starts an https host on `ip` whose certificate an authority of its own issued, and
    /// returns it with that authority's certificate (PEM).
    pub async fn tls_host_with_authority(&self, ip: &str) -> (Host, String) {
        let (host, authority, _) = self.tls_host_issued(ip).await;
        (host, authority)
    }

    /// [`Web::tls_host_with_authority`], and the host's own certificate (PEM) too.
    pub async fn tls_host_issued(&self, ip: &str) -> (Host, String, String) {
        self.tls_host_issued_for(ip, vec![ip.to_string()]).await
    }

    /// [`Web::tls_host_issued`] with a certificate for `names` (`*.wild.test`).
    pub async fn tls_host_issued_for(
        &self,
        ip: &str,
        names: Vec<String>,
    ) -> (Host, String, String) {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "trawl test authority");
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca, ca_key);
        let key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        let host = self
            .tls_host_with(ip, leaf.der().clone(), key.serialize_der())
            .await;
        (host, ca_cert.pem(), leaf.pem())
    }

    /// Starts https hosts on each of `ips` that show one self-signed certificate, for the
    /// first of them, marked as an authority's as `openssl req -x509` marks it; returns them
    /// with that certificate (PEM).
    pub async fn tls_hosts_self_signed_authority(&self, ips: &[&str]) -> (Vec<Host>, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec![ips[0].to_string()]).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        let mut hosts = Vec::new();
        for ip in ips {
            let der = cert.der().clone();
            hosts.push(self.tls_host_with(ip, der, key.serialize_der()).await);
        }
        (hosts, cert.pem())
    }

    /// A TLS host that requires a client certificate (issued by its own, self-signed one):
    /// under TLS 1.3 it says so in an alert after the handshake.
    pub async fn tls_host_requiring_client_certificates(&self, ip: &str) -> Host {
        let key = rcgen::generate_simple_self_signed(vec![ip.to_string()]).unwrap();
        let cert = key.cert.der().clone();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert.clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap();
        let pkcs8 = key.signing_key.serialize_der();
        self.tls_host_verifying(ip, cert, pkcs8, Some(verifier))
            .await
    }

    async fn tls_host_with(
        &self,
        ip: &str,
        cert: rustls::pki_types::CertificateDer<'static>,
        pkcs8: Vec<u8>,
    ) -> Host {
        self.tls_host_verifying(ip, cert, pkcs8, None).await
    }

    async fn tls_host_verifying(
        &self,
        ip: &str,
        cert: rustls::pki_types::CertificateDer<'static>,
        pkcs8: Vec<u8>,
        clients: Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>,
    ) -> Host {
        let private = rustls::pki_types::PrivateKeyDer::Pkcs8(pkcs8.into());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap();
        let builder = match clients {
            Some(verifier) => builder.with_client_cert_verifier(verifier),
            None => builder.with_no_client_auth(),
        };
        let config = builder.with_single_cert(vec![cert], private).unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind((ip, 0)).await.expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let routes: Arc<Mutex<HashMap<String, Behavior>>> = Arc::default();
        let (r, log, label) = (routes.clone(), self.log.clone(), addr.to_string());
        tokio::spawn(async move {
            for conn in 1.. {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (acceptor, r, log, label) =
                    (acceptor.clone(), r.clone(), log.clone(), label.clone());
                tokio::spawn(async move {
                    if let Ok(tls) = acceptor.accept(stream).await {
                        serve(tls, r, log, (label, conn)).await;
                    }
                });
            }
        });
        Host { addr, routes }
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.log.lock().unwrap().clone()
    }

    /// Forgets the requests seen so far (a second crawl of the same web).
    pub fn clear_hits(&self) {
        self.log.lock().unwrap().clear();
    }

    /// The field `name` of each request `host` saw for `path`, in order (`None`: not sent).
    pub fn field_of_requests(&self, host: &Host, path: &str, name: &str) -> Vec<Option<String>> {
        let label = host.addr.to_string();
        self.hits()
            .iter()
            .filter(|h| h.host == label && h.path == path)
            .map(|h| field_values(&h.head, name).next().map(str::to_string))
            .collect()
    }

    pub fn paths_of(&self, host: &Host) -> Vec<String> {
        let label = host.addr.to_string();
        self.hits()
            .into_iter()
            .filter(|h| h.host == label)
            .map(|h| h.path)
            .collect()
    }
}

/// A stream the server can reset (RST) instead of closing.
pub trait Resettable: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    fn arm_reset(&self);
}

impl Resettable for TcpStream {
    fn arm_reset(&self) {
        // Zero linger: dropping the socket sends RST; with zero it does not block.
        #[allow(deprecated)]
        let _ = self.set_linger(Some(std::time::Duration::ZERO));
    }
}

impl Resettable for tokio_rustls::server::TlsStream<TcpStream> {
    fn arm_reset(&self) {
        self.get_ref().0.arm_reset();
    }
}

/// The values (trimmed) of the fields `name` of the request `head`, in order.
fn field_values<'h>(head: &'h str, name: &'h str) -> impl Iterator<Item = &'h str> {
    head.lines().skip(1).filter_map(move |l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then_some(v.trim())
    })
}

/// Whether a field `name` of the request `head` has a value that `wanted` accepts.
fn field_sent(head: &str, name: &str, wanted: impl Fn(&str) -> bool) -> bool {
    field_values(head, name).any(wanted)
}

async fn serve<S: Resettable>(
    mut stream: S,
    routes: Arc<Mutex<HashMap<String, Behavior>>>,
    log: Arc<Mutex<Vec<Hit>>>,
    (label, conn): (String, u64),
) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let end = loop {
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        buf.drain(..end);
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        log.lock().unwrap().push(Hit {
            host: label.clone(),
            path: path.clone(),
            at: Instant::now(),
            head: head.clone(),
            conn,
        });
        let behavior = match routes.lock().unwrap().get_mut(&path) {
            Some(Behavior::Answers(list)) if list.len() > 1 => {
                Some(Behavior::Respond(list.remove(0)))
            }
            Some(Behavior::Answers(list)) => list.first().cloned().map(Behavior::Respond),
            Some(Behavior::Gated {
                cookie,
                with,
                without,
            }) => {
                let sent = field_sent(&head, "cookie", |v| {
                    v.split(';').any(|pair| pair.trim() == cookie.as_str())
                });
                Some(Behavior::Respond(if sent { with } else { without }.clone()))
            }
            Some(Behavior::Login {
                authorization,
                with,
            }) => {
                let sent = field_sent(&head, "authorization", |v| v == authorization.as_str());
                let mut refused = Route::typed(401, "text/html", b"<p>log in</p>");
                refused.headers.push((
                    "WWW-Authenticate".into(),
                    r#"Basic realm="staff", charset="UTF-8""#.into(),
                ));
                Some(Behavior::Respond(if sent { with.clone() } else { refused }))
            }
            Some(Behavior::DigestLogin {
                account,
                with,
                nonces,
            }) => {
                let account = (account.0.as_str(), account.1.as_str());
                Some(Behavior::Respond(
                    match crate::digest_login::verdict(&head, account, nonces) {
                        Ok(()) => with.clone(),
                        Err(challenge) => {
                            let mut refused = Route::typed(401, "text/html", b"<p>log in</p>");
                            refused.headers.push(("WWW-Authenticate".into(), challenge));
                            refused
                        }
                    },
                ))
            }
            Some(Behavior::Hotlinked {
                referer,
                with,
                without,
            }) => {
                let sent = field_sent(&head, "referer", |v| v.starts_with(referer.as_str()));
                Some(Behavior::Respond(if sent { with } else { without }.clone()))
            }
            other => other.cloned(),
        };
        let behavior = behavior.unwrap_or_else(|| {
            Behavior::Respond(Route::typed(404, "text/html", b"<html>not here</html>"))
        });
        match behavior {
            Behavior::Respond(r) => {
                if stream.write_all(&r.wire_bytes()).await.is_err() {
                    return;
                }
            }
            Behavior::RawKeepAlive(bytes) => {
                if stream.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Behavior::Raw { bytes, reset } => {
                let _ = stream.write_all(&bytes).await;
                let _ = stream.flush().await;
                if reset {
                    // Give the client a moment to read what was sent, then reset (RST).
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    stream.arm_reset();
                }
                return;
            }
            Behavior::Answers(_)
            | Behavior::Gated { .. }
            | Behavior::Hotlinked { .. }
            | Behavior::Login { .. }
            | Behavior::DigestLogin { .. } => {
                unreachable!("chosen above")
            }
            Behavior::Hang => {
                let mut sink = [0u8; 1024];
                while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
                return;
            }
            Behavior::Parts { head, parts } => {
                if stream.write_all(&head).await.is_err() {
                    return;
                }
                for (delay, part) in parts {
                    tokio::time::sleep(delay).await;
                    if stream.write_all(&part).await.is_err() {
                        return;
                    }
                }
                return;
            }
            Behavior::Drip { head, body, every } => {
                if stream.write_all(&head).await.is_err() {
                    return;
                }
                for b in body {
                    tokio::time::sleep(every).await;
                    if stream.write_all(&[b]).await.is_err() {
                        return;
                    }
                }
                return;
            }
        }
        if head.to_ascii_lowercase().contains("connection: close") {
            return;
        }
    }
}

/// A one-host site: `pages` pages `/pN` linked from `/`, each `size` bytes of poorly
/// compressible, deterministic text (the same bytes on every call).
pub async fn linked_site(ip: &str, pages: usize, size: usize) -> (Web, Host) {
    let web = Web::default();
    let h = web.host(ip).await;
    h.route(
        "/",
        Route::html(
            &(0..pages)
                .map(|i| format!("<a href=/p{i}>p</a>"))
                .collect::<String>(),
        ),
    );
    let mut x: u64 = 1;
    for i in 0..pages {
        let body: String = (0..size)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (b'a' + (x >> 59) as u8 % 26) as char
            })
            .collect();
        h.route(&format!("/p{i}"), Route::html(&format!("<p>{body}</p>")));
    }
    (web, h)
}
