//! Reading bytes as UTF-8 text a piece at a time, each sequence that is not UTF-8 read as
//! U+FFFD, as `String::from_utf8_lossy` reads a whole buffer: for readers that want text
//! (quick-xml's names and text) over a body that may hold other bytes, without a copy of the
//! whole body first (each stray byte of which would grow to three).

use std::io::{self, Read};

/// Bytes read from the inner reader per piece.
const PIECE: usize = 64 * 1024;

/// `inner`'s bytes as UTF-8, stray bytes replaced.
pub struct LossyUtf8<R> {
    inner: R,
    /// Where each piece is read.
    piece: Box<[u8]>,
    /// Read but not yet decoded: an incomplete sequence at the end of the last piece.
    pending: Vec<u8>,
    /// Decoded and not yet handed out.
    text: Vec<u8>,
    handed: usize,
    ended: bool,
}

impl<R: Read> LossyUtf8<R> {
    /// Reads `inner` as text.
    pub fn new(inner: R) -> Self {
        LossyUtf8 {
            inner,
            piece: vec![0; PIECE].into_boxed_slice(),
            pending: Vec::new(),
            text: Vec::new(),
            handed: 0,
            ended: false,
        }
    }

    /// Reads the next piece and decodes what of it is complete; false at the end.
    fn fill(&mut self) -> io::Result<bool> {
        self.text.clear();
        self.handed = 0;
        while self.text.is_empty() {
            if self.ended {
                return Ok(false);
            }
            let n = loop {
                match self.inner.read(&mut self.piece) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other?,
                }
            };
            self.pending.extend_from_slice(&self.piece[..n]);
            self.ended = n == 0;
            self.decode();
        }
        Ok(true)
    }

    /// Moves the complete part of `pending` to `text`; at the end, an incomplete sequence too
    /// (as one U+FFFD).
    fn decode(&mut self) {
        let mut rest = &self.pending[..];
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    self.text.extend_from_slice(valid.as_bytes());
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    self.text.extend_from_slice(valid);
                    match e.error_len() {
                        Some(bad) => {
                            self.text.extend_from_slice("\u{FFFD}".as_bytes());
                            rest = &after[bad..];
                        }
                        None if self.ended => {
                            self.text.extend_from_slice("\u{FFFD}".as_bytes());
                            rest = &[];
                            break;
                        }
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        let keep = rest.len();
        let from = self.pending.len() - keep;
        self.pending.drain(..from);
    }
}

impl<R: Read> Read for LossyUtf8<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.handed == self.text.len() && !self.fill()? {
            return Ok(0);
        }
        let n = buf.len().min(self.text.len() - self.handed);
        buf[..n].copy_from_slice(&self.text[self.handed..self.handed + n]);
        self.handed += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `bytes` through the adapter, the inner reader giving `step` bytes at a time.
    fn through(bytes: &[u8], step: usize) -> Vec<u8> {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.1.min(buf.len()).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut out = Vec::new();
        LossyUtf8::new(Trickle(bytes, step))
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn reads_as_from_utf8_lossy_whatever_the_pieces() {
        let mut rng = fastrand::Rng::with_seed(8);
        let samples: Vec<Vec<u8>> = vec![
            "caf\u{e9} \u{1F600} plain".as_bytes().to_vec(),
            b"caf\xE9 \xF0\x9F\x98 cut \xC3".to_vec(),
            b"\xFF\xFE\xED\xA0\x80\xF4\x90\x80\x80".to_vec(),
            (0..200_000).map(|_| rng.u8(..)).collect(),
            "\u{e9}\u{20AC}".repeat(50_000).into_bytes(),
        ];
        for bytes in &samples {
            let want = String::from_utf8_lossy(bytes).into_owned().into_bytes();
            for step in [1, 2, 3, 7, 4096, PIECE + 1, usize::MAX] {
                assert!(through(bytes, step) == want, "step {step}");
            }
        }
    }
}
