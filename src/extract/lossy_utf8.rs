//! Reading bytes as UTF-8 text a piece at a time, each sequence that is not UTF-8 read as
//! U+FFFD, as `String::from_utf8_lossy` reads a whole buffer: for readers that want text
//! (quick-xml's names and text) over a body that may hold other bytes, without a copy of the
//! whole body first (each stray byte of which would grow to three). The decoding is
//! encoding_rs's (WHATWG UTF-8, already trawl's for charsets), which keeps a sequence cut at
//! the end of a piece for the next.

use std::io::{self, Read};

use encoding_rs::{Decoder, UTF_8};

/// Bytes read from the inner reader per piece.
const PIECE: usize = 64 * 1024;

/// `inner`'s bytes as UTF-8, stray bytes replaced.
pub struct LossyUtf8<R> {
    inner: R,
    decoder: Decoder,
    /// Where each piece is read.
    piece: Box<[u8]>,
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
            decoder: UTF_8.new_decoder_without_bom_handling(),
            piece: vec![0; PIECE].into_boxed_slice(),
            text: Vec::new(),
            handed: 0,
            ended: false,
        }
    }

    /// Reads and decodes pieces until one gives text; false at the end.
    fn fill(&mut self) -> io::Result<bool> {
        self.handed = 0;
        self.text.clear();
        while self.text.is_empty() && !self.ended {
            let n = loop {
                match self.inner.read(&mut self.piece) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other?,
                }
            };
            self.ended = n == 0;
            let room = self.decoder.max_utf8_buffer_length(n).unwrap_or(usize::MAX);
            self.text.resize(room, 0);
            // With room for the worst case the whole piece is decoded in one call.
            let (_, _, written, _) =
                self.decoder
                    .decode_to_utf8(&self.piece[..n], &mut self.text, self.ended);
            self.text.truncate(written);
        }
        Ok(!self.text.is_empty())
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
