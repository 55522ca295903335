//! A `--proxy` that cannot be connected to is no fault of the sites behind it: the job is put
//! back as not attempted (a robots.txt keeps its attempts, a page its tries) and tried again
//! in a few seconds, no host is counted down, and the crawl waits for the proxy up to
//! `--host-down-limit`, as for a host that answered before. A proxy down when the crawl
//! started gave every host up within half a minute, and the crawl was recorded as finished
//! (found by an exploratory crawl). Past the limit, its failures are the hosts' again.

use std::time::{Duration, Instant};

use super::Ledger;
use crate::fault::FaultKind;
use crate::fetch::FetchError;
use crate::frontier::{Job, JobKind, RobotsOutcome};

/// How long a job waits for the proxy before it is tried again.
const PROXY_RETRY: Duration = Duration::from_secs(5);

/// Since when the proxy has not been reached (`None`: it answers).
#[derive(Debug, Default)]
pub(super) struct ProxyDown {
    since: Option<Instant>,
    /// Its hosts' failures count again (past the limit), said once.
    given_up: bool,
}

impl Ledger {
    /// Puts `job` back to wait for the proxy when `error` is that the proxy could not be
    /// connected to, and it has not been down for `--host-down-limit`; true when it did.
    pub(super) fn waits_for_proxy(&mut self, job: &Job, error: &FetchError, now: Instant) -> bool {
        if error.kind() != FaultKind::ProxyConnect || self.proxy_down.given_up {
            return false;
        }
        let limit = self.rules.host_down_limit;
        let since = *self.proxy_down.since.get_or_insert_with(|| {
            // Visible without -v: every fetch waits.
            tracing::warn!(
                "the proxy is not answering ({error}): fetches wait for it, tried again every {PROXY_RETRY:?}, for {limit:?} at most (--host-down-limit)"
            );
            now
        });
        if now.saturating_duration_since(since) >= limit {
            self.proxy_down.given_up = true;
            tracing::warn!(
                "the proxy has not answered for {limit:?}: its sites' URLs fail from now on"
            );
            return false;
        }
        match &job.kind {
            JobKind::Robots { .. } => {
                let outcome = RobotsOutcome::Deferred(PROXY_RETRY);
                self.frontier.robots_result(job, outcome, now);
            }
            JobKind::Page | JobKind::Requisite { .. } => {
                self.frontier.put_back_after(job.clone(), now, PROXY_RETRY);
            }
            // Not retried, as a sitemap that cannot be fetched is not: its pages may be linked.
            JobKind::Sitemap { .. } => self.frontier.complete(&job.host, now),
            JobKind::Resolve => self.frontier.resolved(&job.host, None, now),
        }
        true
    }

    /// A host was reached (through the proxy, if there is one): the proxy answers.
    pub(super) fn proxy_answers(&mut self, now: Instant) {
        if let Some(since) = self.proxy_down.since.take() {
            let down = Duration::from_secs(now.saturating_duration_since(since).as_secs());
            tracing::warn!("the proxy answers again, after {down:?}");
            self.proxy_down.given_up = false;
        }
    }
}
