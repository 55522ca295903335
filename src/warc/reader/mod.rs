//! Reads WARC files record by record, with each record's offset and length in the file:
//! `.warc.gz` one gzip member at a time (offset and length are of the compressed member, as
//! CDX indexes need), and uncompressed `.warc` by Content-Length framing.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::GzDecoder;

use crate::spool::{SpoolDir, Spooled, SPOOL_AT};

/// Largest record block read (bigger blocks are an error). A block longer than
/// [`SPOOL_AT`] is read into a spool file beside the WARC file, not into memory, as the crawl
/// records it (`spool.rs`): a record of a long body is read back at no cost in memory. Where
/// no file can be made beside it (WARCs on a read-only mount), in the system's temporary
/// directory (`TMPDIR`).
const MAX_BLOCK: u64 = 1 << 40;
/// The longest block read into memory when no spool file can be made, beside the WARC or in
/// the temporary directory; a longer one is an error, not an allocation of its size.
const MAX_IN_MEMORY: usize = 256 << 20;

/// One record as stored.
#[derive(Debug, Clone)]
pub struct StoredRecord {
    /// Byte offset of the record (its gzip member) in the file.
    pub offset: u64,
    /// Bytes the record (its gzip member) takes in the file.
    pub length: u64,
    /// WARC header fields in order.
    pub headers: Vec<(String, String)>,
    /// Bytes of the record's header: version line, fields and the blank line.
    pub header_len: u64,
    /// The record block (a long one in a spool file).
    pub block: Spooled,
    /// True when the record is a gzip member; false in an uncompressed `.warc`.
    pub compressed: bool,
}

impl StoredRecord {
    /// The first value of a WARC header, matched case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The length a CDX(J) index gives the record: its gzip member's, or in an uncompressed
    /// file its header and block without the two CRLF that end it, as cdxj-indexer (warcio)
    /// gives it; a replay tool reads the record whole either way.
    pub fn indexed_length(&self) -> u64 {
        match self.compressed {
            true => self.length,
            false => self.header_len + self.block.len() as u64,
        }
    }

    /// `WARC-Target-URI` without the angle brackets WARC/1.0's grammar put around it (GNU wget
    /// still writes `<http://...>`; warcio and cdxj-indexer take them off too).
    pub fn target_uri(&self) -> Option<&str> {
        let uri = self.header("WARC-Target-URI")?;
        Some(
            uri.strip_prefix('<')
                .and_then(|u| u.strip_suffix('>'))
                .unwrap_or(uri),
        )
    }
}

/// Counts bytes consumed from the underlying buffered reader (gzip members end exactly where
/// the decoder stops consuming). Shared with [`super::recovery`].
pub(crate) struct Counting<R> {
    pub(crate) inner: R,
    pub(crate) consumed: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.consumed += amt as u64;
        self.inner.consume(amt);
    }
}

/// What a gzip member around a record looked like (WAT's `Container` / `Gzip-Metadata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GzipMember {
    /// Bytes of the member header (10, more with optional fields).
    pub header_len: u64,
    /// Bytes of the deflate stream.
    pub deflate_len: u64,
    /// CRC-32 of the inflated bytes, from the member footer.
    pub crc: u32,
    /// Inflated length (mod 2^32), from the member footer.
    pub inflated_len: u32,
}

/// Reads every record of a WARC file.
pub fn read_records(path: &Path) -> io::Result<Vec<StoredRecord>> {
    records(path)?
        .map(|r| r.map(|(record, _)| record))
        .collect()
}

/// The records of a WARC file one at a time, without their gzip members: memory holds one
/// record, where [`read_records`] holds the whole file, blocks inflated.
pub fn each_record(path: &Path) -> io::Result<impl Iterator<Item = io::Result<StoredRecord>>> {
    Ok(records(path)?.map(|r| r.map(|(record, _)| record)))
}

/// Streams the records of a WARC file one at a time (memory is one record, not the file),
/// with the gzip member of each when the file is gzipped.
pub fn records(path: &Path) -> io::Result<Records> {
    let mut reader = Counting {
        inner: BufReader::with_capacity(1 << 16, File::open(path)?),
        consumed: 0,
    };
    // Gzip by content, not by name: `.warc.gz.open` files are read during repair.
    let gzipped = reader.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    if !gzipped && !reader.fill_buf()?.is_empty() && !reader.fill_buf()?.starts_with(b"WARC/") {
        return Err(not_warc());
    }
    Ok(Records {
        reader,
        gzipped,
        first: true,
        done: false,
        spool: spool_beside(path),
    })
}

/// Spool files for the long blocks of the WARC file at `path`: in its directory.
fn spool_beside(path: &Path) -> SpoolDir {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    SpoolDir::quiet(dir.unwrap_or(Path::new(".")))
}

/// A spool file for a long block: beside the WARC file (`beside`), else in the temporary
/// directory; `None` when neither can make one.
fn spool_file(beside: &SpoolDir) -> Option<crate::spool::Spool> {
    static TEMP: std::sync::OnceLock<SpoolDir> = std::sync::OnceLock::new();
    beside
        .create()
        .or_else(|_| {
            TEMP.get_or_init(|| SpoolDir::new(std::env::temp_dir()))
                .create()
        })
        .ok()
}

/// Streams the records of a WARC file from `offset`, where a record (gzip member) starts;
/// offsets are of the whole file.
pub fn records_from(path: &Path, offset: u64, gzipped: bool) -> io::Result<Records> {
    use std::io::{Seek, SeekFrom};
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    Ok(Records {
        reader: Counting {
            inner: BufReader::with_capacity(1 << 16, file),
            consumed: offset,
        },
        gzipped,
        first: false,
        done: false,
        spool: spool_beside(path),
    })
}

/// The iterator of [`records`].
pub struct Records {
    reader: Counting<BufReader<File>>,
    gzipped: bool,
    first: bool,
    done: bool,
    spool: SpoolDir,
}

impl Iterator for Records {
    type Item = io::Result<(StoredRecord, Option<GzipMember>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.read_one().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

impl Records {
    /// True when the file is gzipped (one member per record).
    pub fn gzipped(&self) -> bool {
        self.gzipped
    }

    fn read_one(&mut self) -> io::Result<Option<(StoredRecord, Option<GzipMember>)>> {
        // Line ends between records or after the last (between gzip members; in a `.warc`,
        // more blank lines after a record than its two) and gzip members that hold nothing
        // but line ends are passed over, as warcio passes them over: they hold no record.
        let (offset, (head, block, _), member) = loop {
            while !line_ends(&mut self.reader)?.is_empty() {}
            if self.reader.fill_buf()?.is_empty() {
                return Ok(None);
            }
            let offset = self.reader.consumed;
            if !self.gzipped {
                break (
                    offset,
                    read_plain_record(&mut self.reader, &self.spool)?,
                    None,
                );
            }
            let header_len = gzip_header_len(self.reader.fill_buf()?);
            let mut decoder = BufReader::new(GzDecoder::new(&mut self.reader));
            let leading = line_ends(&mut decoder)?;
            if decoder.fill_buf()?.is_empty() {
                // The decoder has read the member through its footer: the next starts here.
                continue;
            }
            let raw = match self.first {
                true => read_first_record(&mut decoder, &self.spool)?,
                false => read_plain_record(&mut decoder, &self.spool)?,
            };
            let padding = member_ends_here(&mut decoder, offset)?;
            let inflated = leading.len() + raw.0.len() + raw.1.len() + raw.2.len() + padding.len();
            let member = decoder.get_ref().header().map(|_| inflated);
            let length = self.reader.consumed - offset;
            let mut crc = crc32fast::Hasher::new();
            let block = raw.1.windows(0..raw.1.len());
            for part in [&leading[..], &raw.0[..]]
                .into_iter()
                .chain(block)
                .chain([&raw.2[..], &padding])
            {
                crc.update(part);
            }
            let crc = crc.finalize();
            let info = member.map(|inflated| GzipMember {
                header_len,
                deflate_len: length.saturating_sub(header_len + 8),
                crc,
                inflated_len: inflated as u32,
            });
            break (offset, raw, info);
        };
        if self.first && !head.starts_with(b"WARC/") {
            return Err(not_warc());
        }
        self.first = false;
        let length = self.reader.consumed - offset;
        let headers = parse_head(&head)?;
        let record = StoredRecord {
            offset,
            length,
            headers,
            header_len: head.len() as u64,
            block,
            compressed: self.gzipped,
        };
        Ok(Some((record, member)))
    }
}

/// The most line ends passed over at once (the caller goes on while there are more).
const LINE_ENDS_AT_ONCE: usize = 1 << 16;

/// Reads the CR and LF bytes at the reader's position, up to [`LINE_ENDS_AT_ONCE`].
fn line_ends(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut ends = Vec::new();
    while ends.len() < LINE_ENDS_AT_ONCE {
        let buf = reader.fill_buf()?;
        let n = buf
            .iter()
            .take(LINE_ENDS_AT_ONCE - ends.len())
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        if n == 0 {
            break;
        }
        ends.extend_from_slice(&buf[..n]);
        reader.consume(n);
    }
    Ok(ends)
}

/// The first record of a gzipped file, refused as "not a WARC file" when its member does not
/// start like one (a gzipped file of something else).
fn read_first_record(member: &mut impl BufRead, spool: &SpoolDir) -> io::Result<RawRecord> {
    if !member.fill_buf()?.starts_with(b"WARC/") {
        return Err(not_warc());
    }
    read_plain_record(member, spool)
}

/// Reads a gzip member past its one record to the member's end, returning the stray line ends
/// some writers leave there: a member that holds more (a file compressed as a whole, not
/// record by record) is an error, since no record in it past the first can be read at an
/// offset, which is what indexes and replay do.
fn member_ends_here(member: &mut impl BufRead, offset: u64) -> io::Result<Vec<u8>> {
    let mut rest = Vec::new();
    member.take(64).read_to_end(&mut rest)?;
    let next = rest.iter().position(|b| !b.is_ascii_whitespace());
    match (rest.len() < 64, next) {
        (true, None) => Ok(rest),
        // Not another record: the block went on past what its Content-Length said.
        (_, Some(at)) if !rest[at..].starts_with(b"WARC/") => Err(invalid(&format!(
            "the record in the gzip member at offset {offset} is longer than its Content-Length \
             says (or bytes follow it in its member): its block does not end where the header \
             puts its end"
        ))),
        _ => Err(invalid(&format!(
            "the gzip member at offset {offset} holds more than one record: the file is \
             compressed as a whole, not one gzip member per record as WARC 1.1 (Annex D) asks; \
             `warcio recompress IN OUT` rewrites it record by record"
        ))),
    }
}

/// The length of the gzip member header at the start of `buf` (RFC 1952 section 2.3), or 10
/// when the optional fields run past what is buffered.
fn gzip_header_len(buf: &[u8]) -> u64 {
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    const FHCRC: u8 = 2;
    let Some(&flags) = buf.get(3) else {
        return 10;
    };
    let mut at = 10usize;
    if flags & FEXTRA != 0 {
        let Some(x) = buf.get(10..12) else { return 10 };
        at += 2 + u16::from_le_bytes([x[0], x[1]]) as usize;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            match buf.get(at..).and_then(|r| r.iter().position(|&b| b == 0)) {
                Some(end) => at += end + 1,
                None => return 10,
            }
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    at as u64
}

/// A record as read: its header (through its blank line), its block, and the two line ends
/// after the block, as they are in the file.
type RawRecord = (Vec<u8>, Spooled, Vec<u8>);

/// Reads a record, a block longer than [`SPOOL_AT`] into a spool file in `spool` or the
/// temporary directory (into memory where none can be made, up to [`MAX_IN_MEMORY`]).
fn read_plain_record(reader: &mut impl BufRead, spool: &SpoolDir) -> io::Result<RawRecord> {
    let mut head = Vec::new();
    loop {
        let start = head.len();
        if reader.read_until(b'\n', &mut head)? == 0 {
            return Err(invalid("WARC record ends inside its header"));
        }
        // A blank line ends it: CRLF as WARC asks, or a bare LF as some hand-made writers
        // leave and warcio reads (before, such a header ran on into the HTTP head, and the
        // record came out without a type and was passed over in silence).
        if matches!(&head[start..], b"\r\n" | b"\n") && start > 0 {
            break;
        }
    }
    let bare_lf = head.ends_with(b"\n") && !head.ends_with(b"\r\n");
    let len = content_length(&parse_head(&head)?)?;
    let block = match (len > SPOOL_AT).then(|| spool_file(spool)).flatten() {
        Some(mut file) => {
            let mut piece = vec![0; SPOOL_AT];
            let mut left = len;
            while left > 0 {
                let n = left.min(piece.len());
                reader
                    .read_exact(&mut piece[..n])
                    .map_err(|e| cut_short(e, len))?;
                file.append(&piece[..n])?;
                left -= n;
            }
            file.finish()?
        }
        None if len > MAX_IN_MEMORY => {
            return Err(io::Error::other(format!(
                "a WARC record block of {len} bytes: no spool file can be made beside the \
                 WARC file or in {}, and it is too long to read into memory",
                std::env::temp_dir().display()
            )));
        }
        None => {
            let mut block = vec![0; len];
            reader
                .read_exact(&mut block)
                .map_err(|e| cut_short(e, len))?;
            Spooled::Memory(block)
        }
    };
    let end = match bare_lf {
        // The writer of bare LFs may end the block with two of them: the line ends there are
        // taken, up to four, and no byte of what follows.
        true => {
            let mut end = Vec::new();
            while end.len() < 4 {
                match reader.fill_buf()?.first() {
                    Some(&b @ (b'\r' | b'\n')) => {
                        end.push(b);
                        reader.consume(1);
                    }
                    _ => break,
                }
            }
            end
        }
        false => {
            let mut end = vec![0; 4];
            reader.read_exact(&mut end)?;
            end
        }
    };
    Ok((head, block, end))
}

/// A block that ends before its Content-Length (`len`) says, told as such.
fn cut_short(e: io::Error, len: usize) -> io::Error {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => invalid(&format!(
            "a record's block ends before the {len} bytes its Content-Length gives: the file \
             is cut short, or the Content-Length is too large"
        )),
        _ => e,
    }
}

/// The error for a file that does not start with a WARC record.
fn not_warc() -> io::Error {
    invalid("not a WARC file (or not gzip): it does not start with a WARC/1.x record")
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

fn parse_head(raw: &[u8]) -> io::Result<Vec<(String, String)>> {
    // Through the blank line that ends it (CRLF CRLF, or bare LFs: see read_plain_record).
    let end = raw
        .windows(2)
        .position(|w| w == b"\n\n")
        .into_iter()
        .chain(raw.windows(3).position(|w| w == b"\n\r\n"))
        .min()
        .ok_or_else(|| invalid("WARC header not terminated"))?;
    // UTF-8 as WARC 1.1 writes it; a header that is not (a raw Latin-1 URL some writers leave)
    // is read as ISO-8859-1, as warcio and so cdxj-indexer read it, rather than lost.
    let text = match std::str::from_utf8(&raw[..end]) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => raw[..end].iter().map(|&b| char::from(b)).collect(),
    };
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let version = lines.next().unwrap_or("");
    if !version.starts_with("WARC/") {
        return Err(invalid("not a WARC record"));
    }
    Ok(lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect())
}

fn content_length(headers: &[(String, String)]) -> io::Result<usize> {
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .ok_or_else(|| invalid("WARC record without a valid Content-Length"))?;
    if len as u64 > MAX_BLOCK {
        return Err(invalid("WARC record block too large"));
    }
    Ok(len)
}

#[cfg(test)]
mod tests;
