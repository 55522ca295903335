//! One job, start to finish, in its own task: fetch, then the processor chain (filter,
//! outlinks, content-seen test, record building, write). The result goes back to the crawl
//! loop, which alone touches the frontier.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::mpsc;

use crate::capture::Capture;
use crate::chain::build_records::{build_dns_records, build_records, PageFacts, RecordOptions};
use crate::chain::content_seen::{content_seen, DedupTable};
use crate::chain::filter::{ArchiveRules, PageBudget, SkipReason, Verdict};
use crate::chain::outlinks::{
    document, outlinks, requisites_of_requisite, sitemap_links, stylesheet_links, LinkRules,
    Outlinks,
};
use crate::chain::write::write;
use crate::exchange::Truncation;
use crate::fault::FaultKind;
use crate::fetch::site_login::LoginAsk;
use crate::fetch::{BodyPlan, Connection, FetchError, Fetcher};
use crate::frontier::{link_keys, Job, JobKind, LinkKey};
use crate::http_message::retry_after::retry_after;
use crate::redis_crawl::SharedBudget;
use crate::url_rules::ProbeAnswer;
use crate::warc::{Batch, Producers};

/// What every job shares: the fetcher, the chain's stage options and shared state.
pub struct JobContext {
    /// The fetcher (resolver, TLS config).
    pub fetcher: Fetcher,
    /// Stage 1 options.
    pub archive: ArchiveRules,
    /// Stage 2 options.
    pub links: LinkRules,
    /// Stage 3 table (`None`: no deduplication).
    pub dedup: Option<Arc<DedupTable>>,
    /// Stage 4 options.
    pub records: RecordOptions,
    /// Stage 5: the WARC writer's inbox. Every clone must be dropped for the writer to finish.
    pub writer: mpsc::Sender<Batch>,
    /// Jobs running, as the writer sees them (it waits for batches differently when many are).
    pub producers: Producers,
    /// The page target, shared by all jobs (and all workers of a shared crawl) so it is exact.
    pub budget: Budget,
    /// Sitemaps decoded and parsed at once (each may be 50 MB).
    pub sitemap_slots: tokio::sync::Semaphore,
}

/// Requisites below this many transclusion hops from their page have theirs taken in turn.
/// Browsers follow any chain; real ones are short but not that short: Python's documentation
/// has an image 5 hops from its pages (a stylesheet and three imports), and in a frame that
/// is 6. Nothing deeper than 8, so a chain of stylesheets that import ever more cannot go on
/// (Heritrix bounds transclusion hops too, at 2 beyond scope).
const MAX_REQUISITE_HOPS: u8 = 8;

/// `--max-pages`: counted here, or crawl-wide in Redis for a shared crawl.
pub enum Budget {
    /// This process's own count.
    Local(PageBudget),
    /// The shared crawl's permits.
    Shared(Arc<SharedBudget>),
}

impl Budget {
    /// True when no page can be archived any more.
    pub fn exhausted(&self) -> bool {
        match self {
            Budget::Local(b) => b.exhausted(),
            Budget::Shared(b) => b.exhausted(),
        }
    }

    /// True when a save point now would let a shared crawl reach its target sooner.
    pub fn wants_commit(&self) -> bool {
        matches!(self, Budget::Shared(b) if b.wants_commit())
    }
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
        /// What it points to (links, Location, robots.txt text) and the faults met on the way.
        found: Outlinks,
        /// The frontier's keys of `found.links`, in their order.
        keys: Vec<LinkKey>,
        /// Set when the body was cut short.
        truncated: Option<Truncation>,
        /// The fault that cut the body short, if any.
        body_fault: Option<FaultKind>,
        /// Body bytes not stored because the capture was written as a revisit.
        bytes_saved: u64,
        /// The media type its Content-Type declares.
        media: Option<String>,
    },
    /// An HTML page of a type `--accept` does not take: read for its links, not archived.
    Traversed {
        /// HTTP status.
        status: u16,
        /// Its links (requisites are dropped: the page is not archived).
        found: Outlinks,
        /// The frontier's keys of `found.links`, in their order.
        keys: Vec<LinkKey>,
    },
    /// The server asked the crawl to slow down (`--retry-status`): not archived; the URL is
    /// to be retried after the wait it asked for, if any.
    RetryLater {
        /// HTTP status.
        status: u16,
        /// Its `Retry-After`.
        after: Option<Duration>,
    },
    /// A response was received but not archived.
    Skipped {
        /// HTTP status.
        status: u16,
        /// Why.
        reason: SkipReason,
        /// For a type not archived: the media type its Content-Type declares, or its first
        /// bytes identify (the extension pre-filter's probes read it).
        media: Option<String>,
    },
    /// No usable response.
    Failed(FetchError),
    /// The WARC writer is gone (output error): the crawl must stop.
    OutputClosed,
    /// A [`JobKind::Resolve`] lookup: the host's first address, if it resolved.
    Resolved(Option<std::net::IpAddr>),
}

impl Outcome {
    /// What a page's fetch says of its kind of URL to the extension pre-filter's probes
    /// (`url_rules/extension_probes.rs`); `None` when it says nothing (no answer, or the page
    /// target).
    pub fn probe_answer(&self) -> Option<ProbeAnswer<'_>> {
        match self {
            Outcome::Traversed { .. } | Outcome::Archived { page: true, .. } => {
                Some(ProbeAnswer::Page)
            }
            // Only a 2xx is skipped for its type: other statuses are archived.
            Outcome::Skipped {
                reason: SkipReason::ContentType,
                media,
                ..
            } => Some(ProbeAnswer::File(media.as_deref())),
            // A failed attempt too: links of a kind that never answers (a server that hangs on
            // them) cost three attempts in all, not three for each.
            Outcome::Archived { page: false, .. } | Outcome::Failed(_) => Some(ProbeAnswer::Miss),
            _ => None,
        }
    }
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
    /// What a 401 asked of the `--http-user` credentials (`site_login.rs`).
    pub login_asked: LoginAsk,
    /// A final answer that asked the crawl to slow down (a `--retry-status` code on a URL out
    /// of tries, or on a sitemap): not retried, but its host waits all the same.
    pub slow_down: Option<SlowDown>,
}

/// A server's request to slow down, met by a final answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowDown {
    /// Its `Retry-After`, if it gave one.
    pub after: Option<Duration>,
}

/// Runs one job.
pub async fn run_job(ctx: Arc<JobContext>, job: Job, idle: Option<Connection>) -> JobResult {
    let _producing = ctx.producers.enter();
    if job.kind == JobKind::Resolve {
        let address = ctx.fetcher.first_address(&job.url).await;
        return JobResult {
            job,
            conn: idle,
            outcome: Outcome::Resolved(address),
            bytes: 0,
            elapsed: Duration::ZERO,
            login_asked: LoginAsk::Nothing,
            slow_down: None,
        };
    }
    let robots = matches!(job.kind, JobKind::Robots { .. });
    // Sitemaps, like robots.txt, are archived whatever their type (they are how the crawl
    // found its pages) and are not pages; their body cap is the page cap.
    let sitemap = matches!(job.kind, JobKind::Sitemap { .. });
    // Page requisites too: archived whatever their type, never pages.
    let requisite = match job.kind {
        JobKind::Requisite { hops } => Some(hops),
        _ => None,
    };
    let support = robots || sitemap || requisite.is_some();
    // Pages and requisites are retried when the server asks the crawl to slow down.
    let retryable = job.kind == JobKind::Page || requisite.is_some();
    let mut verdict = Verdict::Other;
    // A page whose head gives no usable type is read, then judged by its first bytes.
    let mut waiting = false;
    let (result, conn) = ctx
        .fetcher
        .fetch(
            &job.url,
            job.referer.as_deref(),
            idle,
            |head, identified| {
                // Asked again once the first bytes of a body of unknown type are in: is it still
                // wanted (a page, or HTML to read for links)?
                // (Only `Skip` counts then; the cap set at first stays.)
                if let Some(media) = identified {
                    return match ctx.archive.wants(head.status, media) {
                        true => BodyPlan::Read { max_body: 0 },
                        false => BodyPlan::Skip,
                    };
                }
                verdict = match &ctx.budget {
                    _ if retryable && ctx.archive.retry_later(head.status, job.attempt) => {
                        Verdict::RetryLater
                    }
                    _ if !support && ctx.archive.waits_for_body(head) => {
                        waiting = true;
                        Verdict::Other
                    }
                    Budget::Local(budget) => ctx.archive.decide(head, support, budget),
                    // Claimed below, once the fetch is done (a Redis call).
                    Budget::Shared(_) => ctx.archive.classify(head, support),
                };
                match ctx.archive.body_cap(verdict, robots) {
                    Some(max_body) if waiting => BodyPlan::Identify { max_body },
                    Some(max_body) => BodyPlan::Read { max_body },
                    None => BodyPlan::Skip,
                }
            },
        )
        .await;
    // Name resolutions made meanwhile (by this fetch or others) go in first.
    let lookups = ctx.fetcher.take_dns_lookups();
    if !lookups.is_empty()
        && write(
            &ctx.writer,
            &ctx.producers,
            build_dns_records(ctx.records, &lookups),
        )
        .await
        .is_err()
    {
        return JobResult {
            job,
            conn,
            outcome: Outcome::OutputClosed,
            bytes: 0,
            elapsed: Duration::ZERO,
            login_asked: LoginAsk::Nothing,
            slow_down: None,
        };
    }
    let fetched = match result {
        Ok(f) => f,
        Err(e) => {
            return JobResult {
                job,
                conn,
                outcome: Outcome::Failed(e),
                bytes: 0,
                elapsed: Duration::ZERO,
                login_asked: LoginAsk::Nothing,
                slow_down: None,
            }
        }
    };
    let (cookies_changed, login_asked) = (fetched.cookies_changed, fetched.login_asked);
    let capture = fetched.capture;
    if waiting {
        verdict = match &ctx.budget {
            Budget::Local(budget) => ctx.archive.decide_capture(&capture, support, budget),
            Budget::Shared(_) => ctx.archive.classify_capture(&capture, support),
        };
    }
    let bytes = capture.exchange.response.len() as u64;
    let elapsed = fetched.elapsed;
    let status = capture.status();
    // A last answer that asks to slow down (the URL's tries are spent, or it is a sitemap,
    // which is not retried) slows its host all the same; robots.txt has its own waits.
    let slow_down = (!robots && verdict != Verdict::RetryLater && ctx.archive.asks_to_wait(status))
        .then(|| SlowDown {
            after: retry_after(&capture.head, SystemTime::now()),
        });
    let result = |job, conn, outcome| JobResult {
        job,
        conn,
        outcome,
        bytes,
        elapsed,
        login_asked,
        slow_down,
    };
    if let (Verdict::Page, Budget::Shared(budget)) = (verdict, &ctx.budget) {
        if !budget.reserve(job.url.as_str()).await {
            verdict = Verdict::Skip(SkipReason::TargetReached);
        }
    }
    if verdict == Verdict::RetryLater {
        let after = retry_after(&capture.head, SystemTime::now());
        return result(job, conn, Outcome::RetryLater { status, after });
    }
    if let Verdict::Skip(reason) = verdict {
        let media = match reason {
            SkipReason::ContentType => capture.media_type(),
            SkipReason::TargetReached => None,
        };
        return result(
            job,
            conn,
            Outcome::Skipped {
                status,
                reason,
                media,
            },
        );
    }
    if verdict == Verdict::Traverse {
        let mut found = outlinks(&ctx.links, &capture, &job.url, true, false);
        found.requisites.clear();
        let keys = link_keys(&found.links, &job.host);
        return result(
            job,
            conn,
            Outcome::Traversed {
                status,
                found,
                keys,
            },
        );
    }
    let page = verdict == Verdict::Page;
    let frame = is_frame(&job, &capture);
    let mut found = found_in(&ctx.links, &capture, &job, page);
    found.location_sets_cookie = found.location.is_some() && cookies_changed;
    if robots {
        found.robots_retry_after = retry_after(&capture.head, SystemTime::now());
    }
    // Keyed now, while the links' text is in this core's caches (link_key.rs).
    let keys = link_keys(&found.links, &job.host);
    let dedup = ctx.dedup.as_deref();
    // A page requisite's payload (an image, a stylesheet) repeats most from crawl to crawl.
    let payload = page || requisite.is_some() && (200..300).contains(&status);
    let seen = content_seen(dedup, &capture, payload);
    let facts = (page || frame).then_some(PageFacts {
        depth: job.depth,
        elapsed,
        links: &found.links,
    });
    let built = build_records(
        ctx.records,
        &capture,
        &seen.digest,
        seen.original.as_ref(),
        facts,
    );
    seen.remember(dedup, &capture, &built.response_id);
    let truncated = capture.exchange.truncated;
    let bytes_saved = seen.bytes_saved(&capture);
    let media = capture.head.media_type();
    // The response's bytes are let go before the wait for the writer (only a sitemap's are
    // read again, and a long one's pages, read into the process by its digests, are let go
    // from its spool file): a job that waits holds its gzip members, not the page as well.
    let capture = sitemap.then_some(capture);
    if let Some(capture) = &capture {
        capture.release_pages();
    }
    // The job counts as done only once its records are in the file (replay relies on it).
    if write(&ctx.writer, &ctx.producers, built.members)
        .await
        .is_err()
    {
        return result(job, conn, Outcome::OutputClosed);
    }
    if let (true, Budget::Shared(budget)) = (page, &ctx.budget) {
        budget.archived(job.url.as_str());
    }
    if let Some(capture) = capture {
        // Up to 50 MB decoded per file: a few at a time, off the async workers, so hostile
        // sitemaps on many hosts cannot take the memory or the runtime.
        let _slot = ctx.sitemap_slots.acquire().await;
        let (rules, url) = (ctx.links.clone(), job.url.clone());
        found.sitemap = tokio::task::spawn_blocking(move || sitemap_links(&rules, &capture, &url))
            .await
            .ok()
            .map(Box::new);
    }
    let outcome = Outcome::Archived {
        status,
        page,
        truncated,
        body_fault: fetched.body_fault,
        bytes_saved,
        media,
        found,
        keys,
    };
    result(job, conn, outcome)
}

/// What a capture of `job` leads to, once the filter has judged whether it is a `page`: its
/// links, Location and robots.txt text, what it needs to render, a frame's document read as
/// a page, a stylesheet's, script's or manifest's own requisites. A fetch and the replay of
/// its record after a crash both ask this, so the replayed capture leads where the fetch did.
pub(super) fn found_in(links: &LinkRules, capture: &Capture, job: &Job, page: bool) -> Outlinks {
    let robots = matches!(job.kind, JobKind::Robots { .. });
    let frame = is_frame(job, capture);
    let mut found = outlinks(links, capture, &job.url, page || frame, robots);
    if page {
        found.add_default_icon(links, &job.url);
        if job.kind == JobKind::Page {
            found
                .links
                .extend(stylesheet_links(links, capture, &job.url));
        }
    }
    if transcludes(job) && !frame {
        found.requisites = requisites_of_requisite(links, capture, &job.url);
    }
    // An error page (a themed 404) is archived and replayed as the site showed it: what it
    // needs to render is taken, as for a page, and its links are not followed.
    let error_page = !page && job.kind == JobKind::Page && capture.status() >= 400;
    if error_page && links.page_requisites {
        found.requisites = outlinks(links, capture, &job.url, true, false).requisites;
    }
    found
}

/// A requisite close enough to its page to have its own requisites taken.
fn transcludes(job: &Job) -> bool {
    matches!(job.kind, JobKind::Requisite { hops } if hops < MAX_REQUISITE_HOPS)
}

/// A frame's document (such a requisite that is HTML, or SVG): read as a page is, its links
/// followed and what it needs to render taken.
fn is_frame(job: &Job, capture: &Capture) -> bool {
    transcludes(job) && document(capture)
}
