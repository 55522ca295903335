//! What a finished job offers the frontier: its page's links, the requisites it needs, its
//! redirect target and a sitemap's entries, each through admission, and each with the
//! `Referer` its request will send (`url_rules/referrer.rs`); and what a seed's move to
//! another port of its IP address allows.

use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use url::{Host, Url};

use super::linked_requisites::SeenRequisite;
use super::{Ledger, LedgerRules};
use crate::chain::outlinks::Outlinks;
use crate::crawl::admission::{Admission, Rejection};
use crate::crawl::site_hosts::{HostTaken, SiteHosts};
use crate::fetch::AddressGuard;
use crate::frontier::{Admit, Candidate, Job, JobKind, LinkKey};
use crate::report::stats::Filtered;
use crate::report::Tally;
use crate::url_rules::referrer::PagePolicy;
use crate::url_rules::RefererPolicy;

/// Where an offered URL came from, for its `Referer`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Via<'a> {
    /// Found in the document at this URL (a page, a stylesheet, a sitemap), under its
    /// referrer policy.
    Document(&'a Url, PagePolicy),
    /// The target of a redirect whose request sent this `Referer`.
    Redirect(Option<&'a str>),
}

impl Via<'_> {
    /// The `Referer` of `to` under `policy`.
    fn referer(self, policy: &RefererPolicy, to: &Url) -> Option<Box<str>> {
        match self {
            Via::Document(from, page) => policy.found_in(from, page, to),
            Via::Redirect(sent) => policy.redirected(sent, to),
        }
    }
}

impl Ledger {
    /// Offers the links `found` in `job`'s page to the frontier (taking them), one hop deeper,
    /// counting those its extraction declined, and its refresh as a move; their `Referer`
    /// follows the page's referrer policy.
    pub(super) fn follow(
        &mut self,
        job: &Job,
        found: &mut Outlinks,
        keys: Vec<LinkKey>,
        now: Instant,
    ) {
        let (declined, page) = (found.declined, found.referrer);
        // A page's refresh moves a browser on as a redirect does: its target is offered as one
        // (beyond the scope; a seed's widens the scope), as Heritrix takes a refresh for a
        // redirect hop, before the page's links hold it as a link.
        if let Some(to) = found.refresh.take().filter(|to| *to != job.url) {
            self.offer_move(job, to, Via::Document(&job.url, page), now);
        }
        let links = std::mem::take(&mut found.links);
        let filtered = &mut self.tally.filtered;
        filtered.url_length += declined.too_long;
        filtered.link_cap += declined.over_cap;
        filtered.not_http += declined.not_http;
        filtered.nofollow += declined.nofollow;
        filtered.declared_type += declined.declared_type;
        // A link seen moments ago is a duplicate before any admission rule is tried
        // (most of a page's links are: navigation, footers).
        let (rules, admission, tally) = (&self.rules, &self.admission, &mut self.tally);
        let guard = &self.guard;
        let hosts = &mut self.site_hosts;
        let (depth, referer) = (job.depth + 1, &self.referer);
        let seen = self
            .frontier
            .push_keyed_links(&job.host, links, keys, now, |link| {
                let checks = (rules, admission, guard, &mut *tally, &mut *hosts);
                let mut candidate = admit(checks, link, (depth, 0), false)?;
                candidate.referer = referer.found_in(&job.url, page, &candidate.url);
                Some(candidate)
            });
        // And those found to be seen before only when their batch reached the disk.
        self.tally.filtered.duplicate += seen as u64 + self.frontier.take_late_duplicates();
    }

    /// Offers a page requisite, `hops` transclusions from a page: from any host (scope does
    /// not apply but to long chains), but URL limits, ports, `--exclude` and robots do; not a
    /// page. One first met as a link is fetched as a requisite too (`linked_requisites.rs`).
    pub(super) fn offer_requisite(
        &mut self,
        url: Url,
        hops: u8,
        depth: u32,
        via: Via<'_>,
        now: Instant,
    ) {
        if let Err(rejection) = self.admission.check_requisite(&url, hops) {
            count_rejection(&mut self.tally.filtered, rejection);
            return;
        }
        if refused_address(&self.guard, &mut self.tally, &url) || !self.take_host(&url) {
            return;
        }
        let candidate = Candidate {
            referer: via.referer(&self.referer, &url),
            url,
            depth,
            redirects: 0,
            requisite: hops,
        };
        // Seen may mean met as a link: then it is fetched as a requisite all the same.
        let key = self.linked.key(&candidate.url);
        let again = self.linked.was_skipped(key).then(|| candidate.clone());
        match self.frontier.push(candidate, now) {
            Admit::Seen => match (self.linked.seen(key), again) {
                (SeenRequisite::FetchAgain, Some(candidate)) => {
                    self.frontier.push_again(candidate, now);
                    self.tally.requisites.queued += 1;
                }
                _ => self.tally.filtered.duplicate += 1,
            },
            _ => {
                self.linked.queued(key);
                self.tally.requisites.queued += 1;
            }
        }
    }

    /// Offers where `job`'s response moves a browser on (a 3xx's Location, a page's refresh): a
    /// moved image or stylesheet is still a requisite; anything else is offered as a redirect
    /// target, one redirect further, a seed's own chain widening the scope.
    pub(super) fn offer_move(&mut self, job: &Job, to: Url, via: Via<'_>, now: Instant) {
        match job.kind {
            JobKind::Requisite { hops } => self.offer_requisite(to, hops, job.depth, via, now),
            _ => {
                let seed = (job.depth == 0).then_some(&job.url);
                self.offer(to, (job.depth, job.redirects + 1), seed, via, now)
            }
        }
    }

    /// [`host_taken`] of the ledger's own site hosts and counters.
    fn take_host(&mut self, url: &Url) -> bool {
        host_taken(&mut self.site_hosts, &mut self.tally, url)
    }

    /// Offers a discovered URL to the frontier. Redirects out of a seed's own chain (from
    /// `seed`) extend the scope to their target, as a seed that moved is still what the user
    /// asked for; an IP-literal seed that moves to another port of its address (http to
    /// https) takes the SSRF guard's leave along.
    pub(super) fn offer(
        &mut self,
        url: Url,
        (depth, redirects): (u32, u32),
        seed: Option<&Url>,
        via: Via<'_>,
        now: Instant,
    ) {
        // A seed's chain that ends in no page is said, as a seed that answers an error is
        // (wget: "20 redirections exceeded", exit 8): before, exit 0 and nothing archived.
        let chain = seed.map(|from| (from.clone(), url.clone()));
        if let Some(seed) = seed {
            let widened = self.admission.scope.add_seed(&url);
            self.seed_journal.scope_seed(&url, widened, false);
            self.moved_within_address(seed, Some(&url));
        }
        let checks = (
            &self.rules,
            &self.admission,
            &self.guard,
            &mut self.tally,
            &mut self.site_hosts,
        );
        let candidate = admit(checks, url, (depth, redirects), seed.is_some());
        let Some(mut candidate) = candidate else {
            if let Some((from, to)) = chain {
                if self.admission.check_seed_redirect(&to, redirects) == Err(Rejection::Redirects) {
                    tracing::warn!("a seed redirected more than --max-redirects times: {from} to {to} is given up");
                }
            }
            return;
        };
        candidate.referer = via.referer(&self.referer, &candidate.url);
        if self.frontier.push(candidate, now) == Admit::Seen {
            self.tally.filtered.duplicate += 1;
            // Back to where it came from, or after two hops or more to a URL the crawl has:
            // a loop (`/a` to `/b` to `/a`). One hop to a URL another seed named (http to
            // https) is no news.
            if let Some((from, to)) = chain.filter(|(from, to)| from == to || redirects >= 2) {
                tracing::warn!("a seed's redirects loop: {from} redirects to {to}, which this crawl already has (the chain is given up)");
            }
        }
    }

    /// A seed, or the robots.txt of a seed's origin, redirected from `from` to `to`: when
    /// that is another port of the same IP literal, the guard allows it as it allows the seed
    /// (the http to https move of a server on a private address).
    pub(super) fn moved_within_address(&mut self, from: &Url, to: Option<&Url>) {
        if let Some(addr) = to.and_then(|to| same_address(from, to)) {
            self.allow_moved_seed(addr);
        }
    }

    /// Lets the SSRF guard allow `addr`, where an IP-literal seed moved (or moved in an
    /// earlier run), noting it for the log and the crawl state when it is new.
    pub(super) fn allow_moved_seed(&mut self, addr: SocketAddr) {
        if let Some(class) = self.guard.allow_seed_literal(addr) {
            let class = class.name();
            tracing::warn!("a seed moved to {addr}, a {class} address: it is allowed too");
            self.seed_journal.allowed(addr);
        }
    }
}

/// The socket address of `to` when it is another port of the IP literal `from` names.
fn same_address(from: &Url, to: &Url) -> Option<SocketAddr> {
    let ip = match (from.host()?, to.host()?) {
        (Host::Ipv4(a), Host::Ipv4(b)) if a == b => IpAddr::V4(a),
        (Host::Ipv6(a), Host::Ipv6(b)) if a == b => IpAddr::V6(a),
        _ => return None,
    };
    let (was, port) = (from.port_or_known_default()?, to.port_or_known_default()?);
    (was != port).then_some(SocketAddr::new(ip, port))
}

/// `url`, found `depth` hops from a seed after `redirects` redirects, as a candidate for the
/// frontier (without a `Referer` yet); `None` (counted in `tally`) when the host quota or the
/// admission rules refuse it. `seed_chain`: where a seed redirects, checked as the seed is
/// ([`Admission::check_seed_redirect`]); else a URL reached by a redirect is checked as one
/// ([`Admission::check_redirect`]).
fn admit(
    (rules, admission, guard, tally, hosts): Checks<'_>,
    url: Url,
    (depth, redirects): (u32, u32),
    seed_chain: bool,
) -> Option<Candidate> {
    if let (Some(max), Some(host)) = (rules.max_pages_per_host, url.host_str()) {
        if tally.pages_per_host.get(host).is_some_and(|&p| p >= max) {
            tally.filtered.host_quota += 1;
            return None;
        }
    }
    let checked = match (seed_chain, redirects) {
        (true, _) => admission.check_seed_redirect(&url, redirects),
        (false, 0) => admission.check(&url, depth, redirects),
        (false, _) => admission.check_redirect(&url, depth, redirects),
    };
    // The address last: a link out of the scope is counted as such.
    let checked = checked.map(|()| !refused_address(guard, tally, &url));
    match checked.map(|allowed| allowed && host_taken(hosts, tally, &url)) {
        Ok(false) => None,
        Ok(true) => Some(Candidate {
            url,
            depth,
            redirects,
            requisite: 0,
            referer: None,
        }),
        Err(r) => {
            count_rejection(&mut tally.filtered, r);
            None
        }
    }
}

/// What [`admit`] checks a URL with.
type Checks<'a> = (
    &'a LedgerRules,
    &'a Admission,
    &'a AddressGuard,
    &'a mut Tally,
    &'a mut SiteHosts,
);

/// True (counted as filtered, said for the first) when `url` names an IP address the SSRF
/// guard refuses: a link from an intranet app on :8080 to its site on :80 is a refusal of the
/// crawl's own policy, as `--deny-ports` is, not a host that could not be reached (its
/// robots.txt was given up, and every run exited 4). A name that resolves to such an address
/// is refused when it is fetched, as before.
fn refused_address(guard: &AddressGuard, tally: &mut Tally, url: &Url) -> bool {
    let Some(ip) = crate::fetch::proxy::literal_address(url) else {
        return false;
    };
    let addr = SocketAddr::new(ip, url.port_or_known_default().unwrap_or(80));
    let Err(class) = guard.check(addr) else {
        return false;
    };
    tally.filtered.blocked_address += 1;
    if tally.filtered.blocked_address == 1 {
        tracing::warn!(
            "links to {addr}, a {} address, are not followed (only the seeds' own addresses are; --allow-private follows them)",
            class.name()
        );
    }
    true
}

/// True when `url`'s host is one the crawl has or its site has room for
/// (`--max-hosts-per-site`); else counted, and said for the site's first host refused.
fn host_taken(hosts: &mut SiteHosts, tally: &mut Tally, url: &Url) -> bool {
    let taken = hosts.take(url);
    if taken != HostTaken::Yes {
        tally.filtered.site_hosts += 1;
    }
    if taken == HostTaken::FirstRefused {
        tracing::warn!(
            "{} has more hosts than --max-hosts-per-site: links to {} and the site's other new hosts are dropped",
            crate::url_rules::site_of(url).unwrap_or(""),
            url.host_str().unwrap_or("")
        );
    }
    taken == HostTaken::Yes
}

/// Counts a URL the admission rules refused, under the rule's name.
pub(super) fn count_rejection(f: &mut Filtered, r: Rejection) {
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
