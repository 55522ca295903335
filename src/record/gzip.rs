//! Compresses one WARC record into its own gzip member (WARC 1.1 annex D).
//!
//! Records are whole in memory, so the compressor is libdeflate (through `libdeflater`), which
//! compresses a buffer in one call instead of streaming: on this project's benchmark web it
//! took 102 us for a ~12 KB page at level 3 against 124 us for zlib-rs at the same level, and
//! its output was 0.6% smaller (docs/PERFORMANCE.md). Each thread keeps one compressor per
//! level: setting one up allocates a few hundred KB, which would be a real cost when every
//! page makes two records.
//!
//! At the speed-oriented levels (3 and below, the default is 3), records under
//! [`SMALL_RECORD`] bytes (request records, revisits, metadata) are compressed at level 1: at
//! that size a higher level saves a few bytes, while building its dynamic Huffman trees costs
//! more than compressing the record (docs/PERFORMANCE.md). `--gzip-level 4` and above apply to
//! every record. The gzip header is fixed and the CRC-32 is crc32fast's, so a member's bytes
//! depend only on the record and the level.

use std::cell::RefCell;
use std::io::{self, Write};

use libdeflater::{CompressionLvl, Compressor};

/// The fixed 10-byte gzip header: magic, deflate, no flags, no mtime, no extra flags, OS unknown.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];

/// Records shorter than this are compressed at level 1 when the level is 3 or below.
pub const SMALL_RECORD: usize = 2048;
/// The highest level at which small records are compressed at level 1 instead.
const FAST_LEVELS: u32 = 3;

thread_local! {
    /// This thread's compressors, one per level used (at most two: the configured level and
    /// the small-record level).
    static COMPRESSORS: RefCell<Vec<(u32, Compressor)>> = const { RefCell::new(Vec::new()) };
}

/// Records at least this long are compressed as a stream from their parts
/// ([`gzip_member_streamed`]) rather than joined into one buffer first.
pub const STREAMED_RECORD: usize = 1 << 20;

/// Returns the record made of `parts` (head, block, closing CRLF CRLF) as one gzip member,
/// compressed as a stream by zlib-rs at `level`, part by part. For records of
/// [`STREAMED_RECORD`] bytes or more (a body of many MiB, up to the body cap): libdeflate
/// compresses one contiguous buffer, and joining head and block would copy the whole body once
/// more (docs/PERFORMANCE.md, memory on the hostile web). The output buffer is sized for the
/// worst case, so it never grows by copying; only what is written of it becomes resident.
pub fn gzip_member_streamed(parts: &[&[u8]], level: u32) -> Vec<u8> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let out = Vec::with_capacity(GZIP_HEADER.len() + total + (total >> 10) + 1024);
    gzip_member_streamed_to(parts.iter().copied(), level, out)
        .expect("writing to a Vec does not fail")
}

/// As [`gzip_member_streamed`], the record's bytes in `parts` (a long body's in windows,
/// `Spooled::windows`), written to `out` (a spool file, `spool.rs`), which is returned.
pub fn gzip_member_streamed_to<'p, W: Write>(
    parts: impl IntoIterator<Item = &'p [u8]>,
    level: u32,
    mut out: W,
) -> io::Result<W> {
    let mut total = 0usize;
    out.write_all(&GZIP_HEADER)?;
    let mut crc = crc32fast::Hasher::new();
    let mut encoder =
        flate2::write::DeflateEncoder::new(out, flate2::Compression::new(level.min(9)));
    for part in parts {
        crc.update(part);
        encoder.write_all(part)?;
        total += part.len();
    }
    let mut out = encoder.finish()?;
    out.write_all(&crc.finalize().to_le_bytes())?;
    // ISIZE: the length modulo 2^32 (RFC 1952).
    out.write_all(&(total as u32).to_le_bytes())?;
    Ok(out)
}

/// Returns `record` as a complete, self-contained gzip member.
pub fn gzip_member(record: &[u8], level: u32) -> Vec<u8> {
    let level = member_level(record.len(), level);
    COMPRESSORS.with(|cell| {
        let mut compressors = cell.borrow_mut();
        let index = match compressors.iter().position(|(l, _)| *l == level) {
            Some(i) => i,
            None => {
                let lvl = CompressionLvl::new(level.min(12) as i32)
                    .expect("levels 0-12 are libdeflate's");
                compressors.push((level, Compressor::new(lvl)));
                compressors.len() - 1
            }
        };
        let compressor = &mut compressors[index].1;
        let bound = compressor.deflate_compress_bound(record.len());
        let mut out = vec![0u8; GZIP_HEADER.len() + bound + 8];
        out[..GZIP_HEADER.len()].copy_from_slice(&GZIP_HEADER);
        let written = compressor
            .deflate_compress(record, &mut out[GZIP_HEADER.len()..])
            .expect("the output buffer is the compressor's own bound");
        out.truncate(GZIP_HEADER.len() + written);
        // crc32fast uses the CPU's carry-less multiply where it has one: several times faster
        // than a table-driven CRC, and this pass reads every archived byte.
        out.extend_from_slice(&crc32fast::hash(record).to_le_bytes());
        out.extend_from_slice(&(record.len() as u32).to_le_bytes());
        out
    })
}

/// The level a record of `len` bytes is compressed at when `level` is asked for.
fn member_level(len: usize, level: u32) -> u32 {
    if len < SMALL_RECORD && level <= FAST_LEVELS {
        level.min(1)
    } else {
        level
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::{GzDecoder, MultiGzDecoder};
    use std::io::Read;

    #[test]
    fn members_concatenate_into_a_multi_member_file() {
        let mut file = gzip_member(b"first", 6);
        let first_len = file.len();
        file.extend(gzip_member(b"second", 1));
        // A single-member decoder stops after the first member: members are independent.
        let mut one = String::new();
        GzDecoder::new(&file[..]).read_to_string(&mut one).unwrap();
        assert_eq!(one, "first");
        let mut two = String::new();
        GzDecoder::new(&file[first_len..])
            .read_to_string(&mut two)
            .unwrap();
        assert_eq!(two, "second");
    }

    #[test]
    fn small_records_use_level_one_at_the_fast_levels_only() {
        let request = b"GET /p/1.html HTTP/1.1\r\nHost: 127.1.0.1:8080\r\nUser-Agent: trawl/0.1.0 (+https://github.com/trawl-crawler/trawl)\r\nAccept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\nAccept-Encoding: gzip, deflate, br\r\nConnection: keep-alive\r\n\r\n".repeat(3);
        assert!(request.len() < SMALL_RECORD);
        assert_eq!(gzip_member(&request, 3), gzip_member(&request, 1));
        assert_eq!(gzip_member(&request, 0), gzip_member(&request, 0));
        assert_eq!(member_level(request.len(), 6), 6);
        assert_eq!(member_level(request.len(), 2), 1);
        assert_eq!(member_level(request.len(), 0), 0);
        let page = request.repeat(20);
        assert!(page.len() >= SMALL_RECORD);
        assert_eq!(member_level(page.len(), 3), 3);
        assert_ne!(gzip_member(&page, 3), gzip_member(&page, 1));
        for (data, level) in [(&request, 3), (&page, 3), (&request, 6)] {
            let mut back = Vec::new();
            GzDecoder::new(&gzip_member(data, level)[..])
                .read_to_end(&mut back)
                .unwrap();
            assert_eq!(&back, data);
        }
    }

    #[test]
    fn a_record_in_parts_is_one_member_streamed_when_large() {
        let head = b"WARC/1.1\r\nContent-Length: 9\r\n\r\n".to_vec();
        let body: Vec<u8> = (0..STREAMED_RECORD as u32 + 5000)
            .map(|i| (i % 251) as u8 ^ (i / 7) as u8)
            .collect();
        for level in [0, 3, 9] {
            let parts: [&[u8]; 3] = [&head, &body, b"\r\n\r\n"];
            let member = gzip_member_streamed(&parts, level);
            // One member: a single-member decoder reads all of it, CRC and length checked.
            let mut back = Vec::new();
            GzDecoder::new(&member[..]).read_to_end(&mut back).unwrap();
            assert_eq!(back, parts.concat(), "level {level}");
        }
    }

    #[test]
    fn reused_state_round_trips_large_and_empty_records() {
        let big: Vec<u8> = (0..300_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 7) as u8)
            .collect();
        for level in [1, 6, 1, 9, 0] {
            for data in [&big[..], b"", b"x"] {
                let member = gzip_member(data, level);
                let mut back = Vec::new();
                MultiGzDecoder::new(&member[..])
                    .read_to_end(&mut back)
                    .unwrap();
                assert_eq!(back, data, "level {level}");
            }
        }
    }
}
