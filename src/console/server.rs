//! The console's HTTP/1.1 server (hyper): a fixed set of routes and nothing else. No route
//! reads a file or opens a connection; the page and its script are compiled into the binary.
//! Connections, request heads, bodies and connection lifetimes are capped; every response
//! forbids caching, sniffing and framing, and the page runs under a Content-Security-Policy
//! that allows only its own script (crawled URLs shown on it are text, never markup).

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use super::auth::{access, host_allowed, Access, TOKEN_HEADER};
use super::command::parse;
use super::connections::Connections;
use super::hub::{Hub, Refusal};

/// Largest request body.
pub const MAX_BODY: usize = 64 * 1024;
/// Buffer for a request head (hyper's minimum).
const MAX_HEAD: usize = 16 * 1024;
/// A request head must arrive within this.
const HEAD_WITHIN: Duration = Duration::from_secs(10);
/// A connection is closed after this, kept alive or not.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(120);

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/console.js");
const STYLE: &str = include_str!("assets/console.css");
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// Serves the console on `listener` until the task is aborted.
pub async fn serve(listener: TcpListener, hub: Arc<Hub>) {
    let mut connections = Connections::default();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, say: wait rather than spin.
                tracing::debug!("console: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if !connections.make_room() {
            continue;
        }
        let hub = hub.clone();
        let local = stream.local_addr().map_or(hub.bound, |a| a.ip());
        let answering = Arc::new(AtomicBool::new(false));
        let busy = answering.clone();
        let task = tokio::spawn(async move {
            let service = service_fn(move |req| {
                let (hub, busy) = (hub.clone(), busy.clone());
                async move {
                    busy.store(true, Ordering::Relaxed);
                    let response = handle(&hub, local, req).await;
                    busy.store(false, Ordering::Relaxed);
                    Ok::<_, Infallible>(response)
                }
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_WITHIN)
                .max_buf_size(MAX_HEAD)
                .serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(CONNECTION_LIFETIME, connection).await;
        });
        connections.add(task.abort_handle(), answering);
    }
}

/// Answers one request that came in at the console's address `local`.
async fn handle(hub: &Hub, local: IpAddr, req: Request<Incoming>) -> Response<Full<Bytes>> {
    // More than one Host is a bad request (RFC 9112 3.2): the first was taken, so a proxy
    // that passes both on could pick another than the check saw.
    if req.headers().get_all(header::HOST).iter().count() > 1 {
        return text(StatusCode::BAD_REQUEST, "more than one Host field\n");
    }
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok());
    if !host_allowed(local, host) {
        return text(
            StatusCode::FORBIDDEN,
            "this console answers requests to a loopback host name only\n",
        );
    }
    let path = req.uri().path().to_string();
    match *req.method() {
        Method::GET if path == "/api/search" => search(hub, req.uri().query()).await,
        Method::GET | Method::HEAD => read(hub, &path),
        Method::POST => control(hub, &path, req).await,
        _ => {
            let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "GET or POST\n");
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD, POST"));
            r
        }
    }
}

/// The read-only routes.
fn read(hub: &Hub, path: &str) -> Response<Full<Bytes>> {
    match path {
        "/" | "/index.html" => {
            let mut r = body(StatusCode::OK, "text/html; charset=utf-8", INDEX);
            r.headers_mut().insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(PAGE_POLICY),
            );
            r
        }
        "/console.js" => body(StatusCode::OK, "text/javascript; charset=utf-8", SCRIPT),
        "/console.css" => body(StatusCode::OK, "text/css; charset=utf-8", STYLE),
        "/api/status" => body(StatusCode::OK, "application/json", hub.status_json()),
        "/metrics" => body(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            hub.metrics(),
        ),
        _ => text(StatusCode::NOT_FOUND, "not found\n"),
    }
}

/// `GET /api/search`: hits of the crawl's search index, as JSON.
async fn search(hub: &Hub, query: Option<&str>) -> Response<Full<Bytes>> {
    let (status, json) = match &hub.search {
        Some(search) => search.answer(query).await,
        None => (
            404,
            serde_json::json!({"ok": false, "error": "this crawl has no --search-index"}),
        ),
    };
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    body(status, "application/json", json.to_string())
}

/// The routes that change the crawl: the token first, then a bounded body.
async fn control(hub: &Hub, path: &str, req: Request<Incoming>) -> Response<Full<Bytes>> {
    if parse(path, b"{}").is_none() {
        return text(StatusCode::NOT_FOUND, "not found\n");
    }
    let headers = req.headers();
    let given = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    match access(
        &hub.token,
        given(TOKEN_HEADER),
        given(header::AUTHORIZATION.as_str()),
    ) {
        Access::Operator => {}
        Access::Anonymous => {
            let mut r = answer(
                StatusCode::UNAUTHORIZED,
                Err("a change needs the console token in the X-Trawl-Token header"),
            );
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return r;
        }
        Access::WrongToken => {
            tracing::info!("console: refused {path}: wrong token");
            return answer(StatusCode::FORBIDDEN, Err("wrong token"));
        }
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return answer(StatusCode::PAYLOAD_TOO_LARGE, Err("request body too large"));
    }
    let bytes = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return answer(StatusCode::PAYLOAD_TOO_LARGE, Err("request body too large")),
    };
    let command = match parse(path, &bytes) {
        Some(Ok(command)) => command,
        Some(Err(why)) => return answer(StatusCode::BAD_REQUEST, Err(&why)),
        None => return text(StatusCode::NOT_FOUND, "not found\n"),
    };
    match hub.command(command).await {
        Ok(message) => answer(StatusCode::OK, Ok(&message)),
        Err(Refusal::Invalid(why)) => answer(StatusCode::BAD_REQUEST, Err(&why)),
        Err(Refusal::Unavailable) => answer(
            StatusCode::SERVICE_UNAVAILABLE,
            Err("the crawl is ending and takes no more commands"),
        ),
    }
}

/// A JSON answer to a command: `{"ok":true,"message":...}` or `{"ok":false,"error":...}`.
fn answer(status: StatusCode, outcome: Result<&str, &str>) -> Response<Full<Bytes>> {
    let json = match outcome {
        Ok(message) => serde_json::json!({"ok": true, "message": message}),
        Err(error) => serde_json::json!({"ok": false, "error": error}),
    };
    body(status, "application/json", json.to_string())
}

fn text(status: StatusCode, message: &'static str) -> Response<Full<Bytes>> {
    body(status, "text/plain; charset=utf-8", message)
}

fn body(
    status: StatusCode,
    content_type: &'static str,
    content: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(content.into()));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}
