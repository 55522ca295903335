//! WARC files: the single writer that owns the output files, file naming, rotation rules, and
//! a reader for indexing and packaging finished files.
//!
//! Fetching tasks hand the writer finished gzip members through a bounded channel; the writer
//! only appends, rotates and renames, so output order and rotation stay serialized while the
//! expensive work (digests, compression) runs in parallel elsewhere.

pub mod intake;
pub mod naming;
pub mod reader;
pub mod recovery;
pub mod rotation;
pub mod salvage;
pub mod writer;

pub use intake::Producers;
pub use rotation::Rotation;
pub use writer::{spawn_writer, Batch, WarcError, WriterConfig, WriterHandle};
