//! What seeds change in the ledger: each queued, the scope widened to it, the http fallback of
//! a bare-host seed and its end; what an earlier run's seeds left (`seed_journal.rs`) applied
//! again; and the scope seeds a shared crawl's workers trade.

use std::time::Instant;

use url::Url;

use super::seed_journal::Entry;
use super::Ledger;
use crate::fetch::origin_key;
use crate::frontier::{Admit, Candidate, Job, JobKind};
use crate::seeds::Seed;

impl Ledger {
    /// Takes the command line's seeds ([`Ledger::take_seed`]).
    pub(in crate::crawl) fn take_seeds(&mut self, seeds: &[Seed], now: Instant) {
        for seed in seeds {
            self.take_seed(seed, now);
        }
    }

    /// Widens the scope to a seed and queues it: its https URL, with the http one to fall
    /// back to for a bare host. A shared crawl's other workers learn the scope seed.
    pub(in crate::crawl) fn take_seed(&mut self, seed: &Seed, now: Instant) -> Admit {
        if seed.credentials {
            // (Its canonical URL holds no password.)
            tracing::warn!(
                "seed {}: the user name and password in it are not sent; give them with --http-user and --http-password",
                seed.url
            );
        }
        let widened = self.admission.scope.add_seed(&seed.url);
        if let (Some(login), Some(host)) = (&self.login, seed.url.host_str()) {
            if login.sends_unasked() {
                login.accept(host);
            }
        }
        self.seed_journal
            .scope_seed(&seed.url, widened, seed.http_fallback);
        if seed.http_fallback {
            self.add_fallback(&seed.url);
        }
        self.frontier.push(
            Candidate {
                url: seed.url.clone(),
                depth: 0,
                redirects: 0,
                requisite: 0,
                referer: self.referer.seed(),
            },
            now,
        )
    }

    /// Falls back to http for the https origin of bare-host seed `url` if it cannot be
    /// reached.
    fn add_fallback(&mut self, url: &Url) {
        let mut http = url.clone();
        if http.set_scheme("http").is_ok() {
            let urls = self.fallback.entry(origin_key(url)).or_default();
            if !urls.contains(&http) {
                urls.push(http);
            }
        }
    }

    /// A response came from the origin of `job`: a fallback to http it had is done (which
    /// also keeps the map to the bare-host seeds not reached yet).
    pub(super) fn origin_reached(&mut self, job: &Job) {
        let origin = match &job.kind {
            JobKind::Robots { origin, .. } => origin.clone(),
            _ => origin_key(&job.url),
        };
        if self.fallback.remove(&origin).is_some() {
            self.seed_journal.reached(&origin);
        }
    }

    /// Applies what an earlier run's seeds left (`seed_journal.rs`), in the order it happened.
    pub(in crate::crawl) fn restore_seeds(&mut self, entries: Vec<Entry>) {
        for entry in entries {
            match entry {
                Entry::Scope(url) => {
                    if let Ok(parsed) = Url::parse(&url) {
                        self.allow_seed_address(&parsed, false);
                    }
                    self.widen_scope(&[url]);
                }
                Entry::Fallback(url) => {
                    if let Ok(url) = Url::parse(&url) {
                        self.allow_seed_address(&url, true);
                        self.admission.scope.add_seed(&url);
                        self.add_fallback(&url);
                    }
                }
                Entry::Reached(origin) => {
                    self.fallback.remove(&origin);
                }
                Entry::Allowed(addr) => {
                    if let Ok(addr) = addr.parse() {
                        self.allow_moved_seed(addr);
                    }
                }
            }
        }
    }

    /// Lets the SSRF guard allow an IP-literal seed's socket address again (and port 80 for a
    /// bare one, its http fallback), for a resumed run that does not name its seeds: the
    /// seeds' own addresses were refused, and every queued URL failed.
    fn allow_seed_address(&mut self, url: &Url, bare: bool) {
        let Some(ip) = crate::fetch::proxy::literal_address(url) else {
            return;
        };
        let port = url.port_or_known_default().unwrap_or(80);
        for port in [Some(port), bare.then_some(80)].into_iter().flatten() {
            self.guard
                .allow_seed_literal(std::net::SocketAddr::new(ip, port));
        }
    }

    /// From now on, keeps the scope seeds this worker adds for the other workers of a shared
    /// crawl ([`Ledger::take_scope_added`]).
    pub(in crate::crawl) fn share_scope(&mut self) {
        self.seed_journal.share();
    }

    /// The scope seeds added since the last call.
    pub(in crate::crawl) fn take_scope_added(&mut self) -> Vec<String> {
        self.seed_journal.take_shared()
    }

    /// Adds scope seeds other workers of a shared crawl brought, or an earlier run saved.
    pub(in crate::crawl) fn widen_scope(&mut self, seeds: &[String]) {
        for seed in seeds {
            if let Ok(url) = Url::parse(seed) {
                self.admission.scope.add_seed(&url);
            }
        }
    }
}
