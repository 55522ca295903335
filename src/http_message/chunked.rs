//! Removes chunked transfer coding from a recorded body, tolerating truncation.
//!
//! The WARC payload digest covers the entity with transfer coding removed (WARC 1.1 section
//! 5.9), so the record builder needs the de-chunked bytes of what was actually stored, not of
//! what hyper happened to hand us. Lines may end in a bare LF, as Chromium, curl and warcio
//! read them (hyper refuses such a body, so its record is cut, but what it holds is read).

use std::ops::Range;

/// The entity recovered from a chunked body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dechunked {
    /// The concatenated chunk data.
    pub data: Vec<u8>,
    /// Where the chunked message ends in `body` (after the trailer section); `None` when the
    /// framing is truncated or broken.
    pub end: Option<usize>,
}

/// De-chunks `body`. Stops at the last-chunk; on malformed or truncated framing returns the
/// data recovered so far with `end == None`.
pub fn dechunk(body: &[u8]) -> Dechunked {
    let mut data = Vec::with_capacity(body.len());
    let end = dechunk_into(body, |_, piece| data.extend_from_slice(piece));
    Dechunked { data, end }
}

/// Hands the chunk data of `body` to `out`, piece by piece with where it starts in `body`, as
/// [`dechunk`] gathers it, and returns where the message ends (`None` when its framing is
/// truncated or broken).
pub fn dechunk_into(body: &[u8], mut out: impl FnMut(usize, &[u8])) -> Option<usize> {
    let mut pos = 0;
    loop {
        match chunk_at(body, pos) {
            Chunk::Unended | Chunk::Bad => return None,
            Chunk::Last(end) => return end,
            Chunk::Data { data, after } => {
                out(data.start, &body[data]);
                match after {
                    After::Next(next) => pos = next,
                    After::Pending | After::Broken => return None,
                }
            }
        }
    }
}

/// How far a chunked body that is still arriving has come ([`progress`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The message ends at this offset (after its trailer section).
    Ended(usize),
    /// Not ended yet: the next call may start at this offset, the start of a chunk-size line
    /// (so a chunk's data is passed over, not read again).
    Arriving(usize),
    /// A size line that is no size: where the message ends cannot be known.
    Broken,
}

/// Where the chunked `body` stands, read from `from` (0, or an [`Progress::Arriving`] offset
/// an earlier call returned for a shorter `body`), as [`dechunk_into`] frames it.
pub fn progress(body: &[u8], from: usize) -> Progress {
    let mut pos = from;
    loop {
        match chunk_at(body, pos) {
            Chunk::Unended | Chunk::Last(None) => return Progress::Arriving(pos),
            Chunk::Bad => return Progress::Broken,
            Chunk::Last(Some(end)) => return Progress::Ended(end),
            Chunk::Data { after, .. } => match after {
                After::Next(next) => pos = next,
                After::Pending => return Progress::Arriving(pos),
                After::Broken => return Progress::Broken,
            },
        }
    }
}

/// One chunk of a body, read from its size line on, as far as it has arrived.
enum Chunk {
    /// Its size line has not ended.
    Unended,
    /// Its size line is no size.
    Bad,
    /// The last chunk: where the message ends, once its trailer section has.
    Last(Option<usize>),
    /// A chunk's data (as much of it as arrived), and what follows it.
    Data { data: Range<usize>, after: After },
}

/// What follows a chunk's data.
enum After {
    /// Its line end: the next size line starts here.
    Next(usize),
    /// Not arrived yet (the data, or its line end).
    Pending,
    /// Something that is no line end.
    Broken,
}

/// The chunk of `body` whose size line starts at `pos`.
fn chunk_at(body: &[u8], pos: usize) -> Chunk {
    let Some((line, next)) = line_at(body, pos) else {
        return Chunk::Unended;
    };
    let size_text = line.split(|&b| b == b';').next().unwrap_or(b"");
    let Some(size) = parse_hex(size_text) else {
        return Chunk::Bad;
    };
    if size == 0 {
        return Chunk::Last(trailer_end(&body[next..]).map(|t| next + t));
    }
    let end = next + size;
    if end > body.len() {
        let after = After::Pending;
        return Chunk::Data {
            data: next..body.len(),
            after,
        };
    }
    let after = match &body[end..] {
        [b'\r', b'\n', ..] => After::Next(end + 2),
        [b'\n', ..] => After::Next(end + 1),
        [] | [b'\r'] => After::Pending,
        _ => After::Broken,
    };
    Chunk::Data {
        data: next..end,
        after,
    }
}

/// Length of the trailer section including its closing empty line.
fn trailer_end(rest: &[u8]) -> Option<usize> {
    let mut pos = 0;
    loop {
        let (line, next) = line_at(rest, pos)?;
        pos = next;
        if line.is_empty() {
            return Some(pos);
        }
    }
}

/// The line of `bytes` starting at `pos` without its end (LF, or CR LF), and where the next
/// line starts; `None` when no line end has arrived.
fn line_at(bytes: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let lf = pos + bytes.get(pos..)?.iter().position(|&b| b == b'\n')?;
    let line = &bytes[pos..lf];
    Some((line.strip_suffix(b"\r").unwrap_or(line), lf + 1))
}

fn parse_hex(text: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(text).ok()?.trim_matches([' ', '\t']);
    if text.is_empty() || text.len() > 15 {
        return None;
    }
    usize::from_str_radix(text, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_chunks_and_ignores_extensions_and_trailers() {
        let body = b"5;ext=1\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: y\r\n\r\nEXTRA";
        let got = dechunk(body);
        assert_eq!(got.data, b"hello, world!!!");
        assert!(got.end.is_some());
        assert_eq!(got.end, Some(body.len() - 5));
        assert_eq!(dechunk(b"0\r\n\r\n").end, Some(5));
    }

    #[test]
    fn truncated_body_keeps_what_arrived() {
        let got = dechunk(b"5\r\nhello\r\n10\r\nabc");
        assert_eq!(got.data, b"helloabc");
        assert!(got.end.is_none());
    }

    #[test]
    fn lines_may_end_in_a_bare_lf() {
        let body = b"5\nhello\n7\r\n, world\n0\nX-T: y\n\nEXTRA";
        let got = dechunk(body);
        assert_eq!(got.data, b"hello, world");
        assert_eq!(got.end, Some(body.len() - 5));
        assert_eq!(dechunk(b"0\n\n").end, Some(3));
        // A line end that has not arrived is no line end.
        assert_eq!(dechunk(b"5\r").end, None);
    }

    #[test]
    fn progress_resumes_where_it_stopped_and_finds_the_end_dechunk_finds() {
        let body = b"5\nhello\n7;x=1\r\n, world\r\n0\nX-T: y\n\nEXTRA";
        let end = body.len() - 5;
        // Every prefix, each read on from where the previous one stopped.
        let mut from = 0;
        for cut in 0..=body.len() {
            match progress(&body[..cut], from) {
                Progress::Arriving(p) => {
                    assert!(cut < end, "{cut}");
                    assert!(p >= from && p <= cut);
                    from = p;
                }
                Progress::Ended(e) => {
                    assert_eq!(e, end, "{cut}");
                    assert!(cut >= end);
                }
                Progress::Broken => panic!("{cut}"),
            }
        }
        assert_eq!(
            progress(body, 0),
            Progress::Ended(dechunk(body).end.unwrap())
        );
        assert_eq!(progress(b"5\r\nhello\r\nzz\r\n", 0), Progress::Broken);
        assert_eq!(progress(b"5\r\nhelloXY", 0), Progress::Broken);
        assert_eq!(progress(b"5\r\nhello\r", 0), Progress::Arriving(0));
    }

    #[test]
    fn bad_size_line_stops() {
        let got = dechunk(b"5\r\nhello\r\nzz\r\nmore\r\n0\r\n\r\n");
        assert_eq!(got.data, b"hello");
        assert!(got.end.is_none());
    }
}
