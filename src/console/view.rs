//! What the console shows: a snapshot of the crawl that the crawl loop publishes about once a
//! second (counters, hosts, the last fetches, the settings an operator can change), and the
//! samples of pages and bytes over time that the console keeps for its chart.

use std::collections::BTreeMap;

use serde::Serialize;

/// The crawl at one moment.
#[derive(Debug, Clone, Default, Serialize)]
pub struct View {
    /// The crawl's name.
    pub crawl_id: String,
    /// When this run started (RFC 3339).
    pub started: String,
    /// `running`, `paused`, `stopping` or `ended`.
    pub state: String,
    /// Pages archived.
    pub pages: u64,
    /// Responses received.
    pub requests: u64,
    /// Response bytes received.
    pub bytes_downloaded: u64,
    /// WARC bytes written.
    pub bytes_written: u64,
    /// URLs queued.
    pub queued: u64,
    /// Fetches running.
    pub in_flight: u64,
    /// Hosts by state.
    pub hosts: HostCounts,
    /// The hosts with the longest queues.
    pub busiest: Vec<BusyHost>,
    /// Responses by status code.
    pub status_codes: BTreeMap<String, u64>,
    /// Failed attempts by kind.
    pub errors: BTreeMap<String, u64>,
    /// URLs not fetched or not archived, by reason.
    pub filtered: BTreeMap<String, u64>,
    /// The WARC file being written.
    pub warc: Option<WarcFile>,
    /// Peak resident memory of the process.
    pub peak_rss_bytes: Option<u64>,
    /// The last fetches, newest first.
    pub recent: Vec<Fetch>,
    /// What the operator can change.
    pub settings: Settings,
    /// The whole crawl, for a worker of a shared crawl (`--redis`): what `trawl status`
    /// prints.
    pub crawl: Option<serde_json::Value>,
}

/// Hosts by state.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostCounts {
    /// Hosts ever queued.
    pub seen: u64,
    /// Hosts being fetched from now.
    pub active: u64,
    /// Hosts with URLs queued, waiting for their turn.
    pub waiting: u64,
    /// Origins given up (robots.txt unreachable or refused) and hosts given up (not
    /// answering for `--host-down-limit`).
    pub given_up: u64,
}

/// One host with a long queue.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BusyHost {
    /// The politeness key (host name).
    pub name: String,
    /// URLs queued.
    pub queued: u64,
    /// Milliseconds until its next request may start (0: now).
    pub next_in_ms: u64,
    /// A fetch is running.
    pub fetching: bool,
}

/// The WARC file being written.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WarcFile {
    /// Its name once closed.
    pub name: String,
    /// Bytes so far.
    pub bytes: u64,
}

/// One finished fetch.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Fetch {
    /// The URL.
    pub url: String,
    /// `page`, `robots`, `sitemap`, `requisite` or `lookup`.
    pub kind: &'static str,
    /// HTTP status, when a response came.
    pub status: Option<u16>,
    /// `archived`, why it was skipped, or the error kind.
    pub outcome: String,
    /// Response bytes.
    pub bytes: u64,
    /// Fetch time in milliseconds.
    pub ms: u64,
    /// When it finished (RFC 3339).
    pub at: String,
}

/// The settings the console can change.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Settings {
    /// The per-host delay in milliseconds (raised per host by Crawl-delay).
    pub delay_ms: u64,
    /// The `--exclude` patterns in force.
    pub excludes: Vec<String>,
}

/// Pages and bytes at one moment, for the chart.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Sample {
    /// Milliseconds since the Unix epoch.
    pub t_ms: u64,
    /// Pages archived.
    pub pages: u64,
    /// Response bytes received.
    pub bytes: u64,
}
