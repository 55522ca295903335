//! A file written whole or not at all: to `PATH.part` beside it, then renamed over it, so a
//! reader never sees half a file, and an error (a full disk) leaves what was there before.

use std::io;
use std::path::{Path, PathBuf};

/// `PATH.part`: where `path` is written before it is renamed into place.
pub fn part_path(path: &Path) -> PathBuf {
    let mut part = path.as_os_str().to_owned();
    part.push(".part");
    PathBuf::from(part)
}

/// Writes `bytes` to `path` through [`part_path`]; on an error the part is removed.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let part = part_path(path);
    let written = std::fs::write(&part, bytes).and_then(|()| std::fs::rename(&part, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    written
}
