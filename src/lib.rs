//! trawl: an archival web crawler that writes standards-valid WARC/1.1 files.
//!
//! # Layout
//! Data flows one way: seeds -> frontier -> fetch -> record -> WARC writer, and
//! fetch -> extract -> frontier. Only [`crawl`] wires the stages together; the stages share
//! model types ([`exchange`], [`http`], [`url`]) but never import each other.
//!
//! | module | owns |
//! |---|---|
//! | [`cli`] / [`config`] | raw flags / validated configuration |
//! | [`app`] / [`exit`] | the command, its messages and exit codes |
//! | [`seeds`] | seed-file parsing |
//! | [`url`] | canonical URLs, scope, URL filters |
//! | [`frontier`] | per-host queues, seen set, politeness, robots.txt state (time passed in) |
//! | [`fetch`] | connections, TLS, DNS, the byte recorder |
//! | [`exchange`] | the recorded request/response bytes |
//! | [`http`] | reading recorded HTTP messages (head, chunked, content coding) |
//! | [`extract`] | link extraction from HTML |
//! | [`record`] | WARC record builders, digests, gzip members |
//! | [`warc`] | the single writer, file naming, rotation |
//! | [`crawl`] | the crawl loop and per-job workers |
//! | [`store`] / [`state`] | the embedded database (redb) holding crawl state / the counters in it |
//! | [`report`] | progress, the final report, JSON stats |
//! | [`index`] | CDXJ indexes and SURT keys (`trawl index`, `--cdxj`) |
//! | [`wacz`] | WACZ packaging (`trawl wacz`) |

pub mod app;
pub mod cli;
pub mod config;
pub mod crawl;
pub mod exchange;
pub mod exit;
pub mod extract;
pub mod fetch;
pub mod frontier;
pub mod http;
pub mod index;
pub mod lock;
pub mod record;
pub mod report;
pub mod seeds;
pub mod state;
pub mod store;
pub mod url;
pub mod wacz;
pub mod warc;
