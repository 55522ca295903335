//! The stop requests (SIGINT, SIGTERM, and `--time-limit` reached, which stops as the first
//! SIGTERM does) this process has received, counted, for the work that
//! runs beside or after the crawl loop, which does not read the loop's signal channel: the
//! `--on-close` commands (none started after a stop; running ones stopped by a second
//! signal) and the directory's CDXJ index written after the crawl (given up at a signal).

use std::sync::atomic::{AtomicU32, Ordering};

static RECEIVED: AtomicU32 = AtomicU32::new(0);

/// Counts a stop request (the signal forwarder calls this before passing it on; the loop when
/// the time limit is reached).
pub fn received_one() {
    RECEIVED.fetch_add(1, Ordering::SeqCst);
}

/// Stop requests received so far.
pub fn received() -> u32 {
    RECEIVED.load(Ordering::SeqCst)
}
