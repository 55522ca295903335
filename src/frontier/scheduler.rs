//! Which host runs next: hosts waiting for their politeness clock (a min-heap by next-allowed
//! time) and hosts ready now, in three lanes. Hosts under way (their robots.txt known) are
//! served first; a host whose first request is still to come (its robots.txt) only when no
//! host under way is ready, so a crawl goes on with the hosts it has opened rather than
//! fetching every host's robots.txt before their pages, yet opens a new host whenever a fetch
//! slot would otherwise stay idle (as Heritrix activates a queue when too few are ready). A
//! host that has had its turn while new hosts wait steps aside behind them, and rejoins the
//! hosts under way once no new host waits. Within a lane hosts are served round-robin,
//! reshuffled every `SHUFFLE_EVERY` picks so no host or group of hosts dominates; or, ranked
//! (`--order backlinks`), highest priority first with the priority each host had when it
//! became ready. Hosts are ids; whether a host has work, is under way or has had its turn are
//! the frontier's business.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

/// Ready hosts are reshuffled after this many picks.
const SHUFFLE_EVERY: u32 = 64;

/// Jobs a host runs in one turn while hosts not yet opened wait: a host's robots.txt is paid
/// back by up to this many pages before the crawl opens others, and a crawl with a page
/// budget reaches at least one host per this many requests.
pub const TURN: u32 = 20;

/// Where a host that became ready goes, as the frontier sees it then.
#[derive(Debug, Clone, Copy, Default)]
pub struct Placement {
    /// Its rank when ranked (`--order backlinks`).
    pub priority: u64,
    /// Its first request (its robots.txt) is still to come.
    pub unopened: bool,
    /// It has had its turn: it yields to hosts not opened yet, while any wait.
    pub turn_over: bool,
}

/// The hosts of one lane that are ready now.
#[derive(Debug)]
enum Lane {
    /// Served in turn.
    Fifo(VecDeque<u32>),
    /// By priority (highest first), then by when they became ready.
    Ranked(BinaryHeap<(u64, Reverse<u64>, u32)>),
}

impl Lane {
    fn push(&mut self, id: u32, priority: u64, seq: u64) {
        match self {
            Lane::Fifo(q) => q.push_back(id),
            Lane::Ranked(h) => h.push((priority, Reverse(seq), id)),
        }
    }

    fn pop(&mut self) -> Option<u32> {
        self.pop_entry().map(|(id, _, _)| id)
    }

    /// The next host with the priority and arrival it was pushed with (0 in a FIFO lane).
    fn pop_entry(&mut self) -> Option<(u32, u64, u64)> {
        match self {
            Lane::Fifo(q) => q.pop_front().map(|id| (id, 0, 0)),
            Lane::Ranked(h) => h
                .pop()
                .map(|(priority, Reverse(seq), id)| (id, priority, seq)),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Lane::Fifo(q) => q.is_empty(),
            Lane::Ranked(h) => h.is_empty(),
        }
    }

    fn shuffle(&mut self, rng: &mut fastrand::Rng) {
        if let Lane::Fifo(q) = self {
            rng.shuffle(q.make_contiguous());
        }
    }
}

/// The ready and waiting hosts.
#[derive(Debug)]
pub struct Scheduler {
    /// Ready hosts under way.
    open: Lane,
    /// Ready hosts not opened yet.
    unopened: Lane,
    /// Ready hosts whose turn is over, while hosts not opened yet wait.
    spent: Lane,
    /// Promotions so far (ties in a ranked lane go to the earliest).
    promotions: u64,
    waiting: BinaryHeap<Reverse<(Instant, u32)>>,
    picks_since_shuffle: u32,
    rng: fastrand::Rng,
}

/// A host handed out by [`Scheduler::pop_ready`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    /// The host.
    pub id: u32,
    /// It came from the unopened lane: its turn starts now.
    pub opens: bool,
}

impl Scheduler {
    /// No hosts; shuffles with `rng`.
    pub fn new(rng: fastrand::Rng) -> Self {
        Scheduler {
            open: Lane::Fifo(VecDeque::new()),
            unopened: Lane::Fifo(VecDeque::new()),
            spent: Lane::Fifo(VecDeque::new()),
            promotions: 0,
            waiting: BinaryHeap::new(),
            picks_since_shuffle: 0,
            rng,
        }
    }

    /// Serves ready hosts by the priority [`Scheduler::promote`] is given, highest first.
    pub fn ranked(mut self) -> Self {
        self.open = Lane::Ranked(BinaryHeap::new());
        self.unopened = Lane::Ranked(BinaryHeap::new());
        self.spent = Lane::Ranked(BinaryHeap::new());
        self
    }

    /// Host `id` may run from `at`.
    pub fn wait_until(&mut self, id: u32, at: Instant) {
        self.waiting.push(Reverse((at, id)));
    }

    /// Moves the hosts whose time has come to a ready lane, each where `place` puts it now.
    pub fn promote(&mut self, now: Instant, place: impl Fn(u32) -> Placement) {
        let mut promoted = false;
        while let Some(Reverse((at, _))) = self.waiting.peek() {
            if *at > now {
                break;
            }
            let Reverse((_, id)) = self.waiting.pop().expect("peeked");
            let p = place(id);
            self.promotions += 1;
            let lane = if p.unopened {
                &mut self.unopened
            } else if p.turn_over && !self.unopened.is_empty() {
                &mut self.spent
            } else {
                &mut self.open
            };
            lane.push(id, p.priority, self.promotions);
            promoted = true;
        }
        // No new host waits any more: the hosts that stepped aside are under way again.
        if self.unopened.is_empty() {
            while let Some((id, priority, seq)) = self.spent.pop_entry() {
                self.open.push(id, priority, seq);
            }
        }
        if promoted && self.picks_since_shuffle >= SHUFFLE_EVERY {
            self.picks_since_shuffle = 0;
            self.open.shuffle(&mut self.rng);
            self.unopened.shuffle(&mut self.rng);
            self.spent.shuffle(&mut self.rng);
        }
    }

    /// The next ready host: one under way if any is ready, else one to open, else one whose
    /// turn was over.
    pub fn pop_ready(&mut self) -> Option<Pick> {
        let pick = match self.open.pop() {
            Some(id) => Pick { id, opens: false },
            None => Pick {
                id: self.unopened.pop().or_else(|| self.spent.pop())?,
                opens: true,
            },
        };
        self.picks_since_shuffle += 1;
        Some(pick)
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

    fn open(priority: u64) -> Placement {
        Placement {
            priority,
            ..Placement::default()
        }
    }

    fn ids(s: &mut Scheduler) -> Vec<u32> {
        std::iter::from_fn(|| s.pop_ready().map(|p| p.id)).collect()
    }

    #[test]
    fn hosts_wait_for_their_time_then_run_in_order() {
        let mut s = Scheduler::new(fastrand::Rng::with_seed(1));
        let t = Instant::now();
        s.wait_until(2, t + Duration::from_millis(10));
        s.wait_until(1, t);
        s.promote(t, |_| open(0));
        assert_eq!(
            s.pop_ready(),
            Some(Pick {
                id: 1,
                opens: false
            })
        );
        assert_eq!(s.pop_ready(), None);
        assert_eq!(s.next_wake(), Some(t + Duration::from_millis(10)));
        s.promote(t + Duration::from_millis(10), |_| open(0));
        assert_eq!(
            s.pop_ready(),
            Some(Pick {
                id: 2,
                opens: false
            })
        );
        assert_eq!(s.next_wake(), None);
    }

    #[test]
    fn ranked_hosts_run_highest_priority_first_then_oldest() {
        let mut s = Scheduler::new(fastrand::Rng::with_seed(1)).ranked();
        let t = Instant::now();
        for id in 0..4 {
            s.wait_until(id, t);
        }
        s.promote(t, |id| open([5, 9, 5, 0][id as usize]));
        assert_eq!(ids(&mut s), vec![1, 0, 2, 3]);
    }

    #[test]
    fn hosts_under_way_run_before_hosts_to_open_and_a_spent_turn_yields_to_them() {
        let mut s = Scheduler::new(fastrand::Rng::with_seed(1));
        let t = Instant::now();
        // 0 and 1 are new, 2 is under way, 3 has had its turn.
        for id in 0..4 {
            s.wait_until(id, t);
        }
        let place = |id: u32| Placement {
            priority: 0,
            unopened: id < 2,
            turn_over: id == 3,
        };
        s.promote(t, place);
        let picks: Vec<Pick> = std::iter::from_fn(|| s.pop_ready()).collect();
        let opens: Vec<(u32, bool)> = picks.iter().map(|p| (p.id, p.opens)).collect();
        // 3 became ready after the new hosts: it waits behind them.
        assert_eq!(opens, vec![(2, false), (0, true), (1, true), (3, true)]);
        // With no new host waiting, a spent turn does not hold a host back.
        s.wait_until(3, t);
        s.wait_until(2, t);
        s.promote(t, place);
        assert_eq!(ids(&mut s), vec![2, 3]);
    }

    #[test]
    fn hosts_that_stepped_aside_rejoin_the_hosts_under_way_once_every_new_host_is_open() {
        let mut s = Scheduler::new(fastrand::Rng::with_seed(1));
        let t = Instant::now();
        // 0 is new, 1 has had its turn, 2 is under way.
        for id in 0..3 {
            s.wait_until(id, t);
        }
        s.promote(t, |id| Placement {
            priority: 0,
            unopened: id == 0,
            turn_over: id == 1,
        });
        assert_eq!(
            s.pop_ready(),
            Some(Pick {
                id: 2,
                opens: false
            })
        );
        assert_eq!(s.pop_ready(), Some(Pick { id: 0, opens: true }));
        // 2 is ready again: 1 goes with it, among the hosts under way, not after them.
        s.wait_until(2, t);
        s.promote(t, |_| open(0));
        assert_eq!(ids(&mut s), vec![2, 1]);
    }
}
