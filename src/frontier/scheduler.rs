//! Which host runs next: hosts waiting for their politeness clock (a min-heap by next-allowed
//! time) and hosts ready now: served round-robin, reshuffled every `SHUFFLE_EVERY` picks so no
//! host or group of hosts dominates; or, ranked (`--order backlinks`), highest priority first
//! with the priority each host had when it became ready. Hosts are ids; whether a host has work
//! and what its priority is are the frontier's business.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

/// Ready hosts are reshuffled after this many picks.
const SHUFFLE_EVERY: u32 = 64;

/// Ready hosts by priority (highest first), then by when they became ready.
type RankedReady = BinaryHeap<(u64, Reverse<u64>, u32)>;

/// The ready and waiting hosts.
#[derive(Debug)]
pub struct Scheduler {
    ready: VecDeque<u32>,
    /// Used instead of `ready` when ranked.
    ranked: Option<RankedReady>,
    /// Promotions so far (ties in `ranked` go to the earliest).
    promotions: u64,
    waiting: BinaryHeap<Reverse<(Instant, u32)>>,
    picks_since_shuffle: u32,
    rng: fastrand::Rng,
}

impl Scheduler {
    /// No hosts; shuffles with `rng`.
    pub fn new(rng: fastrand::Rng) -> Self {
        Scheduler {
            ready: VecDeque::new(),
            ranked: None,
            promotions: 0,
            waiting: BinaryHeap::new(),
            picks_since_shuffle: 0,
            rng,
        }
    }

    /// Serves ready hosts by the priority [`Scheduler::promote`] is given, highest first.
    pub fn ranked(mut self) -> Self {
        self.ranked = Some(BinaryHeap::new());
        self
    }

    /// Host `id` may run from `at`.
    pub fn wait_until(&mut self, id: u32, at: Instant) {
        self.waiting.push(Reverse((at, id)));
    }

    /// Moves the hosts whose time has come to the ready list; when ranked, each with the
    /// priority `priority` gives it now.
    pub fn promote(&mut self, now: Instant, priority: impl Fn(u32) -> u64) {
        let mut promoted = false;
        while let Some(Reverse((at, _))) = self.waiting.peek() {
            if *at > now {
                break;
            }
            let Reverse((_, id)) = self.waiting.pop().expect("peeked");
            match &mut self.ranked {
                Some(ranked) => {
                    self.promotions += 1;
                    ranked.push((priority(id), Reverse(self.promotions), id));
                }
                None => self.ready.push_back(id),
            }
            promoted = true;
        }
        if promoted && self.picks_since_shuffle >= SHUFFLE_EVERY {
            self.picks_since_shuffle = 0;
            let slice = self.ready.make_contiguous();
            self.rng.shuffle(slice);
        }
    }

    /// The next ready host.
    pub fn pop_ready(&mut self) -> Option<u32> {
        if let Some(ranked) = &mut self.ranked {
            return ranked.pop().map(|(_, _, id)| id);
        }
        let id = self.ready.pop_front()?;
        self.picks_since_shuffle += 1;
        Some(id)
    }

    /// When the earliest waiting host may run.
    pub fn next_wake(&self) -> Option<Instant> {
        self.waiting.peek().map(|Reverse((at, _))| *at)
    }

    /// Seeds the shuffle (tests).
    #[cfg(test)]
    pub fn set_rng(&mut self, rng: fastrand::Rng) {
        self.rng = rng;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn hosts_wait_for_their_time_then_run_in_order() {
        let mut s = Scheduler::new(fastrand::Rng::with_seed(1));
        let t = Instant::now();
        s.wait_until(2, t + Duration::from_millis(10));
        s.wait_until(1, t);
        s.promote(t, |_| 0);
        assert_eq!(s.pop_ready(), Some(1));
        assert_eq!(s.pop_ready(), None);
        assert_eq!(s.next_wake(), Some(t + Duration::from_millis(10)));
        s.promote(t + Duration::from_millis(10), |_| 0);
        assert_eq!(s.pop_ready(), Some(2));
        assert_eq!(s.next_wake(), None);
    }

    #[test]
    fn ranked_hosts_run_highest_priority_first_then_oldest() {
        let mut s = Scheduler::new(fastrand::Rng::with_seed(1)).ranked();
        let t = Instant::now();
        for id in 0..4 {
            s.wait_until(id, t);
        }
        let priority = |id: u32| [5, 9, 5, 0][id as usize];
        s.promote(t, priority);
        let order: Vec<u32> = std::iter::from_fn(|| s.pop_ready()).collect();
        assert_eq!(order, vec![1, 0, 2, 3]);
    }
}
