//! Counters kept during the crawl ([`Tally`]) and the final report ([`CrawlStats`]).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::content_types::ContentTypes;

/// Why the crawl ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// `--max-pages` reached.
    TargetReached,
    /// Nothing left to fetch.
    FrontierExhausted,
    /// SIGINT or SIGTERM.
    Interrupted,
    /// The WARC output failed.
    OutputError,
    /// `--time-limit` reached.
    TimeLimit,
    /// `--max-bytes` reached.
    ByteLimit,
    /// A shared crawl was stopped with `trawl stop`.
    Stopped,
    /// A shared crawl's state in Redis was found lost (Redis restarted without its data).
    SharedStateLost,
}

impl StopReason {
    /// Words for people (the JSON keeps the snake_case name).
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::TargetReached => "page target reached (--max-pages)",
            StopReason::FrontierExhausted => "all queued URLs done",
            StopReason::Interrupted => "interrupted by a signal (resumable)",
            StopReason::OutputError => "output error (a full disk, or no permission; resumable)",
            StopReason::TimeLimit => "time limit reached (--time-limit; resumable)",
            StopReason::ByteLimit => "byte target reached (--max-bytes)",
            StopReason::Stopped => "stopped by trawl stop (resumable)",
            StopReason::SharedStateLost => {
                "the shared crawl's state in Redis was lost (see the log; not resumable)"
            }
        }
    }

    /// True when the crawl is over: running it again needs `--recrawl` or `--fresh`. A crawl
    /// stopped by a signal, the time limit or an output error is resumed instead.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            StopReason::TargetReached | StopReason::FrontierExhausted | StopReason::ByteLimit
        )
    }
}

/// URLs not fetched or not archived, by reason.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Filtered {
    /// Response of a type not in `--accept`: not archived, and its body not read unless it is
    /// HTML (read for its links only).
    pub content_type: u64,
    /// Disallowed by robots.txt.
    pub robots: u64,
    /// Dropped because robots.txt stayed unavailable (5xx/unreachable).
    pub robots_unavailable: u64,
    /// Dropped because their host stopped answering (every connection failed) for longer
    /// than `--host-down-limit`.
    #[serde(default)]
    pub host_down: u64,
    /// Links of pages whose `<meta name="robots">` says `nofollow` (or `none`).
    #[serde(default)]
    pub nofollow: u64,
    /// Outside `--scope`.
    pub scope: u64,
    /// Links whose extension names a type `--accept` does not take.
    pub extension: u64,
    /// Links whose declared type (`<link type>`, a `Link` field's `type`: feeds, oEmbed and
    /// JSON views) `--accept` does not take.
    #[serde(default)]
    pub declared_type: u64,
    /// Beyond `--max-depth`.
    pub depth: u64,
    /// Rejected by `--include`/`--exclude`.
    pub pattern: u64,
    /// Redirect chains longer than the hop limit.
    pub redirects: u64,
    /// URLs longer than `--max-url-length` (links over 16 KiB included).
    pub url_length: u64,
    /// Links past `--max-links-per-page`.
    #[serde(default)]
    pub link_cap: u64,
    /// Links that are not http(s) URLs (mailto:, javascript:, unparseable).
    #[serde(default)]
    pub not_http: u64,
    /// Crawler-trap paths (too deep, repeated segments).
    pub path_trap: u64,
    /// Ports refused by `--deny-ports`, and port 0 (never connectable).
    pub port: u64,
    /// Links to an IP address of a class the SSRF guard refuses (loopback, private...)
    /// other than the seeds' own.
    #[serde(default)]
    pub blocked_address: u64,
    /// Links to hosts that reached `--max-pages-per-host`.
    pub host_quota: u64,
    /// Links to hosts past their site's `--max-hosts-per-site`.
    #[serde(default)]
    pub site_hosts: u64,
    /// Responses not archived because the page target was already reached.
    pub target_reached: u64,
    /// Links already seen (not a filter, but useful for tuning).
    pub duplicate: u64,
}

/// Live counters, updated by the crawl loop only.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Tally {
    /// 2xx pages of an accepted type archived.
    pub pages: u64,
    /// `pages` when this run started (a resumed crawl's earlier runs): rates count this run's.
    #[serde(skip)]
    pub pages_at_start: u64,
    /// This run resumed an earlier one's crawl.
    #[serde(skip)]
    pub resumed: bool,
    /// Responses received (any status, archived or not).
    pub requests: u64,
    /// Sum of fetch times, for the mean.
    pub request_time: Duration,
    /// Response bytes received.
    pub bytes_downloaded: u64,
    /// Pages archived per host.
    pub pages_per_host: HashMap<String, u64>,
    /// Hosts that answered at least one request.
    pub hosts_crawled: HashMap<String, u64>,
    /// Responses by status code.
    pub status_codes: BTreeMap<u16, u64>,
    /// Filter counters.
    pub filtered: Filtered,
    /// Lines of the seeds file that could not be used.
    #[serde(default)]
    pub seed_lines_skipped: u64,
    /// Failed attempts by error kind (every attempt, retried or not).
    pub errors: BTreeMap<String, u64>,
    /// URLs given up after their retries.
    pub failed_urls: u64,
    /// Retries scheduled.
    pub retries: u64,
    /// Answers that asked the crawl to slow down (429, 503, `--retry-status`): the host
    /// waited longer, and the URL was retried when it had tries left.
    #[serde(default)]
    pub slowed_down: u64,
    /// Archived responses cut short, by WARC-Truncated value.
    pub truncated: BTreeMap<String, u64>,
    /// Pages written as revisit records (content-seen test).
    pub revisits: u64,
    /// Body bytes those revisits did not store again.
    pub bytes_saved: u64,
    /// Sitemaps fetched and what they listed.
    #[serde(default)]
    pub sitemaps: SitemapTally,
    /// Page requisites (`--page-requisites`).
    #[serde(default)]
    pub requisites: RequisiteTally,
    /// Archived responses by declared media type.
    #[serde(default)]
    pub content_types: ContentTypes,
}

/// Page requisites (`--page-requisites`): not pages, counted apart.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct RequisiteTally {
    /// Requisites queued (new URLs).
    pub queued: u64,
    /// Requisites archived (any status, any type).
    pub archived: u64,
}

/// What the crawl's sitemaps gave (`--sitemaps`).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct SitemapTally {
    /// Sitemap files archived.
    pub fetched: u64,
    /// Page URLs they listed (before scope and dedup).
    pub urls: u64,
    /// Further sitemaps index files listed.
    pub nested: u64,
    /// Entries past the protocol's limits (50,000 URLs, 50 MB per file).
    pub over_limits: u64,
    /// Files that were not sitemaps, or broke part-way.
    pub invalid: u64,
}

/// One row of the top-hosts list.
#[derive(Debug, Clone, Serialize)]
pub struct HostCount {
    /// Host name.
    pub host: String,
    /// Pages archived.
    pub pages: u64,
}

/// The final report, printed as a table and written as JSON with `--stats`. Its counters are
/// the whole crawl's, over every run of a resumed one, but for `elapsed_secs`, `pages_per_sec`,
/// `bytes_written`, `records_written` and `warc_files`, which are this run's (`resumed` says
/// there were runs before it).
#[derive(Debug, Clone, Serialize)]
pub struct CrawlStats {
    /// Why the crawl ended.
    pub stop_reason: StopReason,
    /// This run resumed a crawl that earlier runs had begun.
    pub resumed: bool,
    /// Pages archived.
    pub pages_archived: u64,
    /// Wall time in seconds.
    pub elapsed_secs: f64,
    /// Pages per second of wall time.
    pub pages_per_sec: f64,
    /// Responses received.
    pub requests: u64,
    /// Mean fetch time in milliseconds.
    pub mean_request_ms: f64,
    /// Response bytes received.
    pub bytes_downloaded: u64,
    /// WARC bytes written.
    pub bytes_written: u64,
    /// WARC records written (warcinfo included).
    pub records_written: u64,
    /// Closed WARC files.
    pub warc_files: Vec<String>,
    /// WET/WAT files written during the crawl (`--wet`, `--wat`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived_files: Vec<String>,
    /// WARC files this run could not derive (`--wet`, `--wat`) or add to `--search-index`
    /// (the log says why; the next run, `trawl derive` or `trawl search-index` adds them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub files_not_derived: u64,
    /// Distinct hosts queued.
    pub hosts_seen: usize,
    /// Distinct hosts that answered.
    pub hosts_crawled: usize,
    /// Hosts with the most pages.
    pub top_hosts: Vec<HostCount>,
    /// Responses by status code.
    pub status_codes: BTreeMap<String, u64>,
    /// Not fetched or not archived, by reason.
    pub filtered: Filtered,
    /// Failed attempts by error kind.
    pub errors: BTreeMap<String, u64>,
    /// URLs given up after retries.
    pub failed_urls: u64,
    /// Retries scheduled.
    pub retries: u64,
    /// Answers that asked the crawl to slow down (the host waited; a URL with tries left was
    /// retried, its answer not archived).
    #[serde(default)]
    pub slowed_down: u64,
    /// Origins given up because their robots.txt stayed unreachable or was refused.
    pub origins_given_up: u64,
    /// Hosts given up because they stopped answering for `--host-down-limit`.
    #[serde(default)]
    pub hosts_down: u64,
    /// Truncated records by reason.
    pub truncated: BTreeMap<String, u64>,
    /// Pages written as revisit records.
    pub revisits: u64,
    /// Body bytes saved by revisits.
    pub bytes_saved: u64,
    /// Sitemaps fetched and what they listed.
    pub sitemaps: SitemapTally,
    /// Page requisites queued and archived.
    pub requisites: RequisiteTally,
    /// Archived responses (and the bytes received for them) by declared media type.
    pub content_types: ContentTypes,
    /// URLs still queued at the end.
    pub queued_at_end: usize,
    /// Seed lines that were skipped (the first ones of each run).
    pub seed_problems: Vec<String>,
    /// Lines of the seeds file that could not be used, over the whole crawl.
    pub seed_lines_skipped: u64,
    /// Peak resident memory of the process (Linux VmHWM), when known.
    pub peak_rss_bytes: Option<u64>,
}

/// Inputs for [`CrawlStats::build`] that the tally does not hold.
pub struct Totals {
    /// Why the crawl ended.
    pub stop_reason: StopReason,
    /// Wall time.
    pub elapsed: Duration,
    /// WARC bytes written.
    pub bytes_written: u64,
    /// WARC records written.
    pub records_written: u64,
    /// Closed WARC files.
    pub warc_files: Vec<String>,
    /// WET/WAT files written.
    pub derived_files: Vec<String>,
    /// WARC files not derived or indexed for search.
    pub files_not_derived: u64,
    /// Hosts queued.
    pub hosts_seen: usize,
    /// URLs still queued.
    pub queued_at_end: usize,
    /// Seed problems as text.
    pub seed_problems: Vec<String>,
    /// Origins given up (robots.txt unreachable or refused).
    pub origins_given_up: u64,
    /// Hosts given up because they stopped answering for `--host-down-limit`.
    pub hosts_down: u64,
}

impl CrawlStats {
    /// Builds the report from the tally and the totals.
    pub fn build(tally: &Tally, totals: Totals) -> CrawlStats {
        let secs = totals.elapsed.as_secs_f64();
        let mut top: Vec<HostCount> = tally
            .pages_per_host
            .iter()
            .map(|(h, &p)| HostCount {
                host: h.clone(),
                pages: p,
            })
            .collect();
        top.sort_by(|a, b| b.pages.cmp(&a.pages).then_with(|| a.host.cmp(&b.host)));
        top.truncate(10);
        CrawlStats {
            resumed: tally.resumed,
            stop_reason: totals.stop_reason,
            pages_archived: tally.pages,
            elapsed_secs: secs,
            pages_per_sec: if secs > 0.0 {
                tally.pages.saturating_sub(tally.pages_at_start) as f64 / secs
            } else {
                0.0
            },
            requests: tally.requests,
            mean_request_ms: if tally.requests > 0 {
                tally.request_time.as_secs_f64() * 1000.0 / tally.requests as f64
            } else {
                0.0
            },
            bytes_downloaded: tally.bytes_downloaded,
            bytes_written: totals.bytes_written,
            records_written: totals.records_written,
            warc_files: totals.warc_files,
            derived_files: totals.derived_files,
            files_not_derived: totals.files_not_derived,
            hosts_seen: totals.hosts_seen,
            hosts_crawled: tally.hosts_crawled.len(),
            top_hosts: top,
            status_codes: tally
                .status_codes
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            filtered: tally.filtered.clone(),
            errors: tally.errors.clone(),
            failed_urls: tally.failed_urls,
            retries: tally.retries,
            slowed_down: tally.slowed_down,
            origins_given_up: totals.origins_given_up,
            hosts_down: totals.hosts_down,
            truncated: tally.truncated.clone(),
            revisits: tally.revisits,
            bytes_saved: tally.bytes_saved,
            sitemaps: tally.sitemaps.clone(),
            requisites: tally.requisites.clone(),
            content_types: tally.content_types.clone(),
            queued_at_end: totals.queued_at_end,
            seed_problems: totals.seed_problems,
            seed_lines_skipped: tally.seed_lines_skipped,
            peak_rss_bytes: peak_rss_bytes(),
        }
    }
}

/// The process's peak resident set size, from /proc/self/status (Linux only).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
