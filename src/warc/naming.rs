//! WARC file names: `PREFIX-YYYYMMDDhhmmss-NNNNN.warc.gz`, written as `.warc.gz.open` until
//! closed. Serial numbers continue after the highest one already in the output directory, so a
//! second run into the same directory never overwrites a file.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Suffix of a finished WARC file.
pub const WARC_SUFFIX: &str = ".warc.gz";
/// Suffix of the file being written.
pub const OPEN_SUFFIX: &str = ".open";

/// Makes file names for one prefix in one directory.
#[derive(Debug, Clone)]
pub struct WarcNaming {
    dir: PathBuf,
    prefix: String,
    next_serial: u64,
}

impl WarcNaming {
    /// Starts after the highest serial found in `dir` for `prefix`.
    pub fn new(dir: &Path, prefix: &str) -> std::io::Result<Self> {
        let mut next_serial = 0;
        for entry in std::fs::read_dir(dir)? {
            let name = entry?.file_name();
            if let Some(serial) = serial_of(&name.to_string_lossy(), prefix) {
                next_serial = next_serial.max(serial + 1);
            }
        }
        Ok(WarcNaming {
            dir: dir.to_path_buf(),
            prefix: prefix.to_string(),
            next_serial,
        })
    }

    /// Makes the next serial also follow the highest of `dir`'s files (a missing directory
    /// holds none).
    pub fn continue_after_files_in(&mut self, dir: &Path) -> std::io::Result<()> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let name = entry?.file_name();
            if let Some(serial) = serial_of(&name.to_string_lossy(), &self.prefix) {
                self.next_serial = self.next_serial.max(serial + 1);
            }
        }
        Ok(())
    }

    /// The final name and the `.open` path of the next file.
    pub fn next(&mut self, now: SystemTime) -> (String, PathBuf) {
        let stamp: String = humantime::format_rfc3339_seconds(now)
            .to_string()
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let name = format!(
            "{}-{}-{:05}{}",
            self.prefix, stamp, self.next_serial, WARC_SUFFIX
        );
        self.next_serial += 1;
        let open = self.dir.join(format!("{name}{OPEN_SUFFIX}"));
        (name, open)
    }

    /// The serial the next file will get.
    pub fn next_serial(&self) -> u64 {
        self.next_serial
    }

    /// The directory files are written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Expands files and directories into the finished WARC files they hold (`.warc.gz` and
/// `.warc`, never `.open`), directories sorted by name, files in the order given.
pub fn list_warc_files(inputs: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let n = p.to_string_lossy();
                    n.ends_with(WARC_SUFFIX) || n.ends_with(".warc")
                })
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(input.clone());
        }
    }
    Ok(out)
}

/// The serial number of a file name written with `prefix`, finished or open.
pub fn serial_of(name: &str, prefix: &str) -> Option<u64> {
    let rest = name.strip_prefix(prefix)?.strip_prefix('-')?;
    let rest = rest.strip_suffix(OPEN_SUFFIX).unwrap_or(rest);
    let rest = rest.strip_suffix(WARC_SUFFIX)?;
    let (stamp, serial) = rest.split_once('-')?;
    if stamp.len() != 14 || !stamp.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    serial.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn names_have_timestamp_and_serial() {
        let dir = tempfile::tempdir().unwrap();
        let mut n = WarcNaming::new(dir.path(), "crawl").unwrap();
        let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let (name, open) = n.next(t);
        assert_eq!(name, "crawl-20231114221320-00000.warc.gz");
        assert_eq!(
            open.file_name().unwrap(),
            "crawl-20231114221320-00000.warc.gz.open"
        );
        assert_eq!(n.next(t).0, "crawl-20231114221320-00001.warc.gz");
    }

    #[test]
    fn serial_continues_after_existing_files() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "crawl-20231114221320-00007.warc.gz",
            "crawl-20231114221320-00009.warc.gz.open",
            "other-20231114221320-00099.warc.gz",
            "crawl-notes.txt",
        ] {
            std::fs::write(dir.path().join(f), b"").unwrap();
        }
        let mut n = WarcNaming::new(dir.path(), "crawl").unwrap();
        assert!(n.next(UNIX_EPOCH).0.ends_with("-00010.warc.gz"));
    }
}
