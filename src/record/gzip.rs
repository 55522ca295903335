//! Compresses one WARC record into its own gzip member (WARC 1.1 annex D).

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

/// Returns `record` as a complete, self-contained gzip member.
pub fn gzip_member(record: &[u8], level: u32) -> Vec<u8> {
    let mut encoder = GzEncoder::new(
        Vec::with_capacity(record.len() / 3 + 64),
        Compression::new(level),
    );
    // Writing to a Vec cannot fail.
    encoder.write_all(record).expect("write to Vec");
    encoder.finish().expect("finish to Vec")
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;
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
}
