//! The crawl loop's side of a shared crawl (`--redis`): its sync step at each tick, the
//! results of background Redis calls taken as they finish, and what they found added to the
//! tally. Nothing here runs without `--redis`.

use super::{worker_stats, Dispatcher};
use crate::crawl::job::Budget;
use crate::redis_crawl::SyncReport;
use crate::report::StopReason;

impl Dispatcher {
    /// A shared crawl's sync step (nothing without `--redis`). Returns why the worker must
    /// stop: `trawl stop` was run for the crawl, or its state in Redis is lost.
    pub(super) async fn sync_shared(&mut self, idle: bool) -> Option<StopReason> {
        let shared = self.shared.as_mut()?;
        shared
            .coordinator
            .share_scope(self.ledger.take_scope_added());
        let tally = &self.ledger.tally;
        let stats = worker_stats(tally);
        let report = shared
            .coordinator
            .sync(&mut self.ledger.frontier, &stats, idle)
            .await;
        self.ledger.widen_scope(&report.scope);
        for json in &report.changes {
            self.apply_shared_change(json);
        }
        if let (Some(n), Budget::Shared(budget)) = (report.committed, &self.jobs.budget) {
            budget.learn_committed(n);
        }
        let stop = if report.state_lost {
            Some(StopReason::SharedStateLost)
        } else {
            report.stop_requested.then_some(StopReason::Stopped)
        };
        self.count_shared(report);
        stop
    }

    /// Takes the results of a shared crawl's background Redis calls that have finished.
    /// Returns true when the worker holds no host after them.
    pub(super) async fn advance_shared(&mut self) -> bool {
        let Some(shared) = &mut self.shared else {
            return false;
        };
        let stats = worker_stats(&self.ledger.tally);
        let report = shared
            .coordinator
            .advance(&mut self.ledger.frontier, &stats)
            .await;
        let none_held = shared.coordinator.held() == 0;
        self.count_shared(report);
        none_held
    }

    /// Refills from Redis, at once, the hosts of a shared crawl that ran dry here.
    pub(super) fn refill_shared(&mut self) {
        if let Some(shared) = &mut self.shared {
            let stats = worker_stats(&self.ledger.tally);
            shared.coordinator.refill_dry(&self.ledger.frontier, &stats);
        }
    }

    /// Adds what a shared crawl's step found to the tally.
    fn count_shared(&mut self, report: SyncReport) {
        let tally = &mut self.ledger.tally;
        tally.filtered.duplicate += report.duplicates;
        tally.filtered.host_quota += report.host_quota;
        for (host, pages) in report.host_pages {
            let known = tally.pages_per_host.entry(host).or_default();
            *known = (*known).max(pages);
        }
    }
}
