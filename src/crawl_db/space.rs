//! Where the crawl state's bytes go: for the queue, the bytes of its rows against the pages
//! that hold them; for the database file, the pages in use and the free ones; for the seen
//! set, its runs. A diagnostic for the
//! benchmarks (docs/PERFORMANCE.md), read in the open transaction.

use redb::ReadableTableMetadata;

use super::{CrawlDb, StoreError, QUEUE};

/// One table's rows and pages.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct TableSpace {
    /// Rows.
    pub rows: u64,
    /// Bytes of keys and values.
    pub stored_bytes: u64,
    /// Leaf pages.
    pub leaf_pages: u64,
    /// Branch pages.
    pub branch_pages: u64,
}

/// The database's space.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Space {
    /// Page size in bytes.
    pub page_size: u64,
    /// Pages in use (every table, redb's own included).
    pub allocated_pages: u64,
    /// Bytes allocated but holding nothing: free pages and the unused ends of pages.
    pub fragmented_bytes: u64,
    /// The queue.
    pub queue: TableSpace,
    /// The seen set's runs (beside the database file): its entries (a key in several runs
    /// counted in each) and the bytes of their files.
    pub seen: RunSpace,
}

/// The seen set's runs.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct RunSpace {
    /// Entries in every run.
    pub entries: u64,
    /// Bytes of the run files.
    pub file_bytes: u64,
    /// Memory the runs' block indexes take.
    pub index_bytes: u64,
}

impl CrawlDb {
    /// The database's space as of the open transaction (pending rows written first).
    pub fn space(&mut self) -> Result<Space, StoreError> {
        self.flush()?;
        let (entries, file_bytes) = self.seen_runs.size();
        let seen = RunSpace {
            entries,
            file_bytes,
            index_bytes: self.seen_runs.index_bytes() as u64,
        };
        let txn = self.txn()?;
        let read = || -> Result<Space, redb::Error> {
            let db = txn.stats()?;
            Ok(Space {
                page_size: db.page_size() as u64,
                allocated_pages: db.allocated_pages(),
                fragmented_bytes: db.fragmented_bytes(),
                queue: table_space(&txn.open_table(QUEUE)?)?,
                seen,
            })
        };
        read().map_err(|e| self.error(e))
    }
}

fn table_space(table: &impl ReadableTableMetadata) -> Result<TableSpace, redb::Error> {
    let stats = table.stats()?;
    Ok(TableSpace {
        rows: table.len()?,
        stored_bytes: stats.stored_bytes(),
        leaf_pages: stats.leaf_pages(),
        branch_pages: stats.branch_pages(),
    })
}
