//! One crawl shared by many worker processes through Redis (`--redis`): the frontier's queues
//! and seen sets live in Redis, each host is served by one worker at a time under a lease, and
//! `--max-pages` is one budget for all. Without `--redis` none of this runs.
//!
//! | part | file |
//! |---|---|
//! | key layout (hash tags; Cluster-ready) | `keys.rs` |
//! | the atomic Lua scripts | `scripts.rs` |
//! | the connection (single server or cluster) | `connection.rs` |
//! | joining: options check, scope, saved blobs | `join.rs` |
//! | start-up's retries of a Redis that fails transiently | `patience.rs` |
//! | the frontier's local storage (leased hosts' entries, outbox, backlink counts) | `lease_book/` |
//! | the lease protocol, run by the crawl loop (sync; claim; refill; send discovered URLs; acknowledge and leave; heartbeat and share; Redis outages; console changes crawl-wide; calls the loop does not wait for) | `coordinator/mod.rs`, `claim.rs`, `refill.rs`, `outbox.rs`, `handover.rs`, `beat.rs`, `share.rs`, `outage.rs`, `changes.rs`, `background.rs` |
//! | reading the scripts' replies | `replies.rs` |
//! | the crawl-wide page budget | `budget.rs` |
//! | `trawl status` / `trawl stop` for a shared crawl | `control.rs` |

pub mod budget;
pub mod connection;
pub mod control;
pub mod coordinator;
pub mod join;
pub mod keys;
pub mod lease_book;
pub mod patience;
mod replies;
pub mod scripts;

pub use budget::SharedBudget;
pub use coordinator::{Coordinator, SyncReport, WorkerStats};
pub use join::{join, JoinError, Joined, SharedSettings};
pub use lease_book::LeaseStore;
