//! Redis calls the crawl loop does not wait for: each batch (discovered URLs, refills, the
//! change list) runs as a task, and a later step takes its result once it has finished. The
//! loop waits for each call it makes itself, and on a loaded machine a wait costs a turn of
//! the async runtime's queue behind the fetches under way (10-40 ms measured with 256), not
//! the round trip; while it waits, no fetch starts.

use tokio::task::JoinHandle;

/// The result of the task in `slot` if it has finished (with `wait`, once it has), emptying
/// the slot; `None` while it runs, when there is none, or when it ended without a result (a
/// panic, or the runtime shutting down: logged, naming `what`).
pub(super) async fn take_finished<T>(
    slot: &mut Option<JoinHandle<T>>,
    wait: bool,
    what: &str,
) -> Option<T> {
    match slot {
        Some(task) if wait || task.is_finished() => {}
        _ => return None,
    }
    match slot.take()?.await {
        Ok(result) => Some(result),
        Err(e) => {
            tracing::error!("{what}: {e}");
            None
        }
    }
}
