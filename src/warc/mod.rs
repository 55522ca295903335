//! WARC files: the single writer that owns the output files, file naming, rotation rules, and
//! a reader for indexing and packaging finished files.
//!
//! Fetching tasks hand the writer their records through a bounded channel; the writer appends,
//! rotates and renames, so output order and rotation stay serialized while the digests run in
//! parallel elsewhere. Records come as finished gzip members, or uncompressed for the writer to
//! compress while it keeps up (`deferral.rs`).

pub mod deferral;
pub mod intake;
pub mod naming;
pub mod reader;
pub mod recovery;
pub mod rotation;
pub mod salvage;
pub mod writer;

pub use deferral::Deferral;
pub use intake::Producers;
pub use rotation::Rotation;
pub use writer::{spawn_writer, Batch, WarcError, WriterConfig, WriterHandle};
