//! Sharing the hosts out: each worker's heartbeat says how many hosts it holds and whether its
//! last look for free hosts found none (it is *hungry*). While a hungry worker holds at least
//! two hosts fewer than an even share of the hosts held crawl-wide, every worker keeps to that
//! share: it takes no host beyond it, and gives back the hosts above it, one at a time as each
//! runs dry here and its pages are acknowledged (so no page is fetched twice). Without this, a
//! worker that starts a moment after another on a crawl of few hosts found them all held until
//! their queues were done.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::Coordinator;

/// A worker whose heartbeat has not changed for this long is gone (they come every second).
/// Judged on this worker's own clock, so the machines' clocks need not agree.
const LIVE: Duration = Duration::from_secs(5);

/// What the share needs of a worker's heartbeat.
#[derive(Debug, Deserialize)]
pub(super) struct Beat {
    state: String,
    heartbeat_ms: u64,
    #[serde(default)]
    hosts_held: usize,
    #[serde(default)]
    hungry: bool,
}

/// The most hosts a worker holding `held` should hold now, given the heartbeats of the other
/// live workers: `None` (no limit but its capacity) unless a running hungry one holds at least
/// two fewer than an even share.
pub(super) fn share_limit(held: usize, others: &[Beat]) -> Option<usize> {
    let (mut total, mut workers, mut hungry_least) = (held, 1usize, None::<usize>);
    for beat in others.iter().filter(|b| b.state == "running") {
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

/// When each other worker's heartbeat was last seen to change.
pub(super) type BeatsSeen = HashMap<String, (u64, Instant)>;

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

    /// How many hosts this worker holds above its share: as many held hosts that run dry are
    /// given back rather than refilled.
    pub(super) fn over_share(&self) -> usize {
        self.share_limit
            .map_or(0, |limit| self.held.len().saturating_sub(limit))
    }

    /// Sets this worker's share from every worker's heartbeat (`beats`: id, JSON).
    pub(super) fn apply_beats(&mut self, beats: Vec<(String, String)>) {
        let now = Instant::now();
        let mut others = Vec::new();
        for (id, json) in beats {
            let Ok(beat) = serde_json::from_str::<Beat>(&json) else {
                continue;
            };
            if id == self.worker {
                continue;
            }
            let seen = self
                .beats_seen
                .entry(id)
                .or_insert((beat.heartbeat_ms, now));
            if seen.0 != beat.heartbeat_ms {
                *seen = (beat.heartbeat_ms, now);
            }
            if now.duration_since(seen.1) <= LIVE {
                others.push(beat);
            }
        }
        let limit = share_limit(self.held.len(), &others);
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beat(held: usize, hungry: bool) -> Beat {
        Beat {
            state: "running".into(),
            heartbeat_ms: 0,
            hosts_held: held,
            hungry,
        }
    }

    #[test]
    fn a_worker_holding_every_host_keeps_to_half_when_another_is_hungry() {
        assert_eq!(share_limit(8, &[beat(0, true)]), Some(4));
        // Not hungry (it found free hosts at its last look): no limit.
        assert_eq!(share_limit(8, &[beat(0, false)]), None);
    }

    #[test]
    fn near_even_shares_ended_workers_and_a_lone_worker_set_no_limit() {
        // 5 and 4 of 9: even enough.
        assert_eq!(share_limit(5, &[beat(4, true)]), None);
        let mut ended = beat(0, true);
        ended.state = "finished".into();
        assert_eq!(share_limit(8, &[ended]), None);
        assert_eq!(share_limit(8, &[]), None);
    }

    #[test]
    fn three_workers_share_the_held_hosts() {
        // 12 + 6 + 0 = 18 over 3: 6 each; w1 gives back 6, w2 keeps its 6.
        assert_eq!(share_limit(12, &[beat(6, false), beat(0, true)]), Some(6));
        assert_eq!(share_limit(6, &[beat(12, false), beat(0, true)]), Some(6));
    }

    #[test]
    fn a_heartbeat_parses_with_the_fields_the_coordinator_writes() {
        let json = r#"{"state":"running","heartbeat_ms":17,"started_ms":1,"pages":3,
            "requests":4,"bytes":5,"hosts_held":2,"hungry":true,"out":"/x"}"#;
        let b: Beat = serde_json::from_str(json).unwrap();
        assert!(b.hungry && b.hosts_held == 2 && b.heartbeat_ms == 17);
    }
}
