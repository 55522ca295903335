//! One job, start to finish, in its own task: fetch, decide, build and compress the WARC
//! records, hand them to the writer, and extract links. The result goes back to the crawl loop,
//! which alone touches the frontier.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use url::Url;

use crate::config::Config;
use crate::exchange::{Exchange, Truncation};
use crate::extract::{decode_html, extract_links};
use crate::fetch::{BodyPlan, Connection, FetchError, Fetcher};
use crate::frontier::robots::ROBOTS_PARSE_LIMIT;
use crate::frontier::{Job, JobKind};
use crate::http::{decode_content, parse_response_head, ResponseHead};
use crate::record::{
    exchange_records_as, gzip_member, metadata_record, sha1_digest, warc_date, Capture, Original,
};
use crate::url::resolve_link;
use crate::warc::Batch;

/// Largest robots.txt body read (more than the parse limit, which cuts at a line break).
const ROBOTS_MAX_BODY: u64 = 2 * ROBOTS_PARSE_LIMIT as u64;

/// Counts archived pages against `--max-pages`, shared by all workers so the target is exact.
#[derive(Debug)]
pub struct PageBudget {
    limit: Option<u64>,
    taken: AtomicU64,
}

impl PageBudget {
    /// A budget of `limit` pages (unlimited when `None`).
    pub fn new(limit: Option<u64>) -> Self {
        Self::with_taken(limit, 0)
    }

    /// A budget of which `taken` pages are already used (a resumed crawl).
    pub fn with_taken(limit: Option<u64>, taken: u64) -> Self {
        PageBudget {
            limit,
            taken: AtomicU64::new(taken),
        }
    }

    /// Claims one page; false when the target is already met.
    pub fn try_take(&self) -> bool {
        match self.limit {
            None => {
                self.taken.fetch_add(1, Ordering::Relaxed);
                true
            }
            Some(limit) => self
                .taken
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                    (t < limit).then_some(t + 1)
                })
                .is_ok(),
        }
    }

    /// True when no page can be claimed any more.
    pub fn exhausted(&self) -> bool {
        self.limit
            .is_some_and(|l| self.taken.load(Ordering::Acquire) >= l)
    }
}

/// Shared by every worker.
pub struct WorkerContext {
    /// Crawl configuration.
    pub config: Arc<Config>,
    /// The fetcher (resolver, TLS config).
    pub fetcher: Fetcher,
    /// The WARC writer's inbox.
    pub writer: mpsc::Sender<Batch>,
    /// The page target.
    pub budget: PageBudget,
}

/// Why a received response was not archived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// Its Content-Type is not accepted.
    ContentType,
    /// The page target was reached.
    TargetReached,
}

/// What happened to a job.
#[derive(Debug)]
pub enum Outcome {
    /// The response was archived.
    Archived {
        /// HTTP status.
        status: u16,
        /// A page that counts toward `--max-pages`.
        page: bool,
        /// Outlinks of a page.
        links: Vec<Url>,
        /// Redirect target of a 3xx.
        location: Option<Url>,
        /// Set when the body was cut short.
        truncated: Option<Truncation>,
        /// Decoded body of a robots.txt response.
        robots_body: Option<Vec<u8>>,
        /// Faults met while reading or decoding the body (the response is still archived).
        faults: Vec<&'static str>,
        /// Body bytes not stored because the capture was written as a revisit.
        bytes_saved: u64,
    },
    /// A response was received but not archived.
    Skipped {
        /// HTTP status.
        status: u16,
        /// Why.
        reason: SkipReason,
    },
    /// No usable response.
    Failed(FetchError),
    /// The WARC writer is gone (output error): the crawl must stop.
    OutputClosed,
}

/// The report of one job to the crawl loop.
pub struct JobResult {
    /// The job that ran.
    pub job: Job,
    /// The connection, when it can be kept alive.
    pub conn: Option<Connection>,
    /// What happened.
    pub outcome: Outcome,
    /// Response bytes received.
    pub bytes: u64,
    /// Fetch time.
    pub elapsed: Duration,
}

enum Plan {
    Undecided,
    Page,
    Other,
    Skip(SkipReason),
}

/// Runs one job.
pub async fn run_job(ctx: Arc<WorkerContext>, job: Job, idle: Option<Connection>) -> JobResult {
    let config = &ctx.config;
    let is_robots = matches!(job.kind, JobKind::Robots { .. });
    let mut plan = Plan::Undecided;
    let (result, conn) = ctx
        .fetcher
        .fetch(&job.url, idle, |status, headers| {
            let media = headers
                .get(http::header::CONTENT_TYPE)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).to_string())
                .map(|ct| {
                    ct.split(';')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_ascii_lowercase()
                })
                .unwrap_or_default();
            plan = if is_robots || (300..400).contains(&status) {
                Plan::Other
            } else if !config.accepts(&media) {
                Plan::Skip(SkipReason::ContentType)
            } else if (200..300).contains(&status) {
                if ctx.budget.try_take() {
                    Plan::Page
                } else {
                    Plan::Skip(SkipReason::TargetReached)
                }
            } else {
                Plan::Other
            };
            match plan {
                Plan::Skip(_) => BodyPlan::Skip,
                _ if is_robots => BodyPlan::Read {
                    max_body: ROBOTS_MAX_BODY,
                },
                _ => BodyPlan::Read {
                    max_body: config.max_body_size,
                },
            }
        })
        .await;
    let fetched = match result {
        Ok(f) => f,
        Err(e) => {
            return JobResult {
                job,
                conn,
                outcome: Outcome::Failed(e),
                bytes: 0,
                elapsed: Duration::ZERO,
            }
        }
    };
    let bytes = fetched.exchange.response.len() as u64;
    let mut faults: Vec<&'static str> = fetched.body_fault.into_iter().collect();
    let elapsed = fetched.elapsed;
    let status = fetched.status;
    let page = match plan {
        Plan::Skip(reason) => {
            return JobResult {
                job,
                conn,
                outcome: Outcome::Skipped { status, reason },
                bytes,
                elapsed,
            }
        }
        Plan::Page => true,
        Plan::Other | Plan::Undecided => false,
    };
    let exchange = fetched.exchange;
    let head = parse_response_head(&exchange.response);
    // De-chunked once, used for link extraction, robots.txt and the payload digest.
    let payload = head.as_ref().map(|h| h.payload(&exchange.response));
    let complete = exchange.truncated.is_none();
    let location = head
        .as_ref()
        .filter(|_| (300..400).contains(&status))
        .and_then(|h| h.header_str("location"))
        .and_then(|loc| resolve_link(&job.url, &loc));
    let links = match (&head, &payload, page) {
        (Some(h), Some(p), true) => page_links(config, &job.url, h, p, complete, &mut faults),
        _ => Vec::new(),
    };
    let robots_body = match (&head, &payload, is_robots) {
        (Some(h), Some(p), true) => Some(decoded_body(
            h,
            p,
            complete,
            ROBOTS_MAX_BODY as usize,
            &mut faults,
        )),
        _ => None,
    };
    let page_info = page.then_some(PageInfo {
        depth: job.depth,
        elapsed,
        links: &links,
    });
    let (members, bytes_saved) = build_batch(
        &ctx,
        &exchange,
        head.as_ref(),
        payload.as_deref(),
        page_info,
    );
    // The job counts as done only once its records are in the file (resume relies on it).
    let (batch, written) = Batch::acknowledged(members);
    if ctx.writer.send(batch).await.is_err() || written.await.is_err() {
        return JobResult {
            job,
            conn,
            outcome: Outcome::OutputClosed,
            bytes,
            elapsed,
        };
    }
    JobResult {
        job,
        conn,
        outcome: Outcome::Archived {
            status,
            page,
            links,
            location,
            truncated: exchange.truncated,
            robots_body,
            faults,
            bytes_saved,
        },
        bytes,
        elapsed,
    }
}

/// What a page's metadata record says.
struct PageInfo<'a> {
    depth: u32,
    elapsed: Duration,
    links: &'a [Url],
}

/// Builds and compresses the records of one capture: request, then response (or a revisit
/// when the content-seen test finds the payload archived already), then the page's metadata
/// record if asked for. Returns the gzip members and the bytes a revisit saved.
fn build_batch(
    ctx: &WorkerContext,
    ex: &Exchange,
    head: Option<&ResponseHead>,
    payload: Option<&[u8]>,
    page: Option<PageInfo<'_>>,
) -> (Vec<Vec<u8>>, u64) {
    let digest = payload.map(sha1_digest);
    // Only complete, non-empty page payloads take part in the content-seen test.
    let dedup = match (&ctx.config.dedup, head, &digest, &payload) {
        (Some(table), Some(h), Some(d), Some(p))
            if page.is_some() && ex.truncated.is_none() && !p.is_empty() =>
        {
            Some((table, h.len, d))
        }
        _ => None,
    };
    let original = dedup.and_then(|(table, _, d)| table.lookup(d));
    let (capture, saved) = match (&original, dedup) {
        (Some(o), Some((_, head_len, _))) => (
            Capture::Revisit {
                head_len,
                original: o,
            },
            (ex.response.len() - head_len) as u64,
        ),
        _ => (Capture::Response, 0),
    };
    let (request, response) = exchange_records_as(ex, digest.as_deref(), capture);
    if let (None, Some((table, _, d))) = (&original, dedup) {
        table.insert(
            d.clone(),
            Original {
                target_uri: ex.target_uri.clone(),
                date: warc_date(ex.date),
                record_id: Some(response.id.clone()),
            },
        );
    }
    let level = ctx.config.gzip_level;
    let mut members = vec![
        gzip_member(&request.bytes, level),
        gzip_member(&response.bytes, level),
    ];
    if let (true, Some(info)) = (ctx.config.metadata_records, page) {
        let mut fields: Vec<(&str, String)> = vec![
            ("hopsFromSeed", info.depth.to_string()),
            ("fetchTimeMs", info.elapsed.as_millis().to_string()),
        ];
        fields.extend(info.links.iter().map(|l| ("outlink", l.to_string())));
        let meta = metadata_record(&ex.target_uri, ex.date, &response.id, &fields);
        members.push(gzip_member(&meta.bytes, level));
    }
    (members, saved)
}

/// The payload with content coding removed, at most `cap` bytes; empty when it cannot be
/// decoded (the fault is noted when the body was `complete`).
fn decoded_body(
    head: &ResponseHead,
    payload: &[u8],
    complete: bool,
    cap: usize,
    faults: &mut Vec<&'static str>,
) -> Vec<u8> {
    let encoding = head.header_str("content-encoding");
    match decode_content(encoding.as_deref(), payload, cap) {
        Ok(decoded) => {
            if decoded.capped {
                faults.push("decoded_size_capped");
            }
            decoded.data
        }
        // A truncated body legitimately ends mid-stream; only a complete one is "invalid".
        Err(_) if !complete => Vec::new(),
        Err(_) => {
            faults.push("invalid_content_encoding");
            Vec::new()
        }
    }
}

/// The outlinks of an HTML page from its payload (see [`ResponseHead::payload`]).
pub(super) fn page_links(
    config: &Config,
    url: &Url,
    head: &ResponseHead,
    payload: &[u8],
    complete: bool,
    faults: &mut Vec<&'static str>,
) -> Vec<Url> {
    let media = head.media_type().unwrap_or_default();
    if media != "text/html" && media != "application/xhtml+xml" {
        return Vec::new();
    }
    let body = decoded_body(
        head,
        payload,
        complete,
        config.limits.max_decoded_size,
        faults,
    );
    let text = decode_html(&body, head.charset().as_deref());
    let links = extract_links(&text, url, config.max_links_per_page);
    if links.dropped > 0 {
        faults.push("links_capped");
    }
    links.urls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_exact_under_contention() {
        let budget = Arc::new(PageBudget::new(Some(1000)));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let b = budget.clone();
                std::thread::spawn(move || (0..1000).filter(|_| b.try_take()).count())
            })
            .collect();
        let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(total, 1000);
        assert!(budget.exhausted());
        assert!(!PageBudget::new(None).exhausted());
    }
}
