//! What a failed fetch changes in the ledger: the fallback from https to http for a bare-host
//! seed whose TLS origin is unreachable, a robots.txt that cannot be fetched (the host waits or
//! is given up), retries with backoff for pages and requisites, a host that stopped answering
//! (its URLs wait for it, or it is given up), and the count of failed URLs.

use std::time::{Duration, Instant};

use super::Ledger;
use crate::fetch::{origin_key, FetchError};
use crate::frontier::host_health::DOWN_AFTER;
use crate::frontier::politeness::retry_backoff;
use crate::frontier::{Candidate, HostDown, Job, JobKind, RobotsOutcome, Silence};

impl Ledger {
    /// Applies the failure of `job`.
    pub(super) fn failed(&mut self, job: Job, error: FetchError, now: Instant) {
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
        if self.waits_for_proxy(&job, &error, now) {
            return;
        }
        let origin = origin_key(&job.url);
        let origin = match &job.kind {
            JobKind::Robots { origin, .. } => origin.clone(),
            JobKind::Page
            | JobKind::Resolve
            | JobKind::Sitemap { .. }
            | JobKind::Requisite { .. } => origin,
        };
        if error.is_unreachable_origin() {
            if let Some(seeds) = self.fallback.remove(&origin) {
                self.seed_journal.reached(&origin);
                // Visible without -v: what was archived is then the http site, and a
                // certificate the operator could trust (`--ca-certificate`) is the reason.
                let more = match seeds.len() {
                    1 => String::new(),
                    n => format!(" and {} more seed(s) there", n - 1),
                };
                tracing::warn!(
                    "{origin} could not be reached ({error}); crawling {}{more} instead",
                    seeds[0]
                );
                self.frontier.abandon_origin(&job.host, &origin);
                self.frontier.complete(&job.host, now);
                for url in seeds {
                    let seed = Candidate {
                        url,
                        depth: 0,
                        redirects: 0,
                        requisite: 0,
                        referer: self.referer.seed(),
                    };
                    self.frontier.push(seed, now);
                }
                return;
            }
        }
        if error.reached_host() {
            self.host_reached(&job.host, now);
        }
        // A connection that fails is the host's, whatever the URL.
        let host_down = error.is_connect_failure() && self.frontier.connection_failed(&job.host);
        let silence = match (error.is_silence(), &job.kind) {
            (true, JobKind::Page | JobKind::Requisite { .. }) => {
                let limit = self.rules.host_down_limit;
                self.frontier.request_unanswered(&job, now, limit)
            }
            _ => Silence::Retry,
        };
        if let Silence::GivenUp { dropped } = silence {
            // Visible without -v: a whole host is dropped.
            tracing::warn!(
                "giving up {}: no answer to any request for {:?} ({error}); {dropped} queued URL(s) dropped",
                job.host,
                whole_seconds(self.rules.host_down_limit)
            );
            return;
        }
        match &job.kind {
            JobKind::Page | JobKind::Requisite { .. } if host_down => {
                self.wait_for_host(job, &error, now);
            }
            JobKind::Robots { origin, .. } => {
                let outcome = if error.is_retryable() {
                    RobotsOutcome::Unreachable
                } else {
                    RobotsOutcome::Refused
                };
                if self.frontier.robots_result(&job, outcome, now) {
                    // Visible without -v: a whole host is dropped.
                    tracing::warn!(
                        "giving up {origin}: its robots.txt could not be fetched ({error}), so none of its URLs may be fetched"
                    );
                }
            }
            JobKind::Page | JobKind::Requisite { .. }
                if error.is_retryable()
                    && job.attempt < self.rules.retries
                    && silence == Silence::Retry =>
            {
                self.tally.retries += 1;
                let backoff = retry_backoff(self.rules.retry_base(), job.attempt + 1);
                let backoff = self
                    .rules
                    .retry_max_wait
                    .map_or(backoff, |max| backoff.min(max));
                self.frontier.retry(job, now, backoff);
            }
            JobKind::Resolve => self.frontier.resolved(&job.host, None, now),
            // A sitemap that cannot be fetched is not retried: its pages may be linked too.
            JobKind::Sitemap { .. } => self.frontier.complete(&job.host, now),
            JobKind::Page | JobKind::Requisite { .. } => {
                self.tally.failed_urls += 1;
                if job.depth == 0 && job.redirects == 0 {
                    // A seed that cannot be fetched is always reported, with the reason.
                    tracing::warn!("seed {} could not be fetched: {error}", job.url);
                }
                self.frontier.complete(&job.host, now);
            }
        }
    }

    /// Puts `job` back to wait for its host, which is down, or gives the host up.
    fn wait_for_host(&mut self, job: Job, error: &FetchError, now: Instant) {
        let host = job.host.clone();
        let (base, limit) = (self.rules.retry_base(), self.rules.host_down_limit);
        match self.frontier.wait_for_host(job, now, base, limit) {
            // Visible without -v: a whole host waits.
            HostDown::Waiting { wait, first: true } => tracing::warn!(
                "{host} is not answering ({error}): its URLs wait for it, tried again in {:?}; given up after {:?} without an answer (--host-down-limit)",
                whole_seconds(wait),
                whole_seconds(limit)
            ),
            HostDown::Waiting { wait, .. } => {
                tracing::info!(%host, %error, "host still not answering; tried again in {wait:?}")
            }
            // Visible without -v: a whole host is dropped.
            HostDown::GivenUp { dropped, down_for } if down_for.is_zero() => tracing::warn!(
                "giving up {host}: {DOWN_AFTER} connections in a row failed ({error}); {dropped} queued URL(s) dropped"
            ),
            HostDown::GivenUp { dropped, down_for } => tracing::warn!(
                "giving up {host}: not answering for {:?} ({error}); {dropped} queued URL(s) dropped",
                whole_seconds(down_for)
            ),
        }
    }

    /// A connection to `host` was made; says so if it had been down.
    pub(super) fn host_reached(&mut self, host: &str, now: Instant) {
        self.proxy_answers(now);
        if let Some(down) = self.frontier.host_reached(host, now) {
            tracing::warn!("{host} answers again, after {:?} down", whole_seconds(down));
        }
    }
}

/// `d` to the second, for the log.
fn whole_seconds(d: Duration) -> Duration {
    Duration::from_secs(d.as_secs())
}
