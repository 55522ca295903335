//! The processor chain: the named stages every capture goes through, in this order.
//!
//! ```text
//! fetch ─► filter ─► outlinks ─► content_seen ─► build_records ─► write
//!          (head)    (links,      (payload        (request,        (to the
//!                    Location,    digest,         response or      single
//!                    robots.txt)  revisit?)       revisit, meta)   writer)
//! ```
//! Each stage is a plain function over one parsed [`crate::capture::Capture`] in its own file,
//! with its own options; none imports another, nor the crawl loop. The loop's job runner
//! (`crawl/job.rs`) calls them in turn for a live fetch, and crash replay (`crawl/replay.rs`)
//! calls `filter`, `outlinks` and `content_seen` on a capture read back from the WARC files,
//! so a replayed capture is judged exactly as a live one.

pub mod build_records;
pub mod content_seen;
pub mod filter;
pub mod outlinks;
pub mod write;
