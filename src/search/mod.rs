//! Full-text search over the corpus, with tantivy (Rust's counterpart of Lucene): one
//! document per archived page, made from the same text WET holds, so a hit leads to its
//! record (WARC file and offset). Written by `trawl search-index` and by `trawl crawl
//! --search-index` as each WARC file closes; read by `trawl search`, the live console and any
//! tantivy reader (tantivy-py opens it).
//!
//! | part | file |
//! |---|---|
//! | the fields of a page document | `schema.rs` |
//! | words: CJK text cut into pairs of characters | `words.rs` |
//! | writing: files indexed once, one commit per file, the writer lock | `indexer.rs` |
//! | searching: the query syntax, hits and snippets | `query.rs` |
//! | a query's apostrophes and colons that are text, escaped | `query_text.rs` |

pub mod indexer;
pub mod query;
mod query_text;
pub mod schema;
mod words;

use std::path::PathBuf;

pub use indexer::{FileOutcome, SearchIndexer, WriterBudget};
pub use query::{Hit, Results, SearchReader};

/// Why the index could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// Another process writes the index now.
    #[error("{}: the search index is being written by another process (its writer lock, .tantivy-writer.lock, is held); wait for it to finish", dir.display())]
    Locked {
        /// The index directory.
        dir: PathBuf,
    },
    /// The directory holds something else.
    #[error("{}: not a trawl search index (give an empty or new directory)", dir.display())]
    NotAnIndex {
        /// The directory.
        dir: PathBuf,
    },
    /// No index there.
    #[error("{}: no search index here (make one with `trawl search-index WARC... -o {}`)", dir.display(), dir.display())]
    Missing {
        /// The directory.
        dir: PathBuf,
    },
    /// The query could not be parsed.
    #[error("bad query: {0}")]
    Query(String),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// tantivy failed.
    #[error("search index {}: {source}", dir.display())]
    Tantivy {
        /// The index directory.
        dir: PathBuf,
        /// The error.
        source: tantivy::TantivyError,
    },
}
