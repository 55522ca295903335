//! Joining a shared crawl: connect, refuse a Redis that may evict keys, create the crawl or
//! check that this worker's options match the ones it was created with, register the seeds'
//! scope, and read this worker's saved blobs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::join_all;

use super::connection::{shown, Redis};
use super::keys::{Keys, DEFAULT_SHARDS};
use super::lease_book::LeaseBook;
use super::scripts::Scripts;

/// Where and as whom to join (`--redis`, `--crawl-id`, `--worker-id`, `--lease`).
#[derive(Debug, Clone)]
pub struct SharedSettings {
    /// `redis://HOST:PORT/DB`.
    pub url: String,
    /// The crawl's name.
    pub crawl_id: String,
    /// This worker's name.
    pub worker_id: String,
    /// How long a host lease lasts without renewal.
    pub lease: Duration,
}

/// Why joining failed.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// Redis could not be reached or answered an error.
    #[error("Redis at {url}: {source}")]
    Redis {
        /// The URL.
        url: String,
        /// The error.
        source: redis::RedisError,
    },
    /// Redis may evict keys, which would silently lose crawl state.
    #[error("Redis at {url} has maxmemory-policy {policy}: a shared crawl needs noeviction (evicted keys would silently lose queued URLs); run CONFIG SET maxmemory-policy noeviction and set it in redis.conf")]
    Eviction {
        /// The URL.
        url: String,
        /// The policy found.
        policy: String,
    },
    /// The worker's options differ from the crawl's.
    #[error("crawl {crawl} was started with other options; this worker differs in: {fields} (every worker of a crawl must use the same scope, delay, limits and accept list)")]
    OptionsDiffer {
        /// The crawl id.
        crawl: String,
        /// The options that differ, with both values.
        fields: String,
    },
    /// The crawl has finished.
    #[error("crawl {crawl} finished at {at}; choose a new --crawl-id for a new crawl")]
    Finished {
        /// The crawl id.
        crawl: String,
        /// When.
        at: String,
    },
    /// A worker found part of the crawl's state gone from Redis (a shard of a cluster
    /// restarted without its data): the crawl cannot be finished as it is.
    #[error("crawl {crawl} lost part of its state in Redis ({detail}); start a new crawl with another --crawl-id (the WARC files written so far are valid)")]
    StateLost {
        /// The crawl id.
        crawl: String,
        /// What a worker found.
        detail: String,
    },
    /// The crawl was created by an incompatible version.
    #[error("crawl {crawl} in Redis is unreadable: {detail}")]
    Unreadable {
        /// The crawl id.
        crawl: String,
        /// What is wrong.
        detail: String,
    },
}

/// A joined crawl: the connection and what every part of the worker shares.
pub struct Joined {
    /// The connection.
    pub redis: Redis,
    /// The key layout.
    pub keys: Keys,
    /// The scripts.
    pub scripts: Arc<Scripts>,
    /// This worker's id.
    pub worker: String,
    /// This process's lease token (`WORKER#EPOCH`).
    pub token: String,
    /// Lease length.
    pub lease: Duration,
    /// The frontier's local storage, with the worker's saved blobs.
    pub book: Arc<Mutex<LeaseBook>>,
    /// Every scope seed of the crawl (from all workers).
    pub scope: Vec<String>,
    /// When the crawl was created (`meta`'s `created`): a record with another value, or none,
    /// means Redis lost the crawl's state since (`coordinator/lost_state.rs`).
    pub created: String,
}

/// Joins crawl `settings.crawl_id` (creating it if new) with `options` (name, value pairs that
/// every worker must share) and this worker's scope seeds; `reads_seeds`: it also reads a seeds
/// file as it crawls (its seeds reach the scope as they are read).
pub async fn join(
    settings: &SharedSettings,
    options: &[(&str, String)],
    seeds: &[String],
    reads_seeds: bool,
) -> Result<Joined, JoinError> {
    let url = settings.url.clone();
    let fail = |source| JoinError::Redis {
        url: shown(&url),
        source,
    };
    let mut redis = Redis::connect(&settings.url).await.map_err(fail)?;
    check_eviction(&mut redis, &settings.url).await?;
    let meta_key = Keys::new(&settings.crawl_id, 1).crawl("meta");
    let wanted: serde_json::Map<String, serde_json::Value> = options
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.clone())))
        .collect();
    let wanted_json = serde_json::Value::Object(wanted.clone()).to_string();
    redis::pipe()
        .cmd("HSETNX")
        .arg(&meta_key)
        .arg("options")
        .arg(&wanted_json)
        .ignore()
        .cmd("HSETNX")
        .arg(&meta_key)
        .arg("shards")
        .arg(DEFAULT_SHARDS)
        .ignore()
        .cmd("HSETNX")
        .arg(&meta_key)
        .arg("created")
        .arg(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string())
        .ignore()
        .query_async::<()>(&mut redis)
        .await
        .map_err(fail)?;
    let meta: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(&meta_key)
        .query_async(&mut redis)
        .await
        .map_err(fail)?;
    let crawl = settings.crawl_id.clone();
    if let Some(at) = meta.get("finished") {
        return Err(JoinError::Finished {
            crawl,
            at: at.clone(),
        });
    }
    if let Some(detail) = meta.get("lost") {
        return Err(JoinError::StateLost {
            crawl,
            detail: detail.clone(),
        });
    }
    let unreadable = |detail: String| JoinError::Unreadable {
        crawl: crawl.clone(),
        detail,
    };
    let shards: u32 = meta
        .get("shards")
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| unreadable("no shard count".into()))?;
    let saved: serde_json::Map<String, serde_json::Value> = meta
        .get("options")
        .and_then(|s| serde_json::from_str(s).ok())
        .ok_or_else(|| unreadable("options are not JSON".into()))?;
    // Options a crawl created by an earlier version did not record, with the value it had.
    let earlier = |k: &str| match k {
        "order" => Some(serde_json::Value::String("Bfs".into())),
        "no-parent" => Some(serde_json::Value::String("false".into())),
        "delay-factor" => Some(serde_json::Value::String("0".into())),
        "robots-attempts" => Some(serde_json::Value::String("3".into())),
        "random-wait" | "https-only" | "page-requisites" => {
            Some(serde_json::Value::String("false".into()))
        }
        // Before 2026-11-29 (unrecorded): the defaults.
        "sitemaps" => Some(serde_json::Value::String("true".into())),
        "max-links-per-page" => Some(serde_json::Value::String("20000".into())),
        "domains" | "directories" | "files" => Some(serde_json::Value::String(String::new())),
        _ => None,
    };
    let theirs_of = |k: &str| saved.get(k).cloned().or_else(|| earlier(k));
    let differ: Vec<String> = wanted
        .iter()
        .filter(|(k, v)| theirs_of(k).as_ref() != Some(*v))
        .map(|(k, v)| {
            let theirs = theirs_of(k);
            let theirs = theirs
                .as_ref()
                .and_then(|v| v.as_str())
                .unwrap_or("(unset)");
            format!(
                "{k} (crawl: {theirs}; this worker: {})",
                v.as_str().unwrap_or("")
            )
        })
        .collect();
    if !differ.is_empty() {
        return Err(JoinError::OptionsDiffer {
            crawl,
            fields: differ.join("; "),
        });
    }
    let keys = Keys::new(&settings.crawl_id, shards);
    if !meta.contains_key("marked") {
        mark_shards(&mut redis, &keys).await.map_err(fail)?;
    }
    let stopped: Option<String> = redis::cmd("GETDEL")
        .arg(keys.crawl("stop"))
        .query_async(&mut redis)
        .await
        .map_err(fail)?;
    if stopped.is_some() {
        tracing::warn!("crawl {crawl} had been stopped with trawl stop: resuming it");
    }
    if !seeds.is_empty() {
        redis::cmd("SADD")
            .arg(keys.crawl("scope"))
            .arg(seeds)
            .query_async::<()>(&mut redis)
            .await
            .map_err(fail)?;
    }
    // A worker without seeds that starts first waits for one that brings them: its scope (and
    // the addresses of IP-literal seeds it may connect to) come from them. One that reads a
    // seeds file brings its own, as it reads them (waiting here, it waited forever).
    let mut said = false;
    let scope: Vec<String> = loop {
        let scope: Vec<String> = redis::cmd("SMEMBERS")
            .arg(keys.crawl("scope"))
            .query_async(&mut redis)
            .await
            .map_err(fail)?;
        if !scope.is_empty() || reads_seeds {
            break scope;
        }
        if !said {
            said = true;
            tracing::warn!("crawl {crawl} has no seeds yet: waiting for a worker that brings them");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let created = meta.get("created").cloned().unwrap_or_default();
    let blobs: HashMap<String, Vec<u8>> = redis::cmd("HGETALL")
        .arg(keys.worker(&settings.worker_id))
        .query_async(&mut redis)
        .await
        .map_err(fail)?;
    let token = format!("{}#{:016x}", settings.worker_id, fastrand::u64(..));
    Ok(Joined {
        redis,
        keys,
        scripts: Arc::new(Scripts::new()),
        worker: settings.worker_id.clone(),
        token,
        lease: settings.lease,
        book: LeaseBook::new(blobs),
        scope,
        created,
    })
}

/// Writes every shard's marker (`made` in its `stat`), then `marked` in the crawl's record: a
/// shard without it has lost its state (`coordinator/lost_state.rs`). Done by the worker that
/// creates the crawl, and by the first of this version to join a crawl made before markers.
async fn mark_shards(redis: &mut Redis, keys: &Keys) -> redis::RedisResult<()> {
    let marks = join_all((0..keys.shards()).map(|k| {
        let mut redis = redis.clone();
        let key = keys.stat(k);
        async move {
            redis::cmd("HSETNX")
                .arg(key)
                .arg("made")
                .arg(1)
                .query_async::<()>(&mut redis)
                .await
        }
    }))
    .await;
    marks.into_iter().collect::<redis::RedisResult<Vec<()>>>()?;
    redis::cmd("HSET")
        .arg(keys.crawl("meta"))
        .arg("marked")
        .arg(1)
        .query_async(redis)
        .await
}

/// Refuses a server that may evict keys. A server that hides CONFIG (managed services) is
/// trusted, with a warning.
async fn check_eviction(redis: &mut Redis, url: &str) -> Result<(), JoinError> {
    let reply: redis::RedisResult<Vec<String>> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("maxmemory-policy")
        .query_async(redis)
        .await;
    match reply {
        Ok(pair) => match pair.get(1) {
            Some(policy) if policy != "noeviction" => Err(JoinError::Eviction {
                url: shown(url),
                policy: policy.clone(),
            }),
            _ => Ok(()),
        },
        Err(e) => {
            tracing::warn!(
                "cannot read maxmemory-policy of {url} ({e}); make sure it is noeviction"
            );
            Ok(())
        }
    }
}
