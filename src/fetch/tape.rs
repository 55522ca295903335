//! The tape: the bytes one exchange sent and received, as the recorder (`recorder.rs`) copies
//! them, and the room they take.
//!
//! Received bytes are held in one buffer whose room grows in few steps: doubling while a small
//! body shows nothing of its length, then at once to the body's plan ([`SharedTape::reserve_body`]).
//! Past [`SPOOL_AT`] of a body, the bytes already handed to hyper move to an unnamed spool file
//! (`spool.rs`) and the buffer's room is used again, so a long body is not held in memory; a
//! body no spool file can take is cut at [`MAX_HELD`]. While hyper reads a head, the tape also
//! says what of it hyper may be handed yet (`Tape::handable`).

use std::sync::{Arc, Mutex, MutexGuard};

use crate::spool::{Spool, SpoolDir, Spooled, SPOOL_AT};

/// The most room [`SharedTape::reserve_body`] makes for a body before any of it arrived.
pub const MAX_BODY_RESERVE: usize = 1 << 20;
/// Room past the body cap (or the declared length) for what the last read brings in beyond it
/// (hyper reads ahead up to its buffer, ~400 KiB).
pub(super) const READ_AHEAD: usize = 512 << 10;
/// The most bytes a body of at most `max_body` bytes may take on the wire: its framing
/// (chunk-size lines) may add an eighth. A normal chunked body adds well under 1%; one of
/// 1-byte chunks adds five times its size, and was recorded until its decoded bytes reached
/// the cap (120 MB on the tape for a 20 MiB cap).
pub fn wire_cap(max_body: u64) -> u64 {
    max_body.saturating_add(max_body / 8)
}
/// The room a read from the socket has when the tape is full and small: a response head and a
/// small page arrive in one read.
const FIRST_READ: usize = 16 << 10;
/// The most received bytes held in memory for a long body whose spool file could not be made
/// or written (a full disk, a filesystem without unnamed files): the fetch cuts the body there
/// ([`SharedTape::held_too_long`]), so that a crawl with a raised `--max-body-size` does not
/// trade a full disk for exhausted memory. The default body cap.
pub const MAX_HELD: usize = 20 << 20;

/// Bytes of one exchange in each direction.
#[derive(Debug, Default)]
pub struct Tape {
    /// Bytes written to the peer.
    pub sent: Vec<u8>,
    /// Bytes read from the peer, after those moved to `spool`.
    pub(super) received: Vec<u8>,
    /// The first of the received bytes, once a long body made them too many to hold
    /// (`spool.rs`); the reader has been handed all of them.
    spool: Option<Spool>,
    /// Where a long body's bytes go; set for the body of each response.
    spool_dir: Option<SpoolDir>,
    /// A spool file was wanted and could not be made or written: the body is held in memory,
    /// up to [`MAX_HELD`].
    unspooled: bool,
    /// While set, reading fails once more than this many bytes were received: the response
    /// head (with any 1xx interim responses before it) must arrive within it. hyper skips
    /// interim responses without a limit of its own, so an endless stream of them would
    /// otherwise grow the tape until the fetch times out.
    pub head_limit: Option<usize>,
    /// The most the tape can come to for this response (its head, the body up to its declared
    /// length or cap, and a last read past it): when the received bytes outgrow their room,
    /// the room grows to this at once, not by doubling (see [`SharedTape::reserve_body`]).
    pub planned: usize,
    /// How many of the received bytes the reader (hyper) has been handed; the rest were read
    /// from the socket ahead of it.
    pub served: usize,
}

impl Tape {
    /// True while hyper reads a response head from bytes all in memory.
    fn reads_head(&self) -> bool {
        self.head_limit.is_some() && self.spool.is_none()
    }

    /// Bytes received that hyper may be handed now: all but those held back while it reads a
    /// head, which are a status line that has not ended (its rewrite, `status_line::lenient`,
    /// needs the whole line; bytes that cannot become one are not held) and a CR that ends
    /// what arrived (whether it ends a line or is a
    /// space to hyper, `bare_cr`, only the byte after it says). Handed as they came, such bytes
    /// made the page's fate hang on where the server's writes split: `http/1.1 200 OK` or
    /// `X-A: a<CR>b` sent a byte at a time was refused.
    pub(super) fn handable(&self) -> usize {
        let unserved = self.received_len() - self.served;
        if unserved == 0 || !self.reads_head() {
            return unserved;
        }
        if self.served == 0
            && memchr::memchr(b'\n', &self.received).is_none()
            && could_be_status_line(&self.received)
        {
            return 0;
        }
        unserved - usize::from(self.received.last() == Some(&b'\r'))
    }

    /// Bytes received, spooled ones included.
    pub(super) fn received_len(&self) -> usize {
        self.spooled() + self.received.len()
    }

    /// Bytes received and moved to the spool file.
    pub(super) fn spooled(&self) -> usize {
        self.spool.as_ref().map_or(0, Spool::len)
    }

    /// Makes room on a full tape for the next read from the socket: below
    /// [`MAX_BODY_RESERVE`] it doubles (from [`FIRST_READ`]), as a small body or a server
    /// that has not yet shown a body worth the room needs; past it, the bytes go to a spool
    /// file when the body has a spool directory ([`SPOOL_AT`]), or else the room grows in one
    /// step to the plan. Called only when the reader has been handed every byte.
    pub(super) fn make_room(&mut self) {
        let len = self.received.len();
        if self.received.capacity() > len {
            return;
        }
        let total = self.received_len();
        // Only bytes hyper was handed move (not those held back, see `handable`).
        if len >= SPOOL_AT && self.planned > total && self.served == total && self.spill() {
            return;
        }
        if self.unspooled && self.spool.is_some() {
            // Its spool file took the first bytes and no more (a full disk): the fetch cuts the
            // body at the next bytes hyper hands it, so one small read is all the room it needs.
            // With the body's whole plan as room, a fast peer filled it (the socket's buffer,
            // megabytes) before the fetch looked, and the cut fell wherever the timing put it.
            self.received.reserve_exact(FIRST_READ);
            return;
        }
        // A body held in memory for want of a spool file gets no more room than its cut.
        let planned = match self.unspooled {
            true => self
                .planned
                .min(total.saturating_add(MAX_HELD + READ_AHEAD)),
            false => self.planned,
        };
        let more = match len >= MAX_BODY_RESERVE && planned > total {
            true => planned - total,
            false => len.max(FIRST_READ),
        };
        self.received.reserve_exact(more);
    }

    /// Moves the received bytes to the spool file, keeping their room for the next ones; false
    /// when there is no spool directory, or no file could be made or written (a full disk):
    /// the bytes then stay in memory.
    fn spill(&mut self) -> bool {
        if self.spool.is_none() {
            let Some(dir) = &self.spool_dir else {
                return false;
            };
            match dir.create() {
                Ok(spool) => self.spool = Some(spool),
                Err(_) => {
                    self.spool_dir = None;
                    self.unspooled = true;
                    return false;
                }
            }
        }
        let spool = self.spool.as_mut().expect("made above");
        if spool.append(&self.received).is_err() {
            self.spool_dir = None;
            self.unspooled = true;
            return false;
        }
        self.received.clear();
        true
    }

    /// The bytes received, as one piece: from memory, or with those spooled mapped from their
    /// file (the rest appended to it first).
    pub fn into_received(self) -> std::io::Result<Spooled> {
        let Some(mut spool) = self.spool else {
            return Ok(Spooled::Memory(self.received));
        };
        if let Err(e) = spool.append(&self.received) {
            // A full disk: the whole response in memory, as without a spool, when it is short
            // enough to hold; else the fetch fails (and is tried again later).
            if spool.len() > MAX_HELD {
                return Err(e);
            }
            let mut bytes = spool.read_back()?;
            bytes.extend_from_slice(&self.received);
            return Ok(Spooled::Memory(bytes));
        }
        spool.finish()
    }
}

/// True when `start`, the first bytes of a response with no line end yet, may still become a
/// status line (`HTTP/`, in any case): anything else is handed to hyper at once, to refuse.
fn could_be_status_line(start: &[u8]) -> bool {
    let n = start.len().min(5);
    start[..n].eq_ignore_ascii_case(&b"HTTP/"[..n])
}

/// A tape shared between the recorder (inside hyper's connection task) and the fetcher.
/// A plain mutex: it is never held across an await, and only these two ever touch it.
#[derive(Debug, Clone, Default)]
pub struct SharedTape(Arc<Mutex<Tape>>);

impl SharedTape {
    pub(super) fn lock(&self) -> MutexGuard<'_, Tape> {
        // A panic while holding the lock cannot leave the byte vectors inconsistent.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Empties the tape before a new request.
    pub fn clear(&self) {
        let mut t = self.lock();
        t.sent.clear();
        t.received.clear();
        t.spool = None;
        t.spool_dir = None;
        t.unspooled = false;
        t.planned = 0;
        t.served = 0;
    }

    /// Takes the recorded bytes, leaving the tape empty.
    pub fn take(&self) -> Tape {
        std::mem::take(&mut *self.lock())
    }

    /// Sets or lifts the limit on bytes received before the response head is complete.
    pub fn set_head_limit(&self, limit: Option<usize>) {
        self.lock().head_limit = limit;
    }

    /// Makes room for a body of `declared` bytes (at most `max_body`) after the first
    /// `head_end` received bytes, so a body of known length does not grow the tape, copying
    /// it, as it arrives. A declared length is only the server's word: past
    /// [`MAX_BODY_RESERVE`] nothing is reserved until that much has arrived. From then on,
    /// the room grows in one step to the most the response can come to (the declared length,
    /// or the body cap when none is declared), instead of doubling: each doubling copies the
    /// body so far into a new buffer, so a body at a 20 MiB cap would otherwise pass through
    /// 1, 2, 4, 8, 16 and 32 MiB buffers (11-12 MB more peak RSS on one such page,
    /// docs/PERFORMANCE.md).
    ///
    /// A body that outgrows [`SPOOL_AT`] goes on in a spool file in `spool` when given.
    pub fn reserve_body(
        &self,
        head_end: usize,
        declared: Option<usize>,
        max_body: u64,
        spool: Option<&SpoolDir>,
    ) {
        let cap = usize::try_from(max_body).unwrap_or(usize::MAX);
        let framed = usize::try_from(wire_cap(max_body)).unwrap_or(usize::MAX);
        let most = declared.map_or(framed, |d| d.min(cap));
        let mut t = self.lock();
        // A last read can go past the declared length too (a body longer than it).
        t.planned = head_end.saturating_add(most).saturating_add(READ_AHEAD);
        // Only a body that may outgrow SPOOL_AT needs the directory (`make_room`).
        t.spool_dir = spool.filter(|_| t.planned > SPOOL_AT).cloned();
        if declared.is_none() {
            return;
        }
        let body = most.min(MAX_BODY_RESERVE);
        let more = (head_end + body).saturating_sub(t.received.len());
        t.received.reserve_exact(more);
    }

    /// Lets go of the room an empty tape holds (a read that found nothing may have made it):
    /// a parked connection keeps no buffer.
    pub fn release_room(&self) {
        let mut t = self.lock();
        if t.received.is_empty() {
            t.received = Vec::new();
        }
    }

    /// The room the tape holds for received bytes.
    #[cfg(test)]
    pub fn received_capacity(&self) -> usize {
        self.lock().received.capacity()
    }

    /// True when a long body whose spool file could not be made or written holds more than
    /// [`MAX_HELD`] in memory, or its spool file, which holds its first bytes, could take no
    /// more: the fetch cuts it there.
    pub fn held_too_long(&self) -> bool {
        let t = self.lock();
        t.unspooled && (t.received.len() > MAX_HELD || t.spool.is_some())
    }

    /// Bytes received so far.
    pub fn received_len(&self) -> usize {
        self.lock().received_len()
    }

    /// Bytes read from the socket that the reader has not been handed (bytes past the end of
    /// a response the reader has finished).
    pub fn read_ahead(&self) -> usize {
        let t = self.lock();
        t.received_len() - t.served
    }

    /// Runs `f` on the bytes received so far; on none once a long body went to its spool
    /// file, which it does only after more than [`SPOOL_AT`] of it (the head and the first
    /// bytes of a body are all that is asked for).
    pub fn with_received<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let t = self.lock();
        match t.spool {
            None => f(&t.received),
            Some(_) => f(&[]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_for_a_declared_body_within_the_caps() {
        let tape = SharedTape::default();
        tape.lock().received.extend_from_slice(&[b'h'; 100]);
        tape.reserve_body(100, Some(5000), 1 << 30, None);
        assert!(tape.lock().received.capacity() >= 5100);
        // The body cap bounds it, and so does the reserve cap, whatever the header says.
        let capped = SharedTape::default();
        capped.reserve_body(0, Some(5000), 64, None);
        assert!(capped.lock().received.capacity() < 5000);
        let lying = SharedTape::default();
        lying.reserve_body(0, Some(usize::MAX), u64::MAX, None);
        assert!(lying.lock().received.capacity() <= MAX_BODY_RESERVE);
        let unknown = SharedTape::default();
        unknown.reserve_body(0, None, u64::MAX, None);
        assert_eq!(unknown.lock().received.capacity(), 0);
    }
}
