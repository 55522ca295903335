//! What happens to each WARC file the writer closes, on a thread of its own: `--wet` / `--wat`
//! derive it, so indexing can start before the crawl ends, `--search-index` adds its pages to
//! the full-text index, and then `--finished-dir` / `--on-close` hand it off (`handoff.rs`).
//! At start it first catches up with finished WARCs of the output directory that lack their
//! derivatives or were not handed off (a crawl killed mid-way, or resumed with the flags newly
//! given), and with those, in `--finished-dir` too, that the search index does not hold.
//! Derivatives are written as `.part` and renamed, so a kill leaves none that looks complete.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::handoff::Handoff;
use crate::derive::{derive_file, lacks_derivatives, pending, DeriveLimits, Kinds};
use crate::search::SearchIndexer;
use crate::warc::naming::list_warc_files;

/// What the derivation thread did.
#[derive(Debug, Default)]
pub(super) struct Derived {
    /// Derivative files written.
    pub(super) files: Vec<PathBuf>,
    /// Files handed off to `--finished-dir`: where each is now, by where it was written.
    pub(super) moved: HashMap<PathBuf, PathBuf>,
    /// WARC files whose derivatives or search-index entry could not be written.
    pub(super) failed: u64,
}

impl Derived {
    /// Where `path` is now (moved to `--finished-dir`, or where it was written).
    pub(super) fn now_at(&self, path: &Path) -> PathBuf {
        self.moved
            .get(path)
            .map_or_else(|| path.to_path_buf(), Clone::clone)
    }
}

/// The derivation thread and the sender the writer announces closed files on.
pub(super) struct Deriver {
    sender: mpsc::Sender<PathBuf>,
    thread: std::thread::JoinHandle<Derived>,
}

impl Deriver {
    /// Starts deriving `kinds` for the WARC files of `dir`, and handing them off with
    /// `handoff`; those already finished first.
    pub(super) fn start(
        dir: &Path,
        kinds: Kinds,
        handoff: Option<Handoff>,
        search: Option<SearchIndexer>,
    ) -> std::io::Result<Deriver> {
        let (sender, receiver) = mpsc::channel::<PathBuf>();
        // Every finished file still here is to be handed off; without a hand-off, only those
        // that lack a derivative need the thread. And any the search index does not hold, in
        // `--finished-dir` too (the index given to a resumed crawl, a failed addition).
        let mut waiting = match &handoff {
            Some(h) => h.left_over()?,
            None => pending(dir, kinds)?,
        };
        if let Some(index) = &search {
            let dirs = handoff
                .as_ref()
                .map_or_else(|| vec![dir.to_path_buf()], Handoff::dirs);
            for warc in list_warc_files(&dirs)? {
                if !index.holds(&warc) && !waiting.contains(&warc) {
                    waiting.push(warc);
                }
            }
        }
        for warc in waiting {
            let _ = sender.send(warc);
        }
        let dir = dir.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("derive".into())
            .spawn(move || run(&dir, kinds, receiver, handoff, search))?;
        Ok(Deriver { sender, thread })
    }

    /// A sender for the writer's `closed_files`.
    pub(super) fn sender(&self) -> mpsc::Sender<PathBuf> {
        self.sender.clone()
    }

    /// Waits for every announced file to be derived (drop the writer's sender first).
    pub(super) fn finish(self) -> Derived {
        drop(self.sender);
        self.thread.join().unwrap_or_default()
    }
}

fn run(
    dir: &Path,
    kinds: Kinds,
    receiver: mpsc::Receiver<PathBuf>,
    mut handoff: Option<Handoff>,
    mut search: Option<SearchIndexer>,
) -> Derived {
    let limits = DeriveLimits::default();
    let mut derived = Derived::default();
    for warc in receiver {
        derive(&warc, dir, kinds, &limits, &mut derived);
        if let Some(index) = &mut search {
            if !add_to_index(index, &warc) {
                derived.failed += 1;
            }
        }
        if let Some(h) = &mut handoff {
            h.take(&warc);
        }
    }
    if let Some(h) = handoff {
        derived.moved = h.finish().into_iter().collect();
    }
    derived
}

/// Derives `warc` when it lacks a derivative `kinds` asks for.
fn derive(warc: &Path, dir: &Path, kinds: Kinds, limits: &DeriveLimits, derived: &mut Derived) {
    // A file already handed off (in `--finished-dir`) waits only for its command.
    if warc.parent() != Some(dir) || !lacks_derivatives(warc, dir, kinds) {
        return;
    }
    match derive_file(warc, dir, kinds, limits) {
        Ok(summary) => {
            if let Some(e) = &summary.read_error {
                tracing::warn!(
                    "{}: derivatives stop after record {}: {e}",
                    warc.display(),
                    summary.records
                );
            }
            derived.files.extend(summary.files);
        }
        // The WARC is safe; only its derivative is missing (`trawl derive` can redo it).
        Err(e) => {
            tracing::error!("deriving {}: {e}", warc.display());
            derived.failed += 1;
        }
    }
}

/// Adds the pages of `warc` to the search index, unless it holds them already; false when it
/// could not. A failure leaves the file out of the index (the next run, or `trawl
/// search-index`, adds it), and the next file is added by a writer rolled back to the last
/// commit.
fn add_to_index(index: &mut SearchIndexer, warc: &Path) -> bool {
    match index.index_file(warc) {
        Ok(outcome) => {
            if outcome.damaged > 0 {
                tracing::warn!(
                    "{}: {} damaged record(s) left out of the search index",
                    warc.display(),
                    outcome.damaged
                );
            }
            true
        }
        Err(e) => {
            tracing::error!("indexing {} for search: {}", warc.display(), causes(&e));
            false
        }
    }
}

/// An error with its causes (tantivy's says "an IO error occurred" and keeps the cause).
fn causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = cause.source();
    }
    text
}
