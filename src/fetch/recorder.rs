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
//! How the tape's room grows, and how a long body moves to a spool file, is `tape.rs`.
//!
//! hyper reads an `HTTP/1.0` status line as `HTTP/1.1` (see [`HTTP10`]), and a status line
//! outside the grammar as `http_message::status_line` rewrites it, and a head's CR that ends
//! no line as a space (`http_message::bare_cr`); the tape keeps them as received.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

use super::tape::SharedTape;
use crate::http_message::{bare_cr, status_line};

/// A response's status line that hyper is handed as `HTTP/1.1`: hyper refuses every HTTP/1.0
/// response with a `Transfer-Encoding`, where GNU wget and warcio de-chunk a `chunked` one and
/// Chromium shows it, so such a page was lost (and a whole site with such a robots.txt). The
/// tape keeps the bytes as received, the fetcher decides from them whether the connection is
/// kept (an HTTP/1.0 response without `Connection: keep-alive` ends it), and otherwise hyper
/// frames a 1.0 response as it would a 1.1 one: by Content-Length, or to the close.
const HTTP10: &[u8] = b"HTTP/1.0";

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
    use super::super::tape::{MAX_BODY_RESERVE, READ_AHEAD};
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
}
