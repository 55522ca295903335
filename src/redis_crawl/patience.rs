//! Start-up's patience with Redis. Joining and taking back hosts are tried again, with
//! backoff, when Redis fails them transiently: a connection dropped, refused or timed out, or a
//! server that is still loading its data or failing over (`LOADING`, `TRYAGAIN`, `MASTERDOWN`,
//! `CLUSTERDOWN`). After [`PATIENCE`] the worker gives up (exit 9), so a cron job still learns
//! that Redis is down. Once the crawl runs, outages are the coordinator's
//! (`coordinator/outage.rs`), which waits as long as they last.

use std::time::{Duration, Instant};

use redis::{RedisError, RetryMethod};

/// How long start-up keeps trying a Redis that fails transiently.
pub const PATIENCE: Duration = Duration::from_secs(30);
/// Longest wait between two tries.
const MAX_BACKOFF: Duration = Duration::from_secs(4);

/// True for a failure that may pass by itself.
pub fn is_transient(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || matches!(e.retry_method(), RetryMethod::WaitAndRetry)
}

/// The tries of one start-up step.
#[derive(Debug)]
pub struct Patience {
    until: Instant,
    backoff: Duration,
}

impl Patience {
    /// Patience from now on.
    pub fn start() -> Self {
        Patience {
            until: Instant::now() + PATIENCE,
            backoff: Duration::from_millis(250),
        }
    }

    /// After `what` failed with `e`: waits and returns true when it is worth another try
    /// (saying so), false when the failure is not transient or patience has run out.
    pub async fn try_again(&mut self, what: &str, e: &RedisError) -> bool {
        if !is_transient(e) || Instant::now() + self.backoff > self.until {
            return false;
        }
        tracing::warn!(
            "{what}: Redis failed ({e}); trying again in {:.1}s (for up to {}s)",
            self.backoff.as_secs_f64(),
            PATIENCE.as_secs()
        );
        tokio::time::sleep(self.backoff).await;
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::{ErrorKind, ServerErrorKind};

    #[test]
    fn only_failures_that_may_pass_are_transient() {
        let io = RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(is_transient(&io));
        let loading =
            RedisError::from((ErrorKind::Server(ServerErrorKind::BusyLoading), "loading"));
        assert!(is_transient(&loading));
        let wrong = RedisError::from((
            ErrorKind::Server(ServerErrorKind::ResponseError),
            "WRONGTYPE",
        ));
        assert!(!is_transient(&wrong));
        let auth = RedisError::from((ErrorKind::AuthenticationFailed, "bad password"));
        assert!(!is_transient(&auth));
    }
}
