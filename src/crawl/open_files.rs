//! The crawl's budget of open files. The soft limit (`ulimit -n`, 1024 by default on Linux) is
//! raised to the hard limit at start, as nginx and most servers raise theirs, and the idle
//! keep-alive connections are held to what the limit leaves after the running fetches and the
//! crawl's own files. Before, a crawl of 2,000 hosts with a delay kept one idle socket per
//! host (up to 2,048) and ran out of descriptors under the default 1,024: connects failed, then
//! the state database could not be written and the crawl stopped with an output error.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Descriptors kept for what is not a fetch's: WARC files, the state database and its
/// journal, the seeds file, the console, Redis, logs, and the runtime's own.
const RESERVE: u64 = 256;
/// Descriptors a running fetch may hold: its socket, a spool file for a long body, and one
/// for a connection being replaced.
const PER_FETCH: u64 = 3;
/// Most idle connections kept, whatever the limit.
pub const MAX_IDLE_CONNECTIONS: usize = 2048;

/// Raises the soft open-files limit to the hard limit (no higher than 2^20) and returns the
/// limit in force, or `None` when it is unlimited or cannot be read.
pub fn raise_limit() -> Option<u64> {
    let limit = getrlimit(Resource::Nofile);
    let wanted = limit.maximum.unwrap_or(1 << 20).min(1 << 20);
    if limit.current.is_some_and(|current| current < wanted) {
        let raised = Rlimit {
            current: Some(wanted),
            maximum: limit.maximum,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            return Some(wanted);
        }
    }
    limit.current
}

/// How many idle connections a crawl of `concurrency` fetches may keep under `limit` open
/// files (`None`: unlimited).
pub fn idle_connections(limit: Option<u64>, concurrency: usize) -> usize {
    let Some(limit) = limit else {
        return MAX_IDLE_CONNECTIONS;
    };
    let busy = RESERVE + PER_FETCH * concurrency as u64;
    (limit.saturating_sub(busy) as usize).min(MAX_IDLE_CONNECTIONS)
}

/// The warning for a `concurrency` that `limit` leaves no room for, if it does not.
pub fn shortage(limit: Option<u64>, concurrency: usize) -> Option<String> {
    let limit = limit?;
    let busy = RESERVE + PER_FETCH * concurrency as u64;
    (busy > limit).then(|| {
        format!(
            "--concurrency {concurrency} may need about {busy} open files, and this process may \
             open {limit} (the hard limit, `ulimit -Hn`): fetches may fail for want of one"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_connections_leave_room_for_the_fetches() {
        assert_eq!(idle_connections(Some(1024), 32), 1024 - 256 - 96);
        assert_eq!(idle_connections(Some(1 << 20), 32), MAX_IDLE_CONNECTIONS);
        assert_eq!(idle_connections(Some(300), 256), 0);
        assert_eq!(idle_connections(None, 32), MAX_IDLE_CONNECTIONS);
        assert!(shortage(Some(1024), 32).is_none());
        assert!(shortage(Some(1024), 512).is_some());
    }

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let limit = raise_limit();
        let now = getrlimit(Resource::Nofile);
        assert_eq!(limit, now.current);
        if let (Some(current), Some(max)) = (now.current, now.maximum) {
            assert_eq!(current, max.min(1 << 20));
        }
    }
}
