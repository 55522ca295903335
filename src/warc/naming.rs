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
/// `.warc`, never `.open`), directories sorted by name, files in the order given. A
/// directory's own files only: a crawl's output and finished directories are listed each.
pub fn list_warc_files(inputs: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| is_warc_name(p))
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(input.clone());
        }
    }
    Ok(out)
}

/// The deepest directory [`warc_files_under`] goes into.
const MAX_DEPTH: usize = 32;

/// Expands the files and directories a user names into the WARC files they hold, each
/// directory searched through its subdirectories as cdxj-indexer searches it (a collection
/// kept by year or by crawl), sorted by path; hidden directories (a crawl's state) and
/// links to directories are passed over (a link can make a loop).
pub fn warc_files_under(inputs: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found = Vec::new();
            walk(input, 0, &mut found)?;
            found.sort();
            out.extend(found);
        } else {
            out.push(input.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if kind.is_dir() && !hidden && depth < MAX_DEPTH {
            walk(&path, depth + 1, found)?;
        } else if !kind.is_dir() && is_warc_name(&path) && path.is_file() {
            found.push(path);
        }
    }
    Ok(())
}

/// A finished WARC file's name: `.warc.gz` or `.warc`, in any case (`.WARC` of older tools).
fn is_warc_name(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    name.ends_with(WARC_SUFFIX) || name.ends_with(".warc")
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
    fn a_named_directory_is_searched_through_its_subdirectories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["2024/05", "2025", ".state"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            "a.warc.gz",
            "2024/05/b.WARC.GZ",
            "2025/c.warc",
            "2025/d.warc.gz.open",
            "2025/e.warc.wet.gz",
            ".state/f.warc.gz",
        ] {
            std::fs::write(root.join(f), b"").unwrap();
        }
        // A link back to the top makes no loop.
        std::os::unix::fs::symlink(root, root.join("2025/loop")).unwrap();
        let found = warc_files_under(&[root.to_path_buf()]).unwrap();
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["2024/05/b.WARC.GZ", "2025/c.warc", "a.warc.gz"]);
        // The crawl's own listing stays one directory deep.
        assert_eq!(list_warc_files(&[root.to_path_buf()]).unwrap().len(), 1);
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
