//! Changes an operator makes to a running crawl through the live console: seeds added,
//! `--exclude` patterns added or lifted, the per-host delay, a host's queue dropped. Each is
//! applied to the ledger, written to the log, and kept as crawl state ([`LiveChanges`], saved
//! with the counters at every save point), so a resumed crawl keeps it, with or without the
//! console (the record itself is `operator_changes.rs`). Command-line patterns stay the base: a resumed crawl takes the command line's
//! `--exclude` list, lifts what the operator lifted and adds what the operator added.
//!
//! An added pattern stops new links at admission and, since the queue may hold matching URLs
//! already, every queued URL is checked again as it comes up: an excluded one is released
//! without a request (`Frontier::release`) and counted as filtered by pattern. Dropping a
//! host drops its queue and adds a pattern for the host, so links do not refill it; lifting
//! that pattern lets the host back in.

use std::time::{Duration, Instant};

use super::ledger::Ledger;
use super::operator_changes::LiveChanges;
use crate::frontier::{Job, JobKind};
use crate::seeds::parse_seed;

/// Most patterns the operator may add.
pub const MAX_LIVE_EXCLUDES: usize = 1000;
/// Most seeds the operator may add over a crawl.
pub const MAX_LIVE_SEEDS: usize = 100_000;

impl Ledger {
    /// Applies the changes a previous run saved.
    pub(super) fn restore_changes(&mut self, changes: LiveChanges) {
        if changes.is_empty() {
            return;
        }
        tracing::warn!(
            "resuming with the console's changes: {} exclude(s) added, {} lifted, delay {}, {} seed(s) added",
            changes.excludes_added.len(),
            changes.excludes_removed.len(),
            changes
                .delay_ms
                .map_or("unchanged".to_string(), |ms| format!("{ms}ms")),
            changes.seeds_added.len()
        );
        for seed in &changes.seeds_added {
            if let Ok(seed) = parse_seed(seed) {
                self.admission.scope.add_seed(&seed.url);
            }
        }
        if let Some(ms) = changes.delay_ms {
            self.apply_delay(Duration::from_millis(ms));
        }
        self.live = changes;
        if let Err(e) = self.rebuild_filter() {
            tracing::warn!("the console's saved patterns no longer compile: {e}");
        }
    }

    /// Queues seeds and widens the scope to them.
    pub(super) fn add_seeds(&mut self, lines: &[String], now: Instant) -> Result<String, String> {
        if self.live.seeds_added.len() + lines.len() > MAX_LIVE_SEEDS {
            return Err(format!(
                "at most {MAX_LIVE_SEEDS} seeds can be added to one crawl"
            ));
        }
        let mut seeds = Vec::with_capacity(lines.len());
        for line in lines {
            seeds.push(parse_seed(line).map_err(|why| format!("seed {line:?}: {why}"))?);
        }
        let mut queued = 0;
        for seed in &seeds {
            if self.take_seed(seed, now) == crate::frontier::Admit::Queued {
                queued += 1;
            }
            self.live.seeds_added.push(seed.url.to_string());
        }
        tracing::warn!("console: {} seed(s) added, {queued} new", seeds.len());
        Ok(format!(
            "{} seed(s) added, {queued} queued (the others were seen before)",
            seeds.len()
        ))
    }

    /// Adds an exclude pattern.
    pub(super) fn add_exclude(&mut self, pattern: &str) -> Result<String, String> {
        if self
            .admission
            .filter()
            .excludes()
            .iter()
            .any(|p| p == pattern)
        {
            return Err(format!("{pattern:?} is already excluded"));
        }
        if self.live.excludes_added.len() >= MAX_LIVE_EXCLUDES {
            return Err(format!("at most {MAX_LIVE_EXCLUDES} patterns can be added"));
        }
        regex::Regex::new(pattern).map_err(|e| format!("not a regex: {e}"))?;
        let before = self.live.clone();
        if let Some(i) = self.live.excludes_removed.iter().position(|p| p == pattern) {
            self.live.excludes_removed.remove(i);
        } else {
            self.live.excludes_added.push(pattern.to_string());
        }
        if let Err(e) = self.rebuild_filter() {
            self.live = before;
            return Err(format!("cannot use {pattern:?}: {e}"));
        }
        tracing::warn!("console: exclude added: {pattern}");
        Ok(format!("excluding {pattern}"))
    }

    /// Lifts an exclude pattern (added here or given on the command line).
    pub(super) fn remove_exclude(&mut self, pattern: &str) -> Result<String, String> {
        if !self
            .admission
            .filter()
            .excludes()
            .iter()
            .any(|p| p == pattern)
        {
            return Err(format!("{pattern:?} is not an exclude pattern in force"));
        }
        let before = self.live.clone();
        if let Some(i) = self.live.excludes_added.iter().position(|p| p == pattern) {
            self.live.excludes_added.remove(i);
        } else {
            self.live.excludes_removed.push(pattern.to_string());
        }
        if let Err(e) = self.rebuild_filter() {
            self.live = before;
            return Err(e.to_string());
        }
        tracing::warn!(
            "console: exclude lifted: {pattern} (URLs it filtered before are not queued again)"
        );
        Ok(format!("no longer excluding {pattern}"))
    }

    /// Sets the per-host delay.
    pub(super) fn set_delay(&mut self, delay: Duration) -> Result<String, String> {
        self.apply_delay(delay);
        self.live.delay_ms = Some(delay.as_millis() as u64);
        tracing::warn!("console: delay set to {delay:?}");
        Ok(format!("delay {delay:?} (raised per host by Crawl-delay)"))
    }

    /// Drops a host's queue and keeps its URLs out.
    pub(super) fn drop_host(&mut self, host: &str) -> Result<String, String> {
        let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
        let pattern = format!("^https?://{}(:[0-9]+)?/", regex::escape(&host));
        let dropped = self.frontier.drop_host(&host);
        self.tally.filtered.pattern += dropped as u64;
        let kept_out = match self.add_exclude(&pattern) {
            Ok(_) => true,
            Err(_) => self.admission.filter().excludes().contains(&pattern),
        };
        tracing::warn!("console: dropped {dropped} queued URL(s) of {host}");
        if !kept_out {
            return Err(format!(
                "dropped {dropped} URL(s) of {host}, but could not keep it out"
            ));
        }
        Ok(format!(
            "dropped {dropped} queued URL(s) of {host}; excluding {pattern}"
        ))
    }

    /// True (and the job released and counted) when `job`'s URL is excluded now: by the
    /// patterns in force, or, for a page, by `--max-depth`. Queued URLs are checked again
    /// only once the console changed the patterns or in a resumed crawl, whose flags may
    /// differ from those its URLs were queued under (Heritrix rechecks its scope the same way).
    pub(super) fn excluded_now(&mut self, job: &Job, now: Instant) -> bool {
        if !self.recheck_queued || !matches!(job.kind, JobKind::Page | JobKind::Requisite { .. }) {
            return false;
        }
        let too_deep = job.kind == JobKind::Page && self.admission.too_deep(job.depth);
        // A seed and where it redirects answer to no pattern of the command line, in a
        // resumed run as in the first; the console's patterns apply to them too.
        let seed_exempt = job.depth == 0 && !self.live_patterns;
        if !too_deep && (seed_exempt || self.admission.filter().allows(&job.url)) {
            return false;
        }
        self.frontier.release(&job.host, now);
        match too_deep {
            true => self.tally.filtered.depth += 1,
            false => self.tally.filtered.pattern += 1,
        }
        true
    }

    /// The patterns in force: the command line's, less those lifted, plus those added.
    fn rebuild_filter(&mut self) -> Result<(), regex::Error> {
        let mut excludes: Vec<String> = self
            .base_excludes
            .iter()
            .filter(|p| !self.live.excludes_removed.contains(p))
            .cloned()
            .collect();
        for p in &self.live.excludes_added {
            if !excludes.contains(p) {
                excludes.push(p.clone());
            }
        }
        let filter = self.admission.filter().with_excludes(&excludes)?;
        self.admission.set_filter(filter);
        self.recheck_queued = true;
        self.live_patterns = true;
        Ok(())
    }

    fn apply_delay(&mut self, delay: Duration) {
        self.frontier.set_delay(delay);
        self.rules.delay = delay;
    }
}
