//! `trawl status` and `trawl stop` for a shared crawl: read the crawl as a whole from Redis
//! (pages, queued, hosts, each worker's counters and heartbeat), or ask every worker to stop.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde::Serialize;

use super::connection::{shown, Redis};
use super::keys::Keys;

/// One worker as its last heartbeat described it.
#[derive(Debug, Serialize)]
pub struct WorkerStatus {
    /// `running`, `stopped`, `finished` or `interrupted`.
    pub state: String,
    /// Pages archived by it.
    pub pages: u64,
    /// Requests made.
    pub requests: u64,
    /// Response bytes downloaded.
    pub bytes: u64,
    /// Pages per second since it started.
    pub pages_per_second: f64,
    /// Seconds since its last heartbeat.
    pub seconds_since_heartbeat: f64,
    /// Hosts it holds.
    pub hosts_held: u64,
    /// Its output directory.
    pub out: String,
}

/// The crawl as a whole.
#[derive(Debug, Serialize)]
pub struct SharedStatus {
    /// The crawl id.
    pub crawl_id: String,
    /// When it was created.
    pub created: String,
    /// Pages archived, summed over workers.
    pub pages: u64,
    /// Pages committed under `--max-pages` (0 without it).
    pub pages_committed: u64,
    /// URLs queued.
    pub queued: i64,
    /// URLs ever queued (the seen set).
    pub seen: i64,
    /// Hosts with queued or in-flight URLs.
    pub hosts_active: u64,
    /// Why it stopped, if it did: `stop requested`, `finished`, or `state lost: ...` (a
    /// worker found part of its state gone from Redis).
    pub stop_reason: Option<String>,
    /// Workers by id.
    pub workers: BTreeMap<String, WorkerStatus>,
}

/// Why a control command failed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// Redis failed.
    #[error("Redis at {url}: {source}")]
    Redis {
        /// The URL.
        url: String,
        /// The error.
        source: redis::RedisError,
    },
    /// No such crawl.
    #[error("no crawl {0} in this Redis")]
    NoCrawl(String),
}

async fn open(
    url: &str,
    crawl_id: &str,
) -> Result<(Redis, Keys, BTreeMap<String, String>), ControlError> {
    let fail = |source| ControlError::Redis {
        url: shown(url),
        source,
    };
    let mut redis = Redis::connect(url).await.map_err(fail)?;
    let meta: BTreeMap<String, String> = redis::cmd("HGETALL")
        .arg(Keys::new(crawl_id, 1).crawl("meta"))
        .query_async(&mut redis)
        .await
        .map_err(fail)?;
    let Some(shards) = meta.get("shards").and_then(|s| s.parse().ok()) else {
        return Err(ControlError::NoCrawl(crawl_id.to_string()));
    };
    Ok((redis, Keys::new(crawl_id, shards), meta))
}

/// Reads the status of crawl `crawl_id`.
pub async fn status(url: &str, crawl_id: &str) -> Result<SharedStatus, ControlError> {
    let fail = |source| ControlError::Redis {
        url: shown(url),
        source,
    };
    let (mut redis, keys, meta) = open(url, crawl_id).await?;
    let beats: BTreeMap<String, String> = redis::cmd("HGETALL")
        .arg(keys.crawl("workers"))
        .query_async(&mut redis)
        .await
        .map_err(fail)?;
    let now_ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as f64;
    let mut workers = BTreeMap::new();
    for (id, beat) in beats {
        let v: serde_json::Value = serde_json::from_str(&beat).unwrap_or_default();
        let n = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
        let beat_ms = n("heartbeat_ms") as f64;
        let ran = ((beat_ms - n("started_ms") as f64) / 1000.0).max(0.001);
        workers.insert(
            id,
            WorkerStatus {
                state: v["state"].as_str().unwrap_or("unknown").to_string(),
                pages: n("pages"),
                requests: n("requests"),
                bytes: n("bytes"),
                pages_per_second: n("pages") as f64 / ran,
                seconds_since_heartbeat: ((now_ms - beat_ms) / 1000.0).max(0.0),
                hosts_held: n("hosts_held"),
                out: v["out"].as_str().unwrap_or("").to_string(),
            },
        );
    }
    let (mut queued, mut seen, mut hosts_active) = (0i64, 0i64, 0u64);
    for k in 0..keys.shards() {
        let (zcard, stat): (u64, Vec<Option<i64>>) = redis::pipe()
            .cmd("ZCARD")
            .arg(keys.ready(k))
            .cmd("HMGET")
            .arg(keys.stat(k))
            .arg("queued")
            .arg("seen")
            .query_async(&mut redis)
            .await
            .map_err(fail)?;
        hosts_active += zcard;
        queued += stat.first().copied().flatten().unwrap_or(0);
        seen += stat.get(1).copied().flatten().unwrap_or(0);
    }
    let committed: Option<u64> = redis::cmd("HGET")
        .arg(keys.crawl("budget"))
        .arg("committed")
        .query_async(&mut redis)
        .await
        .map_err(fail)?;
    let stop: Option<String> = redis::cmd("GET")
        .arg(keys.crawl("stop"))
        .query_async(&mut redis)
        .await
        .map_err(fail)?;
    let stop_reason = match (meta.get("finished"), stop) {
        _ if meta.contains_key("lost") => Some(format!("state lost: {}", meta["lost"])),
        (Some(_), _) => Some("finished".to_string()),
        (None, Some(_)) => Some("stop requested".to_string()),
        _ => None,
    };
    Ok(SharedStatus {
        crawl_id: crawl_id.to_string(),
        created: meta.get("created").cloned().unwrap_or_default(),
        pages: workers.values().map(|w| w.pages).sum(),
        pages_committed: committed.unwrap_or(0),
        queued,
        seen,
        hosts_active,
        stop_reason,
        workers,
    })
}

/// Asks every worker of crawl `crawl_id` to stop gracefully (they see it within a second).
pub async fn stop(url: &str, crawl_id: &str) -> Result<(), ControlError> {
    let (mut redis, keys, _) = open(url, crawl_id).await?;
    redis::cmd("SET")
        .arg(keys.crawl("stop"))
        .arg(humantime::format_rfc3339_seconds(SystemTime::now()).to_string())
        .query_async::<()>(&mut redis)
        .await
        .map_err(|source| ControlError::Redis {
            url: shown(url),
            source,
        })
}

impl SharedStatus {
    /// The status for people.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "crawl {} (created {})\n  pages archived: {}{}\n  queued: {}  seen: {}  hosts with work: {}\n  state: {}\n",
            self.crawl_id,
            self.created,
            self.pages,
            if self.pages_committed > 0 {
                format!(" ({} committed under --max-pages)", self.pages_committed)
            } else {
                String::new()
            },
            self.queued,
            self.seen,
            self.hosts_active,
            self.stop_reason.as_deref().unwrap_or("running"),
        );
        s.push_str("  workers:\n");
        for (id, w) in &self.workers {
            s.push_str(&format!(
                "    {id}: {} | {} pages, {:.1} pages/s, {} hosts held | last heartbeat {:.0}s ago | {}\n",
                w.state, w.pages, w.pages_per_second, w.hosts_held, w.seconds_since_heartbeat, w.out
            ));
        }
        s
    }
}
