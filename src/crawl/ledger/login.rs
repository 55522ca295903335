//! What a 401 asking for the `--http-user` credentials changes: a host in the crawl's scope
//! gets them (`fetch/site_login.rs`), and the page or requisite that was refused is fetched
//! again with them. The 401 stays in the archive, as in wget's.

use std::time::Instant;

use super::Ledger;
use crate::frontier::{Job, JobKind};

impl Ledger {
    /// Lets `job`'s host have the credentials when the crawl may go there. True when its URL
    /// was queued again to be fetched with them (the caller is then done with the job).
    pub(super) fn log_in(&mut self, job: &Job, now: Instant) -> bool {
        let (Some(login), Some(host)) = (&self.login, job.url.host_str()) else {
            return false;
        };
        if !self.admission.scope.allows_host(&job.url) || !login.accept(host) {
            return false;
        }
        tracing::info!(host, "{host} asks for credentials: it gets --http-user's");
        // robots.txt and sitemaps go on as answered (a 401 robots.txt allows everything); the
        // pages after them carry the credentials.
        if !matches!(job.kind, JobKind::Page | JobKind::Requisite { .. }) {
            return false;
        }
        *self.tally.status_codes.entry(401).or_default() += 1;
        self.frontier.put_back(job.clone(), now);
        true
    }
}
