//! Idle keep-alive connections, one per host, owned by the crawl loop between fetches.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::fetch::Connection;

/// How long an unused connection is kept.
const MAX_IDLE: Duration = Duration::from_secs(15);

/// Connections waiting for their host's next fetch.
pub struct IdlePool {
    by_host: HashMap<String, Connection>,
    /// Most connections kept (each holds a socket: `open_files.rs` sizes it).
    max: usize,
}

impl IdlePool {
    /// An empty pool that keeps at most `max` connections.
    pub fn new(max: usize) -> Self {
        IdlePool {
            by_host: HashMap::new(),
            max,
        }
    }

    /// Takes the host's connection, if any.
    pub fn take(&mut self, host: &str) -> Option<Connection> {
        self.by_host.remove(host)
    }

    /// Keeps a connection for the host's next fetch (dropped if the pool is full).
    pub fn put(&mut self, host: String, conn: Connection) {
        if self.by_host.len() < self.max || self.by_host.contains_key(&host) {
            self.by_host.insert(host, conn);
        }
    }

    /// Closes connections idle for too long. One the server closed meanwhile is noticed when
    /// its host's next fetch takes it (a read that does not wait, see `fetch/connection.rs`):
    /// checking all of them here, four times a second, would cost a system call each.
    pub fn expire(&mut self, now: Instant) {
        self.by_host
            .retain(|_, c| now.duration_since(c.idle_since) < MAX_IDLE);
    }

    /// Closes everything.
    pub fn clear(&mut self) {
        self.by_host.clear();
    }
}
