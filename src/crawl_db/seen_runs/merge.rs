//! Merging runs of the seen set into one, on a thread of its own: the inputs are immutable, so
//! lookups go on reading them while the merge writes its output beside them; the crawl
//! installs the output when the merge is done. A key in several inputs keeps the newest
//! input's queue key.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::run::{Run, RunWriter};
use crate::crawl_db::layout::{QueueKey, SeenKey};

/// Entries between two looks at the cancel flag.
const CANCEL_EVERY: u64 = 1 << 16;

/// A merge under way.
pub(super) struct Merge {
    /// The ids of its inputs, oldest first (a run of consecutive runs).
    inputs: Vec<u64>,
    /// The thread; taken when joined.
    handle: Option<JoinHandle<io::Result<Run>>>,
    /// Set when the store is dropped, so that the thread stops within a few milliseconds.
    cancel: Arc<AtomicBool>,
}

impl Merge {
    /// Starts merging `inputs` (oldest first) into `out`.
    pub(super) fn start(inputs: Vec<Arc<Run>>, out: RunWriter) -> io::Result<Merge> {
        let cancel = Arc::new(AtomicBool::new(false));
        let ids = inputs.iter().map(|r| r.id()).collect();
        let stop = Arc::clone(&cancel);
        let handle = std::thread::Builder::new()
            .name("trawl-seen-merge".into())
            .spawn(move || {
                let mut out = out;
                match copy(&inputs, &mut out, &stop) {
                    Ok(()) => out.finish(true),
                    Err(e) => {
                        out.abandon();
                        Err(e)
                    }
                }
            })?;
        Ok(Merge {
            inputs: ids,
            handle: Some(handle),
            cancel,
        })
    }

    /// The ids of the runs being merged, oldest first.
    pub(super) fn inputs(&self) -> &[u64] {
        &self.inputs
    }

    /// True when the thread is done.
    pub(super) fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Waits for the merged run.
    pub(super) fn finish(mut self) -> io::Result<Run> {
        let handle = self.handle.take().expect("joined once");
        handle
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the seen-set merge thread panicked")))
    }
}

impl Drop for Merge {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            // An abandoned output is removed by the thread (or, after a kill, at the next open).
            let _ = handle.join();
        }
    }
}

/// Writes the union of `inputs` to `out` in key order.
fn copy(inputs: &[Arc<Run>], out: &mut RunWriter, cancel: &AtomicBool) -> io::Result<()> {
    let mut cursors: Vec<_> = inputs.iter().map(|r| r.cursor()).collect();
    let mut heads: Vec<Option<(SeenKey, QueueKey)>> = cursors
        .iter_mut()
        .map(|c| c.next_entry())
        .collect::<io::Result<_>>()?;
    loop {
        // The smallest key; among equal keys the newest input's (inputs are oldest first).
        let mut best: Option<(SeenKey, QueueKey)> = None;
        for (key, value) in heads.iter().flatten() {
            if best.is_none_or(|(k, _)| *key <= k) {
                best = Some((*key, *value));
            }
        }
        let Some((key, value)) = best else {
            return Ok(());
        };
        out.push(&key, &value)?;
        for (head, cursor) in heads.iter_mut().zip(cursors.iter_mut()) {
            if head.is_some_and(|(k, _)| k == key) {
                *head = cursor.next_entry()?;
            }
        }
        if out.entries().is_multiple_of(CANCEL_EVERY) && cancel.load(Ordering::Relaxed) {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "seen-set merge cancelled",
            ));
        }
    }
}
