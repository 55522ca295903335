//! The operator's changes to a running crawl, as crawl state: what the live console added or
//! lifted, saved with the counters at every save point and restored on resume. Plain data:
//! applying the changes to the ledger is `live_changes.rs`.

use serde::{Deserialize, Serialize};

/// The operator's changes, as crawl state.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveChanges {
    /// Patterns added.
    #[serde(default)]
    pub excludes_added: Vec<String>,
    /// Command-line patterns lifted.
    #[serde(default)]
    pub excludes_removed: Vec<String>,
    /// The delay set, in milliseconds.
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Seeds added (kept for the scope; their URLs are in the queue).
    #[serde(default)]
    pub seeds_added: Vec<String>,
}

impl LiveChanges {
    /// True when nothing was changed.
    pub fn is_empty(&self) -> bool {
        *self == LiveChanges::default()
    }
}
