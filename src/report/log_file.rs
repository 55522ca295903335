//! The `--log-file`, appended to by the log, the crawl command's messages and the progress
//! lines, each through its own [`LogFile`]. On SIGHUP every one is opened again at its path
//! ([`reopen_all`]): logrotate moves the file away and `postrotate kill -HUP` makes the crawl
//! write a new one, as daemons do; before, the crawl went on writing into the moved file, and
//! SIGHUP's default action ended the crawl like a kill.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Every log file handle open in this process, for [`reopen_all`].
static OPEN: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

struct Shared {
    path: PathBuf,
    file: Mutex<File>,
}

/// A log file opened for appending; each `write` is one append of the whole buffer.
#[derive(Clone)]
pub struct LogFile(Arc<Shared>);

impl LogFile {
    /// Opens `path` for appending (created if missing).
    pub fn open(path: &Path) -> io::Result<LogFile> {
        let shared = Arc::new(Shared {
            path: path.to_path_buf(),
            file: Mutex::new(append_to(path)?),
        });
        let mut open = lock(&OPEN);
        open.retain(|handle| handle.strong_count() > 0);
        open.push(Arc::downgrade(&shared));
        Ok(LogFile(shared))
    }
}

impl LogFile {
    /// Appends `bytes` in one write.
    pub fn append(&self, bytes: &[u8]) -> io::Result<()> {
        lock(&self.0.file).write_all(bytes)
    }
}

impl Write for LogFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.append(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        lock(&self.0.file).flush()
    }
}

/// Opens every log file of this process again at its path. Returns the paths that could not
/// be opened (those handles keep writing where they did).
pub fn reopen_all() -> Vec<(PathBuf, io::Error)> {
    let handles: Vec<Arc<Shared>> = lock(&OPEN).iter().filter_map(Weak::upgrade).collect();
    let mut failed = Vec::new();
    for shared in handles {
        match append_to(&shared.path) {
            Ok(file) => *lock(&shared.file) = file,
            Err(e) => failed.push((shared.path.clone(), e)),
        }
    }
    failed
}

fn append_to(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_log_file_is_written_anew_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.log");
        let mut log = LogFile::open(&path).unwrap();
        log.write_all(b"before\n").unwrap();
        let rotated = dir.path().join("crawl.log.1");
        std::fs::rename(&path, &rotated).unwrap();
        log.write_all(b"moved\n").unwrap();
        assert!(reopen_all().is_empty());
        log.write_all(b"after\n").unwrap();
        assert_eq!(std::fs::read(&rotated).unwrap(), b"before\nmoved\n");
        assert_eq!(std::fs::read(&path).unwrap(), b"after\n");
    }
}
