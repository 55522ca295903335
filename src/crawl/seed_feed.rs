//! The seeds file, fed to the frontier as the crawl runs (`--seeds FILE`, `--seeds -`): a
//! batch of lines at a time whenever the frontier's queue is short, so a list of any length
//! neither waits to be read whole before the first fetch nor grows the memory with its length.
//! How far it was read is crawl state (saved with the frontier at each save point, so a kill
//! resumes where the last save point was: seeds read after it are read again, by the replay
//! of the WARC files written since (`catch_up`) as far as their captures need, so a seed
//! fetched before the kill is completed from its record, not fetched again). Bad lines are logged with their line numbers (the first
//! [`PRINTED_PROBLEMS`]) and all counted.

use std::io;
use std::net::SocketAddr;
use std::time::Instant;

use super::ledger::Ledger;
use crate::config::Limits;
use crate::fetch::AddressGuard;
use crate::seeds::{SavedSeeds, Seed, SeedReader, SeedSource};

/// Most lines read per batch.
const BATCH_LINES: u64 = 5_000;
/// IP-literal seed addresses remembered in the crawl state (for a resumed crawl's SSRF guard).
const MAX_REMEMBERED_ADDRESSES: usize = 100_000;
/// IP-literal seeds named in a note each; the rest are allowed without one.
const NOTED_ADDRESSES: usize = 10;
/// Bad lines logged (and kept for the report); the rest are counted.
const PRINTED_PROBLEMS: usize = 100;

/// The seeds file being fed. How far it was read, and the IP-literal seed addresses it allowed,
/// are the ledger's (`Ledger::seeds`), saved with the crawl state.
pub(super) struct SeedFeed {
    source: SeedSource,
    reader: SeedReader,
    limits: Limits,
    guard: AddressGuard,
    /// The feed waits while the frontier holds this many queued URLs (`--seeds-ahead`).
    ahead: u64,
    /// The line this run opened the source at.
    opened_at: u64,
    /// IP-literal seed addresses allowed this run.
    noted: usize,
    /// The cap on remembered addresses was reached (and said).
    full: bool,
    /// Skipped lines (this run), for the report, up to [`PRINTED_PROBLEMS`].
    problems: Vec<String>,
}

impl SeedFeed {
    /// Opens `source` where an earlier run of the crawl got to (`saved`, which the ledger
    /// holds; the IP-literal seeds it had read are allowed again by the caller).
    pub(super) fn open(
        source: SeedSource,
        saved: &SavedSeeds,
        limits: Limits,
        guard: AddressGuard,
        ahead: u64,
    ) -> io::Result<SeedFeed> {
        let from = saved.position;
        let reader = SeedReader::open(&source, from)?;
        if from.line > 0 {
            tracing::warn!("seeds: going on from line {} of {source}", from.line);
        }
        Ok(SeedFeed {
            source,
            reader,
            limits,
            guard,
            ahead,
            opened_at: from.line,
            noted: 0,
            full: false,
            problems: Vec::new(),
        })
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
        self.read_batch(ledger, now, lines)
    }

    /// Reads one more batch for the replay after a crash, while this run has read fewer
    /// lines than the crashed run can have read past its last save point: that run read
    /// only while fewer than `--seeds-ahead` URLs were queued, so past the saved position
    /// it read at most that many lines, one batch, and a line per fetch it finished since
    /// (`finished`: the captures the replay has met so far). Returns true when it read.
    pub(super) fn catch_up(&mut self, ledger: &mut Ledger, now: Instant, finished: u64) -> bool {
        let read = self.reader.position().line.saturating_sub(self.opened_at);
        let most = self
            .ahead
            .saturating_add(BATCH_LINES)
            .saturating_add(finished);
        if self.done() || read >= most {
            return false;
        }
        self.read_batch(ledger, now, (most - read).min(BATCH_LINES) as usize);
        true
    }

    /// Reads up to `lines` lines and takes their seeds; returns true when there is more.
    fn read_batch(&mut self, ledger: &mut Ledger, now: Instant, lines: usize) -> bool {
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
                let mut at = self.reader.position();
                at.done = true;
                record(ledger, |s| s.position = at);
                return false;
            }
        };
        for problem in &batch.problems {
            if self.problems.len() < PRINTED_PROBLEMS {
                tracing::warn!("skipping seed {problem}");
                self.problems.push(problem.to_string());
                if self.problems.len() == PRINTED_PROBLEMS {
                    tracing::warn!("further seed lines skipped are counted, not named (the report gives how many)");
                }
            }
        }
        for seed in &batch.seeds {
            for addr in seed.socket_addrs() {
                if let Some(class) = self.guard.allow_seed_literal(addr) {
                    self.allowed(ledger, addr, class.name());
                }
            }
            ledger.take_seed(seed, now);
        }
        let position = self.reader.position();
        record(ledger, |s| s.position = position);
        ledger.tally.seed_lines_skipped += batch.problems.len() as u64;
        if position.done {
            tracing::info!(
                "seeds: all {} line(s) of {} read",
                position.line,
                self.source
            );
        }
        !position.done
    }

    /// Remembers (up to a cap) and notes (the first few) an IP-literal seed's address the
    /// SSRF guard now allows.
    fn allowed(&mut self, ledger: &mut Ledger, addr: SocketAddr, class: &str) {
        self.noted += 1;
        if self.noted <= NOTED_ADDRESSES {
            // A note, which -q hides as it hides the same note for a command-line seed (this
            // module's own target is shown under -q, for the seed lines it skips).
            tracing::warn!(
                target: "trawl::seed_notes",
                "a seed is a {class} IP address, so {addr} (that address and port only) is allowed for this crawl"
            );
        }
        let full = &mut self.full;
        record(ledger, |s| {
            if s.allowed.len() < MAX_REMEMBERED_ADDRESSES {
                s.allowed.push(addr);
            } else if !std::mem::replace(full, true) {
                tracing::warn!(
                    "more than {MAX_REMEMBERED_ADDRESSES} IP-literal seeds: a resumed crawl allows only the first again (--allow-private allows all)"
                );
            }
        });
    }

    /// The skipped lines of this run, for the report.
    pub(super) fn into_problems(self) -> Vec<String> {
        self.problems
    }
}

/// Changes the ledger's record of the seeds read (set when the feed was opened).
fn record(ledger: &mut Ledger, change: impl FnOnce(&mut SavedSeeds)) {
    if let Some(seeds) = &mut ledger.seeds {
        change(seeds);
    }
}
