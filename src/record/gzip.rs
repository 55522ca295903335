//! Compresses one WARC record into its own gzip member (WARC 1.1 annex D).
//!
//! Each thread keeps one deflate state per level and resets it between records: setting up a
//! fresh deflate state allocates and clears a few hundred KB, which is a real cost when every
//! page makes two records (measured in docs/PERFORMANCE.md).
//!
//! At the speed-oriented levels (3 and below, the default is 3), records under
//! [`SMALL_RECORD`] bytes (request records, revisits, metadata) are compressed at level 1: at
//! that size level 3 saves a few bytes, while building its dynamic Huffman trees costs more
//! than compressing the record (docs/PERFORMANCE.md: 12% less CPU per page on a web of small
//! pages for 2.3% more bytes, measured together with a smaller seen-cache change). `--gzip-level 4` and above apply to every record.

use std::cell::RefCell;

use flate2::{Compress, Compression, FlushCompress, Status};

/// The fixed 10-byte gzip header: magic, deflate, no flags, no mtime, no extra flags, OS unknown.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];

/// Records shorter than this are compressed at level 1 when the level is 3 or below.
pub const SMALL_RECORD: usize = 2048;
/// The highest level at which small records are compressed at level 1 instead.
const FAST_LEVELS: u32 = 3;

thread_local! {
    /// This thread's deflate states, one per level used (at most two: the configured level and
    /// the small-record level).
    static DEFLATE: RefCell<Vec<(u32, Compress)>> = const { RefCell::new(Vec::new()) };
}

/// Returns `record` as a complete, self-contained gzip member.
pub fn gzip_member(record: &[u8], level: u32) -> Vec<u8> {
    let level = if record.len() < SMALL_RECORD && level <= FAST_LEVELS {
        level.min(1)
    } else {
        level
    };
    let mut out = Vec::with_capacity(record.len() / 3 + 64);
    out.extend_from_slice(&GZIP_HEADER);
    DEFLATE.with(|cell| {
        let mut states = cell.borrow_mut();
        let index = match states.iter().position(|(l, _)| *l == level) {
            Some(i) => i,
            None => {
                states.push((level, Compress::new(Compression::new(level), false)));
                states.len() - 1
            }
        };
        let deflate = &mut states[index].1;
        deflate.reset();
        deflate_all(deflate, record, &mut out);
    });
    // crc32fast uses the CPU's carry-less multiply where it has one: several times faster than
    // the table-driven CRC that flate2's `Crc` runs, and this pass reads every archived byte.
    out.extend_from_slice(&crc32fast::hash(record).to_le_bytes());
    out.extend_from_slice(&(record.len() as u32).to_le_bytes());
    out
}

fn deflate_all(deflate: &mut Compress, mut input: &[u8], out: &mut Vec<u8>) {
    loop {
        if out.capacity() - out.len() < 1024 {
            out.reserve(out.capacity().max(4096));
        }
        let before_in = deflate.total_in();
        let status = deflate
            .compress_vec(input, out, FlushCompress::Finish)
            .expect("deflate into a Vec cannot fail");
        let consumed = (deflate.total_in() - before_in) as usize;
        input = &input[consumed..];
        if status == Status::StreamEnd {
            return;
        }
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
        assert_ne!(gzip_member(&request, 6), gzip_member(&request, 1));
        let page = request.repeat(20);
        assert!(page.len() >= SMALL_RECORD);
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
