//! What a 401 asking for the `--http-user` credentials changes: a host in the crawl's scope
//! gets them (`fetch/site_login.rs`), and the page or requisite that was refused is fetched
//! again with them; one whose Digest nonce had gone stale is fetched again with the fresh one,
//! a bounded number of times. The 401 stays in the archive, as in wget's.

use std::time::{Duration, Instant};

use super::Ledger;
use crate::fetch::site_login::LoginAsk;
use crate::frontier::{Job, JobKind};

/// Attempts a URL may use up before a stale nonce no longer sends it back (a server that
/// calls every nonce stale would otherwise be asked forever).
const STALE_ATTEMPTS: u32 = 2;

impl Ledger {
    /// Acts on what `job`'s response asked of the credentials. True when its URL was queued
    /// again to be fetched with them (the caller is then done with the job).
    pub(super) fn log_in(&mut self, job: &Job, ask: LoginAsk, now: Instant) -> bool {
        let (Some(login), Some(host)) = (&self.login, job.url.host_str()) else {
            return false;
        };
        // robots.txt and sitemaps go on as answered (a 401 robots.txt allows everything); the
        // pages after them carry the credentials.
        let fetched_again = matches!(job.kind, JobKind::Page | JobKind::Requisite { .. });
        match ask {
            LoginAsk::Nothing => false,
            LoginAsk::Credentials => {
                if !self.admission.scope.allows_host(&job.url) || !login.accept(host) {
                    return false;
                }
                tracing::info!(host, "{host} asks for credentials: it gets --http-user's");
                if fetched_again {
                    *self.tally.status_codes.entry(401).or_default() += 1;
                    self.frontier.put_back(job.clone(), now);
                }
                fetched_again
            }
            LoginAsk::FreshNonce => {
                if !fetched_again || job.attempt >= STALE_ATTEMPTS {
                    return false;
                }
                *self.tally.status_codes.entry(401).or_default() += 1;
                self.frontier.retry(job.clone(), now, Duration::ZERO);
                true
            }
        }
    }
}
