//! Reading recorded HTTP/1.x messages: head parsing, media types, de-chunking and content
//! decoding.
//!
//! These are pure functions over the recorded bytes of an [`crate::exchange::Exchange`], shared
//! by fetch (framing), the processor chain (status, Content-Type, Location, link extraction
//! input), the record builder (payload digests) and the index. They never touch the network.
//! (Named `http_message`, not `http`, so it never shadows the `http` crate.)

pub mod bare_cr;
pub mod chunked;
pub mod content_encoding;
pub mod framing;
pub mod head;
pub mod media_type;
pub mod retry_after;
pub mod sniff;
pub mod status_line;

pub use content_encoding::decode_content;
pub use framing::{message_length, message_length_as_read};
pub use head::{
    parse_final_head, parse_response_head, parse_response_head_with_limit, response_parser,
    url_text, ResponseHead,
};
