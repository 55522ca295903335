//! The crawl's ledger: the frontier, the admission rules and the counters, and what each
//! finished job changes in them. Count it, apply robots.txt results, offer links and redirects
//! to the frontier through admission, retry or give up failures, and fall back from https to
//! http for bare-host seeds. Owned by the crawl loop alone; crash replay feeds it too. What a
//! failed fetch changes is `failed.rs`; what seeds change, `seeds.rs`; what a job offers the
//! frontier, `offers.rs`; requisites first met as links, `linked_requisites.rs`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use url::Url;

mod failed;
mod linked_requisites;
mod login;
mod notices;
mod offers;
mod proxy_down;
pub(super) mod seed_journal;
mod seeds;

use super::admission::Admission;
use super::job::{JobResult, Outcome, SlowDown};
use super::operator_changes::LiveChanges;
use super::site_hosts::SiteHosts;
use crate::chain::filter::SkipReason;
use crate::config::AdmissionConfig;
use crate::exchange::Truncation;
use crate::fetch::{AddressGuard, SiteLogin};
use crate::frontier::{Frontier, Job, JobKind, RobotsOutcome};
use crate::report::Tally;
use crate::seeds::SavedSeeds;
use crate::url_rules::session_ids::without_session_ids;
use crate::url_rules::{RefererPolicy, Scope};
use linked_requisites::LinkedRequisites;
use offers::{count_rejection, Via};
use seed_journal::SeedJournal;

/// The ledger's own settings.
#[derive(Debug, Clone, Copy)]
pub(super) struct LedgerRules {
    /// Most pages archived per host.
    pub(super) max_pages_per_host: Option<u64>,
    /// Network retries per URL.
    pub(super) retries: u32,
    /// `--waitretry`: the longest wait before a retry.
    pub(super) retry_max_wait: Option<Duration>,
    /// The configured per-host delay (retries wait at least one second, or this).
    pub(super) delay: Duration,
    /// `--page-requisites`.
    pub(super) page_requisites: bool,
    /// `--host-down-limit`: how long a host that stopped answering is waited for.
    pub(super) host_down_limit: Duration,
}

impl LedgerRules {
    /// The first wait of a retry, which doubles from there (the probes of a host that is down
    /// go on doubling it): one second, or the delay when longer.
    fn retry_base(&self) -> Duration {
        self.delay.max(Duration::from_secs(1))
    }
}

/// What a handled result means for the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Handled {
    /// Carry on.
    Done,
    /// The WARC writer is gone: the crawl must stop.
    OutputClosed,
}

/// The frontier, the admission rules and the counters, changed only through [`Ledger::handle`].
pub(super) struct Ledger {
    /// Read by the loop (next job, queue size) and by save points (checkpoint).
    pub(super) frontier: Frontier,
    /// Read by the loop (progress, status) and saved at each save point.
    pub(super) tally: Tally,
    pub(super) admission: Admission,
    /// https origins of bare-host seeds, with the http URLs to fall back to (one per seed of
    /// that origin: `docs.test/a` and `docs.test/b`).
    fallback: HashMap<String, Vec<Url>>,
    /// What seeds left here (scope, fallbacks), for a shared crawl's other workers and the
    /// crawl state.
    pub(super) seed_journal: SeedJournal,
    pub(super) rules: LedgerRules,
    /// What the operator changed through the console (crawl state).
    pub(super) live: LiveChanges,
    /// The `--exclude` patterns of the command line.
    pub(super) base_excludes: Vec<String>,
    /// The console changed the patterns this run, or the run resumes saved state: queued URLs
    /// may have been admitted under other patterns or another `--max-depth`, so they are
    /// checked again before they run.
    pub(super) recheck_queued: bool,
    /// The console changed the patterns: they apply to queued seeds too.
    pub(super) live_patterns: bool,
    /// Seeds that answered with an HTTP error so far this run (the first are named).
    seeds_in_error: u32,
    /// How far the seeds file was read, and the IP-literal seed addresses it allowed (crawl
    /// state; `seed_feed.rs` keeps it).
    pub(super) seeds: Option<SavedSeeds>,
    /// What `Referer` the URLs offered get.
    referer: RefererPolicy,
    /// `--http-user`: the credentials, and the hosts that get them.
    pub(super) login: Option<Arc<SiteLogin>>,
    /// Page requisites first met as links.
    linked: LinkedRequisites,
    /// The fetcher's SSRF guard (set by setup; a guard of its own until then), which a seed's
    /// move to another port of its address tells.
    pub(super) guard: AddressGuard,
    /// The hosts of each site links are followed to (`--max-hosts-per-site`).
    site_hosts: SiteHosts,
    /// Whether the `--proxy` is down, and since when.
    proxy_down: proxy_down::ProxyDown,
}

impl Ledger {
    /// A ledger over `frontier` with the counters `tally` (saved ones when resuming); the seeds
    /// are offered to the frontier (already-seen ones are ignored by it).
    pub(super) fn new(
        mut frontier: Frontier,
        tally: Tally,
        admission: &AdmissionConfig,
        rules: LedgerRules,
    ) -> Self {
        // Hosts that answered in an earlier run of a resumed crawl are waited for when found
        // down, as those that answered in this one are.
        for host in tally.hosts_crawled.keys() {
            frontier.answered_before(host);
        }
        let scope = Scope::new(admission.scope)
            .with_lists(admission.host_lists.clone(), admission.dir_lists.clone())
            .https_only(admission.https_only);
        let scope = match admission.no_parent {
            true => scope.no_parent(),
            false => scope,
        };
        let referer = admission.referer.clone();
        let site_hosts = SiteHosts::new(admission.max_hosts_per_site);
        let admission = Admission::new(
            scope,
            admission.filter.clone(),
            admission.extensions.clone(),
            admission.max_depth,
            admission.max_redirects,
            admission.limits.clone(),
        )
        .with_file_lists(admission.file_lists.clone());
        let base_excludes = admission.filter().excludes().to_vec();
        Ledger {
            frontier,
            tally,
            admission,
            fallback: HashMap::new(),
            seed_journal: SeedJournal::default(),
            rules,
            live: LiveChanges::default(),
            base_excludes,
            recheck_queued: false,
            live_patterns: false,
            seeds_in_error: 0,
            seeds: None,
            referer,
            login: None,
            linked: LinkedRequisites::new(rules.page_requisites),
            guard: AddressGuard::default(),
            proxy_down: Default::default(),
            site_hosts,
        }
    }

    /// True (and the job released and counted) when a queued URL is not to run after all:
    /// the operator's patterns exclude it now, or it is a page link whose kind of URL a probe
    /// found to be files of a type not archived (`url_rules/extension_probes.rs`) and that no
    /// page needs as a requisite.
    pub(super) fn declined_now(&mut self, job: &Job, now: Instant) -> bool {
        if self.excluded_now(job, now) {
            return true;
        }
        // A sitemap file (its own host's, or one robots.txt names on another) is checked when
        // it is about to run, whoever queued it (robots.txt, an index, a redirect).
        if matches!(job.kind, JobKind::Sitemap { .. }) {
            if let Err(why) = self.admission.check_sitemap(&job.url) {
                self.frontier.release(&job.host, now);
                count_rejection(&mut self.tally.filtered, why);
                return true;
            }
        }
        if job.kind != JobKind::Page
            || !self.admission.skips_by_extension(&job.url)
            || self.linked.is_wanted(&job.url)
        {
            return false;
        }
        self.linked.skipped(&job.url);
        self.frontier.release(&job.host, now);
        self.tally.filtered.extension += 1;
        true
    }

    /// `job`, to run as a page requisite when it is a link's that a page found since needs as
    /// one (`linked_requisites.rs`): archived whatever its type. A seed stays a page (its
    /// redirects widen the scope).
    pub(super) fn as_needed(&mut self, mut job: Job) -> Job {
        if job.kind == JobKind::Page && job.depth > 0 && self.linked.take_wanted(&job.url) {
            job.kind = JobKind::Requisite { hops: 1 };
            self.tally.requisites.queued += 1;
        }
        job
    }

    /// Applies a finished job (its connection already taken by the caller).
    pub(super) fn handle(&mut self, result: JobResult, now: Instant) -> Handled {
        if let Some(SlowDown { after }) = result.slow_down {
            let (host, url) = (&result.job.host, &result.job.url);
            self.tally.slowed_down += 1;
            let wait = self.frontier.hold_back(host, after);
            tracing::info!(
                %url,
                "the server asks to slow down (a last answer, not retried): {host} waits {:.1}s",
                wait.as_secs_f64()
            );
        }
        let JobResult {
            job,
            outcome,
            bytes,
            elapsed,
            login_asked,
            ..
        } = result;
        if !matches!(
            outcome,
            Outcome::Failed(_) | Outcome::OutputClosed | Outcome::Resolved(_)
        ) {
            self.tally.requests += 1;
            self.tally.request_time += elapsed;
            self.tally.bytes_downloaded += bytes;
            count_for_host(&mut self.tally.hosts_crawled, &job.host);
            self.host_reached(&job.host, now);
            if !self.fallback.is_empty() {
                self.origin_reached(&job);
            }
        }
        if self.log_in(&job, login_asked, now) {
            return Handled::Done;
        }
        if let (JobKind::Page, Some(answer)) = (&job.kind, outcome.probe_answer()) {
            self.admission.learn(&job.url, answer);
        }
        match outcome {
            // A DNS lookup for --politeness ip: no request was made.
            Outcome::Resolved(address) => self.frontier.resolved(&job.host, address, now),
            Outcome::Failed(error) => self.failed(job, error, now),
            Outcome::OutputClosed => {
                // Its records are not in the file: the URL stays queued for the run that
                // resumes (before, the final save point took it for done, and a page the full
                // disk refused was never fetched again).
                self.frontier.put_back(job, now);
                return Handled::OutputClosed;
            }
            Outcome::RetryLater { status, after } => {
                *self
                    .tally
                    .errors
                    .entry(format!("http_{status}"))
                    .or_default() += 1;
                self.tally.retries += 1;
                self.tally.slowed_down += 1;
                let wait = self.frontier.slow_down(job.clone(), now, after);
                tracing::info!(
                    url = %job.url,
                    status,
                    "the server asks to slow down: {} waits {:.1}s",
                    job.host,
                    wait.as_secs_f64()
                );
            }
            // HTML of a type not accepted: its links are followed, it is not archived.
            Outcome::Traversed {
                status,
                mut found,
                keys,
            } => {
                *self.tally.status_codes.entry(status).or_default() += 1;
                self.tally.filtered.content_type += 1;
                tracing::info!(status, url = %job.url, "read for its links, not archived: its type is not accepted");
                self.follow(&job, &mut found, keys, now);
                self.frontier.answered(&job.host, now, elapsed);
            }
            Outcome::Skipped {
                status,
                reason,
                media,
            } => {
                *self.tally.status_codes.entry(status).or_default() += 1;
                match reason {
                    SkipReason::ContentType => {
                        self.tally.filtered.content_type += 1;
                        self.said_not_archived(&job, status, media.as_deref());
                        let job = self.as_needed(job);
                        if let JobKind::Requisite { .. } = job.kind {
                            // A page found since that it needs it: fetched again, as one.
                            self.frontier.put_back(Job { attempt: 0, ..job }, now);
                        } else {
                            self.linked.skipped(&job.url);
                            self.frontier.answered(&job.host, now, elapsed);
                        }
                    }
                    // Kept for a run with a higher target (`--max-pages` raised resumes).
                    SkipReason::TargetReached => {
                        self.tally.filtered.target_reached += 1;
                        self.frontier.put_back(job, now);
                    }
                }
            }
            Outcome::Archived {
                status,
                page,
                mut found,
                keys,
                truncated,
                body_fault,
                bytes_saved,
                media,
            } => {
                self.tally.content_types.count(media.as_deref(), bytes);
                if bytes_saved > 0 {
                    self.tally.revisits += 1;
                    self.tally.bytes_saved += bytes_saved;
                }
                *self.tally.status_codes.entry(status).or_default() += 1;
                for fault in body_fault.iter().chain(&found.faults) {
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
                if job.depth == 0 && job.kind == JobKind::Page && status >= 400 {
                    self.seed_answered_error(&job.url, status);
                }
                if let JobKind::Robots { origin, .. } = &job.kind {
                    self.moved_within_address(&job.url, found.location.as_ref());
                    // A robots.txt cut short by the network (a close, a reset, the fetch
                    // timeout) is not the site's whole file: the rules after the cut are
                    // unknown, so it is unreachable, retried later (RFC 9309 2.3.1.4), not
                    // obeyed as if complete. A cut at the size cap is the file as read.
                    let cut = matches!(truncated, Some(Truncation::Time | Truncation::Disconnect));
                    let outcome = match cut && (200..300).contains(&status) {
                        true => RobotsOutcome::Unreachable,
                        false => RobotsOutcome::of_response(
                            status,
                            found.location,
                            found.robots_body,
                            found.robots_retry_after,
                        ),
                    };
                    if self.frontier.robots_result(&job, outcome, now) {
                        // Visible without -v: a whole host is dropped.
                        tracing::warn!(
                            "giving up {origin}: its robots.txt answered {status} on every try, so none of its URLs may be fetched"
                        );
                    }
                    return Handled::Done;
                }
                if let (JobKind::Sitemap { nesting }, Some(listed)) =
                    (&job.kind, found.sitemap.take())
                {
                    let s = &mut self.tally.sitemaps;
                    s.fetched += u64::from((200..300).contains(&status));
                    s.urls += listed.pages.len() as u64;
                    s.nested += listed.sitemaps.len() as u64;
                    s.over_limits += listed.over_limits;
                    s.invalid += u64::from(listed.invalid);
                    // Listed pages are one hop from the site's root, in scope or not.
                    for url in listed.pages {
                        let via = Via::Document(&job.url, found.referrer);
                        self.offer(url, (1, 0), None, via, now);
                    }
                    for url in listed.sitemaps {
                        if self.admission.scope.allows_host(&url) {
                            self.frontier.queue_sitemap(url, nesting + 1, now);
                        }
                    }
                    // A moved sitemap is still a sitemap (each URL is fetched once per run).
                    if let Some(to) = found.location {
                        self.frontier.queue_sitemap(to, *nesting, now);
                    }
                    self.frontier.answered(&job.host, now, elapsed);
                    return Handled::Done;
                }
                if page {
                    self.tally.pages += 1;
                    let host_pages = count_for_host(&mut self.tally.pages_per_host, &job.host);
                    let quota = self.rules.max_pages_per_host;
                    if quota.is_some_and(|max| host_pages >= max) {
                        let dropped = self.frontier.drop_host(&job.host);
                        self.tally.filtered.host_quota += dropped as u64;
                    }
                }
                self.follow(&job, &mut found, keys, now);
                // What a page (or a stylesheet it needs) needs to render: one hop beyond scope.
                let hops = match job.kind {
                    JobKind::Requisite { hops } => {
                        self.tally.requisites.archived += 1;
                        hops + 1
                    }
                    _ => 1,
                };
                for url in found.requisites {
                    self.offer_requisite(
                        url,
                        hops,
                        job.depth + 1,
                        Via::Document(&job.url, found.referrer),
                        now,
                    );
                }
                let cookie_check = found.location_sets_cookie;
                // The server's own spelling of the URL just fetched (`%c3%a9` for `%C3%A9`).
                let respelled = found.location_spelled.take().filter(|s| *s != job.url);
                match (found.location, &job.kind) {
                    // The same URL to the seen set, fetched again: a cookie check (the URL
                    // redirects to itself with a cookie to carry), a session id the server
                    // adds (a servlet's `;jsessionid=` on a new session), or the URL as the
                    // server spells it, which wget and browsers request as written. The
                    // redirect limit ends a loop.
                    (Some(to), _)
                        if (cookie_check && to == job.url)
                            || same_but_session_id(&to, &job.url)
                            || respelled.is_some() =>
                    {
                        let to = respelled.unwrap_or(to);
                        match self.admission.check(&to, job.depth, job.redirects + 1) {
                            Ok(()) => self.frontier.again_at(job, to, now),
                            Err(rejection) => {
                                count_rejection(&mut self.tally.filtered, rejection);
                                self.frontier.answered(&job.host, now, elapsed);
                            }
                        }
                        return Handled::Done;
                    }
                    (Some(to), _) => {
                        let via = Via::Redirect(job.referer.as_deref());
                        self.offer_move(&job, to, via, now);
                    }
                    (None, _) => {}
                }
                self.frontier.answered(&job.host, now, elapsed);
            }
        }
        Handled::Done
    }
}

/// Adds one to `host`'s count in `counts` and returns it; the host's key is made only the
/// first time, not copied for every job.
fn count_for_host(counts: &mut HashMap<String, u64>, host: &str) -> u64 {
    let n = match counts.get_mut(host) {
        Some(n) => n,
        None => counts.entry(host.to_string()).or_default(),
    };
    *n += 1;
    *n
}

/// True when `to` is `from` with a session id added, changed or taken away: another URL,
/// which the seen set takes for the same page.
fn same_but_session_id(to: &Url, from: &Url) -> bool {
    to != from && without_session_ids(to.as_str()) == without_session_ids(from.as_str())
}
