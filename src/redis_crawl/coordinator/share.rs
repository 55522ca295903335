//! Sharing the hosts out: each worker's heartbeat says how many hosts it holds and whether its
//! last look for free hosts found none (it is *hungry*). While a hungry worker holds at least
//! two hosts fewer than an even share of the hosts held crawl-wide, every worker keeps to that
//! share: it takes no host beyond it, and gives back the hosts above it, one at a time as each
//! runs dry here and its pages are acknowledged (so no page is fetched twice). Without this, a
//! worker that starts a moment after another on a crawl of few hosts found them all held until
//! their queues were done.

use std::time::SystemTime;

use serde::Deserialize;

use super::Coordinator;

/// A heartbeat older than this is a worker gone (they come every second).
const LIVE_MS: u64 = 5_000;

/// What the share needs of a worker's heartbeat.
#[derive(Debug, Deserialize)]
struct Beat {
    state: String,
    heartbeat_ms: u64,
    #[serde(default)]
    hosts_held: usize,
    #[serde(default)]
    hungry: bool,
}

/// The most hosts worker `me`, holding `held`, should hold now, from the crawl's heartbeats
/// (worker id, JSON): `None` (no limit but its capacity) unless a live hungry worker holds at
/// least two fewer than an even share.
pub(super) fn share_limit(
    me: &str,
    held: usize,
    beats: &[(String, String)],
    now_ms: u64,
) -> Option<usize> {
    let (mut total, mut workers, mut hungry_least) = (held, 1usize, None::<usize>);
    for (id, json) in beats {
        if id == me {
            continue;
        }
        let Ok(beat) = serde_json::from_str::<Beat>(json) else {
            continue;
        };
        if beat.state != "running" || now_ms.saturating_sub(beat.heartbeat_ms) > LIVE_MS {
            continue;
        }
        total += beat.hosts_held;
        workers += 1;
        if beat.hungry {
            hungry_least = Some(hungry_least.map_or(beat.hosts_held, |l| l.min(beat.hosts_held)));
        }
    }
    let share = total.div_ceil(workers);
    hungry_least
        .filter(|least| least + 1 < share)
        .map(|_| share)
}

impl Coordinator {
    /// The most hosts this worker may hold now.
    pub(super) fn most_hosts(&self) -> usize {
        self.share_limit
            .map_or(self.capacity, |l| l.min(self.capacity))
    }

    /// True when this worker looked for free hosts, found none, and may hold more.
    pub(super) fn hungry(&self) -> bool {
        self.held.len() < self.most_hosts() && self.claim_every > super::CLAIM_EVERY
    }

    /// True when this worker holds more hosts than its share: a held host that runs dry is
    /// given back rather than refilled.
    pub(super) fn over_share(&self) -> bool {
        self.share_limit
            .is_some_and(|limit| self.held.len() > limit)
    }

    /// Reads every worker's heartbeat and sets this worker's share.
    pub(super) async fn read_share(&mut self) -> Result<(), redis::RedisError> {
        let now_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        let beats: Vec<(String, String)> = redis::cmd("HGETALL")
            .arg(self.keys.crawl("workers"))
            .query_async(&mut self.redis)
            .await?;
        let limit = share_limit(&self.worker, self.held.len(), &beats, now_ms);
        if limit != self.share_limit {
            match limit {
                Some(l) => tracing::info!(
                    held = self.held.len(),
                    share = l,
                    "another worker has no host: keeping to an even share"
                ),
                None => tracing::debug!("hosts shared out evenly"),
            }
        }
        self.share_limit = limit;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beat(held: usize, hungry: bool, at: u64) -> String {
        serde_json::json!({"state": "running", "heartbeat_ms": at, "hosts_held": held,
            "hungry": hungry, "pages": 1})
        .to_string()
    }

    #[test]
    fn a_worker_holding_every_host_keeps_to_half_when_another_is_hungry() {
        let beats = vec![("w2".to_string(), beat(0, true, 10_000))];
        assert_eq!(share_limit("w1", 8, &beats, 10_500), Some(4));
        // Not hungry (it found free hosts at its last look): no limit.
        let beats = vec![("w2".to_string(), beat(0, false, 10_000))];
        assert_eq!(share_limit("w1", 8, &beats, 10_500), None);
    }

    #[test]
    fn near_even_shares_stale_beats_and_ended_workers_set_no_limit() {
        // 5 and 4 of 9: even enough.
        let beats = vec![("w2".to_string(), beat(4, true, 10_000))];
        assert_eq!(share_limit("w1", 5, &beats, 10_500), None);
        // The hungry worker's heartbeat is 6 s old: gone.
        let beats = vec![("w2".to_string(), beat(0, true, 10_000))];
        assert_eq!(share_limit("w1", 8, &beats, 16_001), None);
        let ended = serde_json::json!({"state": "finished", "heartbeat_ms": 10_000,
            "hosts_held": 0, "hungry": true})
        .to_string();
        assert_eq!(
            share_limit("w1", 8, &[("w2".to_string(), ended)], 10_500),
            None
        );
        // Its own beat and unreadable ones are skipped; alone, a worker has no limit.
        let beats = vec![
            ("w1".to_string(), beat(0, true, 10_000)),
            ("w3".to_string(), "not json".to_string()),
        ];
        assert_eq!(share_limit("w1", 8, &beats, 10_500), None);
    }

    #[test]
    fn three_workers_share_the_held_hosts() {
        let beats = vec![
            ("w2".to_string(), beat(6, false, 10_000)),
            ("w3".to_string(), beat(0, true, 10_000)),
        ];
        // 12 + 6 + 0 = 18 over 3: 6 each; w1 gives back 6, w2 keeps its 6.
        assert_eq!(share_limit("w1", 12, &beats, 10_500), Some(6));
        let beats = vec![
            ("w1".to_string(), beat(12, false, 10_000)),
            ("w3".to_string(), beat(0, true, 10_000)),
        ];
        assert_eq!(share_limit("w2", 6, &beats, 10_500), Some(6));
    }
}
