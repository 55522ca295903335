//! `--limit-rate` (wget's name): the bytes per second the crawl as a whole reads from the
//! network, over all its connections at once. Each body's bytes are paced as they arrive: a
//! fetch that has read ahead of the rate waits until the crawl's budget catches up (the
//! server's bytes wait in the socket meanwhile), and that wait does not count toward the
//! fetch's time limit. Up to a quarter of a second's bytes may arrive at once (a burst), so
//! small responses are not delayed one by one.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// How far ahead of the rate the crawl may read before a fetch waits.
const BURST: Duration = Duration::from_millis(250);

/// The crawl's byte budget.
#[derive(Debug)]
pub struct RateLimit {
    bytes_per_second: u64,
    /// When the bytes taken so far would all have been read at the rate.
    paid_until: Mutex<Option<Instant>>,
}

impl RateLimit {
    /// A budget of `bytes_per_second` (at least 1).
    pub fn new(bytes_per_second: u64) -> Self {
        RateLimit {
            bytes_per_second: bytes_per_second.max(1),
            paid_until: Mutex::new(None),
        }
    }

    /// Takes `bytes` from the budget; how long the caller must wait before reading on.
    pub fn take(&self, bytes: usize, now: Instant) -> Duration {
        let cost = Duration::from_secs_f64(bytes as f64 / self.bytes_per_second as f64);
        let mut paid = self.paid_until.lock().unwrap_or_else(|e| e.into_inner());
        // Time the crawl did not use is not saved up: only the burst may run ahead.
        let until = paid.map_or(now, |p| p.max(now)) + cost;
        *paid = Some(until);
        until.saturating_duration_since(now + BURST)
    }

    /// Takes `bytes` from the budget and waits as long as that asks; returns the wait.
    pub async fn pace(&self, bytes: usize) -> Duration {
        let wait = self.take(bytes, Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_faster_than_the_rate_waits_for_it_after_a_burst() {
        let limit = RateLimit::new(1000);
        let start = Instant::now();
        // A quarter of a second's bytes go at once.
        assert_eq!(limit.take(250, start), Duration::ZERO);
        // Then each byte waits for its share of time.
        let wait = limit.take(500, start);
        assert_eq!(wait, Duration::from_millis(500));
        // Later, in time with the rate: no wait beyond the burst.
        let later = start + Duration::from_millis(750);
        assert_eq!(limit.take(100, later), Duration::ZERO);
    }

    #[test]
    fn an_idle_crawl_saves_up_no_more_than_the_burst() {
        let limit = RateLimit::new(1000);
        let start = Instant::now();
        assert_eq!(limit.take(100, start), Duration::ZERO);
        let after_a_pause = start + Duration::from_secs(60);
        assert_eq!(limit.take(250, after_a_pause), Duration::ZERO);
        assert_eq!(limit.take(1000, after_a_pause), Duration::from_secs(1));
    }
}
