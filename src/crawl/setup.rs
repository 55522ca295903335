//! Start-up: everything the crawl does on disk before the first fetch. Create the output
//! directory, load the `--dedup-index` files, open the crawl database and the frontier, read the
//! saved counters, replay the WARC records written after the last save point, and start the
//! WARC writer.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use super::job::JobContext;
use super::ledger::{Ledger, LedgerRules};
use super::replay::{replay, ReplayChain};
use super::save_point::{SavedCrawl, StateError, STATE_META};
use super::CrawlError;
use crate::chain::content_seen::DedupTable;
use crate::chain::filter::PageBudget;
use crate::config::Config;
use crate::crawl_db::CrawlDb;
use crate::fetch::Fetcher;
use crate::frontier::Frontier;
use crate::warc::{spawn_writer, WriterConfig, WriterHandle};

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
}

/// Creates the output directory (and its parents).
pub fn create_output_dir(out: &Path) -> Result<(), SetupError> {
    std::fs::create_dir_all(out).map_err(|source| SetupError::OutputDir {
        path: out.to_path_buf(),
        source,
    })
}

/// What start-up hands to the crawl loop.
pub(super) struct Started {
    /// The frontier, admission rules and counters, caught up with the WARC files.
    pub(super) ledger: Ledger,
    /// What every job shares.
    pub(super) jobs: Arc<JobContext>,
    /// The WARC writer.
    pub(super) writer: WriterHandle,
}

/// Runs start-up.
pub(super) fn start(config: &Config) -> Result<Started, CrawlError> {
    let dedup = match &config.chain.dedup {
        Some(files) => Some(Arc::new(load_dedup_index(files)?)),
        None => None,
    };
    let output = &config.output;
    let db = CrawlDb::open(&output.state_dir).map_err(StateError::from)?;
    let frontier = Frontier::open(config.frontier.clone(), Box::new(db), Instant::now())
        .map_err(StateError::from)?;
    // The counters are saved beside the frontier, by the same checkpoint.
    let blob = frontier.saved_meta(STATE_META).map_err(StateError::from)?;
    let saved = SavedCrawl::decode(&output.state_dir, blob.as_deref())?;
    if let Some(s) = &saved {
        tracing::warn!(
            "resuming: {} pages archived, {} URLs queued",
            s.tally.pages,
            frontier.queued()
        );
    }
    let replay_from = saved.as_ref().and_then(|s| s.replay_from_serial);
    let rules = LedgerRules {
        max_pages_per_host: config.run.max_pages_per_host,
        retries: config.run.retries,
        delay: config.frontier.delay,
    };
    let tally = saved.map(|s| s.tally).unwrap_or_default();
    let mut ledger = Ledger::new(frontier, tally, &config.admission, &config.seeds, rules);
    if let Some(serial) = replay_from {
        let chain = ReplayChain {
            archive: &config.chain.archive,
            links: &config.chain.links,
            dedup: dedup.as_deref(),
        };
        let replayed = replay(
            &mut ledger,
            &chain,
            &output.out,
            &output.warc_prefix,
            serial,
        )
        .map_err(CrawlError::Replay)?;
        if replayed > 0 {
            tracing::warn!("recovered {replayed} capture(s) written after the last saved state");
        }
    }
    let writer = spawn_writer(WriterConfig {
        dir: output.out.clone(),
        prefix: output.warc_prefix.clone(),
        rotation: output.rotation,
        gzip_level: output.gzip_level,
        info: warcinfo_fields(config),
        queue: config.run.concurrency.max(8) * 2,
    })?;
    let jobs = Arc::new(JobContext {
        fetcher: Fetcher::new(config.fetch.clone()),
        archive: config.chain.archive.clone(),
        links: config.chain.links.clone(),
        dedup,
        records: config.chain.records,
        writer: writer.sender.clone(),
        budget: PageBudget::new(config.run.max_pages, ledger.tally.pages),
    });
    Ok(Started {
        ledger,
        jobs,
        writer,
    })
}

/// The content-seen table preloaded from CDXJ indexes of earlier crawls.
fn load_dedup_index(files: &[PathBuf]) -> Result<DedupTable, SetupError> {
    let table = DedupTable::default();
    for path in files {
        table
            .load_cdxj(path)
            .map_err(|source| SetupError::DedupIndex {
                path: path.clone(),
                source,
            })?;
    }
    Ok(table)
}

/// The fields of the warcinfo record that opens every file.
fn warcinfo_fields(config: &Config) -> Vec<(String, String)> {
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
        (
            "started",
            humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        ),
    ];
    if let Some(op) = &config.output.operator {
        info.push(("operator", op.clone()));
    }
    info.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
