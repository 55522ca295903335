//! The hosts known to have no queue rows on disk, so that taking a host's next URL skips the
//! B-tree when its queue is only in the pending batch: on a crawl of small pages more than
//! half of all pops found nothing on disk, each for a table opened and a range read
//! (docs/PERFORMANCE.md). Queue rows reach the disk only when a batch is written, which
//! forgets every host; a pop that finds nothing on disk marks its host again.

/// A set of host ids, one bit each (host ids are dense, from 0).
#[derive(Debug, Default)]
pub(super) struct BareHosts {
    bits: Vec<u64>,
}

impl BareHosts {
    /// True when `host` was found with nothing on disk since the last batch was written.
    pub(super) fn contains(&self, host: u32) -> bool {
        let (word, bit) = place(host);
        self.bits.get(word).is_some_and(|w| w & bit != 0)
    }

    /// Records that `host` has nothing on disk.
    pub(super) fn insert(&mut self, host: u32) {
        let (word, bit) = place(host);
        if self.bits.len() <= word {
            self.bits.resize(word + 1, 0);
        }
        self.bits[word] |= bit;
    }

    /// Forgets every host (a batch of rows is being written to disk).
    pub(super) fn clear(&mut self) {
        self.bits.fill(0);
    }
}

fn place(host: u32) -> (usize, u64) {
    ((host / 64) as usize, 1 << (host % 64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_hosts_until_cleared() {
        let mut b = BareHosts::default();
        assert!(!b.contains(0) && !b.contains(1_000_000));
        b.insert(3);
        b.insert(200);
        assert!(b.contains(3) && b.contains(200));
        assert!(!b.contains(2) && !b.contains(4) && !b.contains(199) && !b.contains(264));
        b.clear();
        assert!(!b.contains(3) && !b.contains(200));
    }
}
