//! Repair of WARC files left open by a crash (kill -9, power loss).
//!
//! A `.warc.gz.open` file holds complete gzip members followed, perhaps, by a partial one.
//! Repair keeps every member that decompresses completely into a whole WARC record, cuts the
//! file after the last of them (and after the last whole capture: a request whose response was
//! cut goes too), verifies the result by reading it back, syncs it, and renames it to its final
//! name (an empty remainder is removed instead). A file damaged before its end (complete
//! records after a member that does not read: a disk fault, pages lost out of order at a power
//! cut) is neither cut nor removed: it is renamed `.damaged`, every byte kept.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use flate2::bufread::GzDecoder;

use super::naming::{OPEN_SUFFIX, WARC_SUFFIX};
use super::reader::{each_record, Counting};

/// What repairing one file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// The `.open` file found.
    pub open_path: PathBuf,
    /// The final file, or `None` when nothing complete was left and the file was removed, or
    /// when it was put aside as damaged.
    pub final_path: Option<PathBuf>,
    /// Where a file damaged before its end was put aside, whole.
    pub damaged: Option<PathBuf>,
    /// Complete records kept.
    pub records: usize,
    /// Bytes cut from the end.
    pub cut_bytes: u64,
}

/// Repairs every `.warc.gz.open` file in `dir`.
pub fn repair_open_files(dir: &Path) -> io::Result<Vec<Repair>> {
    let mut open: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.to_string_lossy()
                .ends_with(&format!("{WARC_SUFFIX}{OPEN_SUFFIX}"))
        })
        .collect();
    open.sort();
    open.iter().map(|p| repair_file(p)).collect()
}

/// The file's leading complete members holding complete WARC records.
struct Prefix {
    /// Their length.
    good: u64,
    /// How many.
    records: usize,
    /// Where the last of them starts, when it is a request (its response is not in the file
    /// unless a record follows it).
    last_request: Option<u64>,
}

/// Reads the complete members at the start of `path`.
fn good_prefix(path: &Path) -> io::Result<Prefix> {
    let mut reader = Counting {
        inner: BufReader::new(File::open(path)?),
        consumed: 0,
    };
    let mut prefix = Prefix {
        good: 0,
        records: 0,
        last_request: None,
    };
    loop {
        match reader.fill_buf() {
            Ok([]) | Err(_) => return Ok(prefix),
            Ok(_) => {}
        }
        let mut raw = Vec::new();
        if GzDecoder::new(&mut reader).read_to_end(&mut raw).is_err() || !is_complete_record(&raw) {
            return Ok(prefix);
        }
        prefix.last_request = is_request(&raw).then_some(prefix.good);
        prefix.good = reader.consumed;
        prefix.records += 1;
    }
}

/// True for a `request` record.
fn is_request(raw: &[u8]) -> bool {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).lines().any(|l| {
        l.split_once(':').is_some_and(|(k, v)| {
            k.trim().eq_ignore_ascii_case("warc-type") && v.trim().eq_ignore_ascii_case("request")
        })
    })
}

/// Most places after `from` tried as the start of a later member (each where the gzip magic
/// bytes stand): enough to find one past a damaged stretch, bounded on a file of noise.
const MAX_RESYNC_TRIES: usize = 256;

/// True when a WARC record can be read from a gzip member that starts somewhere after byte
/// `from` of `path`: the file goes on past a member that does not read, so what ends there is
/// damage, not a crash's unfinished tail. Read a window at a time (a crash's tail is short,
/// and a damaged file is not loaded whole).
fn holds_a_record_after(path: &Path, from: u64) -> io::Result<bool> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut window = vec![0u8; RESYNC_WINDOW];
    let (mut offset, mut tries) = (from + 1, 0);
    while offset < len && tries < MAX_RESYNC_TRIES {
        file.seek(SeekFrom::Start(offset))?;
        let mut n = 0;
        while n < window.len() {
            match file.read(&mut window[n..])? {
                0 => break,
                read => n += read,
            }
        }
        let starts = window[..n].windows(3).enumerate();
        for (at, _) in starts.filter(|(_, w)| *w == [0x1f, 0x8b, 0x08]) {
            tries += 1;
            if tries > MAX_RESYNC_TRIES {
                break;
            }
            if member_reads_as_record(path, offset + at as u64)? {
                return Ok(true);
            }
        }
        if n < 3 {
            break;
        }
        // The magic bytes may straddle two windows.
        offset += (n - 2) as u64;
    }
    Ok(false)
}

/// Bytes of a file scanned at a time for the start of a later member.
const RESYNC_WINDOW: usize = 1 << 20;

/// True when the gzip member at byte `at` of `path` decompresses whole (its CRC checked) into
/// something that starts as a WARC record; read as a stream, whatever its size.
fn member_reads_as_record(path: &Path, at: u64) -> io::Result<bool> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(at))?;
    let mut member = GzDecoder::new(BufReader::new(file));
    let mut start = [0u8; 5];
    if member.read_exact(&mut start).is_err() || &start != b"WARC/" {
        return Ok(false);
    }
    Ok(io::copy(&mut member, &mut io::sink()).is_ok())
}

fn is_complete_record(raw: &[u8]) -> bool {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&raw[..end]);
    if !head.starts_with("WARC/") {
        return false;
    }
    let len = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse::<usize>().ok())?
    });
    match len {
        Some(len) => raw.len() == end + 4 + len + 4 && raw.ends_with(b"\r\n\r\n"),
        None => false,
    }
}

fn repair_file(open_path: &Path) -> io::Result<Repair> {
    let total = std::fs::metadata(open_path)?.len();
    let prefix = good_prefix(open_path)?;
    let name = open_path.to_string_lossy();
    let stem = name.strip_suffix(OPEN_SUFFIX).expect("has the suffix");
    if prefix.good < total && holds_a_record_after(open_path, prefix.good)? {
        // Archived data is never removed: the file goes aside whole, for a person to read.
        let damaged = PathBuf::from(format!("{stem}.damaged"));
        std::fs::rename(open_path, &damaged)?;
        return Ok(Repair {
            open_path: open_path.to_path_buf(),
            final_path: None,
            damaged: Some(damaged),
            records: prefix.records,
            cut_bytes: 0,
        });
    }
    // A request whose response the crash cut: the pair is not split.
    let (good, records) = match prefix.last_request {
        Some(start) if prefix.good < total => (start, prefix.records - 1),
        _ => (prefix.good, prefix.records),
    };
    // A file with only its warcinfo record holds no capture: remove it.
    if records <= 1 {
        std::fs::remove_file(open_path)?;
        return Ok(Repair {
            open_path: open_path.to_path_buf(),
            final_path: None,
            damaged: None,
            records: 0,
            cut_bytes: total,
        });
    }
    let file = OpenOptions::new().write(true).open(open_path)?;
    file.set_len(good)?;
    file.sync_all()?;
    drop(file);
    // Verify by reading it back before giving it its final name.
    let mut back = 0;
    for record in each_record(open_path)? {
        record?;
        back += 1;
    }
    if back != records {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: repaired file reads back {} records, expected {records}",
                open_path.display(),
                back
            ),
        ));
    }
    let final_path = PathBuf::from(stem);
    std::fs::rename(open_path, &final_path)?;
    Ok(Repair {
        open_path: open_path.to_path_buf(),
        final_path: Some(final_path),
        damaged: None,
        records,
        cut_bytes: total - good,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::gzip_member;

    fn record(body: &str) -> Vec<u8> {
        typed("resource", body)
    }

    #[test]
    fn cuts_a_partial_last_member_and_renames() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("t-20261122000000-00000.warc.gz.open");
        let good: Vec<u8> = [
            gzip_member(&record("info"), 6),
            gzip_member(&record("one"), 6),
            gzip_member(&record("two"), 6),
        ]
        .concat();
        let partial = gzip_member(&record(&"x".repeat(5000)), 6);
        std::fs::write(&open, [&good[..], &partial[..partial.len() / 2]].concat()).unwrap();
        let repairs = repair_open_files(dir.path()).unwrap();
        assert_eq!(repairs.len(), 1);
        let r = &repairs[0];
        assert_eq!(r.records, 3);
        assert_eq!(r.cut_bytes, (partial.len() / 2) as u64);
        let final_path = r.final_path.clone().unwrap();
        assert!(final_path.to_string_lossy().ends_with(".warc.gz"));
        assert_eq!(std::fs::read(&final_path).unwrap(), good);
        assert!(!open.exists());
    }

    #[test]
    fn a_member_with_a_truncated_record_inside_is_cut_too() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("t-20261122000000-00001.warc.gz.open");
        let good: Vec<u8> = [
            gzip_member(&record("info"), 6),
            gzip_member(&record("one"), 6),
        ]
        .concat();
        let short = gzip_member(b"WARC/1.1\r\nContent-Length: 100\r\n\r\nabc", 6);
        std::fs::write(&open, [&good[..], &short[..]].concat()).unwrap();
        let r = &repair_open_files(dir.path()).unwrap()[0];
        assert_eq!(r.records, 2);
        assert_eq!(std::fs::read(r.final_path.as_ref().unwrap()).unwrap(), good);
    }

    fn typed(kind: &str, body: &str) -> Vec<u8> {
        format!(
            "WARC/1.1\r\nWARC-Type: {kind}\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
            body.len()
        )
        .into_bytes()
    }

    #[test]
    fn a_request_whose_response_was_cut_goes_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("t-20261122000000-00003.warc.gz.open");
        let pairs: Vec<u8> = [
            gzip_member(&record("info"), 6),
            gzip_member(&typed("request", "GET /a"), 6),
            gzip_member(&typed("response", "200 a"), 6),
        ]
        .concat();
        let request = gzip_member(&typed("request", "GET /b"), 6);
        let response = gzip_member(&typed("response", &"b".repeat(5000)), 6);
        let cut = &response[..response.len() / 2];
        std::fs::write(&open, [&pairs[..], &request[..], cut].concat()).unwrap();
        let r = &repair_open_files(dir.path()).unwrap()[0];
        assert_eq!(r.records, 3);
        assert_eq!(
            std::fs::read(r.final_path.as_ref().unwrap()).unwrap(),
            pairs
        );
    }

    #[test]
    fn a_file_damaged_before_its_end_is_put_aside_whole() {
        let members = [
            gzip_member(&record("info"), 6),
            gzip_member(&record("one"), 6),
            gzip_member(&record("two"), 6),
        ];
        // Damage in the warcinfo record (once removed, with the records after it), and in
        // the middle (once cut there).
        for (n, damaged_member) in [(4usize, 0usize), (5, 1)] {
            let dir = tempfile::tempdir().unwrap();
            let open = dir
                .path()
                .join(format!("t-20261122000000-0000{n}.warc.gz.open"));
            let mut bytes = members.concat();
            let at: usize = members[..damaged_member]
                .iter()
                .map(Vec::len)
                .sum::<usize>()
                + 12;
            bytes[at..at + 6].copy_from_slice(b"\0\0\0\0\0\0");
            std::fs::write(&open, &bytes).unwrap();
            let r = &repair_open_files(dir.path()).unwrap()[0];
            assert_eq!(r.final_path, None);
            let aside = r.damaged.as_ref().expect("put aside");
            assert!(aside.to_string_lossy().ends_with(".warc.gz.damaged"));
            assert_eq!(std::fs::read(aside).unwrap(), bytes, "every byte kept");
        }
    }

    #[test]
    fn nothing_but_warcinfo_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("t-20261122000000-00002.warc.gz.open");
        std::fs::write(&open, gzip_member(&record("info"), 6)).unwrap();
        let r = &repair_open_files(dir.path()).unwrap()[0];
        assert_eq!(r.final_path, None);
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }
}
