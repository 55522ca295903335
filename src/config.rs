//! The validated crawl configuration, built from raw CLI values.
//!
//! Everything that can be wrong with the user's input is found here, before the crawl starts:
//! unreadable seed files, unusable seeds, bad regexes, an output directory that cannot be made.

use std::path::PathBuf;
use std::time::Duration;

use std::sync::Arc;

use crate::cli::CrawlArgs;
use crate::crawl::dedup::DedupTable;
use crate::fetch::{AddressClass, AddressGuard, FetchOptions};
use crate::frontier::robots::product_token;
use crate::frontier::FrontierConfig;
use crate::seeds::{parse_seed, parse_seed_lines, Seed, SeedProblem};
use crate::url::{ScopeKind, UrlFilter};
use crate::warc::Rotation;

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A flag value is unusable.
    #[error("{0}")]
    BadArgument(String),
    /// The seeds file could not be read.
    #[error("cannot read seeds file {path}: {source}")]
    SeedsFile {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// No seed was usable.
    #[error("no usable seed ({} rejected); give seed URLs as arguments or with --seeds FILE", .0.len())]
    NoSeeds(Vec<SeedProblem>),
    /// A `--dedup-index` file cannot be read.
    #[error("cannot read --dedup-index {path}: {source}")]
    DedupIndex {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The output directory cannot be created.
    #[error("cannot create output directory {path}: {source}")]
    OutputDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Ports refused by `--deny-ports`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortPolicy {
    /// Every port.
    AllowAll,
    /// Only the scheme's default port (80/443).
    DefaultOnly,
    /// These ports are refused.
    Deny(Vec<u16>),
}

impl PortPolicy {
    /// True when the URL's port may be used.
    pub fn allows(&self, url: &url::Url) -> bool {
        match self {
            PortPolicy::AllowAll => true,
            PortPolicy::DefaultOnly => url.port().is_none(),
            PortPolicy::Deny(ports) => url
                .port_or_known_default()
                .is_none_or(|p| !ports.contains(&p)),
        }
    }
}

/// Caps against crawler traps and hostile pages.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Longest URL queued.
    pub max_url_length: usize,
    /// Most path segments.
    pub max_path_depth: usize,
    /// Most occurrences of one path segment.
    pub max_path_repeats: usize,
    /// Most pages archived per host.
    pub max_pages_per_host: Option<u64>,
    /// Most decoded bytes handed to extraction.
    pub max_decoded_size: usize,
    /// Refused ports.
    pub ports: PortPolicy,
}

/// Everything a crawl needs, validated.
#[derive(Debug, Clone)]
pub struct Config {
    /// Usable seeds, in order, without duplicates.
    pub seeds: Vec<Seed>,
    /// Seed lines that were skipped, for the report.
    pub seed_problems: Vec<SeedProblem>,
    /// WARC output directory (exists).
    pub out: PathBuf,
    /// WARC file prefix.
    pub warc_prefix: String,
    /// Rotation limits.
    pub rotation: Rotation,
    /// gzip level of records.
    pub gzip_level: u32,
    /// Page target.
    pub max_pages: Option<u64>,
    /// Simultaneous fetches.
    pub concurrency: usize,
    /// Link-hop limit.
    pub max_depth: Option<u32>,
    /// Scope kind (hosts are added from the seeds).
    pub scope: ScopeKind,
    /// Include/exclude regexes.
    pub filter: UrlFilter,
    /// Accepted media types, lower-case.
    pub accept: Vec<String>,
    /// Body cap.
    pub max_body_size: u64,
    /// Network retries per URL.
    pub retries: u32,
    /// Links taken per page.
    pub max_links_per_page: usize,
    /// Redirect hops followed from one URL.
    pub max_redirects: u32,
    /// Limits on URLs and pages (crawler traps, bombs).
    pub limits: Limits,
    /// Address classes allowed because a seed is an IP literal of that class (for a note).
    pub unlocked_classes: Vec<AddressClass>,
    /// Fetch identity and timeouts.
    pub fetch: FetchOptions,
    /// Frontier settings.
    pub frontier: FrontierConfig,
    /// The content-seen table (`--dedup`, `--dedup-index`), preloaded.
    pub dedup: Option<Arc<DedupTable>>,
    /// Write OUT/index.cdxj at the end.
    pub cdxj: bool,
    /// Write a metadata record per page.
    pub metadata_records: bool,
    /// Operator contact for warcinfo.
    pub operator: Option<String>,
    /// JSON report path.
    pub stats: Option<PathBuf>,
    /// Status line interval when not on a terminal.
    pub progress_interval: Duration,
    /// No progress or report output.
    pub quiet: bool,
    /// Crawl state directory.
    pub state_dir: PathBuf,
    /// Grace period for in-flight fetches after a stop request.
    pub shutdown_timeout: Duration,
    /// Where logs and status lines go (stderr when `None`).
    pub log_file: Option<PathBuf>,
}

impl Config {
    /// Validates raw CLI values. Seed problems are kept for the caller to print; they are only
    /// an error when no seed at all is usable.
    pub fn from_args(args: CrawlArgs) -> Result<Config, ConfigError> {
        let bad = |m: String| ConfigError::BadArgument(m);
        if args.concurrency == 0 {
            return Err(bad("--concurrency must be at least 1".into()));
        }
        if args.records_per_file == 0 {
            return Err(bad("--records-per-file must be at least 1".into()));
        }
        if args.warc_prefix.is_empty() || args.warc_prefix.contains(['/', '\\']) {
            return Err(bad(
                "--warc-prefix must be a non-empty file name part".into()
            ));
        }
        if args.user_agent.trim().is_empty() || args.user_agent.contains(['\r', '\n']) {
            return Err(bad("--user-agent must be a single non-empty line".into()));
        }
        let filter = UrlFilter::new(&args.include, &args.exclude)
            .map_err(|e| bad(format!("bad --include/--exclude regex: {e}")))?;
        let accept: Vec<String> = args
            .accept
            .iter()
            .map(|a| a.trim().to_ascii_lowercase())
            .filter(|a| !a.is_empty())
            .collect();
        if accept.is_empty() {
            return Err(bad("--accept needs at least one content type".into()));
        }

        let (seeds, seed_problems) = collect_seeds(&args)?;
        if seeds.is_empty() {
            return Err(ConfigError::NoSeeds(seed_problems));
        }
        std::fs::create_dir_all(&args.out).map_err(|source| ConfigError::OutputDir {
            path: args.out.clone(),
            source,
        })?;

        let dedup = if args.dedup || !args.dedup_index.is_empty() {
            let table = DedupTable::default();
            for path in &args.dedup_index {
                table
                    .load_cdxj(path)
                    .map_err(|source| ConfigError::DedupIndex {
                        path: path.clone(),
                        source,
                    })?;
            }
            Some(Arc::new(table))
        } else {
            None
        };
        let state_dir = args
            .state
            .clone()
            .unwrap_or_else(|| args.out.join(".trawl-state"));
        let robots_agent = product_token(&args.user_agent);
        let mut guard = AddressGuard::new(args.allow_private);
        let unlocked_classes = seeds
            .iter()
            .filter_map(|s| match s.url.host() {
                Some(url::Host::Ipv4(ip)) => guard.allow_seed_literal(ip.into()),
                Some(url::Host::Ipv6(ip)) => guard.allow_seed_literal(ip.into()),
                _ => None,
            })
            .collect();
        let ports = match args.deny_ports {
            None => PortPolicy::AllowAll,
            Some(list) if list.is_empty() => PortPolicy::DefaultOnly,
            Some(list) => PortPolicy::Deny(list),
        };
        Ok(Config {
            seeds,
            seed_problems,
            out: args.out,
            warc_prefix: args.warc_prefix,
            rotation: Rotation {
                records_per_file: args.records_per_file,
                max_file_size: args.warc_max_size,
            },
            gzip_level: args.gzip_level,
            max_pages: args.max_pages,
            concurrency: args.concurrency,
            max_depth: args.max_depth,
            scope: args.scope,
            filter,
            accept,
            max_body_size: args.max_body_size,
            retries: args.retries,
            max_links_per_page: args.max_links_per_page,
            max_redirects: args.max_redirects,
            limits: Limits {
                max_url_length: args.max_url_length,
                max_path_depth: args.max_path_depth,
                max_path_repeats: args.max_path_repeats.max(1),
                max_pages_per_host: args.max_pages_per_host,
                max_decoded_size: usize::try_from(args.max_decoded_size).unwrap_or(usize::MAX),
                ports,
            },
            unlocked_classes,
            fetch: FetchOptions {
                user_agent: args.user_agent,
                connect_timeout: args.connect_timeout,
                read_timeout: args.timeout,
                total_timeout: args.fetch_timeout,
                max_head_bytes: usize::try_from(args.max_header_size).unwrap_or(usize::MAX),
                max_headers: args.max_headers,
                insecure: args.insecure,
                guard,
            },
            frontier: FrontierConfig {
                delay: args.delay,
                max_delay: args.max_delay,
                robots_agent,
                obey_robots: !args.ignore_robots,
                robots_retry: args.robots_retry,
            },
            dedup,
            cdxj: args.cdxj,
            metadata_records: args.metadata_records,
            operator: args.operator,
            stats: args.stats,
            progress_interval: args.progress_interval,
            quiet: args.quiet,
            state_dir,
            shutdown_timeout: args.shutdown_timeout,
            log_file: args.log_file,
        })
    }

    /// True when `media_type` (lower-case, no parameters) is archived.
    pub fn accepts(&self, media_type: &str) -> bool {
        self.accept.iter().any(|a| match a.strip_suffix("/*") {
            Some(major) => media_type.split('/').next() == Some(major),
            None => a == media_type || a == "*/*",
        })
    }
}

fn collect_seeds(args: &CrawlArgs) -> Result<(Vec<Seed>, Vec<SeedProblem>), ConfigError> {
    let mut seeds = Vec::new();
    let mut problems = Vec::new();
    for text in &args.seeds {
        match parse_seed(text) {
            Ok(seed) => seeds.push(seed),
            Err(reason) => problems.push(SeedProblem {
                line: 0,
                text: text.clone(),
                reason,
            }),
        }
    }
    if let Some(path) = &args.seeds_file {
        let bytes = std::fs::read(path).map_err(|source| ConfigError::SeedsFile {
            path: path.clone(),
            source,
        })?;
        let (file_seeds, file_problems) = parse_seed_lines(&String::from_utf8_lossy(&bytes));
        seeds.extend(file_seeds);
        problems.extend(file_problems);
    }
    let mut seen = std::collections::HashSet::new();
    seeds.retain(|s| seen.insert(s.url.as_str().to_string()));
    Ok((seeds, problems))
}
