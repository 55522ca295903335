//! Where a TLS server's stream ends: at a record boundary or inside a record.
//!
//! Many servers close TLS without close_notify, and a body framed by the close (no length,
//! not chunked) then ends where the stream ends, as browsers and curl read it. But a close
//! inside a TLS record proves the stream was cut (a load balancer's timeout, a dropped
//! network): rustls reports both closes as the same end of stream, so a page cut there was
//! archived as whole (found by an exploratory crawl; wget reports "Error decoding the
//! received TLS packet" and retries). [`RecordFraming`] sits under TLS, follows the record
//! headers in what the server sends, and turns a close inside a record into an error that
//! names it, which the body's reader counts as a disconnect (the record is marked
//! `WARC-Truncated: disconnect`).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Bytes of a TLS record's header: type, version, length.
const HEADER: usize = 5;

/// A stream under TLS whose reads follow the TLS records.
pub struct RecordFraming<S> {
    inner: S,
    /// Header bytes of the next record read so far.
    header: [u8; HEADER],
    header_read: usize,
    /// Bytes of the current record's body still to come.
    remaining: usize,
}

impl<S> RecordFraming<S> {
    /// Follows the records read from `inner`.
    pub fn new(inner: S) -> Self {
        RecordFraming {
            inner,
            header: [0; HEADER],
            header_read: 0,
            remaining: 0,
        }
    }

    /// Takes in `bytes` read from the server.
    fn follow(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.remaining > 0 {
                let n = self.remaining.min(bytes.len());
                self.remaining -= n;
                bytes = &bytes[n..];
                continue;
            }
            let n = (HEADER - self.header_read).min(bytes.len());
            self.header[self.header_read..self.header_read + n].copy_from_slice(&bytes[..n]);
            self.header_read += n;
            bytes = &bytes[n..];
            if self.header_read == HEADER {
                self.remaining = usize::from(u16::from_be_bytes([self.header[3], self.header[4]]));
                self.header_read = 0;
            }
        }
    }

    /// True between two records.
    fn at_boundary(&self) -> bool {
        self.remaining == 0 && self.header_read == 0
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for RecordFraming<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) if buf.filled().len() == before && !this.at_boundary() => {
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "the server closed the connection inside a TLS record (the stream was cut)",
                )))
            }
            Poll::Ready(Ok(())) => {
                this.follow(&buf.filled()[before..]);
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for RecordFraming<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
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

    #[test]
    fn records_are_followed_across_reads() {
        let mut f = RecordFraming::new(());
        // A record of 3 bytes, then half of a header, then the rest and a record of 2.
        f.follow(&[23, 3, 3, 0, 3, b'a', b'b', b'c']);
        assert!(f.at_boundary());
        f.follow(&[23, 3]);
        assert!(!f.at_boundary());
        f.follow(&[3, 0, 2, b'x']);
        assert!(!f.at_boundary());
        f.follow(b"y");
        assert!(f.at_boundary());
    }
}
