//! The seen set on disk: sorted, immutable runs (a log-structured merge), each batch of new
//! seen rows written as a run of its own, runs of about the same size merged in the
//! background. Which runs make up the set is a manifest kept in the crawl database's `meta`
//! table, so it commits with the queue it describes: a run is synced before the commit that
//! names it, a run merged away is removed only after the commit that no longer names it, and
//! at open every file the committed manifest does not name (a run or merge written after the
//! last save point) is removed.
//!
//! Why not a B-tree: a new URL's seen row lands on a random leaf, so once the set outgrows the
//! cache every new URL costs a page write at commit (a crawl to 10^8 URLs slowed to a fifth of
//! its first rate; docs/PERFORMANCE.md). Here a new row is written once in a sequential run and
//! a few more times by merges, and a lookup reads at most one block (often a part of one) per
//! run.

mod merge;
mod run;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::layout::{QueueKey, SeenKey};
use merge::Merge;
use run::{Run, RunWriter};

/// Name of the manifest in the `meta` table.
pub(super) const MANIFEST_META: &str = "seen_runs";
/// The runs' directory in the state directory.
const DIR: &str = "seen";
/// Runs of one size class merged at once, at least.
const FAN_IN: usize = 4;
/// From this size class on (16.7 million entries and more), two runs are merged at once: a
/// batch's lookups read about one block per key in every run this large, so few of them are
/// kept, at the price of rewriting them more often.
const LARGE_CLASS: u32 = 7;
/// Runs kept at most before the newest are merged whatever their sizes.
const MAX_RUNS: usize = 16;
/// How long merging waits after a merge failed (a full disk).
const RETRY_AFTER: Duration = Duration::from_secs(60);

/// The runs of the seen set.
pub(super) struct SeenRuns {
    /// Where the run files live; none for a store in memory.
    dir: Option<PathBuf>,
    /// The runs, oldest first: a key in a newer run overrides an older run's.
    runs: Vec<Arc<Run>>,
    /// The id of the next run written.
    next_id: u64,
    /// The merge under way, if any.
    merge: Option<Merge>,
    /// No merge starts before this (after a failed one).
    merge_after: Option<Instant>,
    /// Runs written since the last commit, synced before the next.
    unsynced: Vec<Arc<Run>>,
    /// Files were created or renamed since the last commit (the directory is synced before it).
    dir_changed: bool,
    /// Files of runs merged away, removed once a commit no longer names them.
    retired: Vec<PathBuf>,
    /// The manifest changed since it was last taken.
    changed: bool,
}

impl std::fmt::Debug for SeenRuns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeenRuns")
            .field("dir", &self.dir)
            .field("runs", &self.runs.len())
            .finish()
    }
}

/// A run's file name.
fn file_name(id: u64) -> String {
    format!("{id:016x}.run")
}

/// The id in a run's (or an unfinished run's) file name.
fn file_id(name: &str) -> Option<u64> {
    let stem = name
        .strip_suffix(".run")
        .or_else(|| name.strip_suffix(".tmp"))?;
    (stem.len() == 16)
        .then(|| u64::from_str_radix(stem, 16).ok())
        .flatten()
}

/// A size class: runs within a factor of four of each other share one.
fn size_class(entries: u64) -> u32 {
    (entries / 1024).max(1).ilog2() / 2
}

/// The manifest: the next id, then each run's id and entry count, oldest first.
fn decode_manifest(bytes: &[u8]) -> Option<(u64, Vec<(u64, u64)>)> {
    let word = |at: usize| {
        bytes
            .get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    if bytes.len() % 16 != 8 {
        return None;
    }
    let next = word(0)?;
    let runs = (8..bytes.len())
        .step_by(16)
        .map(|at| Some((word(at)?, word(at + 8)?)))
        .collect::<Option<_>>()?;
    Some((next, runs))
}

impl SeenRuns {
    /// Opens the runs that `manifest` names in the state directory `state`, and removes
    /// every other run file there.
    pub(super) fn open(state: &Path, manifest: Option<&[u8]>) -> io::Result<SeenRuns> {
        let dir = state.join(DIR);
        std::fs::create_dir_all(&dir)?;
        let (next_id, listed) = match manifest {
            Some(bytes) => decode_manifest(bytes).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, "damaged seen-set manifest")
            })?,
            None => (0, Vec::new()),
        };
        let mut runs = Vec::with_capacity(listed.len());
        for (id, entries) in &listed {
            let path = dir.join(file_name(*id));
            let run = Run::open(&path, *id).map_err(|e| {
                io::Error::new(e.kind(), format!("seen-set run {}: {e}", path.display()))
            })?;
            if run.entries() != *entries {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("seen-set run {} is not the one saved", path.display()),
                ));
            }
            runs.push(Arc::new(run));
        }
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(id) = name.to_str().and_then(file_id) else {
                continue;
            };
            let named = name.to_str().is_some_and(|n| n.ends_with(".run"))
                && listed.iter().any(|(listed, _)| *listed == id);
            if !named {
                std::fs::remove_file(entry.path())?;
            }
        }
        Ok(SeenRuns {
            dir: Some(dir),
            ..SeenRuns::with_runs(runs, next_id)
        })
    }

    /// Runs kept in memory.
    pub(super) fn in_memory() -> SeenRuns {
        SeenRuns::with_runs(Vec::new(), 0)
    }

    fn with_runs(runs: Vec<Arc<Run>>, next_id: u64) -> SeenRuns {
        SeenRuns {
            dir: None,
            runs,
            next_id,
            merge: None,
            merge_after: None,
            unsynced: Vec::new(),
            dir_changed: false,
            retired: Vec::new(),
            changed: false,
        }
    }

    /// The queue key stored for `key` in the newest run that holds it.
    pub(super) fn get(&self, key: &SeenKey) -> io::Result<Option<QueueKey>> {
        for run in self.runs.iter().rev() {
            if let Some(queued) = run.lookup(false).get(key)? {
                return Ok(Some(queued));
            }
        }
        Ok(None)
    }

    /// Which of `keys` (ascending) some run holds.
    pub(super) fn contains_sorted(&self, keys: &[SeenKey]) -> io::Result<Vec<bool>> {
        let mut found = vec![false; keys.len()];
        for run in self.runs.iter().rev() {
            // Whole blocks when most hold several of the keys.
            let mut lookup = run.lookup(keys.len() >= 2 * run.blocks());
            for (key, found) in keys.iter().zip(found.iter_mut()) {
                if !*found {
                    *found = lookup.get(key)?.is_some();
                }
            }
        }
        Ok(found)
    }

    /// Writes `rows` (ascending, distinct keys) as the newest run, and starts a merge if the
    /// runs call for one.
    pub(super) fn add(&mut self, rows: &[(SeenKey, QueueKey)]) -> io::Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut out = self.writer()?;
        let written = rows
            .iter()
            .try_for_each(|(key, queued)| out.push(key, queued));
        if let Err(e) = written {
            out.abandon();
            return Err(e);
        }
        let run = Arc::new(out.finish(false)?);
        self.unsynced.push(Arc::clone(&run));
        self.runs.push(run);
        self.dir_changed = true;
        self.changed = true;
        self.start_merge()
    }

    fn writer(&mut self) -> io::Result<RunWriter> {
        let id = self.next_id;
        self.next_id += 1;
        match &self.dir {
            Some(dir) => RunWriter::to_file(dir.join(file_name(id)), id),
            None => Ok(RunWriter::in_memory(id)),
        }
    }

    /// Installs the output of a finished merge in place of its inputs and starts the next
    /// merge if one is due. A merge that failed leaves its inputs as they were.
    pub(super) fn poll(&mut self) -> io::Result<()> {
        if !self.merge.as_ref().is_some_and(Merge::is_finished) {
            return Ok(());
        }
        let merge = self.merge.take().expect("checked above");
        let inputs = merge.inputs().to_vec();
        match merge.finish() {
            Ok(run) => {
                let start = self.runs.iter().position(|r| r.id() == inputs[0]);
                let Some(start) = start.filter(|&s| {
                    let ids = self.runs.get(s..s + inputs.len());
                    ids.is_some_and(|r| r.iter().map(|r| r.id()).eq(inputs.iter().copied()))
                }) else {
                    return Err(io::Error::other("seen-set merge inputs are gone"));
                };
                let gone: Vec<_> = self
                    .runs
                    .splice(start..start + inputs.len(), [Arc::new(run)])
                    .collect();
                self.retired
                    .extend(gone.iter().filter_map(|r| r.path().map(Path::to_path_buf)));
                self.dir_changed = true;
                self.changed = true;
            }
            Err(e) => {
                tracing::warn!("seen set: merging runs failed ({e}); they stay as they are");
                self.merge_after = Some(Instant::now() + RETRY_AFTER);
            }
        }
        self.start_merge()
    }

    /// Starts a merge of the newest group of runs that is due, unless one runs. Runs are
    /// grouped Lucene-style: from the oldest, a group runs up to the newest run of the largest
    /// size class left, so small runs between large ones go with them.
    fn start_merge(&mut self) -> io::Result<()> {
        if self.merge.is_some() || self.merge_after.is_some_and(|t| Instant::now() < t) {
            return Ok(());
        }
        let classes: Vec<u32> = self.runs.iter().map(|r| size_class(r.entries())).collect();
        let mut due = None;
        let mut start = 0;
        while start < classes.len() {
            let top = *classes[start..].iter().max().expect("not empty");
            let end = start
                + classes[start..]
                    .iter()
                    .rposition(|&c| c == top)
                    .expect("max")
                + 1;
            let fan_in = if top >= LARGE_CLASS { 2 } else { FAN_IN };
            if end - start >= fan_in {
                due = Some(start..end);
            }
            start = end;
        }
        if due.is_none() && self.runs.len() > MAX_RUNS {
            due = Some(self.runs.len() - FAN_IN..self.runs.len());
        }
        let Some(due) = due else {
            return Ok(());
        };
        let inputs = self.runs[due].to_vec();
        let out = self.writer()?;
        self.merge = Some(Merge::start(inputs, out)?);
        Ok(())
    }

    /// Takes the manifest when it changed since last taken.
    pub(super) fn take_manifest(&mut self) -> Option<Vec<u8>> {
        if !std::mem::take(&mut self.changed) {
            return None;
        }
        let mut bytes = self.next_id.to_le_bytes().to_vec();
        for run in &self.runs {
            bytes.extend_from_slice(&run.id().to_le_bytes());
            bytes.extend_from_slice(&run.entries().to_le_bytes());
        }
        Some(bytes)
    }

    /// Makes the runs the manifest names durable; called before the commit that saves it.
    pub(super) fn sync(&mut self) -> io::Result<()> {
        for run in &self.unsynced {
            run.sync()?;
        }
        self.unsynced.clear();
        if std::mem::take(&mut self.dir_changed) {
            if let Some(dir) = &self.dir {
                std::fs::File::open(dir)?.sync_all()?;
            }
        }
        Ok(())
    }

    /// After a commit: removes the files of runs merged away.
    pub(super) fn committed(&mut self) {
        for path in self.retired.drain(..) {
            if let Err(e) = std::fs::remove_file(&path) {
                tracing::warn!("seen set: could not remove {}: {e}", path.display());
            }
        }
    }

    /// Entries in every run (a key in several runs counted in each) and their bytes.
    pub(super) fn size(&self) -> (u64, u64) {
        self.runs
            .iter()
            .fold((0, 0), |(n, b), r| (n + r.entries(), b + r.size()))
    }

    /// Memory the runs' indexes take.
    pub(super) fn index_bytes(&self) -> usize {
        self.runs.iter().map(|r| r.index_bytes()).sum()
    }

    /// Waits for the merge under way (tests).
    #[cfg(test)]
    pub(super) fn settle(&mut self) -> io::Result<()> {
        while self.merge.is_some() {
            std::thread::sleep(Duration::from_millis(1));
            self.poll()?;
        }
        Ok(())
    }

    /// The runs' entry counts, oldest first (tests).
    #[cfg(test)]
    pub(super) fn run_sizes(&self) -> Vec<u64> {
        self.runs.iter().map(|r| r.entries()).collect()
    }
}

#[cfg(test)]
mod tests;
