//! A raw HTTP/1.1 test server on loopback: exact control over the bytes (chunked framing,
//! gzip, odd headers), keep-alive, and a log of every request with its arrival time.

use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Other",
    }
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Hit {
    pub host: String,
    pub path: String,
    pub at: Instant,
}

/// One host: an address on loopback with its routes.
pub struct Host {
    pub addr: SocketAddr,
    routes: Arc<Mutex<HashMap<String, Route>>>,
}

impl Host {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
    pub fn route(&self, path: &str, route: Route) {
        self.routes.lock().unwrap().insert(path.to_string(), route);
    }
    pub fn wire_bytes(&self, path: &str) -> Vec<u8> {
        self.routes.lock().unwrap()[path].wire_bytes()
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
        let listener = TcpListener::bind((ip, 0)).await.expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let routes: Arc<Mutex<HashMap<String, Route>>> = Arc::default();
        let (r, log, label) = (routes.clone(), self.log.clone(), addr.to_string());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve(stream, r.clone(), log.clone(), label.clone()));
            }
        });
        Host { addr, routes }
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.log.lock().unwrap().clone()
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

async fn serve(
    mut stream: TcpStream,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    log: Arc<Mutex<Vec<Hit>>>,
    label: String,
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
        });
        let route = routes.lock().unwrap().get(&path).cloned();
        let bytes = match route {
            Some(r) => r.wire_bytes(),
            None => Route::typed(404, "text/html", b"<html>not here</html>").wire_bytes(),
        };
        if stream.write_all(&bytes).await.is_err() {
            return;
        }
        if head.to_ascii_lowercase().contains("connection: close") {
            return;
        }
    }
}
