//! What an operator sees and changes of the frontier while a crawl runs (the live console): an
//! overview of the hosts, the per-host delay, and releasing a job that the operator's rules
//! now exclude, without a request and so without a politeness delay.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use super::{politeness, Frontier, RobotsState};

/// Hosts at a glance.
#[derive(Debug, Clone, Default)]
pub struct HostOverview {
    /// Hosts ever queued.
    pub seen: u64,
    /// Hosts with a fetch running.
    pub active: u64,
    /// Hosts with URLs queued and no fetch running.
    pub waiting: u64,
    /// The hosts with the longest queues, longest first.
    pub busiest: Vec<BusyHost>,
}

/// One host with a long queue.
#[derive(Debug, Clone)]
pub struct BusyHost {
    /// Its name.
    pub name: String,
    /// URLs queued.
    pub queued: u64,
    /// Until its next request may start.
    pub next_in: Duration,
    /// A fetch is running.
    pub fetching: bool,
}

impl Frontier {
    /// The hosts at `now`, with the `top` longest queues (one pass over the hosts).
    pub fn host_overview(&self, now: Instant, top: usize) -> HostOverview {
        let mut overview = HostOverview {
            seen: self.hosts.len() as u64,
            ..Default::default()
        };
        let mut longest: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::with_capacity(top + 1);
        for (i, q) in self.hosts.iter().enumerate() {
            if q.in_flight {
                overview.active += 1;
            } else if q.queued > 0 {
                overview.waiting += 1;
            }
            if q.queued > 0 && top > 0 {
                longest.push(Reverse((q.queued, i)));
                if longest.len() > top {
                    longest.pop();
                }
            }
        }
        let mut busiest: Vec<(u64, usize)> = longest.into_iter().map(|Reverse(x)| x).collect();
        busiest.sort_unstable_by(|a, b| b.cmp(a));
        overview.busiest = busiest
            .into_iter()
            .map(|(queued, i)| {
                let q = &self.hosts[i];
                BusyHost {
                    name: q.name.clone(),
                    queued,
                    next_in: q.next_allowed.saturating_duration_since(now),
                    fetching: q.in_flight,
                }
            })
            .collect();
        overview
    }

    /// The configured per-host delay.
    pub fn delay(&self) -> Duration {
        self.config.delay
    }

    /// Sets the per-host delay: every host's delay becomes it, raised by the Crawl-delay of
    /// its robots.txt as before (up to the ceiling). Waits already begun are kept.
    pub fn set_delay(&mut self, delay: Duration) {
        self.config.delay = delay;
        let max = self.config.max_delay;
        for q in &mut self.hosts {
            let crawl_delay = q
                .robots
                .values()
                .filter_map(|state| match state {
                    RobotsState::Known(rules) | RobotsState::Refreshing(rules) => {
                        rules.crawl_delay()
                    }
                    _ => None,
                })
                .reduce(f32::max);
            q.delay = politeness::host_delay(delay, crawl_delay, max);
        }
    }

    /// Ends the job of `host` without a request (its URL is excluded now): the URL is done,
    /// and the host may run again at once.
    pub fn release(&mut self, host: &str, now: Instant) {
        self.end_job(host, now, super::outcomes::Ended::NoRequest);
    }
}
