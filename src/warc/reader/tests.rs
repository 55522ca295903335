//! Tests of `warc/reader/mod.rs`.

use super::*;
use crate::record::gzip_member;

#[test]
fn other_files_are_not_warc() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.warc");
    std::fs::write(&text, b"just some text\nmore\n").unwrap();
    let err = read_records(&text).unwrap_err().to_string();
    assert!(err.contains("not a WARC file"), "{err}");
    let gz = dir.path().join("data.warc.gz");
    std::fs::write(&gz, gzip_member(b"{\"json\": true}", 6)).unwrap();
    let err = read_records(&gz).unwrap_err().to_string();
    assert!(err.contains("not a WARC file"), "{err}");
}

#[test]
fn reads_members_with_offsets_and_lengths() {
    let dir = tempfile::tempdir().unwrap();
    let a = b"WARC/1.1\r\nWARC-Type: warcinfo\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n";
    let b = b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://x/\r\nContent-Length: 0\r\n\r\n\r\n\r\n";
    let (ga, gb) = (gzip_member(a, 6), gzip_member(b, 1));
    let path = dir.path().join("t.warc.gz");
    std::fs::write(&path, [ga.clone(), gb.clone()].concat()).unwrap();
    let recs = read_records(&path).unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!((recs[0].offset, recs[0].length), (0, ga.len() as u64));
    assert_eq!(
        (recs[1].offset, recs[1].length),
        (ga.len() as u64, gb.len() as u64)
    );
    assert_eq!(&recs[0].block[..], b"abc");
    assert_eq!(recs[1].header("warc-target-uri"), Some("http://x/"));

    assert_eq!(recs[1].indexed_length(), gb.len() as u64);

    let plain = dir.path().join("t.warc");
    std::fs::write(&plain, [&a[..], &b[..]].concat()).unwrap();
    let recs = read_records(&plain).unwrap();
    assert_eq!(
        (recs[1].offset, recs[1].length),
        (a.len() as u64, b.len() as u64)
    );
    // An index gives an uncompressed record without the CRLFs that end it (cdxj-indexer).
    assert_eq!(recs[0].indexed_length(), a.len() as u64 - 4);
}

#[test]
fn a_long_block_is_read_into_a_spool_file_beside_the_warc() {
    let dir = tempfile::tempdir().unwrap();
    let block: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
    let mut raw = format!(
        "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    let header_len = raw.len() as u64;
    raw.extend_from_slice(&block);
    raw.extend_from_slice(b"\r\n\r\n");
    let short = b"WARC/1.1\r\nWARC-Type: warcinfo\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n";
    for gzipped in [true, false] {
        let (name, bytes) = match gzipped {
            true => (
                "t.warc.gz",
                [gzip_member(&raw, 1), gzip_member(short, 1)].concat(),
            ),
            false => ("t.warc", [&raw[..], &short[..]].concat()),
        };
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let recs: Vec<_> = records(&path).unwrap().map(Result::unwrap).collect();
        let (long, member) = &recs[0];
        assert!(long.block == Spooled::Memory(block.clone()) && long.header_len == header_len);
        assert!(long.block.spool_dir().is_some(), "spooled");
        assert_eq!(&recs[1].0.block[..], b"abc");
        if let Some(member) = member {
            // The member's footer, as read from the bytes.
            assert_eq!(member.crc, crc32fast::hash(&raw));
            assert_eq!(member.inflated_len, raw.len() as u32);
        }
        std::fs::remove_file(&path).unwrap();
    }
    // The spool files have no names.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_long_block_goes_to_the_temporary_directory_when_none_can_be_made_beside_the_warc() {
    // WARCs on a read-only mount: the directory beside them makes no file.
    let block: Vec<u8> = (0..2_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut raw = format!("WARC/1.1\r\nContent-Length: {}\r\n\r\n", block.len()).into_bytes();
    raw.extend_from_slice(&block);
    raw.extend_from_slice(b"\r\n\r\n");
    let nowhere = SpoolDir::quiet("/nonexistent/warcs");
    let (_, read, _) = read_plain_record(&mut &raw[..], &nowhere).unwrap();
    assert!(read == Spooled::Memory(block));
    // Spooled all the same: nowhere but in the temporary directory.
    assert!(read.spool_dir().is_some());
}

#[test]
fn a_file_gzipped_as_a_whole_is_an_error_not_one_record() {
    let dir = tempfile::tempdir().unwrap();
    let a = b"WARC/1.1\r\nWARC-Type: warcinfo\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n";
    let b = b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://x/\r\nContent-Length: 0\r\n\r\n\r\n\r\n";
    let path = dir.path().join("whole.warc.gz");
    std::fs::write(&path, gzip_member(&[&a[..], &b[..]].concat(), 6)).unwrap();
    let err = read_records(&path).unwrap_err().to_string();
    assert!(err.contains("holds more than one record"), "{err}");
    // A member that ends in a few stray line ends still holds one record.
    let padded = dir.path().join("padded.warc.gz");
    std::fs::write(&padded, gzip_member(&[&a[..], b"\r\n"].concat(), 6)).unwrap();
    assert_eq!(read_records(&padded).unwrap().len(), 1);
}

#[test]
fn a_header_of_bare_line_feeds_is_read_not_run_into_the_block() {
    let dir = tempfile::tempdir().unwrap();
    let http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nhi";
    let record = |nl: &str, end: &[u8]| {
        let mut r = format!(
            "WARC/1.1{nl}WARC-Type: response{nl}WARC-Target-URI: http://x/{nl}Content-Length: {}{nl}{nl}",
            http.len()
        )
        .into_bytes();
        r.extend_from_slice(http);
        r.extend_from_slice(end);
        r
    };
    let (one, two, three) = (
        record("\r\n", b"\r\n\r\n"),
        record("\n", b"\r\n\r\n"),
        record("\n", b"\n\n"),
    );
    let plain = [&one[..], &two[..], &three[..], &one[..]].concat();
    let gzipped = [&one, &two, &three, &one]
        .iter()
        .map(|r| gzip_member(r, 6))
        .collect::<Vec<_>>()
        .concat();
    for (name, bytes) in [("t.warc", plain), ("t.warc.gz", gzipped)] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let recs = read_records(&path).unwrap();
        assert_eq!(recs.len(), 4, "{name}");
        for r in &recs {
            assert_eq!(r.header("WARC-Type"), Some("response"), "{name}");
            assert_eq!(r.target_uri(), Some("http://x/"), "{name}");
            assert_eq!(&r.block[..], http, "{name}");
        }
    }
}

#[test]
fn line_ends_and_empty_members_between_records_are_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let a = b"WARC/1.1\r\nWARC-Type: warcinfo\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n";
    let b = b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://x/\r\nContent-Length: 0\r\n\r\n\r\n\r\n";
    // Between the records: an empty member, one of line ends, and line ends outside any
    // member; after the last, line ends (as warcio and cdxj-indexer read past them).
    let (ga, gb) = (gzip_member(a, 6), gzip_member(b, 6));
    let between = [
        gzip_member(b"", 6),
        gzip_member(b"\r\n\r\n", 6),
        b"\r\n".to_vec(),
    ]
    .concat();
    let gz = dir.path().join("t.warc.gz");
    std::fs::write(&gz, [&ga[..], &between, &gb, b"\r\n\r\n"].concat()).unwrap();
    let recs = read_records(&gz).unwrap();
    assert_eq!(recs.len(), 2);
    let at = (ga.len() + between.len()) as u64;
    assert_eq!((recs[1].offset, recs[1].length), (at, gb.len() as u64));
    assert_eq!(recs[1].target_uri(), Some("http://x/"));
    // A member that starts with line ends before its record keeps them in its CRC.
    let led = dir.path().join("led.warc.gz");
    let with_lead = [&b"\r\n"[..], &b[..]].concat();
    std::fs::write(&led, [ga.clone(), gzip_member(&with_lead, 6)].concat()).unwrap();
    let members: Vec<_> = records(&led)
        .unwrap()
        .map(|r| r.unwrap().1.unwrap())
        .collect();
    assert_eq!(members[1].crc, crc32fast::hash(&with_lead));
    assert_eq!(members[1].inflated_len as usize, with_lead.len());

    let plain = dir.path().join("t.warc");
    std::fs::write(&plain, [&a[..], b"\r\n\n", &b[..], b"\r\n"].concat()).unwrap();
    let recs = read_records(&plain).unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1].offset, a.len() as u64 + 3);
    // Anything else between records is still an error, not passed over.
    std::fs::write(&gz, [&ga[..], b"junk", &gb].concat()).unwrap();
    assert!(read_records(&gz).is_err());
    std::fs::write(&plain, [&a[..], b"junk\r\n", &b[..]].concat()).unwrap();
    assert!(read_records(&plain).is_err());
}
