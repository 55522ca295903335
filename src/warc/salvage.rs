//! Reading a WARC file past its damaged records: where a record cannot be read (a corrupt
//! gzip member, a bad header, a file cut short), the reader looks for the next record start
//! (the next gzip member header in a `.warc.gz`, the next `WARC/1.` line in a `.warc`) and
//! goes on from there. For readers that take what a file holds (the search index) rather than
//! judge it (the strict checks, which stop at the first fault).

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::reader::{records, records_from, Records, StoredRecord};

/// Most damaged places skipped per file before the rest of it is given up.
const MAX_RESYNCS: usize = 10_000;
/// What starts a gzip member as WARC writers write them (magic, deflate).
const GZIP_START: &[u8] = &[0x1f, 0x8b, 0x08];
/// What starts an uncompressed record.
const WARC_START: &[u8] = b"WARC/1.";

/// One step through a file.
#[derive(Debug)]
pub enum Salvaged {
    /// A record read whole.
    Record(StoredRecord),
    /// Bytes from `offset` could not be read as a record; reading resumes at the next record
    /// start, if there is one.
    Damaged {
        /// Where the unreadable record began.
        offset: u64,
        /// Why it could not be read.
        error: String,
    },
}

/// The iterator of [`salvage_records`].
pub struct SalvageRecords {
    path: PathBuf,
    records: Option<Records>,
    gzipped: bool,
    /// Where the next record starts, as far as is known.
    next_start: u64,
    resyncs: usize,
}

/// Reads the records of `path`, stepping over damaged ones.
pub fn salvage_records(path: &Path) -> io::Result<SalvageRecords> {
    let records = records(path)?;
    Ok(SalvageRecords {
        path: path.to_path_buf(),
        gzipped: records.gzipped(),
        records: Some(records),
        next_start: 0,
        resyncs: 0,
    })
}

impl Iterator for SalvageRecords {
    type Item = Salvaged;

    fn next(&mut self) -> Option<Salvaged> {
        let records = self.records.as_mut()?;
        match records.next()? {
            Ok((record, _)) => {
                self.next_start = record.offset + record.length;
                Some(Salvaged::Record(record))
            }
            Err(e) => {
                let offset = self.next_start;
                self.records = None;
                self.resyncs += 1;
                if self.resyncs <= MAX_RESYNCS {
                    let pattern = if self.gzipped { GZIP_START } else { WARC_START };
                    if let Ok(Some(start)) = find_from(&self.path, offset + 1, pattern) {
                        self.next_start = start;
                        self.records = records_from(&self.path, start, self.gzipped).ok();
                    }
                }
                Some(Salvaged::Damaged {
                    offset,
                    error: e.to_string(),
                })
            }
        }
    }
}

/// The offset of the first `pattern` at or after `from` in the file.
fn find_from(path: &Path, from: u64, pattern: &[u8]) -> io::Result<Option<u64>> {
    let mut file = BufReader::with_capacity(1 << 16, File::open(path)?);
    file.seek(SeekFrom::Start(from))?;
    let mut buf = vec![0u8; 1 << 16];
    // Bytes kept from the previous read, so a pattern across two reads is found.
    let mut carry = 0usize;
    let mut base = from;
    loop {
        let n = file.read(&mut buf[carry..])?;
        if n == 0 {
            return Ok(None);
        }
        let filled = carry + n;
        if let Some(at) = buf[..filled]
            .windows(pattern.len())
            .position(|w| w == pattern)
        {
            return Ok(Some(base + at as u64));
        }
        carry = (pattern.len() - 1).min(filled);
        buf.copy_within(filled - carry..filled, 0);
        base += (filled - carry) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn member(body: &str) -> Vec<u8> {
        let record = format!(
            "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
            body.len()
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(record.as_bytes()).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn a_corrupt_member_is_skipped_and_the_rest_read() {
        let dir = std::env::temp_dir().join(format!("trawl-salvage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.warc.gz");
        let (a, mut b, c) = (member("first"), member("second"), member("third"));
        // Corrupt the deflate stream of the middle member.
        let mid = b.len() / 2;
        for x in &mut b[mid - 2..mid + 2] {
            *x ^= 0xff;
        }
        let mut bytes = [a.clone(), b.clone(), c.clone()].concat();
        // And cut the file short in a fourth member.
        bytes.extend_from_slice(&member("fourth")[..12]);
        std::fs::write(&path, &bytes).unwrap();
        let items: Vec<Salvaged> = salvage_records(&path).unwrap().collect();
        let blocks: Vec<String> = items
            .iter()
            .filter_map(|i| match i {
                Salvaged::Record(r) => Some(String::from_utf8_lossy(&r.block).into_owned()),
                Salvaged::Damaged { .. } => None,
            })
            .collect();
        assert_eq!(blocks, ["first", "third"]);
        let damaged: Vec<u64> = items
            .iter()
            .filter_map(|i| match i {
                Salvaged::Damaged { offset, .. } => Some(*offset),
                Salvaged::Record(_) => None,
            })
            .collect();
        assert_eq!(
            damaged,
            [a.len() as u64, (a.len() + b.len() + c.len()) as u64]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
