//! The seeds file, fed to the frontier as the crawl runs (`--seeds FILE`, `--seeds -`): a
//! batch of lines at a time whenever the frontier's queue is short, so a list of any length
//! neither waits to be read whole before the first fetch nor grows the memory with its length.
//! How far it was read is crawl state (saved with the frontier at each save point, so a kill
//! resumes where the last save point was: seeds read after it are read again, and the seen set
//! makes that a no-op). Bad lines are logged with their line numbers (the first
//! [`PRINTED_PROBLEMS`]) and all counted.

use std::io;
use std::time::Instant;

use super::ledger::Ledger;
use crate::config::Limits;
use crate::fetch::AddressGuard;
use crate::seeds::{SavedSeeds, Seed, SeedReader, SeedSource};

/// Most lines read per batch.
const BATCH_LINES: u64 = 5_000;
/// IP-literal seed addresses remembered in the crawl state (for a resumed crawl's SSRF guard).
const MAX_REMEMBERED_ADDRESSES: usize = 100_000;
/// Bad lines logged (and kept for the report); the rest are counted.
pub(super) const PRINTED_PROBLEMS: usize = 100;

/// The seeds file being fed.
pub(super) struct SeedFeed {
    source: SeedSource,
    reader: SeedReader,
    limits: Limits,
    guard: AddressGuard,
    /// The feed waits while the frontier holds this many queued URLs (`--seeds-ahead`).
    ahead: u64,
    /// Addresses of IP-literal seeds allowed (saved, so a resumed crawl allows them again).
    allowed: Vec<std::net::SocketAddr>,
    /// Skipped lines (this run), for the report, up to [`PRINTED_PROBLEMS`].
    problems: Vec<String>,
}

impl SeedFeed {
    /// Opens `source` where an earlier run of the crawl got to (`saved`), allowing again the
    /// IP-literal seeds it had read.
    pub(super) fn open(
        source: SeedSource,
        saved: SavedSeeds,
        limits: Limits,
        guard: AddressGuard,
        ahead: u64,
    ) -> io::Result<SeedFeed> {
        let from = saved.position;
        let reader = SeedReader::open(&source, from)?;
        if from.line > 0 {
            tracing::warn!("seeds: going on from line {} of {source}", from.line);
        }
        for &addr in &saved.allowed {
            guard.allow_seed_literal(addr);
        }
        Ok(SeedFeed {
            source,
            reader,
            limits,
            guard,
            ahead,
            allowed: saved.allowed,
            problems: Vec::new(),
        })
    }

    /// What to save of it.
    fn saved(&self) -> SavedSeeds {
        SavedSeeds {
            source: self.source.to_string(),
            position: self.reader.position(),
            allowed: self.allowed.clone(),
        }
    }

    /// True once the whole source has been read.
    pub(super) fn done(&self) -> bool {
        self.reader.position().done
    }

    /// Feeds one batch when the frontier's queue is short; returns true when it should be
    /// called again at once (more to read, and room for it).
    pub(super) fn feed(&mut self, ledger: &mut Ledger, now: Instant) -> bool {
        let queued = ledger.frontier.queued() as u64;
        if self.done() || queued >= self.ahead {
            return false;
        }
        let lines = (self.ahead - queued).min(BATCH_LINES) as usize;
        let limits = &self.limits;
        let check = |seed: Seed| match limits.seed_violation(&seed.url) {
            Some(reason) => Err(reason),
            None => Ok(seed),
        };
        let batch = match self.reader.next_batch(lines, &check) {
            Ok(batch) => batch,
            Err(e) => {
                tracing::error!(
                    "seeds: cannot read {} after line {}: {e}; the crawl goes on with the seeds read",
                    self.source,
                    self.reader.position().line
                );
                let mut saved = self.saved();
                saved.position.done = true;
                ledger.seeds_read(saved, 0);
                return false;
            }
        };
        for problem in &batch.problems {
            if self.problems.len() < PRINTED_PROBLEMS {
                tracing::warn!("skipping seed {problem}");
                self.problems.push(problem.to_string());
            }
        }
        for seed in &batch.seeds {
            for addr in seed.socket_addrs() {
                if let Some(class) = self.guard.allow_seed_literal(addr) {
                    if self.allowed.len() < MAX_REMEMBERED_ADDRESSES {
                        self.allowed.push(addr);
                    } else if self.allowed.len() == MAX_REMEMBERED_ADDRESSES {
                        tracing::warn!(
                            "more than {MAX_REMEMBERED_ADDRESSES} IP-literal seeds: a resumed crawl allows only the first again (--allow-private allows all)"
                        );
                        self.allowed.push(addr);
                    }
                    tracing::warn!(
                        "a seed is a {} IP address, so {addr} (that address and port only) is allowed for this crawl",
                        class.name()
                    );
                }
            }
            ledger.take_seed(seed, now);
        }
        let position = self.reader.position();
        ledger.seeds_read(self.saved(), batch.problems.len() as u64);
        if position.done {
            tracing::info!(
                "seeds: all {} line(s) of {} read",
                position.line,
                self.source
            );
        }
        !position.done
    }

    /// The skipped lines of this run, for the report.
    pub(super) fn into_problems(self) -> Vec<String> {
        self.problems
    }
}
