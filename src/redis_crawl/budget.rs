//! `--max-pages` for a crawl shared by many workers, exact for the crawl as a whole.
//!
//! A permit belongs to a URL, not to a worker: a page may be archived when it holds a permit
//! already (a takeover refetches it) or one is left. Permits are committed once the page's
//! records are synced (at the save point after it), and the crawl has reached its target when
//! the committed count does. Distinct archived pages therefore never exceed the target, and a
//! worker killed mid-page leaves its permit to whoever refetches that page.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::connection::Redis;
use super::keys::Keys;
use super::scripts::Scripts;
use crate::frontier::storage::{fingerprint, Fingerprint};

/// Longest wait between retries while Redis is unreachable.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// The crawl's page budget.
pub struct SharedBudget {
    redis: Redis,
    keys: Keys,
    scripts: Arc<Scripts>,
    max: u64,
    /// Pages archived here since the last commit.
    archived: Mutex<Vec<Fingerprint>>,
    committed: AtomicU64,
    /// A permit was refused since the last commit: every permit is reserved, so the pages
    /// archived under them should be committed soon (the crawl ends when they are).
    refused: AtomicBool,
}

impl SharedBudget {
    /// A budget of `max` pages.
    pub fn new(redis: Redis, keys: Keys, scripts: Arc<Scripts>, max: u64) -> Self {
        SharedBudget {
            redis,
            keys,
            scripts,
            max,
            archived: Mutex::new(Vec::new()),
            committed: AtomicU64::new(0),
            refused: AtomicBool::new(false),
        }
    }

    /// Claims a permit for page `url`; false when the target is met. While Redis cannot be
    /// reached it waits and retries (the job, and so its host, pauses).
    pub async fn reserve(&self, url: &str) -> bool {
        let fp = fingerprint(url);
        let mut redis = self.redis.clone();
        let mut backoff = Duration::from_millis(100);
        loop {
            let call = self
                .scripts
                .reserve
                .key(self.keys.crawl("permits"))
                .arg(&fp[..])
                .arg(self.max)
                .invoke_async::<i64>(&mut redis)
                .await;
            match call {
                Ok(granted) => {
                    if granted != 1 {
                        self.refused.store(true, Ordering::Release);
                    }
                    return granted == 1;
                }
                Err(e) => {
                    tracing::warn!("page budget: Redis unreachable ({e}); retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// Records that page `url` was written under its permit.
    pub fn archived(&self, url: &str) {
        self.archived
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(fingerprint(url));
    }

    /// Commits the pages archived since the last call (their records are synced).
    pub async fn commit(&self, redis: &mut Redis) -> Result<(), redis::RedisError> {
        let fps = std::mem::take(&mut *self.archived.lock().unwrap_or_else(|e| e.into_inner()));
        self.refused.store(false, Ordering::Release);
        let mut call = self.scripts.commit.key(self.keys.crawl("permits"));
        call.key(self.keys.crawl("budget"));
        for fp in &fps {
            call.arg(&fp[..]);
        }
        match call.invoke_async::<u64>(redis).await {
            Ok(n) => {
                self.committed.store(n, Ordering::Release);
                Ok(())
            }
            Err(e) => {
                self.archived
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(fps);
                Err(e)
            }
        }
    }

    /// True once the crawl's committed pages reach the target.
    pub fn exhausted(&self) -> bool {
        self.committed.load(Ordering::Acquire) >= self.max
    }

    /// Takes the crawl's committed count as read from Redis (the heartbeat round): a worker
    /// that archives nothing more learns that the target is met from the others' commits.
    pub fn learn_committed(&self, committed: u64) {
        self.committed.fetch_max(committed, Ordering::AcqRel);
    }

    /// True when a permit was refused since the last commit: a save point now commits this
    /// worker's pages, so that the crawl reaches its target (and every worker stops) sooner.
    pub fn wants_commit(&self) -> bool {
        self.refused.load(Ordering::Acquire)
    }
}
