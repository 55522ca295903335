//! The crawl loop's state and what it does with each finished job: count it, apply robots.txt
//! results, offer links and redirects to the frontier through admission, retry or give up
//! failures, and fall back from https to http for bare-host seeds.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use url::Url;

use super::admission::{Admission, Rejection};
use super::idle::IdlePool;
use super::worker::{JobResult, Outcome, SkipReason};
use crate::config::Config;
use crate::fetch::{origin_key, FetchError};
use crate::frontier::politeness::retry_backoff;
use crate::frontier::{Candidate, Frontier, Job, JobKind, RobotsOutcome};
use crate::report::{StopReason, Tally};
use crate::state::CrawlState;
use crate::url::Scope;

/// Mutable state of the loop, kept together so handlers can borrow it as one.
pub(super) struct LoopState {
    pub(super) config: Arc<Config>,
    pub(super) frontier: Frontier,
    pub(super) admission: Admission,
    /// https origins of bare-host seeds, with the http URL to fall back to.
    pub(super) fallback: HashMap<String, Url>,
    pub(super) tally: Tally,
    pub(super) idle: IdlePool,
    pub(super) stopping: Option<StopReason>,
}

impl LoopState {
    pub(super) fn new(
        config: Arc<Config>,
        mut frontier: Frontier,
        saved: Option<CrawlState>,
    ) -> Self {
        let mut scope = Scope::new(config.scope);
        for seed in &config.seeds {
            scope.add_seed(&seed.url);
        }
        let admission = Admission::new(
            scope,
            config.filter.clone(),
            config.max_depth,
            config.max_redirects,
            config.limits.clone(),
        );
        let mut fallback = HashMap::new();
        let now = Instant::now();
        let mut tally = Tally::default();
        if let Some(saved) = saved {
            tally = saved.tally;
        }
        for seed in &config.seeds {
            if seed.http_fallback {
                let mut http = seed.url.clone();
                if http.set_scheme("http").is_ok() {
                    fallback.insert(origin_key(&seed.url), http);
                }
            }
            frontier.push(
                Candidate {
                    url: seed.url.clone(),
                    depth: 0,
                    redirects: 0,
                },
                now,
            );
        }
        LoopState {
            config,
            frontier,
            admission,
            fallback,
            tally,
            idle: IdlePool::default(),
            stopping: None,
        }
    }

    pub(super) fn handle(&mut self, result: JobResult, now: Instant) {
        let JobResult {
            job,
            conn,
            outcome,
            bytes,
            elapsed,
        } = result;
        if let Some(conn) = conn {
            self.idle.put(job.host.clone(), conn);
        }
        if !matches!(outcome, Outcome::Failed(_) | Outcome::OutputClosed) {
            self.tally.requests += 1;
            self.tally.request_time += elapsed;
            self.tally.bytes_downloaded += bytes;
            *self
                .tally
                .hosts_crawled
                .entry(job.host.clone())
                .or_default() += 1;
        }
        match outcome {
            Outcome::Failed(error) => self.failed(job, error, now),
            Outcome::OutputClosed => {
                self.stopping = Some(StopReason::OutputError);
                self.frontier.complete(&job.host, now);
            }
            Outcome::Skipped { status, reason } => {
                *self.tally.status_codes.entry(status).or_default() += 1;
                match reason {
                    SkipReason::ContentType => self.tally.filtered.content_type += 1,
                    SkipReason::TargetReached => self.tally.filtered.target_reached += 1,
                }
                self.frontier.complete(&job.host, now);
            }
            Outcome::Archived {
                status,
                page,
                links,
                location,
                truncated,
                robots_body,
                faults,
                bytes_saved,
            } => {
                if bytes_saved > 0 {
                    self.tally.revisits += 1;
                    self.tally.bytes_saved += bytes_saved;
                }
                *self.tally.status_codes.entry(status).or_default() += 1;
                for fault in faults {
                    *self.tally.errors.entry(fault.to_string()).or_default() += 1;
                }
                if let Some(t) = truncated {
                    *self
                        .tally
                        .truncated
                        .entry(t.as_warc_value().to_string())
                        .or_default() += 1;
                }
                tracing::info!(status, url = %job.url, "archived");
                if let JobKind::Robots { .. } = job.kind {
                    let outcome = match location {
                        Some(to) => RobotsOutcome::Redirect(to),
                        None if (300..400).contains(&status) => RobotsOutcome::Fetched {
                            status: 404,
                            body: Vec::new(),
                        },
                        None => RobotsOutcome::Fetched {
                            status,
                            body: robots_body.unwrap_or_default(),
                        },
                    };
                    self.frontier.robots_result(&job, outcome, now);
                    return;
                }
                if page {
                    self.tally.pages += 1;
                    let host_pages = self
                        .tally
                        .pages_per_host
                        .entry(job.host.clone())
                        .or_default();
                    *host_pages += 1;
                    let quota = self.config.limits.max_pages_per_host;
                    if quota.is_some_and(|max| *host_pages >= max) {
                        let dropped = self.frontier.drop_host(&job.host);
                        self.tally.filtered.host_quota += dropped as u64;
                    }
                }
                for link in links {
                    self.offer(link, job.depth + 1, 0, false, now);
                }
                if let Some(to) = location {
                    self.offer(to, job.depth, job.redirects + 1, job.depth == 0, now);
                }
                self.frontier.complete(&job.host, now);
            }
        }
    }

    /// Offers a discovered URL to the frontier. Redirects out of a seed's own chain extend the
    /// scope to their target, as a seed that moved is still what the user asked for.
    fn offer(&mut self, url: Url, depth: u32, redirects: u32, from_seed: bool, now: Instant) {
        if from_seed {
            self.admission.scope.add_seed(&url);
        }
        if let (Some(max), Some(host)) = (self.config.limits.max_pages_per_host, url.host_str()) {
            if self
                .tally
                .pages_per_host
                .get(host)
                .is_some_and(|&p| p >= max)
            {
                self.tally.filtered.host_quota += 1;
                return;
            }
        }
        match self.admission.check(&url, depth, redirects) {
            Ok(()) => {
                if !self.frontier.push(
                    Candidate {
                        url,
                        depth,
                        redirects,
                    },
                    now,
                ) {
                    self.tally.filtered.duplicate += 1;
                }
            }
            Err(r) => {
                let f = &mut self.tally.filtered;
                match r {
                    Rejection::Scope => f.scope += 1,
                    Rejection::Depth => f.depth += 1,
                    Rejection::Redirects => f.redirects += 1,
                    Rejection::Pattern => f.pattern += 1,
                    Rejection::Extension => f.extension += 1,
                    Rejection::UrlLength => f.url_length += 1,
                    Rejection::PathTrap => f.path_trap += 1,
                    Rejection::Port => f.port += 1,
                }
            }
        }
    }

    fn failed(&mut self, job: Job, error: FetchError, now: Instant) {
        *self
            .tally
            .errors
            .entry(error.kind().to_string())
            .or_default() += 1;
        tracing::info!(url = %job.url, %error, "fetch failed");
        if let FetchError::Blocked(why) = &error {
            // Visible without -v: a refused address is a configuration question, not noise.
            tracing::warn!("not connecting: {why}");
        }
        let origin = origin_key(&job.url);
        let origin = match &job.kind {
            JobKind::Robots { origin, .. } => origin.clone(),
            JobKind::Page => origin,
        };
        if error.is_unreachable_origin() {
            if let Some(http) = self.fallback.remove(&origin) {
                tracing::info!(%origin, "TLS not available; falling back to {http}");
                self.frontier.abandon_origin(&job.host, &origin);
                self.frontier.complete(&job.host, now);
                self.frontier.push(
                    Candidate {
                        url: http,
                        depth: 0,
                        redirects: 0,
                    },
                    now,
                );
                return;
            }
        }
        match job.kind {
            JobKind::Robots { .. } => {
                let outcome = if error.is_retryable() {
                    RobotsOutcome::Unreachable
                } else {
                    RobotsOutcome::Refused
                };
                self.frontier.robots_result(&job, outcome, now)
            }
            JobKind::Page if error.is_retryable() && job.attempt < self.config.retries => {
                self.tally.retries += 1;
                let base = self.config.frontier.delay.max(Duration::from_secs(1));
                let backoff = retry_backoff(base, job.attempt + 1);
                self.frontier.retry(job, now, backoff);
            }
            JobKind::Page => {
                self.tally.failed_urls += 1;
                self.frontier.complete(&job.host, now);
            }
        }
    }
}
