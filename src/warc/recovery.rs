//! Repair of WARC files left open by a crash (kill -9, power loss).
//!
//! A `.warc.gz.open` file holds complete gzip members followed, perhaps, by a partial one.
//! Repair keeps every member that decompresses completely into a whole WARC record, cuts the
//! file after the last of them, verifies the result by reading it back, syncs it, and renames it
//! to its final name (an empty remainder is removed instead).

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::bufread::GzDecoder;

use super::naming::{OPEN_SUFFIX, WARC_SUFFIX};
use super::reader::{each_record, Counting};

/// What repairing one file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// The `.open` file found.
    pub open_path: PathBuf,
    /// The final file, or `None` when nothing complete was left and the file was removed.
    pub final_path: Option<PathBuf>,
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

/// Length of the prefix made of complete members holding complete WARC records.
fn good_prefix(path: &Path) -> io::Result<(u64, usize)> {
    let mut reader = Counting {
        inner: BufReader::new(File::open(path)?),
        consumed: 0,
    };
    let (mut good, mut records) = (0u64, 0usize);
    loop {
        match reader.fill_buf() {
            Ok([]) => return Ok((good, records)),
            Ok(_) => {}
            Err(_) => return Ok((good, records)),
        }
        let mut raw = Vec::new();
        if GzDecoder::new(&mut reader).read_to_end(&mut raw).is_err() || !is_complete_record(&raw) {
            return Ok((good, records));
        }
        good = reader.consumed;
        records += 1;
    }
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
    let (good, records) = good_prefix(open_path)?;
    // A file with only its warcinfo record holds no capture: remove it.
    if records <= 1 {
        std::fs::remove_file(open_path)?;
        return Ok(Repair {
            open_path: open_path.to_path_buf(),
            final_path: None,
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
    let name = open_path.to_string_lossy();
    let final_path = PathBuf::from(name.strip_suffix(OPEN_SUFFIX).expect("has the suffix"));
    std::fs::rename(open_path, &final_path)?;
    Ok(Repair {
        open_path: open_path.to_path_buf(),
        final_path: Some(final_path),
        records,
        cut_bytes: total - good,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::gzip_member;

    fn record(body: &str) -> Vec<u8> {
        format!(
            "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
            body.len()
        )
        .into_bytes()
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
