//! What the crawl tells its user: live progress, the final report table, and JSON stats.

pub mod content_types;
pub mod progress;
pub mod stats;
pub mod status_file;
pub mod table;

pub use progress::{Progress, Snapshot};
pub use stats::{CrawlStats, StopReason, Tally};
pub use table::render_table;
