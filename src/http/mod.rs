//! Reading recorded HTTP/1.x messages: head parsing, de-chunking and content decoding.
//!
//! These are pure functions over the recorded bytes of an [`crate::exchange::Exchange`], shared
//! by the record builder (payload digests) and the crawl loop (status, Content-Type, Location,
//! link extraction input). They never touch the network.

pub mod chunked;
pub mod content_encoding;
pub mod head;

pub use chunked::dechunk;
pub use content_encoding::{decode_content, DecodeError, Decoded};
pub use head::{message_length, parse_response_head, ResponseHead};
