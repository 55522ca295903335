//! `--wet` / `--wat` during a crawl: a thread of its own derives each WARC file as the writer
//! closes it, so indexing can start before the crawl ends. At start it first catches up with
//! finished WARCs of the output directory that lack their derivatives (a crawl killed while
//! deriving, or resumed with the flags newly given). Derivatives are written as `.part` and
//! renamed, so a kill leaves none that looks complete.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::derive::{derive_file, pending, DeriveLimits, Kinds};

/// What the derivation thread did.
#[derive(Debug, Default)]
pub(super) struct Derived {
    /// Derivative files written.
    pub(super) files: Vec<PathBuf>,
}

/// The derivation thread and the sender the writer announces closed files on.
pub(super) struct Deriver {
    sender: mpsc::Sender<PathBuf>,
    thread: std::thread::JoinHandle<Derived>,
}

impl Deriver {
    /// Starts deriving `kinds` for the WARC files of `dir`, those already finished first.
    pub(super) fn start(dir: &Path, kinds: Kinds) -> std::io::Result<Deriver> {
        let (sender, receiver) = mpsc::channel::<PathBuf>();
        for warc in pending(dir, kinds)? {
            let _ = sender.send(warc);
        }
        let dir = dir.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("derive".into())
            .spawn(move || run(&dir, kinds, receiver))?;
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

fn run(dir: &Path, kinds: Kinds, receiver: mpsc::Receiver<PathBuf>) -> Derived {
    let limits = DeriveLimits::default();
    let mut derived = Derived::default();
    for warc in receiver {
        match derive_file(&warc, dir, kinds, &limits) {
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
            Err(e) => tracing::error!("deriving {}: {e}", warc.display()),
        }
    }
    derived
}
