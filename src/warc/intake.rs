//! How the writer thread waits for its next batch, and takes the ones queued behind it.
//!
//! Parked on the channel, the writer is woken by every batch: under load that is a futex wake
//! by the sending thread, a futex wait and a context switch per page, for a write of a few
//! microseconds (on a crawl of small pages, ~2.4 such futex calls per request; measured in
//! docs/PERFORMANCE.md). So when the queue runs dry while many fetches are running, the writer
//! first sleeps [`LINGER`], during which senders queue without waking anyone, and parks only if
//! nothing came in.
//!
//! With few fetches running, a linger would only delay each of them: a job waits for its
//! batch to be written before the next request to its host, so one host with no delay would
//! lose up to a millisecond per page. Below [`LINGER_FROM`] running fetches the writer parks at
//! once, as it always did. From there on it cannot be what limits the crawl: that many fetches
//! each delayed by a millisecond still allow several times more pages per second than two cores
//! can tokenize and compress.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::{self, error::TryRecvError};

/// How long the writer waits for more batches when its queue runs dry.
pub const LINGER: Duration = Duration::from_millis(1);

/// Running fetches from which the writer lingers.
pub const LINGER_FROM: usize = 16;

/// The fetches running that may hand the writer a batch, counted by the crawl.
#[derive(Debug, Clone, Default)]
pub struct Producers(Arc<AtomicUsize>);

impl Producers {
    /// Counts one fetch for as long as the returned guard lives.
    pub fn enter(&self) -> Producing<'_> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Producing(self)
    }

    fn running(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Whether a writer whose queue ran dry should wait for more before parking.
    fn linger(&self) -> bool {
        self.running() >= LINGER_FROM
    }
}

/// One running fetch (see [`Producers::enter`]).
#[derive(Debug)]
pub struct Producing<'a>(&'a Producers);

impl Drop for Producing<'_> {
    fn drop(&mut self) {
        self.0 .0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The next item from `receiver`, or `None` once every sender is gone and the queue is empty.
pub fn next<T>(receiver: &mut mpsc::Receiver<T>, producers: &Producers) -> Option<T> {
    match receiver.try_recv() {
        Ok(item) => return Some(item),
        Err(TryRecvError::Disconnected) => return None,
        Err(TryRecvError::Empty) => {}
    }
    if producers.linger() {
        std::thread::sleep(LINGER);
        match receiver.try_recv() {
            Ok(item) => return Some(item),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {}
        }
    }
    receiver.blocking_recv()
}

/// Moves what is already queued in `receiver` into `group` without waiting, until `group`
/// holds `max` items or `keep_going` (told each item taken) says stop: the batches one wake
/// of the writer writes together.
pub fn more<T>(
    receiver: &mut mpsc::Receiver<T>,
    group: &mut Vec<T>,
    max: usize,
    mut keep_going: impl FnMut(&T) -> bool,
) {
    while group.len() < max {
        let Ok(item) = receiver.try_recv() else {
            return;
        };
        let go_on = keep_going(&item);
        group.push(item);
        if !go_on {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivers_everything_in_order_then_ends() {
        let producers = Producers::default();
        let guards: Vec<_> = (0..LINGER_FROM).map(|_| producers.enter()).collect();
        let (tx, mut rx) = mpsc::channel(16);
        let sender = std::thread::spawn(move || {
            for i in 0..40 {
                tx.blocking_send(i).unwrap();
                if i % 7 == 0 {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        });
        let got: Vec<i32> = std::iter::from_fn(|| next(&mut rx, &producers)).collect();
        sender.join().unwrap();
        assert_eq!(got, (0..40).collect::<Vec<_>>());
        drop(guards);
        assert_eq!(producers.running(), 0);
    }

    #[test]
    fn lingers_only_while_many_fetches_run() {
        let producers = Producers::default();
        let few: Vec<_> = (0..LINGER_FROM - 1).map(|_| producers.enter()).collect();
        assert!(
            !producers.linger(),
            "a lone host must not wait for a linger per page"
        );
        let last = producers.enter();
        assert!(producers.linger());
        drop(last);
        assert!(!producers.linger());
        drop(few);
        assert_eq!(producers.running(), 0);
    }

    #[test]
    fn more_takes_what_is_queued_up_to_a_count_or_a_weight() {
        let (tx, mut rx) = mpsc::channel(16);
        for i in 1..=10 {
            tx.try_send(i).unwrap();
        }
        let mut group = vec![0];
        more(&mut rx, &mut group, 4, |_| true);
        assert_eq!(group, [0, 1, 2, 3]);
        let mut sum = 0;
        more(&mut rx, &mut group, 100, |i| {
            sum += i;
            sum < 9
        });
        assert_eq!(
            group,
            [0, 1, 2, 3, 4, 5],
            "stops after the item that reached the weight"
        );
        more(&mut rx, &mut group, 100, |_| true);
        assert_eq!(group.len(), 11, "then takes what is left, without waiting");
    }
}
