//! CDXJ indexes of WARC files, line for line as pywb's cdxj-indexer writes them: SURT key,
//! 14-digit timestamp, and a JSON block with url, mime, status, digest, length, offset and
//! filename. Used by `trawl index`, by the crawl's `--cdxj`, by WACZ packaging and by the
//! `--dedup-index` reader.

pub mod cdxj;
pub mod surt;

pub use cdxj::{index_files, index_readable, IndexError};
