//! Redis calls the crawl loop does not wait for: each batch (discovered URLs, refills, the
//! change list) runs as a task, and a later step takes its result once it has finished. The
//! loop waits for each call it makes itself, and on a loaded machine a wait costs a turn of
//! the async runtime's queue behind the fetches under way (6-40 ms measured with 256), not
//! the round trip; while it waits, no fetch starts. A finished send or refill wakes the loop
//! ([`Coordinator::background_finished`]), which takes its result at once
//! ([`Coordinator::advance`]), so that a host whose new URLs were just admitted is refilled
//! without waiting for the next step.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::oneshot::{self, error::TryRecvError};
use tokio::sync::Notify;

use super::{Coordinator, SyncReport, WorkerStats};
use crate::frontier::Frontier;

/// A background call's result, once there is one.
pub(super) type Pending<T> = oneshot::Receiver<T>;

/// Runs `call` as a task; its result comes through the returned receiver, and then `finished`
/// (if given) is notified.
pub(super) fn spawn<T: Send + 'static>(
    finished: Option<Arc<Notify>>,
    call: impl Future<Output = T> + Send + 'static,
) -> Pending<T> {
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let _ = tx.send(call.await);
        if let Some(finished) = finished {
            finished.notify_one();
        }
    });
    rx
}

/// The result in `slot` if its call has finished (with `wait`, once it has), emptying the
/// slot; `None` while it runs, when there is none, or when the task ended without a result (a
/// panic, or the runtime shutting down: logged, naming `what`).
pub(super) async fn take_finished<T>(
    slot: &mut Option<Pending<T>>,
    wait: bool,
    what: &str,
) -> Option<T> {
    let pending = slot.as_mut()?;
    let got = if wait {
        pending.await.ok()
    } else {
        match pending.try_recv() {
            Err(TryRecvError::Empty) => return None,
            got => got.ok(),
        }
    };
    *slot = None;
    if got.is_none() {
        tracing::error!("{what}: the task ended without a result");
    }
    got
}

impl Coordinator {
    /// Notified when a background send or refill has finished: then call [`Coordinator::advance`].
    pub fn background_finished(&self) -> Arc<Notify> {
        self.finished.clone()
    }

    /// Takes the results of the background calls that have finished and starts the refills
    /// they call for (no waiting: what is still running is left to run). A failure counts as
    /// Redis being unreachable, as in a step.
    pub async fn advance(
        &mut self,
        frontier: &mut Frontier,
        stats: &WorkerStats<'_>,
    ) -> SyncReport {
        let mut report = SyncReport::default();
        if self.outage.is_some() || self.state_lost() {
            report.state_lost = self.state_lost();
            return report;
        }
        let result = async {
            self.collect_sent(&mut report, false).await?;
            self.collect_refills(frontier, &mut report, false).await
        }
        .await;
        match result {
            Ok(()) => self.start_refill(frontier, stats),
            Err(e) => self.unreachable(e, frontier),
        }
        report
    }
}
