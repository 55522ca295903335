//! What the ledger tells the operator of seeds and of responses not archived: a seed that
//! answered an HTTP error or is of a type not accepted, at default verbosity (the first hundred
//! of a run); any response not archived for its type, at `-v`.

use url::Url;

use super::Ledger;
use crate::frontier::{Job, JobKind};

impl Ledger {
    /// A response not archived for its type (`--accept`), named at `-v` as an archived one
    /// is; a seed's at default verbosity, as a seed that answers an error is: a crawl of a
    /// PDF named as its seed otherwise ended with exit 0 and nothing archived or said.
    pub(super) fn said_not_archived(&mut self, job: &Job, status: u16, media: Option<&str>) {
        let media = media.unwrap_or("of no known type");
        if job.depth == 0 && job.kind == JobKind::Page {
            self.seeds_in_error += 1;
            if self.seeds_in_error <= 100 {
                tracing::warn!(
                    "seed {} is {media}, a type --accept does not take: not archived",
                    job.url
                );
            }
        } else {
            tracing::info!(status, url = %job.url, media, "not archived: its type is not accepted");
        }
    }

    /// A seed (or where it redirects) answered `status`, an HTTP error: archived as data, and
    /// said at default verbosity, as a cron job's operator wants to know that a seed moved or
    /// was mistyped (wget exits 8 for it; trawl's exit code stays 0: see README). The first
    /// hundred of a run are named.
    pub(super) fn seed_answered_error(&mut self, url: &Url, status: u16) {
        self.seeds_in_error += 1;
        if self.seeds_in_error <= 100 {
            tracing::warn!("seed {url} answered {status}");
        }
    }
}
