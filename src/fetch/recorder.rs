//! Records the exact bytes a connection sends and receives.
//!
//! [`Recorder`] wraps the plaintext stream (inside TLS, so the tape holds HTTP, not ciphertext)
//! and is what hyper reads from and writes to. Everything hyper sends and everything it reads
//! from the socket lands on the shared [`Tape`], byte for byte, which is what the WARC records
//! are made of.
//!
//! Reads go from the socket straight onto the tape, as much as has arrived and the tape has
//! room for, and hyper is handed its share from there: hyper asks for 8 KiB at a time at first,
//! so a 13 KB page took two system calls, and the tape grew by copying once it learned the
//! body's length (docs/PERFORMANCE.md).
//!
//! Past [`SPOOL_AT`] of a body, the bytes already handed to hyper move to an unnamed spool file
//! (`spool.rs`) and the tape's room is used again, so a long body is not held in memory.
//!
//! hyper reads an `HTTP/1.0` status line as `HTTP/1.1` (see [`HTTP10`]), and a status line
//! outside the grammar as `http_message::status_line` rewrites it, and a head's CR that ends
//! no line as a space (`http_message::bare_cr`); the tape keeps them as received.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

use crate::http_message::{bare_cr, status_line};
use crate::spool::{Spool, SpoolDir, Spooled, SPOOL_AT};

/// The most room [`SharedTape::reserve_body`] makes for a body before any of it arrived.
pub const MAX_BODY_RESERVE: usize = 1 << 20;
/// Room past the body cap (or the declared length) for what the last read brings in beyond it
/// (hyper reads ahead up to its buffer, ~400 KiB).
const READ_AHEAD: usize = 512 << 10;
/// A response's status line that hyper is handed as `HTTP/1.1`: hyper refuses every HTTP/1.0
/// response with a `Transfer-Encoding`, where GNU wget and warcio de-chunk a `chunked` one and
/// Chromium shows it, so such a page was lost (and a whole site with such a robots.txt). The
/// tape keeps the bytes as received, the fetcher decides from them whether the connection is
/// kept (an HTTP/1.0 response without `Connection: keep-alive` ends it), and otherwise hyper
/// frames a 1.0 response as it would a 1.1 one: by Content-Length, or to the close.
const HTTP10: &[u8] = b"HTTP/1.0";
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
    received: Vec<u8>,
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
    fn handable(&self) -> usize {
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
    fn received_len(&self) -> usize {
        self.spooled() + self.received.len()
    }

    /// Bytes received and moved to the spool file.
    fn spooled(&self) -> usize {
        self.spool.as_ref().map_or(0, Spool::len)
    }

    /// Makes room on a full tape for the next read from the socket: below
    /// [`MAX_BODY_RESERVE`] it doubles (from [`FIRST_READ`]), as a small body or a server
    /// that has not yet shown a body worth the room needs; past it, the bytes go to a spool
    /// file when the body has a spool directory ([`SPOOL_AT`]), or else the room grows in one
    /// step to the plan. Called only when the reader has been handed every byte.
    fn make_room(&mut self) {
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
    fn lock(&self) -> MutexGuard<'_, Tape> {
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

/// An I/O stream that copies all traffic onto a [`SharedTape`].
pub struct Recorder<T> {
    inner: T,
    tape: SharedTape,
}

impl<T> Recorder<T> {
    /// Wraps `inner`, recording onto `tape`.
    pub fn new(inner: T, tape: SharedTape) -> Self {
        Recorder { inner, tape }
    }
}

impl<T: AsyncRead + Unpin> Recorder<T> {
    /// Reads from the stream into `buf` without recording (nor making room on the tape): an
    /// idle connection's check, for which anything found ends the connection.
    pub fn poll_read_unrecorded(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Recorder<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let Recorder { inner, tape } = &mut *self;
        let mut tape = tape.lock();
        // Read until something may be handed over; at the end of the stream, what was held
        // back is handed over as it is.
        let mut ended = false;
        while tape.handable() == 0 {
            tape.make_room();
            let read = std::pin::pin!(inner.read_buf(&mut tape.received)).poll(cx);
            match read {
                Poll::Pending => return Poll::Pending,
                // A TLS peer that closed without close_notify, as many servers do: the end
                // of the stream, as Chromium and curl read it. A body framed by its length
                // or by chunks that stops there is still cut (hyper sees the end first).
                Poll::Ready(Err(e)) if e.kind() != io::ErrorKind::UnexpectedEof => {
                    return Poll::Ready(Err(e));
                }
                Poll::Ready(Ok(1..)) => {}
                // The end of the stream.
                Poll::Ready(_) if tape.served == tape.received_len() => {
                    return Poll::Ready(Ok(()));
                }
                Poll::Ready(_) => {
                    ended = true;
                    break;
                }
            }
            if tape
                .head_limit
                .is_some_and(|limit| tape.received_len() > limit)
            {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "response head (with interim responses) over the size limit",
                )));
            }
        }
        let handable = match ended {
            true => tape.received_len() - tape.served,
            false => tape.handable(),
        };
        // `served` counts from the response's first byte; the tape's bytes in memory start
        // after those spooled.
        let start = tape.served;
        let at = start - tape.spooled();
        let n = buf.remaining().min(handable);
        let before = buf.filled().len();
        buf.put_slice(&tape.received[at..at + n]);
        tape.served += n;
        let handed = &mut buf.filled_mut()[before..];
        let mut line_start = &tape.received[..];
        if start == 0 {
            if let Some(line) = status_line::lenient(&tape.received) {
                let k = line.len().min(n);
                handed[..k].copy_from_slice(&line[..k]);
                line_start = &*handed;
            }
        }
        let minor = HTTP10.len() - 1;
        if (start..start + n).contains(&minor) && line_start.starts_with(HTTP10) {
            handed[minor - start] = b'1';
        }
        if tape.head_limit.is_some() {
            // While hyper reads a head: a CR that ends no line is a space to it (bare_cr.rs).
            bare_cr::replace_in(handed, tape.received.get(at + n).copied());
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Recorder<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = poll {
            self.tape.lock().sent.extend_from_slice(&buf[..n]);
        }
        poll
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn records_both_directions_exactly() {
        let (client, mut server) = tokio::io::duplex(64);
        let tape = SharedTape::default();
        let mut rec = Recorder::new(client, tape.clone());
        rec.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        server.write_all(b"HTTP/1.1 200 OK\r\n\r\n").await.unwrap();
        let mut buf = [0u8; 19];
        rec.read_exact(&mut buf).await.unwrap();
        let t = tape.take();
        assert_eq!(t.sent, b"GET / HTTP/1.1\r\n\r\n");
        assert_eq!(t.received, b"HTTP/1.1 200 OK\r\n\r\n");
        assert!(tape.take().sent.is_empty());
    }

    #[tokio::test]
    async fn reads_what_has_arrived_onto_the_tape_and_hands_it_over_in_the_readers_pieces() {
        let (client, mut server) = tokio::io::duplex(64 << 10);
        let tape = SharedTape::default();
        let mut rec = Recorder::new(client, tape.clone());
        let sent: Vec<u8> = (0..12_000u32).map(|i| i as u8).collect();
        server.write_all(&sent).await.unwrap();
        let mut piece = [0u8; 8192];
        let n = rec.read(&mut piece).await.unwrap();
        assert_eq!(n, 8192);
        // All that had arrived is on the tape, in one read; the rest waits for the reader.
        assert_eq!(tape.received_len(), sent.len());
        assert_eq!(tape.read_ahead(), sent.len() - 8192);
        let mut got = piece[..n].to_vec();
        let n = rec.read(&mut piece).await.unwrap();
        got.extend_from_slice(&piece[..n]);
        assert_eq!(got, sent);
        assert_eq!(tape.read_ahead(), 0);
        assert_eq!(tape.take().received, sent);
        // The end of the stream hands nothing over.
        drop(server);
        assert_eq!(rec.read(&mut piece).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_large_body_grows_the_tape_once_to_its_plan_not_by_doubling() {
        let (client, mut server) = tokio::io::duplex(1 << 16);
        let tape = SharedTape::default();
        let mut rec = Recorder::new(client, tape.clone());
        let body = 3 * MAX_BODY_RESERVE;
        tape.reserve_body(0, Some(body), 1 << 30, None);
        let writer = tokio::spawn(async move {
            server.write_all(&vec![b'x'; body]).await.unwrap();
        });
        let mut sink = vec![0u8; body];
        let mut capacities = std::collections::BTreeSet::new();
        let mut read = 0;
        while read < body {
            read += rec.read(&mut sink[read..]).await.unwrap();
            capacities.insert(tape.lock().received.capacity());
        }
        writer.await.unwrap();
        // The first MiB as reserved, then one step to the declared length.
        assert_eq!(capacities.len(), 2, "{capacities:?}");
        assert!(*capacities.last().unwrap() >= body);
        assert!(*capacities.last().unwrap() < body + MAX_BODY_RESERVE);
        // No length declared: the plan is the body cap as the wire may carry it (chunk
        // lines), and a last read past it.
        let unknown = SharedTape::default();
        unknown.reserve_body(100, None, 8 << 20, None);
        assert_eq!(unknown.lock().planned, 100 + (9 << 20) + READ_AHEAD);
        assert_eq!(unknown.lock().received.capacity(), 0);
    }

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
