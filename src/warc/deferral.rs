//! Which records the writer thread compresses: the uncompressed bytes queued for it, and the
//! bound past which fetching tasks compress their own.
//!
//! On a crawl of small pages, compressing a page's records in the task that fetched it costs
//! more than the same work done record after record on one thread: between two fetches a core
//! runs the tokenizer, hyper and the kernel's network code, and the compressor's code and tables
//! are no longer warm (docs/PERFORMANCE.md, measured in alternating crawls). So a task hands the
//! writer its records uncompressed while the writer keeps up, and the writer compresses them
//! before it appends. The writer is one thread: when uncompressed records pile up past
//! [`DEFERRED_MAX`] (a few milliseconds of its work), tasks compress their own again, so
//! a machine with many cores still compresses on all of them and the queue's memory stays
//! bounded.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Uncompressed bytes that may wait for the writer's compression at any time: ~80 small
/// pages' records, ~8 ms of its work. At 4 MiB, more than 256 running fetches' records ever
/// come to, the writer alone set the crawl's pace (3-5% longer crawls of the small-page web).
pub const DEFERRED_MAX: usize = 1 << 20;

/// The uncompressed bytes handed to the writer and not yet compressed; shared by the fetching
/// tasks and the writer.
#[derive(Debug, Clone, Default)]
pub struct Deferral(Arc<AtomicUsize>);

impl Deferral {
    /// Claims room for `len` uncompressed bytes: true when the writer will compress them (the
    /// caller then sends them raw and the writer releases the room), false when the queue is
    /// full and the caller compresses them itself.
    pub fn claim(&self, len: usize) -> bool {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |queued| {
                (queued + len <= DEFERRED_MAX).then_some(queued + len)
            })
            .is_ok()
    }

    /// Told by the writer once it compressed `len` claimed bytes.
    pub fn release(&self, len: usize) {
        self.0.fetch_sub(len, Ordering::AcqRel);
    }

    /// Uncompressed bytes claimed and not yet released.
    pub fn queued(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_up_to_the_bound_and_again_once_released() {
        let deferral = Deferral::default();
        assert!(deferral.claim(DEFERRED_MAX - 10));
        assert!(!deferral.claim(11), "past the bound: the caller compresses");
        assert!(deferral.claim(10));
        assert_eq!(deferral.queued(), DEFERRED_MAX);
        deferral.release(DEFERRED_MAX - 10);
        assert!(deferral.claim(1000));
        assert_eq!(deferral.queued(), 1010);
    }

    #[test]
    fn a_record_larger_than_the_bound_is_never_deferred() {
        let deferral = Deferral::default();
        assert!(!deferral.claim(DEFERRED_MAX + 1));
        assert_eq!(deferral.queued(), 0);
    }
}
