//! Compresses one WARC record into its own gzip member (WARC 1.1 annex D).
//!
//! Each thread keeps one deflate state per level and resets it between records: setting up a
//! fresh deflate state allocates and clears a few hundred KB, which is a real cost when every
//! page makes two records (measured in docs/PERFORMANCE.md).

use std::cell::RefCell;

use flate2::{Compress, Compression, Crc, FlushCompress, Status};

/// The fixed 10-byte gzip header: magic, deflate, no flags, no mtime, no extra flags, OS unknown.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];

thread_local! {
    static DEFLATE: RefCell<Option<(u32, Compress)>> = const { RefCell::new(None) };
}

/// Returns `record` as a complete, self-contained gzip member.
pub fn gzip_member(record: &[u8], level: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(record.len() / 3 + 64);
    out.extend_from_slice(&GZIP_HEADER);
    DEFLATE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let reuse = matches!(&*slot, Some((l, _)) if *l == level);
        if !reuse {
            *slot = Some((level, Compress::new(Compression::new(level), false)));
        }
        let (_, deflate) = slot.as_mut().expect("set above");
        deflate.reset();
        deflate_all(deflate, record, &mut out);
    });
    let mut crc = Crc::new();
    crc.update(record);
    out.extend_from_slice(&crc.sum().to_le_bytes());
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
