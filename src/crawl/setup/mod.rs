//! Start-up: everything the crawl does on disk before the first fetch. Create the output
//! directory; decide on a crawl state already there (resume an interrupted crawl; refuse a
//! finished one unless `--recrawl` sets it aside or `--fresh` discards it); load the
//! content-seen table (`dedup.rs`: `--dedup-index` files and the output's WARC files); open
//! the crawl database and the frontier, read the saved counters, replay the WARC records
//! written after the last save point, and start the WARC writer. A worker of a shared crawl
//! joins it first (`shared.rs`).

mod dedup;
mod shared;
mod shared_mark;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use super::derivatives::Deriver;
use super::existing_state::open_state;
use super::handoff::Handoff;
use super::job::{Budget, JobContext};
use super::ledger::{seed_journal, Ledger, LedgerRules};
use super::replay::{replay, ReplayChain};
use super::save_point::{CrawlSession, SavedCrawl, StateError, COOKIES_META, STATE_META};
use super::seed_feed::SeedFeed;
use super::CrawlError;
use crate::chain::content_seen::DedupTable;
use crate::chain::filter::PageBudget;
use crate::config::{unlock_shared_seeds, Config};
use crate::fetch::tls::Trust;
use crate::fetch::{cookies_txt, CookieJar, Fetcher};
use crate::frontier::Frontier;
use crate::redis_crawl::{Coordinator, JoinError, SharedBudget};
use crate::search::{SearchError, SearchIndexer, WriterBudget};
use crate::seeds::SavedSeeds;
use crate::warc::{spawn_writer, Producers, WarcError, WriterConfig, WriterHandle};
use dedup::load_dedup;
pub(super) use shared::start_shared;

/// Why start-up failed before any crawl state was touched.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The output directory cannot be created.
    #[error("cannot create output directory {path}: {source}")]
    OutputDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A `--dedup-index` file cannot be read.
    #[error("cannot read --dedup-index {path}: {source}")]
    DedupIndex {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The output directory holds a finished crawl and neither `--recrawl` nor `--fresh` was
    /// given.
    #[error("the crawl in {out} has finished ({reason}); {extend}run again with --recrawl for a new crawl in the same directory (with --dedup, pages unchanged since are stored as revisits), or --fresh to start over")]
    Finished {
        /// The output directory.
        out: PathBuf,
        /// How it ended, in words.
        reason: &'static str,
        /// How it could be continued instead (a raised budget), or empty.
        extend: String,
    },
    /// The output directory holds WARC files but no crawl state, and neither `--recrawl` nor
    /// `--fresh` was given: the crawl that wrote them is not started over unasked.
    #[error("{out} holds {warcs} WARC file(s) but no crawl state in {state}: the crawl that wrote them cannot be resumed without it (was --state given then?); run again with that --state to resume it, or with --fresh to start a new crawl beside those files")]
    StateMissing {
        /// The output directory.
        out: PathBuf,
        /// WARC files found in it.
        warcs: usize,
        /// Where the state was looked for.
        state: PathBuf,
    },
    /// The saved state could not be set aside or removed.
    #[error("crawl state {path}: {source}")]
    StateDir {
        /// The state directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// `--search-index` cannot be written (locked by another process, not an index).
    #[error(transparent)]
    SearchIndex(#[from] SearchError),
    /// The shared crawl could not be joined.
    #[error(transparent)]
    Join(#[from] JoinError),
    /// A stop was requested before the crawl started (while joining a shared crawl).
    #[error("stopped before the crawl started")]
    Interrupted,
    /// The seeds file cannot be opened again (or sought to where the last run stopped).
    #[error("cannot read seeds from {name}: {source}")]
    Seeds {
        /// The file, or standard input.
        name: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The WARC files already in the output directory could not be read for `--dedup`.
    #[error("reading {path} for --dedup: {source}")]
    EarlierWarc {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Creates the output directory (and its parents).
pub fn create_output_dir(out: &Path) -> Result<(), SetupError> {
    std::fs::create_dir_all(out).map_err(|source| SetupError::OutputDir {
        path: out.to_path_buf(),
        source,
    })
}

/// Sitemaps parsed at once: each may decode to 50 MB.
const SITEMAP_SLOTS: usize = 2;

/// What start-up hands to the crawl loop.
pub(super) struct Started {
    /// The frontier, admission rules and counters, caught up with the WARC files.
    pub(super) ledger: Ledger,
    /// What every job shares.
    pub(super) jobs: Arc<JobContext>,
    /// The WARC writer.
    pub(super) writer: WriterHandle,
    /// WET/WAT of each closed WARC (`--wet`, `--wat`).
    pub(super) deriver: Option<Deriver>,
    /// The crawl's name (warcinfo `crawlId`) and cookie jar, kept across resumes.
    pub(super) session: CrawlSession,
    /// The shared crawl this worker joined (`--redis`).
    pub(super) shared: Option<Shared>,
    /// The seeds file, read as the crawl runs (`--seeds`), unless read to its end before.
    pub(super) seeds: Option<SeedFeed>,
}

/// A worker's part in a shared crawl, owned by the crawl loop.
pub(super) struct Shared {
    /// The lease protocol.
    pub(super) coordinator: Coordinator,
    /// The crawl-wide page budget (`--max-pages`).
    pub(super) budget: Option<Arc<SharedBudget>>,
}

/// The frontier and saved counters a crawl starts from, before the common part of start-up.
struct Opened {
    frontier: Frontier,
    saved: Option<SavedCrawl>,
    crawl_id: Option<String>,
    shared: Option<Shared>,
    /// Crawl-wide page counts of hosts taken back at start (shared crawl).
    host_pages: Vec<(String, u64)>,
    /// Every scope seed of a shared crawl.
    scope: Vec<String>,
}

/// Runs start-up of a crawl of its own (the embedded database in the state directory).
pub(super) fn start(config: &Config) -> Result<Started, CrawlError> {
    let db = open_state(&config.output, &config.run)?;
    let dedup = load_dedup(config)?;
    let frontier = Frontier::open(config.frontier.clone(), Box::new(db), Instant::now())
        .map_err(StateError::from)?;
    // The counters are saved beside the frontier, by the same checkpoint.
    let blob = frontier.saved_meta(STATE_META).map_err(StateError::from)?;
    let saved = SavedCrawl::decode(&config.output.state_dir, blob.as_deref())?;
    let opened = Opened {
        frontier,
        saved,
        crawl_id: None,
        shared: None,
        host_pages: Vec::new(),
        scope: Vec::new(),
    };
    finish_start(config, opened, dedup)
}

/// The common part of start-up: counters, ledger, replay of the WARC tail, writer, jobs.
fn finish_start(
    config: &Config,
    opened: Opened,
    dedup: Option<Arc<DedupTable>>,
) -> Result<Started, CrawlError> {
    let output = &config.output;
    let Opened {
        frontier,
        saved,
        crawl_id,
        shared,
        host_pages,
        scope,
    } = opened;
    if let Some(s) = &saved {
        tracing::warn!(
            "resuming: {} pages archived, {} URLs queued",
            s.tally.pages,
            frontier.queued()
        );
    }
    let replay_from = saved.as_ref().and_then(|s| s.replay_from_serial);
    let crawl_id = crawl_id.unwrap_or_else(|| {
        saved
            .as_ref()
            .map(|s| s.crawl_id.clone())
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| new_crawl_id(&output.warc_prefix))
    });
    let rules = LedgerRules {
        max_pages_per_host: config.run.max_pages_per_host,
        retries: config.run.retries,
        retry_max_wait: config.run.retry_max_wait,
        delay: config.frontier.delay,
        page_requisites: config.chain.links.page_requisites,
        host_down_limit: config.run.host_down_limit,
    };
    let resumed = saved.is_some();
    let (mut tally, live, saved_seeds, seed_chunks) = saved
        .map(|s| (s.tally, s.live, s.seeds, s.seed_chunks))
        .unwrap_or_default();
    for (host, pages) in host_pages {
        let known = tally.pages_per_host.entry(host).or_default();
        *known = (*known).max(pages);
    }
    (tally.pages_at_start, tally.resumed) = (tally.pages, resumed);
    let cookies = cookie_jar(config, &frontier)?;
    let mut ledger = Ledger::new(frontier, tally, &config.admission, rules);
    ledger.login = config.fetch.login.clone();
    ledger.guard = config.fetch.guard.clone();
    ledger.restore_changes(live);
    // The run's flags may differ from the last run's (`--exclude` or `--max-depth` added for a
    // trap found overnight): what was queued is checked again as it comes up.
    ledger.recheck_queued |= resumed;
    ledger.widen_scope(&scope);
    let now = Instant::now();
    if shared.is_some() {
        ledger.take_seeds(&config.seeds, now);
        ledger.share_scope();
    } else {
        // Kept from here on, the command line's seeds included (a resumed run may not name
        // them again).
        restore_seeds(&mut ledger, seed_chunks, &output.state_dir)?;
        ledger.take_seeds(&config.seeds, now);
    }
    let mut seeds = open_seed_feed(config, &mut ledger, saved_seeds)?;
    if let Some(serial) = replay_from {
        let chain = ReplayChain {
            archive: &config.chain.archive,
            links: &config.chain.links,
            dedup: dedup.as_deref(),
        };
        let replayed = replay(
            &mut ledger,
            &chain,
            &output.archive_dirs(),
            &output.warc_prefix,
            serial,
            seeds.as_mut(),
        )
        .map_err(CrawlError::Replay)?;
        if replayed > 0 {
            tracing::warn!("recovered {replayed} capture(s) written after the last saved state");
        }
    }
    let handoff = output
        .handoff
        .active()
        .then(|| Handoff::new(&output.out, output.handoff.clone()));
    let search = match &output.search_index {
        Some(dir) => Some(SearchIndexer::open(dir, WriterBudget::CRAWL).map_err(SetupError::from)?),
        None => None,
    };
    let deriver = if output.derive.wet || output.derive.wat || handoff.is_some() || search.is_some()
    {
        Some(
            Deriver::start(&output.out, output.derive, handoff, search).map_err(|source| {
                WarcError::Io {
                    path: output.out.clone(),
                    source,
                }
            })?,
        )
    } else {
        None
    };
    let producers = Producers::default();
    let writer = spawn_writer(WriterConfig {
        dir: output.out.clone(),
        serials_also_in: output.handoff.finished_dir.clone(),
        prefix: output.warc_prefix.clone(),
        rotation: output.rotation,
        gzip_level: output.gzip_level,
        info: warcinfo_fields(config, &crawl_id),
        queue: config.run.concurrency.max(8) * 2,
        closed_files: deriver.as_ref().map(Deriver::sender),
        producers: producers.clone(),
    })?;
    let budget = match shared.as_ref().and_then(|s| s.budget.clone()) {
        Some(shared_budget) => Budget::Shared(shared_budget),
        None => Budget::Local(PageBudget::new(config.run.max_pages, ledger.tally.pages)),
    };
    let fetch = config.fetch.clone();
    unlock_shared_seeds(&fetch.guard, &scope);
    let mut fetcher = Fetcher::new(fetch);
    if let Some(jar) = &cookies {
        fetcher = fetcher.with_cookies(jar.clone());
    }
    let jobs = Arc::new(JobContext {
        fetcher,
        archive: config.chain.archive.clone(),
        links: config.chain.links.clone(),
        dedup,
        records: config.chain.records,
        writer: writer.sender.clone(),
        producers,
        budget,
        sitemap_slots: tokio::sync::Semaphore::new(SITEMAP_SLOTS),
    });
    Ok(Started {
        ledger,
        jobs,
        writer,
        deriver,
        session: CrawlSession { crawl_id, cookies },
        shared,
        seeds,
    })
}

/// Applies what the seeds of earlier runs left (a crawl of its own: a shared crawl's scope is in
/// Redis), and keeps what this run's seeds leave.
fn restore_seeds(ledger: &mut Ledger, chunks: u64, dir: &Path) -> Result<(), CrawlError> {
    for n in 0..chunks {
        let name = seed_journal::chunk_name(n);
        let blob = ledger
            .frontier
            .saved_meta(&name)
            .map_err(StateError::from)?;
        let entries = blob
            .as_deref()
            .map(seed_journal::read_chunk)
            .transpose()
            .map_err(|e| StateError::Corrupt {
                dir: dir.to_path_buf(),
                detail: format!("{name}: {e}"),
            })?
            .unwrap_or_default();
        ledger.restore_seeds(entries);
    }
    ledger.seed_journal.keep(chunks);
    Ok(())
}

/// The feed of the seeds file (`--seeds`), from where an earlier run stopped reading it;
/// none when it was read to its end (and has not grown since).
fn open_seed_feed(
    config: &Config,
    ledger: &mut Ledger,
    saved: Option<SavedSeeds>,
) -> Result<Option<SeedFeed>, CrawlError> {
    let Some(source) = &config.seeds_source else {
        return Ok(None);
    };
    let name = source.to_string();
    let mut saved = saved.filter(|s| s.source == name).unwrap_or(SavedSeeds {
        source: name.clone(),
        ..SavedSeeds::default()
    });
    saved.read_on_if_grown(source);
    let saved = ledger.seeds.insert(saved);
    // The IP-literal seeds read so far are allowed again, the file read to its end or not.
    for &addr in &saved.allowed {
        config.fetch.guard.allow_seed_literal(addr);
    }
    if saved.position.done {
        return Ok(None);
    }
    let feed = SeedFeed::open(
        source.clone(),
        saved,
        config.admission.limits.clone(),
        config.fetch.guard.clone(),
        config.run.seeds_ahead,
    )
    .map_err(|source| SetupError::Seeds { name, source })?;
    Ok(Some(feed))
}

/// The cookie jar a crawl starts with (none with `--no-cookies`): the cookies saved with the
/// crawl state, then those of `--load-cookies` over them.
fn cookie_jar(config: &Config, frontier: &Frontier) -> Result<Option<Arc<CookieJar>>, CrawlError> {
    if !config.cookies.enabled {
        return Ok(None);
    }
    let jar = CookieJar::new();
    if let Some(saved) = frontier
        .saved_meta(COOKIES_META)
        .map_err(StateError::from)?
    {
        let saved = cookies_txt::parse(&String::from_utf8_lossy(&saved));
        let kept = jar.load(&saved.cookies);
        if kept > 0 {
            tracing::info!("resuming with {kept} cookie(s)");
        }
    }
    for problem in &config.cookies.load_problems {
        tracing::warn!("{problem}");
    }
    if !config.cookies.load.is_empty() {
        let loaded = jar.load(&config.cookies.load);
        tracing::info!("--load-cookies: {loaded} cookie(s)");
    }
    Ok(Some(Arc::new(jar)))
}

/// A new crawl's name: the WARC prefix, the start time and a random part (two crawls may
/// start within one second).
fn new_crawl_id(prefix: &str) -> String {
    let now = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let stamp: String = now.chars().filter(char::is_ascii_digit).collect();
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}-{stamp}-{}", &random[..8])
}

/// The fields of the warcinfo record that opens every file.
fn warcinfo_fields(config: &Config, crawl_id: &str) -> Vec<(String, String)> {
    let hostname = gethostname::gethostname().to_string_lossy().to_string();
    let robots = if config.frontier.obey_robots {
        "obey"
    } else {
        "ignore"
    };
    let mut info = vec![
        (
            "software",
            format!(
                "trawl/{} (https://github.com/trawl-crawler/trawl)",
                env!("CARGO_PKG_VERSION")
            ),
        ),
        ("format", "WARC File Format 1.1".to_string()),
        (
            "conformsTo",
            "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
                .to_string(),
        ),
        ("hostname", hostname),
        ("http-header-user-agent", config.fetch.user_agent.clone()),
        ("robots", robots.to_string()),
        ("isPartOf", config.output.warc_prefix.clone()),
        ("crawlId", crawl_id.to_string()),
        (
            "workerId",
            config
                .shared
                .as_ref()
                .map(|s| s.worker_id.clone())
                .unwrap_or_default(),
        ),
        (
            "started",
            humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        ),
    ];
    // Readers learn that the captures' certificates were not all checked against Mozilla's
    // roots: unchecked (`--insecure`), or some trusted by the operator's own authorities.
    match &config.fetch.trust {
        Trust::Any => info.push(("tls-trust", "any certificate (--insecure)".to_string())),
        Trust::Roots(extra) if !extra.is_empty() => info.push((
            "tls-trust",
            format!(
                "Mozilla's roots and {} certificate(s) of --ca-certificate",
                extra.len()
            ),
        )),
        Trust::Roots(_) => {}
    }
    if let Some(proxy) = &config.fetch.proxy {
        // Readers learn why a response may lack WARC-IP-Address (the proxy resolved its name).
        info.push(("proxy", proxy.address()));
    }
    if let Some(op) = &config.output.operator {
        info.push(("operator", op.clone()));
    }
    info.retain(|(_, v)| !v.is_empty());
    let mut info: Vec<(String, String)> =
        info.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    for (name, value) in &config.output.warc_headers {
        match info.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(name)) {
            Some((_, own)) => *own = value.clone(),
            None => info.push((name.clone(), value.clone())),
        }
    }
    info
}
