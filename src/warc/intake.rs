//! How the writer thread waits for its next batch, and takes the ones queued behind it.
//!
//! Parked on the channel, the writer is woken by every batch: under load that is a futex wake
//! by the sending thread, a futex wait and a context switch per page, for a write of a few
//! microseconds (on a crawl of small pages, ~2.4 such futex calls per request; measured in
//! docs/PERFORMANCE.md). So when the queue runs dry while many fetches are running, the writer
//! first lingers up to [`LINGER`], during which senders queue without waking anyone, and parks
//! only if nothing came in.
//!
//! The linger is long enough for a few tens of KiB to gather: the kernel spends about half as
//! much per byte on one 64 KiB write into the page cache as on several 14 KiB ones (most
//! likely larger folios), and a writer that wakes a few hundred times a second most likely
//! takes a core from the workers less often (docs/PERFORMANCE.md). It ends early once
//! [`Producers::enough`] batches are queued: the sender that brings the queue there wakes the
//! writer, so no more than about a quarter of the running fetches ever wait on a linger.
//!
//! With few fetches running, a linger would only delay each of them: a job waits for its
//! batch to be written before the next request to its host, so one host with no delay would
//! lose the linger on every page. Below [`LINGER_FROM`] running fetches the writer parks at
//! once, as it always did.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::Duration;

use tokio::sync::mpsc::{self, error::TryRecvError};

/// How long the writer waits for more batches when its queue runs dry (cut short by a sender
/// once [`Producers::enough`] batches are queued).
pub const LINGER: Duration = Duration::from_millis(3);

/// Running fetches from which the writer lingers.
pub const LINGER_FROM: usize = 16;

/// The share of the running fetches whose batches end a linger: one in this many.
const WAITING_SHARE: usize = 4;

/// Queued batches that end a linger whatever the number of running fetches: ~150 KiB of small
/// pages' records, past the ~64 KiB from which a larger write costs the kernel no less per byte.
const ENOUGH_MAX: usize = 32;

/// The fetches running that may hand the writer a batch, counted by the crawl, and how a
/// lingering writer is woken.
#[derive(Debug, Clone, Default)]
pub struct Producers(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    running: AtomicUsize,
    /// Set by the writer while it lingers; the sender that wakes it clears it.
    lingering: AtomicBool,
    /// The writer's thread, to wake it.
    writer: OnceLock<Thread>,
}

impl Producers {
    /// Counts one fetch for as long as the returned guard lives.
    pub fn enter(&self) -> Producing<'_> {
        self.0.running.fetch_add(1, Ordering::Relaxed);
        Producing(self)
    }

    fn running(&self) -> usize {
        self.0.running.load(Ordering::Relaxed)
    }

    /// Whether a writer whose queue ran dry should wait for more before parking.
    fn linger(&self) -> bool {
        self.running() >= LINGER_FROM
    }

    /// Queued batches that end a linger: one running fetch in [`WAITING_SHARE`], at most
    /// [`ENOUGH_MAX`].
    pub fn enough(&self) -> usize {
        (self.running() / WAITING_SHARE).clamp(1, ENOUGH_MAX)
    }

    /// Told by a sender after its batch went into `queue`: wakes a lingering writer once
    /// [`Producers::enough`] batches wait.
    pub fn sent<T>(&self, queue: &mpsc::Sender<T>) {
        if !self.0.lingering.load(Ordering::Relaxed) {
            return;
        }
        let queued = queue.max_capacity() - queue.capacity();
        if queued >= self.enough() && self.0.lingering.swap(false, Ordering::AcqRel) {
            if let Some(writer) = self.0.writer.get() {
                writer.unpark();
            }
        }
    }

    /// Lingers on the calling thread (the writer's) for up to `time`, or until a sender wakes
    /// it.
    fn linger_for(&self, time: Duration) {
        let _ = self.0.writer.set(std::thread::current());
        self.0.lingering.store(true, Ordering::Release);
        std::thread::park_timeout(time);
        self.0.lingering.store(false, Ordering::Release);
    }
}

/// One running fetch (see [`Producers::enter`]).
#[derive(Debug)]
pub struct Producing<'a>(&'a Producers);

impl Drop for Producing<'_> {
    fn drop(&mut self) {
        self.0 .0.running.fetch_sub(1, Ordering::Relaxed);
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
        producers.linger_for(LINGER);
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
    fn a_sender_wakes_a_lingering_writer_once_enough_batches_wait() {
        let producers = Producers::default();
        let running: Vec<_> = (0..64).map(|_| producers.enter()).collect();
        assert_eq!(producers.enough(), 64 / WAITING_SHARE);
        // This thread plays the writer: it lingers, as `linger_for` marks it.
        producers.0.writer.set(std::thread::current()).unwrap();
        producers.0.lingering.store(true, Ordering::Release);
        let (tx, _rx) = mpsc::channel(64);
        for i in 1..producers.enough() {
            tx.try_send(i).unwrap();
            producers.sent(&tx);
            assert!(
                producers.0.lingering.load(Ordering::Acquire),
                "{i} batches do not end the linger"
            );
        }
        tx.try_send(0).unwrap();
        producers.sent(&tx);
        assert!(!producers.0.lingering.load(Ordering::Acquire));
        // The wake is the thread's park token: a park returns at once instead of in a minute.
        let parked = std::time::Instant::now();
        std::thread::park_timeout(Duration::from_secs(60));
        assert!(parked.elapsed() < Duration::from_secs(30));
        // Once woken, the writer is not lingering: later batches leave the flag down and make no
        // further wake (no futex call per page).
        tx.try_send(0).unwrap();
        producers.sent(&tx);
        assert!(!producers.0.lingering.load(Ordering::Acquire));
        drop(running);
    }

    #[test]
    fn enough_is_a_share_of_the_running_fetches_within_bounds() {
        let producers = Producers::default();
        assert_eq!(producers.enough(), 1);
        let few: Vec<_> = (0..LINGER_FROM).map(|_| producers.enter()).collect();
        assert_eq!(producers.enough(), LINGER_FROM / WAITING_SHARE);
        let many: Vec<_> = (0..1000).map(|_| producers.enter()).collect();
        assert_eq!(producers.enough(), ENOUGH_MAX);
        drop((few, many));
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
