//! What the crawl tells its user: live progress, the final report table, JSON stats, and the
//! log file they go to.

pub mod content_types;
pub mod log_file;
pub mod progress;
pub mod stats;
pub mod status_file;
pub mod table;

pub use progress::{Progress, Snapshot};
pub use stats::{CrawlStats, StopReason, Tally};
pub use table::render_table;
