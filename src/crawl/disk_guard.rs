//! `--min-free`: the disk guard. While the file system of the output directory has less free
//! space than asked, no new fetch starts (those running finish and are written); the crawl
//! goes on by itself once space returns. A full disk still stops a crawl cleanly, but an
//! overnight crawl should wait for an operator (or a `--finished-dir` mover) rather than end.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytesize::ByteSize;

/// How often free space is measured (one `statvfs` call).
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Watches free space under the output directory.
pub(super) struct DiskGuard {
    dir: PathBuf,
    /// Least free bytes to keep starting fetches; 0 turns the guard off.
    min_free: u64,
    /// Free bytes at the last check, while below `min_free`.
    low: Option<u64>,
    checked: Option<Instant>,
}

impl DiskGuard {
    /// A guard over the file system holding `dir`.
    pub(super) fn new(dir: PathBuf, min_free: u64) -> Self {
        DiskGuard {
            dir,
            min_free,
            low: None,
            checked: None,
        }
    }

    /// Measures free space if the last measure is older than a second, and says so in the
    /// log when the crawl starts or stops waiting for it. True when that changed.
    pub(super) fn check(&mut self, now: Instant) -> bool {
        if self.min_free == 0 || self.checked.is_some_and(|t| now < t + CHECK_EVERY) {
            return false;
        }
        self.checked = Some(now);
        let free = match free_bytes(&self.dir) {
            Ok(free) => free,
            Err(e) => {
                // Unknown is not low: a file system that cannot say must not stall a crawl.
                tracing::debug!(
                    "cannot measure free space under {}: {e}",
                    self.dir.display()
                );
                return false;
            }
        };
        match (self.low, free < self.min_free) {
            (None, true) => tracing::warn!(
                "disk space low: {} free under {}, below --min-free {}; no new fetch starts until space returns",
                ByteSize(free),
                self.dir.display(),
                ByteSize(self.min_free)
            ),
            (Some(_), false) => tracing::warn!(
                "disk space back: {} free under {}; fetching again",
                ByteSize(free),
                self.dir.display()
            ),
            _ => {}
        }
        let was_low = self.is_low();
        self.low = (free < self.min_free).then_some(free);
        was_low != self.is_low()
    }

    /// True while new fetches wait for space.
    pub(super) fn is_low(&self) -> bool {
        self.low.is_some()
    }

    /// Why new fetches wait, while they do.
    pub(super) fn waiting(&self) -> Option<String> {
        self.low.map(|free| {
            format!(
                "disk space low: {} free, below --min-free {}",
                ByteSize(free),
                ByteSize(self.min_free)
            )
        })
    }
}

/// Bytes an unprivileged process may still write on the file system holding `dir`.
fn free_bytes(dir: &std::path::Path) -> std::io::Result<u64> {
    let stat = rustix::fs::statvfs(dir)?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_below_the_floor_and_not_when_off() {
        let dir = tempfile::tempdir().unwrap();
        let free = free_bytes(dir.path()).unwrap();
        assert!(free > 0);
        let now = Instant::now();
        let mut low = DiskGuard::new(dir.path().into(), u64::MAX);
        assert!(low.check(now));
        assert!(low.is_low());
        assert!(low.waiting().unwrap().contains("below --min-free"));
        // Measured again only after a second.
        assert!(!low.check(now));
        let mut off = DiskGuard::new(dir.path().into(), 0);
        off.check(now);
        assert_eq!(off.waiting(), None);
        let mut enough = DiskGuard::new(dir.path().into(), 1);
        enough.check(now);
        assert_eq!(enough.waiting(), None);
    }
}
