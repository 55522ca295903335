//! Fetching one URL over HTTP/1.1 and recording the exact bytes of the exchange.
//!
//! A [`Fetcher`] is shared by all fetching tasks. Each call takes the host's idle
//! [`Connection`] (if any) and gives it back when it can be kept alive. The response head is
//! parsed once, from the recorded bytes, as soon as it has arrived; the caller decides from it
//! whether the body is worth reading (the chain's archive filter); a rejected body is not read
//! and its connection is closed. The result is a [`Capture`]: the exchange, that parsed head
//! and the payload, handed to the processor chain as they are.

pub mod address_guard;
mod body_source;
pub mod connection;
pub mod cookie_jar;
pub mod cookies_txt;
pub mod dns;
pub mod error;
mod given_certificate;
mod happy_eyeballs;
mod keep_alive;
mod options;
pub mod pins;
pub mod proxy;
pub mod rate_limit;
pub mod recorder;
mod request;
pub mod site_login;
mod stand_in_name;
pub mod tape;
pub mod tls;
mod tls_records;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::Empty;
use hyper::client::conn::http1::SendRequest;
use tokio::time::timeout_at;
use url::Url;

use body_source::{BodySource, Step};

use crate::capture::Capture;
use crate::exchange::{Exchange, Truncation};
use crate::fault::FaultKind;
use crate::http_message::{message_length_as_read, parse_final_head, sniff, ResponseHead};
use crate::spool::Spooled;
pub use address_guard::{AddressClass, AddressGuard};
pub use connection::{has_origin, origin_key, Connection};
pub use cookie_jar::CookieJar;
pub use dns::{Dns, Families};
pub use error::{FetchError, HeadLimits};
pub use options::FetchOptions;
use request::RequestTemplate;
pub use site_login::SiteLogin;

/// A received response (possibly truncated) as a [`Capture`].
#[derive(Debug)]
pub struct Fetched {
    /// The recorded exchange with its parsed head and payload.
    pub capture: Capture,
    /// Time from start to end of the fetch.
    pub elapsed: Duration,
    /// What went wrong while reading the body (the response is then truncated).
    pub body_fault: Option<FaultKind>,
    /// A redirect whose cookies change what the next request to its URL sends (a site's
    /// cookie check, redirecting to itself, is then worth following once more).
    pub cookies_changed: bool,
    /// What a 401 asks of a `--http-user` crawl's credentials.
    pub login_asked: site_login::LoginAsk,
}

/// Raw body bytes read before a body of unknown type is judged by what they identify.
pub const IDENTIFY_AFTER: u64 = 8 * 1024;

/// What the caller wants done with a response, decided from its status and headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyPlan {
    /// Read the body, up to this many bytes.
    Read {
        /// Body cap in bytes.
        max_body: u64,
    },
    /// Read the body as `Read` does, but once [`IDENTIFY_AFTER`] bytes of it are in, ask the
    /// plan again with the media type they identify (the head gave none usable): a `Skip`
    /// stops the read there and closes the connection, any other answer reads on.
    Identify {
        /// Body cap in bytes.
        max_body: u64,
    },
    /// Do not read the body; close the connection.
    Skip,
}

/// Fetches URLs; cheap to share behind an `Arc`.
pub struct Fetcher {
    dns: Dns,
    tls: tls::TlsClient,
    /// hyper's settings for every connection's HTTP/1.1 (limits from `options`).
    http1: hyper::client::conn::http1::Builder,
    /// The request every fetch sends (User-Agent checked once, `--header` fields).
    requests: RequestTemplate,
    /// The cookie jar (none with `--no-cookies`).
    cookies: Option<Arc<CookieJar>>,
    /// `--http-user`: the credentials and the hosts that get them.
    login: Option<Arc<SiteLogin>>,
    options: FetchOptions,
    keep_alive: keep_alive::KeepAlive,
}

impl Fetcher {
    /// A fetcher with the system resolver and the built-in TLS roots.
    pub fn new(options: FetchOptions) -> Self {
        Fetcher {
            dns: options::dns_of(&options),
            tls: tls::client_config(&options.trust),
            http1: connection::http1_builder(options.max_head_bytes, options.max_headers),
            requests: RequestTemplate::new(&options.user_agent, options.headers.clone()),
            cookies: None,
            login: options.login.clone(),
            options,
            keep_alive: Default::default(),
        }
    }

    /// This fetcher sending and keeping cookies in `jar`.
    pub fn with_cookies(mut self, jar: Arc<CookieJar>) -> Self {
        self.cookies = Some(jar);
        self
    }

    /// The name resolutions to archive made since the last call (`--dns-records`).
    pub fn take_dns_lookups(&self) -> Vec<crate::exchange::DnsLookup> {
        self.dns.take_lookups()
    }

    /// The first address `url`'s host resolves to (pins, then DNS), if any; none for a name
    /// a `socks5h://` proxy resolves (no lookup here: no DNS leak past Tor).
    pub async fn first_address(&self, url: &Url) -> Option<std::net::IpAddr> {
        let remote = proxy::ProxyKind::Socks5 { remote_dns: true };
        if self
            .options
            .proxy
            .as_ref()
            .is_some_and(|p| p.kind == remote)
        {
            return proxy::literal_address(url);
        }
        let addrs = self.dns.resolve(url).await.ok()?;
        addrs.first().map(|a| a.ip())
    }

    /// GETs `url` with the `Referer` field `referer`, reusing `idle` when it is a live
    /// connection to the same origin. Returns the result and the connection if it can be kept
    /// alive. `plan` is asked what to do with the response, once with its head, and once more
    /// with the identified media type when it answered [`BodyPlan::Identify`].
    pub async fn fetch<F>(
        &self,
        url: &Url,
        referer: Option<&str>,
        idle: Option<Connection>,
        plan: F,
    ) -> (Result<Fetched, FetchError>, Option<Connection>)
    where
        F: FnMut(&ResponseHead, Option<&'static str>) -> BodyPlan,
    {
        let start = Instant::now();
        let deadline = tokio::time::Instant::from_std(start + self.options.total_timeout);
        let mut conn = self.keep_alive.reuse(url, idle);
        let mut reused = conn.is_some();
        loop {
            let mut c = match conn.take() {
                Some(c) => c,
                None => {
                    let connector = connection::Connector {
                        dns: &self.dns,
                        tls: &self.tls,
                        guard: &self.options.guard,
                        proxy: self.options.proxy.as_ref(),
                        timeout: self.options.connect_timeout,
                    };
                    match timeout_at(deadline, connection::connect(url, &connector)).await {
                        Ok(Ok(c)) => c,
                        Ok(Err(e)) => return (Err(e), None),
                        Err(_) => return (Err(FetchError::Timeout(error::CONNECT_TIMEOUT)), None),
                    }
                }
            };
            let mut request = match self.requests.request(url, referer) {
                Ok(r) => r,
                Err(e) => return (Err(e), Some(c)),
            };
            if let (true, Some(proxy)) = (c.absolute_form, &self.options.proxy) {
                proxy.to_absolute_form(url, &mut request);
            }
            // The operator's `Cookie` (`--header`) and the one sent: a redirect is asked below
            // whether its cookies changed it.
            let mut cookies = (None, None);
            if let Some(jar) = &self.cookies {
                let fields = request.headers_mut();
                let operator = fields.get(http::header::COOKIE).cloned();
                if let Some(value) = jar.header_for(url, operator.as_ref()) {
                    fields.insert(http::header::COOKIE, value);
                }
                cookies = (operator, fields.get(http::header::COOKIE).cloned());
            }
            let signed = self.login.as_ref().map(|l| l.sign(url, &mut request));
            let mut sender = match c.activate(&self.http1).await {
                Ok(sender) => sender,
                Err(e) => return (Err(e), None),
            };
            c.tape.clear();
            c.tape
                .set_head_limit(Some(self.head_limits().max_bytes * 2));
            let date = SystemTime::now();
            let head_deadline =
                deadline.min(tokio::time::Instant::now() + self.options.read_timeout);
            let exchange = async {
                sender.ready().await?;
                sender.send_request(request).await
            };
            let sent = timeout_at(head_deadline, c.drive(exchange)).await;
            let body = match sent {
                Err(_) => return (Err(FetchError::head_timeout(c.tape.received_len())), None),
                Ok(Ok(response)) if c.absolute_form && response.status() == 407 => {
                    return (Err(proxy::asks_credentials(&self.options.proxy)), None);
                }
                Ok(Ok(response)) => BodySource::framed(response),
                Ok(Err(e)) => {
                    // A kept-alive connection the server closed meanwhile: try a fresh one once.
                    if reused && c.tape.received_len() == 0 {
                        self.keep_alive.closed(&c.origin);
                        reused = false;
                        continue;
                    }
                    let limits = self.head_limits();
                    let error = c
                        .tape
                        .with_received(|r| FetchError::from_hyper(&e, r, limits));
                    let max_headers = self.options.max_headers;
                    match BodySource::to_close(&error, &mut c, max_headers, MAX_INTERIM) {
                        Some(body) => body,
                        None => return (Err(error), None),
                    }
                }
            };
            let (result, keep) = self
                .read_response(url, (c, sender), body, date, deadline, plan)
                .await;
            let result = result.map(|f| Fetched {
                elapsed: start.elapsed(),
                cookies_changed: cookie_jar::changes_redirect(
                    self.cookies.as_deref(),
                    url,
                    &f.capture,
                    cookies,
                ),
                login_asked: match (&self.login, signed) {
                    (Some(login), Some(s)) => login.ask(url, s, &f.capture.head),
                    _ => site_login::LoginAsk::Nothing,
                },
                ..f
            });
            return (result, keep);
        }
    }

    async fn read_response<F>(
        &self,
        url: &Url,
        (mut conn, sender): (Connection, SendRequest<Empty<Bytes>>),
        mut body: BodySource,
        date: SystemTime,
        mut deadline: tokio::time::Instant,
        mut plan: F,
    ) -> (Result<Fetched, FetchError>, Option<Connection>)
    where
        F: FnMut(&ResponseHead, Option<&'static str>) -> BodyPlan,
    {
        // hyper has read the whole head through the recorder (and skipped any 1xx interim
        // responses before it): parse it once, here.
        conn.tape.set_head_limit(None);
        let max_headers = self.options.max_headers;
        let Some((interim, head)) = conn
            .tape
            .with_received(|r| parse_final_head(r, max_headers, MAX_INTERIM))
        else {
            return (Err(body.unreadable_head()), None);
        };
        if let Some(jar) = &self.cookies {
            jar.store_from(url, &head);
        }
        let (max_body, mut identify) = match plan(&head, None) {
            BodyPlan::Read { max_body } => (max_body, false),
            BodyPlan::Identify { max_body } => (max_body, true),
            BodyPlan::Skip => {
                drop(body);
                let (sent, received) = match recorded(conn.tape.take()) {
                    Ok(bytes) => bytes,
                    Err(e) => return (Err(e), None),
                };
                let exchange = self.exchange(url, &conn, date, (sent, received, interim), None);
                return (Ok(fetched(Capture::new(exchange, head), None)), None);
            }
        };
        conn.tape.reserve_body(
            interim + head.len,
            head.content_length(),
            max_body,
            self.options.spool.as_ref(),
        );
        let mut received: u64 = 0;
        let mut truncated = None;
        let mut body_fault = None;
        // hyper reads this body to the close; it ends at its Content-Length instead (see
        // `length_beside_transfer_coding`), and the connection, which hyper still reads, is
        // not kept.
        let declared_end = head.length_beside_transfer_coding().map(|n| n as u64);
        // The body's bytes as received, chunk-size lines included, are capped too.
        let wire_end = ((interim + head.len) as u64).saturating_add(tape::wire_cap(max_body));
        loop {
            let idle_limit = tokio::time::Instant::now() + self.options.read_timeout;
            let wait = deadline.min(idle_limit);
            match timeout_at(wait, body.next(&mut conn)).await {
                Err(_) => {
                    truncated = Some(Truncation::Time);
                    body_fault = Some(if wait == deadline {
                        FaultKind::FetchTimeout
                    } else {
                        FaultKind::BodyTimeout
                    });
                    break;
                }
                Ok(Step::End) => {
                    // Closed before the Content-Length it was read by: cut short, as any body
                    // that stops before its declared length.
                    if declared_end.is_some_and(|end| received < end) {
                        truncated = Some(Truncation::Disconnect);
                        body_fault = Some(FaultKind::BodyIncomplete);
                    }
                    break;
                }
                Ok(Step::Failed(fault)) => {
                    let body_start = interim + head.len;
                    let rest = match head.is_chunked() {
                        true => body.after_bad_chunks(fault, &mut conn, body_start),
                        false => None,
                    };
                    if let Some(rest) = rest {
                        body = rest;
                        continue;
                    }
                    truncated = Some(Truncation::Disconnect);
                    body_fault = Some(fault);
                    break;
                }
                Ok(Step::Data(len)) => {
                    received += len as u64;
                    if let Some(rate) = &self.options.rate {
                        // The crawl's own pacing is not the server's time.
                        deadline += rate.pace(len).await;
                    }
                    if received > max_body || conn.tape.received_len() as u64 > wire_end {
                        truncated = Some(Truncation::Length);
                        break;
                    }
                    if conn.tape.held_too_long() {
                        // No spool file could take more of it: cut where memory allows.
                        truncated = Some(Truncation::Length);
                        body_fault = Some(FaultKind::SpoolFile);
                        break;
                    }
                    if identify && received >= IDENTIFY_AFTER {
                        identify = false;
                        let identified = conn.tape.with_received(|r| {
                            sniff::identify_response(&head, r.get(interim..).unwrap_or(&[]))
                        });
                        if identified.is_some_and(|t| plan(&head, Some(t)) == BodyPlan::Skip) {
                            // Not wanted: the rest is not read, nothing is archived.
                            truncated = Some(Truncation::Length);
                            break;
                        }
                    }
                    if declared_end.is_some_and(|end| received >= end) {
                        break;
                    }
                }
            }
        }
        drop(body);
        // Bytes read past the end of the response, which hyper was never handed (the recorder
        // reads ahead of it), poison the connection like bytes hyper read past it.
        let read_ahead = conn.tape.read_ahead();
        let (sent, mut received) = match recorded(conn.tape.take()) {
            Ok(bytes) => bytes,
            Err(e) => return (Err(e), None),
        };
        // The final response starts after the interim ones; offsets in `head` count from there.
        let mut reusable = truncated.is_none()
            && declared_end.is_none()
            && read_ahead == 0
            && !sender.is_closed()
            && head.keeps_alive()
            && conn.is_reusable();
        if truncated == Some(Truncation::Length) {
            // hyper may have read past the cap; store exactly head + cap bytes as transferred.
            let limit = (interim + head.len)
                .saturating_add(usize::try_from(max_body).unwrap_or(usize::MAX));
            received.truncate(limit);
        } else if truncated.is_none() {
            // Bytes after the end of this message (a body longer than its Content-Length, or
            // garbage) are not part of this response, and poison the connection.
            // A long chunked body's pages are let go as the search for its end reads them.
            let read_to = received.release_behind(interim);
            let len = message_length_as_read(&head, &received[interim..], read_to);
            if let Some(len) = len {
                if received.len() > interim + len {
                    received.truncate(interim + len);
                    reusable = false;
                }
            }
        }
        let exchange = self.exchange(url, &conn, date, (sent, received, interim), truncated);
        let keep = match reusable {
            true => conn.park(sender).await,
            false => None,
        };
        (Ok(fetched(Capture::new(exchange, head), body_fault)), keep)
    }

    /// The exchange of the bytes `sent` and `received`, whose first `interim` received bytes
    /// are 1xx interim responses.
    fn exchange(
        &self,
        url: &Url,
        conn: &Connection,
        date: SystemTime,
        (sent, mut response, interim): (Vec<u8>, Spooled, usize),
        truncated: Option<Truncation>,
    ) -> Exchange {
        let interim = response.split_front(interim);
        Exchange {
            target_uri: url.as_str().to_string(),
            ip: conn.ip,
            tls: conn.tls,
            date,
            request: match conn.absolute_form {
                true => proxy::origin_form(&sent),
                false => sent,
            },
            response,
            interim,
            truncated,
        }
    }

    /// The limits hyper reads a response head under (its buffer is never below 8 KiB, see
    /// connection.rs).
    fn head_limits(&self) -> HeadLimits {
        HeadLimits {
            max_bytes: self.options.max_head_bytes.max(8192),
            max_headers: self.options.max_headers,
        }
    }
}

/// The bytes a tape recorded: sent, and received (a long body's mapped from its spool file).
fn recorded(mut tape: tape::Tape) -> Result<(Vec<u8>, Spooled), FetchError> {
    let sent = std::mem::take(&mut tape.sent);
    let received = tape
        .into_received()
        .map_err(|e| FetchError::Spool(e.to_string()))?;
    Ok((sent, received))
}

/// Most 1xx interim responses accepted before the final response.
const MAX_INTERIM: usize = 16;

/// A fetch result before its elapsed time is known.
fn fetched(capture: Capture, body_fault: Option<FaultKind>) -> Fetched {
    Fetched {
        capture,
        elapsed: Duration::ZERO,
        body_fault,
        cookies_changed: false,
        login_asked: site_login::LoginAsk::Nothing,
    }
}

#[cfg(test)]
mod tests;
