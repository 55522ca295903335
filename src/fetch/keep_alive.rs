//! Origins that close a kept-alive connection once it has taken a request, before a byte of
//! the answer: the request is sent again on a fresh connection at once (RFC 9112 9.3.1, as
//! browsers do for the race with a server's idle timeout), and from then on every request to
//! that origin gets a connection of its own. Without this, a server whose keep-alive is
//! broken (or shorter than the host's delay) got every request twice, 1 ms apart, uncounted.

use std::collections::HashSet;
use std::sync::Mutex;

use url::Url;

use super::connection::{has_origin, Connection};

/// The origins whose kept-alive connections are not used again.
#[derive(Debug, Default)]
pub(super) struct KeepAlive {
    closed_by: Mutex<HashSet<String>>,
}

impl KeepAlive {
    /// `idle`, when it is a connection to `url`'s origin that may take another request.
    pub(super) fn reuse(&self, url: &Url, idle: Option<Connection>) -> Option<Connection> {
        let mut c = idle?;
        let usable = has_origin(url, &c.origin) && c.is_reusable();
        let closes = || {
            self.closed_by
                .lock()
                .is_ok_and(|origins| origins.contains(&c.origin))
        };
        (usable && !closes()).then_some(c)
    }

    /// `origin` closed a kept-alive connection that had taken a request.
    pub(super) fn closed(&self, origin: &str) {
        if let Ok(mut origins) = self.closed_by.lock() {
            if origins.insert(origin.to_string()) {
                tracing::info!(%origin, "closes kept-alive connections: a new one for each request");
            }
        }
    }
}
