//! trawl: an archival web crawler that writes WARC/1.1 files.
pub mod exchange;
pub mod extract;
pub mod frontier;
pub mod http;
pub mod record;
pub mod seeds;
pub mod url;
pub mod warc;
