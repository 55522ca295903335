//! When to start a new WARC file: after a record count or a byte size, whichever comes first,
//! never splitting a batch (a request/response pair) across files.

/// Rotation limits for one crawl.
#[derive(Debug, Clone, Copy)]
pub struct Rotation {
    /// Most content records per file (the warcinfo record is not counted).
    pub records_per_file: u64,
    /// Most bytes per file (compressed, as on disk).
    pub max_file_size: u64,
}

impl Rotation {
    /// True when a batch of `batch_records` records and `batch_bytes` bytes must go into a new
    /// file because the current one holds `records` records in `bytes` bytes. A file always
    /// takes at least one batch, so an oversized batch still gets written.
    pub fn needs_new_file(
        &self,
        records: u64,
        bytes: u64,
        batch_records: u64,
        batch_bytes: u64,
    ) -> bool {
        records > 0
            && (records + batch_records > self.records_per_file
                || bytes.saturating_add(batch_bytes) > self.max_file_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_on_record_count_without_splitting_pairs() {
        let r = Rotation {
            records_per_file: 4,
            max_file_size: u64::MAX,
        };
        assert!(!r.needs_new_file(0, 0, 2, 10));
        assert!(!r.needs_new_file(2, 10, 2, 10));
        assert!(r.needs_new_file(4, 20, 2, 10));
        // An odd limit: a pair that would cross it starts a new file.
        let odd = Rotation {
            records_per_file: 3,
            max_file_size: u64::MAX,
        };
        assert!(odd.needs_new_file(2, 10, 2, 10));
        assert!(!odd.needs_new_file(2, 10, 1, 5));
    }

    #[test]
    fn rotates_on_size_and_always_accepts_first_batch() {
        let r = Rotation {
            records_per_file: 1000,
            max_file_size: 100,
        };
        assert!(!r.needs_new_file(0, 0, 2, 500));
        assert!(!r.needs_new_file(2, 60, 2, 40));
        assert!(r.needs_new_file(2, 60, 2, 41));
    }
}
