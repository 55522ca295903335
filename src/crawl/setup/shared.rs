//! Start-up of a worker of a shared crawl (`--redis`): join the crawl in Redis (its options must
//! match the crawl's), take back the hosts this worker held before a restart (each step tried
//! again for a while when Redis fails transiently), then the common part of start-up over the
//! worker's local share of the frontier.

use std::sync::Arc;
use std::time::Instant;

use super::{
    create_output_dir, finish_start, load_dedup, shared_mark, Opened, SetupError, Shared, Started,
};
use crate::config::Config;
use crate::crawl::save_point::{SavedCrawl, StateError, STATE_META};
use crate::crawl::CrawlError;
use crate::frontier::Frontier;
use crate::redis_crawl::patience::Patience;
use crate::redis_crawl::{join, Coordinator, JoinError, LeaseStore, SharedBudget, SharedSettings};

/// Runs start-up of a worker of a shared crawl: joins it in Redis, takes back the hosts this
/// worker held before a restart, then the common part (its WARC tail is replayed like a
/// crawl of its own).
pub(in crate::crawl) async fn start_shared(
    config: &Config,
    settings: &SharedSettings,
) -> Result<Started, CrawlError> {
    create_output_dir(&config.output.out)?;
    let dedup = load_dedup(config)?;
    let seeds: Vec<String> = config.seeds.iter().map(|s| s.url.to_string()).collect();
    let reads_seeds = config.seeds_source.is_some();
    let options = shared_options(config);
    let mut patience = Patience::start();
    let joined = loop {
        match join(settings, &options, &seeds, reads_seeds).await {
            Ok(joined) => break joined,
            Err(JoinError::Redis { source, .. })
                if patience
                    .try_again("joining the shared crawl", &source)
                    .await => {}
            Err(e) => return Err(SetupError::from(e).into()),
        }
    };
    let out = &config.output.out;
    if let Some(detail) = shared_mark::written_for_another(out, &settings.crawl_id, &joined.created)
    {
        let crawl = settings.crawl_id.clone();
        return Err(SetupError::from(JoinError::StateLost { crawl, detail }).into());
    }
    shared_mark::mark(out, &settings.crawl_id, &joined.created);
    tracing::warn!(
        "joined shared crawl {} as worker {}",
        settings.crawl_id,
        settings.worker_id
    );
    let storage = LeaseStore::new(joined.book.clone());
    let mut frontier = Frontier::open(config.frontier.clone(), Box::new(storage), Instant::now())
        .map_err(StateError::from)?;
    // Held hosts wait out their delays and their last acknowledgement: hold more than the
    // fetch slots, so the slots stay busy.
    let capacity = (config.run.concurrency * 4).max(8);
    let mut coordinator = Coordinator::new(
        &joined,
        capacity,
        config.run.max_pages_per_host,
        !config.seeds.is_empty() || config.seeds_source.is_some(),
        config.frontier.order,
        config.output.out.display().to_string(),
    );
    // (A try again goes on from the shard that failed; patience counts from the last shard
    // that answered.)
    let mut patience = Patience::start();
    let reclaimed = loop {
        let before = coordinator.reclaimed_shards();
        match coordinator.reclaim(&mut frontier).await {
            Ok(reclaimed) => break reclaimed,
            Err(source) => {
                if coordinator.reclaimed_shards() > before {
                    patience = Patience::start();
                }
                if patience.try_again("taking back hosts", &source).await {
                    continue;
                }
                return Err(SetupError::from(JoinError::Redis {
                    url: settings.url.clone(),
                    source,
                })
                .into());
            }
        }
    };
    let blob = frontier.saved_meta(STATE_META).map_err(StateError::from)?;
    let saved = SavedCrawl::decode(&config.output.state_dir, blob.as_deref())?;
    let budget = config.run.max_pages.map(|max| {
        Arc::new(SharedBudget::new(
            joined.redis.clone(),
            joined.keys.clone(),
            joined.scripts.clone(),
            max,
        ))
    });
    let opened = Opened {
        frontier,
        saved,
        crawl_id: Some(settings.crawl_id.clone()),
        shared: Some(Shared {
            coordinator,
            budget,
        }),
        host_pages: reclaimed.host_pages,
        scope: joined.scope,
    };
    finish_start(config, opened, dedup)
}

/// What every worker of a shared crawl must agree on, by name.
pub(super) fn shared_options(config: &Config) -> Vec<(&'static str, String)> {
    let a = &config.admission;
    let f = &config.frontier;
    vec![
        ("scope", format!("{:?}", a.scope)),
        ("no-parent", a.no_parent.to_string()),
        ("include/exclude", format!("{:?}", a.filter)),
        ("max-depth", format!("{:?}", a.max_depth)),
        ("max-redirects", a.max_redirects.to_string()),
        ("url limits", format!("{:?}", a.limits)),
        ("delay", format!("{:?}", f.delay)),
        ("max-delay", format!("{:?}", f.max_delay)),
        ("delay-factor", f.delay_factor.to_string()),
        ("random-wait", f.random_wait.to_string()),
        ("domains", described(a.host_lists.is_empty(), &a.host_lists)),
        (
            "directories",
            described(a.dir_lists.is_empty(), &a.dir_lists),
        ),
        ("files", described(a.file_lists.is_empty(), &a.file_lists)),
        ("https-only", a.https_only.to_string()),
        ("robots", format!("{} {}", f.obey_robots, f.robots_agent)),
        ("robots-attempts", f.robots_attempts.to_string()),
        ("accept", config.chain.archive.accept.join(",")),
        (
            "max-body-size",
            config.chain.archive.max_body_size.to_string(),
        ),
        ("max-pages", format!("{:?}", config.run.max_pages)),
        (
            "max-pages-per-host",
            format!("{:?}", config.run.max_pages_per_host),
        ),
        ("dedup", config.chain.dedup.is_some().to_string()),
        ("order", format!("{:?}", f.order)),
        // What a page leads to: one worker without them lost the requisites (or sitemap
        // pages) of every host it held (found by an exploratory run: 50 images of 200).
        (
            "page-requisites",
            config.chain.links.page_requisites.to_string(),
        ),
        ("sitemaps", f.sitemaps.to_string()),
        (
            "max-links-per-page",
            config.chain.links.max_links_per_page.to_string(),
        ),
    ]
}

/// A list option as the crawl records it: empty when not given (what a crawl made before the
/// option existed had).
fn described(empty: bool, lists: &dyn std::fmt::Debug) -> String {
    match empty {
        true => String::new(),
        false => format!("{lists:?}"),
    }
}
