//! trawl: an archival web crawler that writes standards-valid WARC/1.1 files.
//!
//! # Layout
//! Data flows one way: seeds -> frontier -> fetch -> chain (filter, outlinks, content seen,
//! build records, write) -> WARC writer, and outlinks -> frontier. Only `crawl` wires the
//! stages together; the stages share model types (`capture`, [`exchange`], `fault`,
//! [`http_message`], [`url_rules`]) but never import each other.
//!
//! | module | owns |
//! |---|---|
//! | [`cli`] / `config` | raw flags / validated configuration (plain data) |
//! | `config_file` | `--config trawl.toml` merged into the command line (and the command line parsed) |
//! | [`app`] / [`exit`] | the command, its messages and exit codes |
//! | `seeds` | seed-file parsing |
//! | [`url_rules`] | canonical URLs, scope, URL filters |
//! | [`frontier`] | per-host queues, politeness, robots.txt state, the storage seam |
//! | [`crawl_db`] | the embedded database (redb): the frontier's storage, saved counters |
//! | [`fetch`] | connections, TLS, DNS, the byte recorder; produces a `capture::Capture` |
//! | `capture` / [`exchange`] | one capture: recorded bytes, parsed head, payload |
//! | [`spool`] | bytes too many for memory (long bodies, their records) in unnamed files |
//! | `fault` | the kinds of fault the report counts |
//! | [`http_message`] | reading recorded HTTP messages (head, media type, chunked, coding) |
//! | `chain` | the processor chain's stages, one file each |
//! | [`extract`] | link extraction from HTML (pure functions) |
//! | [`record`] | WARC record builders, digests, gzip members |
//! | [`warc`] | the single writer, file naming, rotation, reading and repair |
//! | `crawl` | the crawl loop, jobs, save points, replay |
//! | `report` | progress, the final report, JSON stats, the status file |
//! | `index` | CDXJ indexes and SURT keys (`trawl index`, `--cdxj`) |
//! | `wacz` | WACZ packaging (`trawl wacz`) |
//! | [`derive`] | WET and WAT derivatives (`trawl derive`, `--wet/--wat`) |
//! | [`search`] | the full-text index (tantivy): `trawl search-index`, `trawl search`, `--search-index` |
//! | `out_lock` | one crawl per output directory |
//! | `whole_file` | files written whole or not at all (`PATH.part`, renamed) |
//! | [`redis_crawl`] | one crawl shared by many workers through Redis (`--redis`) |
//! | `console` | the live console: web page, JSON API, `/metrics` (`--console`) |
//!
//! Modules are public where the binary, the integration tests, the fuzz targets or the
//! examples (benchmarks) use them; the rest is crate-private.

// The standard printing macros, shadowed for the whole crate by ones that drop a write error:
// std's panic when the stream is gone (stderr piped to `head -1` that exited, `2>/dev/full`, a
// full disk under `2>>log`), and a cron job's crawl then died at its report with exit 101,
// before writing `--stats` and `--cdxj`. What the crawl writes goes to files, which report
// their own errors; a message nobody can read is not worth the crawl.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

pub mod app;
pub(crate) mod capture;
pub(crate) mod chain;
pub mod cli;
pub(crate) mod config;
pub mod config_file;
pub(crate) mod console;
pub(crate) mod crawl;
pub mod crawl_db;
pub mod derive;
pub mod exchange;
pub mod exit;
pub mod extract;
pub(crate) mod fault;
pub mod fetch;
pub mod frontier;
pub mod http_message;
pub(crate) mod index;
pub(crate) mod out_lock;
pub mod record;
pub mod redis_crawl;
pub(crate) mod report;
pub mod search;
pub(crate) mod seeds;
pub mod spool;
pub mod url_rules;
pub(crate) mod wacz;
pub mod warc;
pub(crate) mod whole_file;
