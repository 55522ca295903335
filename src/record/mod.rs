//! WARC record building: one builder per record type, digests, and gzip members.
//!
//! Records are built from the exact bytes of an [`crate::exchange::Exchange`]; no HTTP header is
//! ever re-serialized. Building and compressing happen in the fetching task so that the single
//! writer only appends finished gzip members.

pub mod builder;
pub mod digest;
pub mod dns_record;
pub mod gzip;

pub use builder::{
    exchange_records, exchange_records_as, metadata_record, warc_date, warcinfo_record,
    BorrowedRecord, Original, ResponseForm,
};
pub use digest::{payload_of_response, sha1_digest, sha1_digest_pieces};
pub use dns_record::dns_record;
pub use gzip::gzip_member;
