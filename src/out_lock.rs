//! One crawl per output directory: an exclusive advisory lock on `DIR/.trawl.lock`, held for the
//! life of the process (the OS releases it even after kill -9), and one on the directory
//! itself, which holds when the lock file is deleted under a running crawl (a wrapper's
//! "stale lock" clean-up): before, a second run then went on to repair the running crawl's
//! open WARC file.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Name of the lock file inside the output directory.
pub const LOCK_FILE: &str = ".trawl.lock";

/// Why the directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("{dir} is in use by another trawl process{}", .pid.as_ref().map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Busy {
        /// The directory.
        dir: PathBuf,
        /// The holder's pid, as it wrote it.
        pid: Option<String>,
    },
    /// The lock file could not be opened or written.
    #[error("cannot lock {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// A held lock; dropping it releases the directory.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    _dir: File,
}

impl DirLock {
    /// Locks `dir` or says who holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let held_dir = File::open(dir).map_err(io)?;
        if file.try_lock().is_err() || held_dir.try_lock().is_err() {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let pid = pid.trim().to_string();
            return Err(LockError::Busy {
                dir: dir.to_path_buf(),
                pid: (!pid.is_empty()).then_some(pid),
            });
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        Ok(DirLock {
            _file: file,
            _dir: held_dir,
        })
    }

    /// True when some process holds the lock on `dir` right now.
    pub fn is_held(dir: &Path) -> bool {
        let held = |f: File| f.try_lock_shared().is_err();
        File::open(dir.join(LOCK_FILE)).is_ok_and(held) || File::open(dir).is_ok_and(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path()).unwrap();
        assert!(DirLock::is_held(dir.path()));
        match DirLock::acquire(dir.path()) {
            Err(LockError::Busy { pid, .. }) => {
                assert_eq!(pid, Some(std::process::id().to_string()))
            }
            other => panic!("{other:?}"),
        }
        drop(first);
        assert!(!DirLock::is_held(dir.path()));
        DirLock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn a_lock_file_deleted_under_a_crawl_does_not_let_a_second_in() {
        let dir = tempfile::tempdir().unwrap();
        let _first = DirLock::acquire(dir.path()).unwrap();
        std::fs::remove_file(dir.path().join(LOCK_FILE)).unwrap();
        assert!(DirLock::is_held(dir.path()));
        assert!(matches!(
            DirLock::acquire(dir.path()),
            Err(LockError::Busy { .. })
        ));
    }
}
