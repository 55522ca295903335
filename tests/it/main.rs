//! Integration tests: real crawls of sites served on loopback, read back with the `warc`
//! crate and with third-party readers (warcio, pywb) from the virtualenv made by scripts/test.

mod archive;
mod browser_load;
mod cli;
mod console;
mod console_host_states;
mod content_types;
mod cookies;
mod crawl_site;
mod daemons;
mod delay_factor;
mod derivatives;
mod digest_login;
mod dns_records;
mod durability;
mod encodings;
mod extension_probes;
mod foreign_warcs;
mod harness;
mod hostile;
mod hostile_cases;

mod limit_rate;
mod nightly;
mod no_parent;
mod old_servers;
mod proxies;
mod redis_server;
mod referer;
mod robots_directives;
mod search;
mod seeds_stream;
mod server;
mod session_ids;
mod shared_balance;
mod shared_console;
mod shared_crawl;
mod shared_order;
mod site_login;
mod third_party;
mod tls_trust;
mod unattended;
