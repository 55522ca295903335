//! The connection to Redis: one multiplexed connection shared by the crawl loop and every job
//! (redis-rs `ConnectionManager`, which reconnects by itself), or a cluster connection when the
//! server says it runs in cluster mode. Calls time out, so a Redis that stops answering pauses
//! the crawl instead of hanging it. A batch of script calls goes out at once
//! ([`Redis::invoke_all`]): the crawl loop waits one round trip for the lot, not one per call.

use std::time::Duration;

use futures_util::future::join_all;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, FromRedisValue, Pipeline, RedisFuture, RedisResult, ScriptInvocation, Value};

/// How long one call may take before it counts as failed.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// A connection to a single Redis server or a Redis Cluster; cheap to clone.
#[derive(Clone)]
pub enum Redis {
    /// One server.
    Single(ConnectionManager),
    /// A cluster (slots routed by the first key of each command).
    Cluster(ClusterConnection),
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
        let cluster = redis::cluster::ClusterClientBuilder::new(vec![url])
            .connection_timeout(CONNECT_TIMEOUT)
            .response_timeout(RESPONSE_TIMEOUT)
            .retries(2)
            .build()?;
        Ok(Redis::Cluster(cluster.get_async_connection().await?))
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
            Redis::Cluster(c) => c.req_packed_command(cmd),
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
            Redis::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Redis::Single(c) => c.get_db(),
            Redis::Cluster(c) => c.get_db(),
        }
    }
}
