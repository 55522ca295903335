//! The connection to Redis: one multiplexed connection shared by the crawl loop and every job
//! (redis-rs `ConnectionManager`, which reconnects by itself), or a cluster connection when the
//! server says it runs in cluster mode. Calls time out, so a Redis that stops answering pauses
//! the crawl instead of hanging it. A batch of script calls goes out at once
//! ([`Redis::invoke_all`]): the crawl loop waits one round trip for the lot, not one per call.
//!
//! A cluster connection whose calls have all failed for [`REBUILD_AFTER`] is made again from
//! the cluster's client: redis-rs's cluster connection, after a node was killed and started
//! again, could stay failing for good though every node answered (found by an exploratory
//! run: a worker paused for minutes, its hosts taken over by the others and fetched again,
//! and in one run the whole crawl stopped), where a fresh connection reads the slots anew.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, FromRedisValue, Pipeline, RedisFuture, RedisResult, ScriptInvocation, Value};

/// How long one call may take before it counts as failed.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a cluster connection's calls fail before it is made again.
const REBUILD_AFTER: Duration = Duration::from_secs(10);

/// A connection to a single Redis server or a Redis Cluster; cheap to clone.
#[derive(Clone)]
pub enum Redis {
    /// One server.
    Single(ConnectionManager),
    /// A cluster (slots routed by the first key of each command).
    Cluster(Cluster),
}

/// A cluster connection, made again when it keeps failing; its clones share it.
#[derive(Clone)]
pub struct Cluster {
    shared: Arc<ClusterLink>,
}

struct ClusterLink {
    client: redis::cluster::ClusterClient,
    connection: Mutex<ClusterConnection>,
    /// When the calls began to fail (`None`: the last one succeeded).
    failing_since: Mutex<Option<Instant>>,
    /// Held while a new connection is made, so that one is made at a time.
    rebuilding: tokio::sync::Mutex<()>,
}

impl Cluster {
    fn current(&self) -> ClusterConnection {
        lock(&self.shared.connection).clone()
    }

    /// Notes how a call went, and makes the connection again when calls have failed for
    /// [`REBUILD_AFTER`].
    async fn after<T>(&self, result: RedisResult<T>) -> RedisResult<T> {
        let failing_for = {
            let mut since = lock(&self.shared.failing_since);
            match &result {
                Ok(_) => {
                    *since = None;
                    return result;
                }
                Err(_) => since.get_or_insert_with(Instant::now).elapsed(),
            }
        };
        if failing_for >= REBUILD_AFTER {
            if let Ok(_one) = self.shared.rebuilding.try_lock() {
                let made = tokio::time::timeout(
                    CONNECT_TIMEOUT * 2,
                    self.shared.client.get_async_connection(),
                )
                .await;
                if let Ok(Ok(connection)) = made {
                    *lock(&self.shared.connection) = connection;
                    *lock(&self.shared.failing_since) = None;
                    tracing::warn!(
                        "Redis Cluster: the connection failed for {}s and was made again",
                        failing_for.as_secs()
                    );
                }
            }
        }
        result
    }
}

/// `url` as errors and logs show it: without its password (`redis://:***@host`), which an
/// error message printed whole to stderr and the log file.
pub fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// A lock whose holder cannot leave its data half-changed (plain values are swapped).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Redis {
    /// Connects to `url` (`redis://HOST:PORT/DB`), detecting cluster mode.
    pub async fn connect(url: &str) -> redis::RedisResult<Redis> {
        let client = redis::Client::open(url)?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(2));
        let mut single = ConnectionManager::new_with_config(client, config).await?;
        let info: String = redis::cmd("INFO")
            .arg("cluster")
            .query_async(&mut single)
            .await?;
        if !info.contains("cluster_enabled:1") {
            return Ok(Redis::Single(single));
        }
        let client = redis::cluster::ClusterClientBuilder::new(vec![url])
            .connection_timeout(CONNECT_TIMEOUT)
            .response_timeout(RESPONSE_TIMEOUT)
            .retries(2)
            .build()?;
        let connection = client.get_async_connection().await?;
        Ok(Redis::Cluster(Cluster {
            shared: Arc::new(ClusterLink {
                client,
                connection: Mutex::new(connection),
                failing_since: Mutex::new(None),
                rebuilding: tokio::sync::Mutex::new(()),
            }),
        }))
    }

    /// Runs every call at once on the multiplexed connection (each reloads its script after a
    /// server restart, as a single call does); the results come in the order of `calls`.
    pub async fn invoke_all<T: FromRedisValue>(
        &self,
        calls: &[ScriptInvocation<'_>],
    ) -> Vec<RedisResult<T>> {
        join_all(calls.iter().map(|call| {
            let mut redis = self.clone();
            async move { call.invoke_async::<T>(&mut redis).await }
        }))
        .await
    }

    /// True for a cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self, Redis::Cluster(_))
    }
}

impl ConnectionLike for Redis {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Redis::Single(c) => c.req_packed_command(cmd),
            Redis::Cluster(c) => Box::pin(async move {
                let result = c.current().req_packed_command(cmd).await;
                c.after(result).await
            }),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Redis::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Redis::Cluster(c) => Box::pin(async move {
                let result = c
                    .current()
                    .req_packed_commands(pipeline, offset, count)
                    .await;
                c.after(result).await
            }),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Redis::Single(c) => c.get_db(),
            Redis::Cluster(c) => c.current().get_db(),
        }
    }
}
