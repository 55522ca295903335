//! The parts of a [`Config`](super::Config), one per stage of the crawl that reads it: what
//! may enter the frontier, the processor chain's options, WARC output and hand-off, the crawl
//! loop, and the report. Plain data, filled in by `Config::from_args`.

use std::path::PathBuf;
use std::time::Duration;

use super::Limits;
use crate::chain::build_records::RecordOptions;
use crate::chain::filter::ArchiveRules;
use crate::chain::outlinks::LinkRules;
use crate::url_rules::{
    DirLists, ExtensionFilter, FileLists, HostLists, RefererPolicy, ScopeKind, UrlFilter,
};
use crate::warc::Rotation;

/// What may enter the frontier (see `crawl/admission.rs`).
#[derive(Debug, Clone)]
pub struct AdmissionConfig {
    /// Scope kind (hosts are added from the seeds).
    pub scope: ScopeKind,
    /// `--no-parent`: on a seed's host, links stay inside the seed's directory.
    pub no_parent: bool,
    /// Include/exclude regexes.
    pub filter: UrlFilter,
    /// The extension pre-filter, derived from `--accept`.
    pub extensions: ExtensionFilter,
    /// Link-hop limit.
    pub max_depth: Option<u32>,
    /// Redirect hops followed from one URL.
    pub max_redirects: u32,
    /// Trap and hostile-URL limits.
    pub limits: Limits,
    /// Most hosts of one site links are followed to (`--max-hosts-per-site`; 0: no limit).
    pub max_hosts_per_site: usize,
    /// What `Referer` the URLs admitted carry (`--no-referer`, `--referer`).
    pub referer: RefererPolicy,
    /// wget's `--domains`, `--exclude-domains`.
    pub host_lists: HostLists,
    /// wget's `--include-directories`, `--exclude-directories`.
    pub dir_lists: DirLists,
    /// wget's `-A`, `-R`.
    pub file_lists: FileLists,
    /// wget's `--https-only`.
    pub https_only: bool,
}

/// What to do with each closed WARC file.
#[derive(Debug, Clone, Default)]
pub struct HandoffConfig {
    /// `--finished-dir`: where closed files move.
    pub finished_dir: Option<PathBuf>,
    /// `--on-close`: a shell command run once per closed WARC file.
    pub on_close: Option<String>,
    /// `--cdxj`: each handed-off WARC gets its own CDXJ index beside it.
    pub cdxj: bool,
}

impl HandoffConfig {
    /// True when closed files are handed off at all.
    pub fn active(&self) -> bool {
        self.finished_dir.is_some() || self.on_close.is_some()
    }
}

impl OutputConfig {
    /// The directories finished WARC files of this crawl are in: `--out`, and
    /// `--finished-dir` when files move there (resume and `--dedup` read both).
    pub fn archive_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.out.clone()];
        dirs.extend(self.handoff.finished_dir.clone());
        dirs
    }
}

/// The options of the processor chain's stages.
#[derive(Debug, Clone)]
pub struct ChainConfig {
    /// The archive filter.
    pub archive: ArchiveRules,
    /// Link extraction.
    pub links: LinkRules,
    /// Record building.
    pub records: RecordOptions,
    /// The content-seen test: on (`--dedup` or `--dedup-index`) and the CDXJ files to preload.
    pub dedup: Option<Vec<PathBuf>>,
}

/// Where and how WARC files are written.
#[derive(Debug, Clone)]
pub struct OutputConfig {
    /// WARC output directory (created at start-up, not here).
    pub out: PathBuf,
    /// WARC file prefix.
    pub warc_prefix: String,
    /// Rotation limits.
    pub rotation: Rotation,
    /// gzip level of records.
    pub gzip_level: u32,
    /// Operator contact for warcinfo.
    pub operator: Option<String>,
    /// `--warc-header`: warcinfo fields added, or put in place of trawl's own.
    pub warc_headers: Vec<(String, String)>,
    /// Write OUT/index.cdxj at the end.
    pub cdxj: bool,
    /// Derivatives written beside each WARC as it closes (`--wet`, `--wat`).
    pub derive: crate::derive::Kinds,
    /// `--search-index`: the full-text index each closed WARC's pages go into.
    pub search_index: Option<PathBuf>,
    /// `--finished-dir`, `--on-close`: the hand-off of closed files.
    pub handoff: HandoffConfig,
    /// Crawl state directory.
    pub state_dir: PathBuf,
    /// What to do with a crawl state already there.
    pub existing_state: ExistingState,
}

/// What to do with the crawl state found in the state directory (`--recrawl`, `--fresh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExistingState {
    /// Resume an interrupted crawl; refuse a finished one.
    Resume,
    /// Resume an interrupted crawl; start a new crawl over a finished one.
    Recrawl,
    /// Discard it and start over.
    Fresh,
}

/// How the crawl loop runs jobs.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Simultaneous fetches.
    pub concurrency: usize,
    /// The seeds file is read while fewer URLs than this are queued (`--seeds-ahead`).
    pub seeds_ahead: u64,
    /// Page target.
    pub max_pages: Option<u64>,
    /// Most pages archived per host.
    pub max_pages_per_host: Option<u64>,
    /// Network retries per URL.
    pub retries: u32,
    /// wget's `--waitretry`: the longest wait before a retry (five minutes without it).
    pub retry_max_wait: Option<Duration>,
    /// `--host-down-limit`: how long a host whose connections all fail is waited for.
    pub host_down_limit: Duration,
    /// Grace period for in-flight fetches after a stop request.
    pub shutdown_timeout: Duration,
    /// Stop (resumably) after this long.
    pub time_limit: Option<Duration>,
    /// Stop after this many response bytes.
    pub max_bytes: Option<u64>,
    /// The live console (`--console`).
    pub console: Option<crate::console::ConsoleConfig>,
    /// `--min-free`: least free bytes for new fetches to start (0: no guard).
    pub min_free: u64,
}

/// What the crawl tells its user, and where.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    /// JSON report path.
    pub stats: Option<PathBuf>,
    /// Status line interval when not on a terminal.
    pub progress_interval: Duration,
    /// No progress or report output.
    pub quiet: bool,
    /// Where logs and status lines go (stderr when `None`).
    pub log_file: Option<PathBuf>,
}
