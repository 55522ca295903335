//! The validated crawl configuration, built from raw CLI values.
//!
//! Everything that can be wrong with the user's input is found here, before the crawl starts:
//! unreadable seed files, unusable seeds, bad regexes, bad values. The result is plain data,
//! grouped by the part of the crawl that uses it; files and directories it names are opened
//! or created by the crawl's set-up (`crawl/setup/`).

mod cookies;
mod limits;
mod nonzero;
mod sections;
mod seed_args;
mod shared_args;

pub use cookies::CookieConfig;
pub use limits::{Limits, PortPolicy};
pub use sections::{
    AdmissionConfig, ChainConfig, ExistingState, HandoffConfig, OutputConfig, ReportConfig,
    RunConfig,
};
pub use seed_args::unlock_shared_seeds;
use seed_args::{collect_seeds, Collected};
use shared_args::shared_settings;

use crate::fetch::pins::{parse_pin, Pin};
use crate::frontier::{CrawlOrder, PolitenessKey};
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::chain::build_records::RecordOptions;
use crate::chain::filter::ArchiveRules;
use crate::chain::outlinks::LinkRules;
use crate::cli::CrawlArgs;
use crate::fetch::rate_limit::RateLimit;
use crate::fetch::tls::Trust;
use crate::fetch::{AddressClass, AddressGuard, FetchOptions, SiteLogin};
use crate::frontier::robots_rules::{product_token, ROBOTS_PARSE_LIMIT};
use crate::frontier::FrontierConfig;
use crate::redis_crawl::SharedSettings;
use crate::seeds::{Seed, SeedProblem, SeedSource};
use crate::url_rules::{ExtensionFilter, RefererPolicy, ScopeKind, UrlFilter};
use crate::warc::Rotation;

/// Largest robots.txt body read (more than the parse limit, which cuts at a line break).
const ROBOTS_MAX_BODY: usize = 2 * ROBOTS_PARSE_LIMIT;

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
}

/// Everything a crawl needs, validated. Plain data: nothing here touches the file system
/// (the crawl's set-up does that), and each stage is handed only its own part.
#[derive(Debug, Clone)]
pub struct Config {
    /// Usable seeds of the command line, in order, without duplicates.
    pub seeds: Vec<Seed>,
    /// `--seeds FILE` or `-`: read as the crawl runs (it holds a usable seed, unless the
    /// command line gave some).
    pub seeds_source: Option<SeedSource>,
    /// Seed lines that were skipped, for the report.
    pub seed_problems: Vec<SeedProblem>,
    /// Socket addresses of IP-literal seeds in a refused class, allowed for this crawl (for a
    /// note).
    pub unlocked: Vec<(SocketAddr, AddressClass)>,
    /// Fetch identity, timeouts and the SSRF guard.
    pub fetch: FetchOptions,
    /// The cookie jar.
    pub cookies: CookieConfig,
    /// Frontier settings.
    pub frontier: FrontierConfig,
    /// Admission rules.
    pub admission: AdmissionConfig,
    /// The processor chain.
    pub chain: ChainConfig,
    /// WARC output and crawl state.
    pub output: OutputConfig,
    /// The crawl loop.
    pub run: RunConfig,
    /// Progress, report and logs.
    pub report: ReportConfig,
    /// The shared crawl this worker joins (`--redis`), if any.
    pub shared: Option<SharedSettings>,
}

impl Config {
    /// Validates raw CLI values. Seed problems are kept for the caller to print; they are only
    /// an error when no seed at all is usable.
    pub fn from_args(mut args: CrawlArgs) -> Result<Config, ConfigError> {
        let bad = |m: String| ConfigError::BadArgument(m);
        let wget = std::mem::take(&mut args.wget)
            .fold_into(&mut args)
            .map_err(bad)?;
        nonzero::check(&args).map_err(bad)?;
        if let Some(dir) = wget.spool_dir.as_ref().filter(|d| !d.is_dir()) {
            return Err(bad(format!(
                "--warc-tempdir {}: no such directory",
                dir.display()
            )));
        }
        if let Some(finished) = &args.finished_dir {
            let same = std::path::absolute(finished).ok() == std::path::absolute(&args.out).ok();
            if same {
                return Err(bad(
                    "--finished-dir must be another directory than --out".into()
                ));
            }
        }
        if args
            .on_close
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            return Err(bad("--on-close needs a command".into()));
        }
        // A file name part that goes into WARC-Filename fields too: no control characters (a
        // line end made a header line of its own), and room for the rest of the name.
        let prefix = &args.warc_prefix;
        if prefix.is_empty()
            || prefix.contains(['/', '\\'])
            || prefix.chars().any(char::is_control)
            || prefix.len() > 200
        {
            return Err(bad(
                "--warc-prefix must be a non-empty file name part of at most 200 bytes, without control characters".into()
            ));
        }
        if args.user_agent.trim().is_empty() || args.user_agent.contains(['\r', '\n']) {
            return Err(bad("--user-agent must be a single non-empty line".into()));
        }
        let filter = UrlFilter::new(&args.include, &args.exclude)
            .map_err(|e| bad(format!("bad --include/--exclude regex: {e}")))?;
        let accept = ArchiveRules::accept_list(&args.accept).map_err(bad)?;
        // Links that declare a type this list refuses are left (`chain/outlinks.rs`).
        let link_accept = accept.clone();
        let archive = ArchiveRules {
            accept,
            max_body_size: args.max_body_size,
            robots_max_body: ROBOTS_MAX_BODY as u64,
            retry_status: args.retry_status.iter().flatten().copied().collect(),
            retries: args.retries,
        };
        let extensions = ExtensionFilter::new(|media_type| archive.accepts(media_type));
        let ports = match args.deny_ports.clone() {
            None => PortPolicy::AllowAll,
            Some(list) if list.is_empty() => PortPolicy::DefaultOnly,
            Some(list) => PortPolicy::Deny(list),
        };
        let limits = Limits {
            max_url_length: args.max_url_length,
            max_path_depth: args.max_path_depth,
            max_path_repeats: args.max_path_repeats,
            ports,
        };
        let Collected {
            seeds,
            problems: seed_problems,
            source: seeds_source,
        } = collect_seeds(&args, &limits)?;
        let joins_shared =
            args.redis.is_some() && args.seeds.is_empty() && args.seeds_file.is_none();
        let state_dir = args
            .state
            .clone()
            .unwrap_or_else(|| args.out.join(".trawl-state"));
        // A stopped crawl is resumed without its seeds named again: its state keeps them and
        // the scope they made (it exited 3, "no usable seed"; found by an exploratory run).
        let resumes = seed_problems.is_empty()
            && args.seeds.is_empty()
            && state_dir.join(crate::crawl_db::STORE_FILE).is_file();
        if seeds.is_empty() && seeds_source.is_none() && !joins_shared && !resumes {
            return Err(ConfigError::NoSeeds(seed_problems));
        }
        let dedup = (args.dedup || !args.dedup_index.is_empty()).then(|| args.dedup_index.clone());
        let robots_agent = product_token(&args.user_agent);
        let shared = shared_settings(&args)?;
        // Workers of one crawl never write files of the same name.
        let warc_prefix = match &shared {
            Some(s) => format!("{}-{}", args.warc_prefix, s.worker_id),
            None => args.warc_prefix.clone(),
        };
        let guard = AddressGuard::new(args.allow_private);
        let pins = args
            .resolve
            .iter()
            .map(|v| parse_pin(v))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ConfigError::BadArgument)?;
        let unlocked = seeds
            .iter()
            .flat_map(Seed::socket_addrs)
            .filter_map(|addr| Some((addr, guard.allow_seed_literal(addr)?)))
            .collect();
        // Pinned addresses, like IP-literal seeds, are the user's stated intent (no note: the
        // user typed them on this command line).
        for addr in pins.iter().flat_map(Pin::socket_addrs) {
            guard.allow_seed_literal(addr);
        }
        let max_decoded_size = usize::try_from(args.max_decoded_size).unwrap_or(usize::MAX);
        let cookies = CookieConfig::from_args(&args.request)?;
        let login = match &args.request.http_user {
            Some(user) => {
                let password = args.request.http_password.as_deref().unwrap_or("");
                let login = SiteLogin::new(user, password).ok_or_else(|| {
                    ConfigError::BadArgument(
                        "--http-user must hold no colon, and neither it nor --http-password a control character (RFC 7617)".into(),
                    )
                })?;
                Some(std::sync::Arc::new(login.unasked(wget.auth_no_challenge)))
            }
            None => None,
        };
        Ok(Config {
            seeds,
            seeds_source,
            seed_problems,
            unlocked,
            cookies,
            fetch: FetchOptions {
                user_agent: args.user_agent,
                headers: args.request.headers,
                connect_timeout: args.connect_timeout,
                read_timeout: args.timeout,
                total_timeout: args.fetch_timeout,
                max_head_bytes: usize::try_from(args.max_header_size).unwrap_or(usize::MAX),
                max_headers: args.max_headers,
                trust: Trust::from_args(args.insecure, args.ca_certificate.as_deref())
                    .map_err(ConfigError::BadArgument)?,
                guard,
                pins,
                proxy: args.request.proxy.clone(),
                dns_servers: args.request.dns_server.clone(),
                families: wget.families,
                dns_timeout: wget.dns_timeout,
                dns_records: args.request.dns_records,
                login,
                rate: args
                    .limit_rate
                    .filter(|&r| r > 0)
                    .map(|r| std::sync::Arc::new(RateLimit::new(r))),
                // Long bodies go on in unnamed files beside the WARCs (where the disk guard
                // watches the free space), or where wget's --warc-tempdir says.
                spool: Some(crate::spool::SpoolDir::new(
                    wget.spool_dir.clone().unwrap_or_else(|| args.out.clone()),
                )),
            },
            frontier: FrontierConfig {
                delay: args.delay,
                random_wait: wget.random_wait,
                delay_factor: args.delay_factor,
                max_delay: args.max_delay,
                robots_agent: robots_agent.clone(),
                obey_robots: !args.ignore_robots,
                robots_retry: args.robots_retry,
                robots_attempts: args.robots_attempts,
                // A crawl limited in depth (`--max-depth`, wget's `-l`, and `-r`'s 5) reads
                // no sitemaps unless `--sitemaps` asks: a sitemap lists the whole site, which
                // no link path from the seeds reaches in so many hops (wget reads none).
                sitemaps: args.sitemaps || (!args.no_sitemaps && args.max_depth.is_none()),
                order: match args.order {
                    crate::cli::Order::Bfs => CrawlOrder::Bfs,
                    crate::cli::Order::PathDepth => CrawlOrder::PathDepth,
                    crate::cli::Order::Random => CrawlOrder::Random,
                    crate::cli::Order::Backlinks => CrawlOrder::Backlinks,
                },
                politeness: match args.politeness {
                    crate::cli::Politeness::Host => PolitenessKey::Host,
                    crate::cli::Politeness::Ip => PolitenessKey::Ip,
                    crate::cli::Politeness::Domain => PolitenessKey::Domain,
                },
            },
            admission: AdmissionConfig {
                scope: args.scope.unwrap_or(ScopeKind::Domain),
                no_parent: args.no_parent,
                filter,
                extensions,
                max_depth: args.max_depth,
                max_redirects: args.max_redirects,
                limits,
                max_hosts_per_site: args.max_hosts_per_site,
                referer: RefererPolicy {
                    enabled: !args.request.no_referer,
                    seeds: args.request.referer.map(String::into_boxed_str),
                },
                host_lists: wget.host_lists,
                dir_lists: wget.dir_lists,
                file_lists: wget.file_lists,
                https_only: wget.https_only,
            },
            chain: ChainConfig {
                archive,
                links: LinkRules {
                    max_links_per_page: args.max_links_per_page,
                    max_decoded_size,
                    robots_max_decoded: ROBOTS_MAX_BODY,
                    // One byte more than the protocol allows, so a file past it is counted.
                    max_sitemap_decoded: crate::extract::sitemap::MAX_SITEMAP_BYTES + 1,
                    page_requisites: args.page_requisites,
                    inline_links: wget.inline_links,
                    obey_meta_robots: !args.ignore_robots,
                    robots_agent,
                    accept: link_accept,
                },
                records: RecordOptions {
                    gzip_level: args.gzip_level,
                    metadata_records: args.metadata_records,
                },
                dedup,
            },
            output: OutputConfig {
                out: args.out,
                warc_prefix,
                rotation: Rotation {
                    records_per_file: args.records_per_file,
                    // 0: no size rotation, as wget reads its `--warc-max-size 0`.
                    max_file_size: match args.warc_max_size {
                        0 => u64::MAX,
                        size => size,
                    },
                },
                gzip_level: args.gzip_level,
                operator: args.operator,
                warc_headers: args.warc_header,
                cdxj: args.cdxj,
                handoff: HandoffConfig {
                    finished_dir: args.finished_dir.clone(),
                    on_close: args.on_close.clone(),
                    cdxj: args.cdxj,
                },
                derive: crate::derive::Kinds {
                    wet: args.wet,
                    wat: args.wat,
                },
                search_index: args.search_index.clone(),
                state_dir,
                existing_state: if args.fresh {
                    ExistingState::Fresh
                } else if args.recrawl {
                    ExistingState::Recrawl
                } else {
                    ExistingState::Resume
                },
            },
            run: RunConfig {
                seeds_ahead: args.seeds_ahead,
                concurrency: args.concurrency,
                max_pages: args.max_pages,
                max_pages_per_host: args.max_pages_per_host,
                retries: args.retries,
                retry_max_wait: wget.retry_max_wait,
                host_down_limit: args.host_down_limit,
                shutdown_timeout: args.shutdown_timeout,
                time_limit: args.time_limit,
                max_bytes: args.max_bytes,
                min_free: args.min_free,
                console: args.console.map(|addr| crate::console::ConsoleConfig {
                    addr,
                    token: args.console_token.clone(),
                    search_index: args.search_index.clone(),
                }),
            },
            report: ReportConfig {
                stats: args.report.stats,
                progress_interval: args.report.progress_interval,
                quiet: args.report.quiet,
                log_file: args.report.log_file,
            },
            shared,
        })
    }
}
