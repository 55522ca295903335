//! Bytes too many to hold in memory while a crawl holds many of them at once: the received
//! bytes of a long response, its de-chunked payload, its compressed record.
//!
//! Past [`SPOOL_AT`] such bytes are written to an unnamed file (`O_TMPFILE`) in the crawl's
//! output directory, and once complete they are read through a read-only memory map, so the
//! stages after fetch still see one `&[u8]` ([`Spooled`]). A fetch then holds at most about
//! [`SPOOL_AT`] of its body in memory, whatever `--max-body-size` allows, as Heritrix's
//! recorder spills to a file past its buffer; without it 32 fetches of 20 MiB bodies held
//! ~620 MB (docs/PERFORMANCE.md, "Memory on the hostile web").
//!
//! The file has no name: nothing is left behind by a crash or a kill, and no other process
//! can open, change or shorten it, which is what makes the map sound (see [`Spool::finish`]).
//! Its pages live in the page cache, which the kernel can write out and drop under pressure,
//! where the same bytes in the process's own memory could only grow it. Where the file cannot
//! be made (a filesystem without `O_TMPFILE`, a full disk) the bytes stay in memory, as
//! before; a fetch holds a body so at most 20 MiB, where it cuts it (`fetch/recorder.rs`,
//! `MAX_HELD`).

use std::fs::File;
use std::io::{self, Write};
use std::ops::{Deref, Range};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use memmap2::{Mmap, UncheckedAdvice};
use rustix::fs::{Mode, OFlags};

/// Bytes of one body held in memory before the rest goes to a spool file.
pub const SPOOL_AT: usize = 1 << 20;
/// Bytes of a spool file's map one pass holds in the resident set ([`Spooled::windows`],
/// [`Spooled::release_behind`]).
const WINDOW: usize = 8 << 20;

/// The directory spool files are made in (the crawl's output directory, whose free space the
/// disk guard watches).
#[derive(Debug, Clone)]
pub struct SpoolDir(Arc<DirState>);

#[derive(Debug)]
struct DirState {
    path: PathBuf,
    /// Set when a file could not be made there: later bytes stay in memory without asking
    /// again on every body.
    refused: AtomicBool,
    /// Say so, once, when no file can be made there.
    warn: bool,
}

impl SpoolDir {
    /// Spool files in `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        SpoolDir(Arc::new(DirState {
            path: path.into(),
            refused: AtomicBool::new(false),
            warn: true,
        }))
    }

    /// [`SpoolDir::new`] that says nothing when no file can be made there: for a caller with
    /// somewhere else to go.
    pub fn quiet(path: impl Into<PathBuf>) -> Self {
        SpoolDir(Arc::new(DirState {
            path: path.into(),
            refused: AtomicBool::new(false),
            warn: false,
        }))
    }

    /// A new, empty, unnamed file in the directory; an error when the filesystem cannot make
    /// one (after which the directory is not asked again).
    pub fn create(&self) -> io::Result<Spool> {
        if self.0.refused.load(Ordering::Relaxed) {
            return Err(io::Error::other("spool files refused earlier"));
        }
        let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
        match rustix::fs::open(&self.0.path, flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => Ok(Spool {
                file: File::from(fd),
                len: 0,
                dir: self.clone(),
            }),
            Err(e) => {
                // A full disk or too many open files pass; a filesystem without unnamed files,
                // or a directory that cannot be written, does not.
                use rustix::io::Errno;
                if ![Errno::NOSPC, Errno::MFILE, Errno::NFILE, Errno::INTR].contains(&e)
                    && !self.0.refused.swap(true, Ordering::Relaxed)
                    && self.0.warn
                {
                    tracing::warn!(
                        "no unnamed spool file can be made in {}: {e}; long bodies are held \
                         in memory instead (a fetched one is cut at 20 MiB)",
                        self.0.path.display()
                    );
                }
                Err(e.into())
            }
        }
    }
}

/// A spool file being written: bytes are only appended.
#[derive(Debug)]
pub struct Spool {
    file: File,
    /// Bytes written whole; a failed write is cut back to this.
    len: usize,
    dir: SpoolDir,
}

impl Spool {
    /// Bytes written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `bytes` whole, or on an error (a full disk) leaves the file as it was.
    pub fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self.file.write_all_at(bytes, self.len as u64) {
            Ok(()) => {
                self.len += bytes.len();
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len as u64);
                Err(e)
            }
        }
    }

    /// The bytes written, read-only: mapped, or read back into memory when they cannot be.
    pub fn finish(self) -> io::Result<Spooled> {
        if self.len == 0 {
            return Ok(Spooled::Memory(Vec::new()));
        }
        // SAFETY: a map is unsound if its file changes while mapped. This file has no name
        // (`O_TMPFILE`), so no other process can open it but through this process's own
        // /proc entries, open only to its user, who could change its memory anyway; this
        // `Spool`, the only handle that writes it, is consumed here, and the map only reads.
        match unsafe { Mmap::map(&self.file) } {
            Ok(map) => Ok(Spooled::Mapped(Mapped {
                map: Arc::new(map),
                start: 0,
                end: self.len,
                dir: self.dir,
            })),
            Err(_) => Ok(Spooled::Memory(self.read_back()?)),
        }
    }

    /// The bytes written, read back into memory (when the rest of the bytes could not follow
    /// them into the file).
    pub fn read_back(&self) -> io::Result<Vec<u8>> {
        let mut bytes = vec![0; self.len];
        self.file.read_exact_at(&mut bytes, 0)?;
        Ok(bytes)
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.append(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Bytes in memory, or in a spool file mapped read-only.
#[derive(Debug, Clone)]
pub enum Spooled {
    /// Held in memory.
    Memory(Vec<u8>),
    /// A range of a spool file's map.
    Mapped(Mapped),
}

/// A range of a finished spool file, mapped read-only; clones share the map.
#[derive(Debug, Clone)]
pub struct Mapped {
    map: Arc<Mmap>,
    start: usize,
    end: usize,
    dir: SpoolDir,
}

impl Spooled {
    /// Shortens the bytes to `len` (no-op when they are not longer).
    pub fn truncate(&mut self, len: usize) {
        match self {
            Spooled::Memory(bytes) => bytes.truncate(len),
            Spooled::Mapped(m) => m.end = m.end.min(m.start.saturating_add(len)),
        }
    }

    /// Takes the first `n` bytes off the front (all of them when fewer) and returns them.
    pub fn split_front(&mut self, n: usize) -> Vec<u8> {
        let n = n.min(self.len());
        match self {
            Spooled::Memory(bytes) => bytes.drain(..n).collect(),
            Spooled::Mapped(m) => {
                let front = m.map[m.start..m.start + n].to_vec();
                m.start += n;
                front
            }
        }
    }

    /// The bytes as a vector: the one they are in, or a copy of a spool file's.
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            Spooled::Memory(bytes) => bytes,
            mapped => mapped.to_vec(),
        }
    }

    /// Lets go of the pages of a spool file's map that reading it brought into the process
    /// (they stay in the page cache, and a later read brings them back): bytes read once need
    /// not stay in the resident set until dropped.
    pub fn release_pages(&self) {
        self.release_range(0..self.len());
    }

    /// `self[range]`, for one pass over it (a digest, compression), a window at a time: in
    /// memory, one window; from a spool file's map, windows of 8 MiB, each one's pages let go
    /// once the next is asked for, and the last's when the pass ends. Pages a map reads in
    /// count in the resident set until let go, so a pass over a body of 300 MB held them all
    /// (327 MB peak RSS for a crawl of that one body).
    pub fn windows(&self, range: Range<usize>) -> Windows<'_> {
        let end = range.end.min(self.len());
        Windows {
            bytes: self,
            at: range.start.min(end),
            end,
            last: None,
        }
    }

    /// For a pass that cannot read by [`Spooled::windows`] (one that parses across them, as
    /// de-chunking does): told how far into `self[start..]` it has read, the returned closure
    /// lets go of the pages behind that, a window at a time.
    pub fn release_behind(&self, start: usize) -> impl FnMut(usize) + '_ {
        let mut released = 0;
        move |at| {
            if at >= released + WINDOW {
                self.release_range(start + released..start + at);
                released = at;
            }
        }
    }

    /// Lets go of the pages of `self[range]` (a no-op for bytes in memory).
    fn release_range(&self, range: Range<usize>) {
        if let Spooled::Mapped(m) = self {
            let end = range.end.min(m.end - m.start);
            if range.start < end {
                // SAFETY: the map is a shared, read-only map of a file no one changes (see
                // `Spool::finish`): after MADV_DONTNEED its pages read back from the file as
                // they were, so slices borrowed from it keep their bytes.
                let _ = unsafe {
                    m.map.unchecked_advise_range(
                        UncheckedAdvice::DontNeed,
                        m.start + range.start,
                        end - range.start,
                    )
                };
            }
        }
    }

    /// Where more spool files for bytes made from these go: `Some` when these are in one.
    pub fn spool_dir(&self) -> Option<&SpoolDir> {
        match self {
            Spooled::Memory(_) => None,
            Spooled::Mapped(m) => Some(&m.dir),
        }
    }
}

/// The windows of [`Spooled::windows`].
pub struct Windows<'a> {
    bytes: &'a Spooled,
    at: usize,
    end: usize,
    /// The range handed out last, to let go of.
    last: Option<Range<usize>>,
}

impl Windows<'_> {
    fn let_go(&mut self) {
        if let Some(range) = self.last.take() {
            self.bytes.release_range(range);
        }
    }
}

impl<'a> Iterator for Windows<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        self.let_go();
        if self.at >= self.end {
            return None;
        }
        let piece = match self.bytes {
            Spooled::Memory(bytes) => {
                let piece = &bytes[self.at..self.end];
                self.at = self.end;
                piece
            }
            Spooled::Mapped(m) => {
                let to = self.end.min(self.at + WINDOW);
                let piece = &m.map[m.start + self.at..m.start + to];
                self.last = Some(self.at..to);
                self.at = to;
                piece
            }
        };
        Some(piece)
    }
}

impl Drop for Windows<'_> {
    fn drop(&mut self) {
        self.let_go();
    }
}

impl Default for Spooled {
    fn default() -> Self {
        Spooled::Memory(Vec::new())
    }
}

impl Deref for Spooled {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Spooled::Memory(bytes) => bytes,
            Spooled::Mapped(m) => &m.map[m.start..m.end],
        }
    }
}

impl AsRef<[u8]> for Spooled {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl From<Vec<u8>> for Spooled {
    fn from(bytes: Vec<u8>) -> Self {
        Spooled::Memory(bytes)
    }
}

impl PartialEq for Spooled {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Spooled {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spooled_bytes_read_back_as_written_and_leave_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let spools = SpoolDir::new(dir.path());
        let mut spool = spools.create().unwrap();
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        for piece in data.chunks(65_536) {
            spool.append(piece).unwrap();
        }
        let mut bytes = spool.finish().unwrap();
        assert!(matches!(bytes, Spooled::Mapped(_)));
        assert_eq!(&bytes[..], &data[..]);
        // The file has no name.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // Cut and split as a vector would be.
        let mut vec = Spooled::from(data.clone());
        for b in [&mut bytes, &mut vec] {
            assert_eq!(b.split_front(10), &data[..10]);
            b.truncate(1000);
        }
        assert_eq!(bytes, vec);
        for b in [&bytes, &vec] {
            let joined: Vec<u8> = b.windows(3..990).flatten().copied().collect();
            assert_eq!(joined, &data[13..1000]);
        }
        bytes.release_pages();
        assert_eq!(&bytes[..], &data[10..1010]);
        assert!(bytes.spool_dir().is_some() && vec.spool_dir().is_none());
    }

    #[test]
    fn a_long_spool_file_is_read_a_window_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = SpoolDir::new(dir.path()).create().unwrap();
        let data: Vec<u8> = (0..20_000_000u32).map(|i| (i % 241) as u8).collect();
        spool.append(&data).unwrap();
        let bytes = spool.finish().unwrap();
        let windows: Vec<&[u8]> = bytes.windows(5..bytes.len()).collect();
        assert_eq!(
            windows.iter().map(|w| w.len()).collect::<Vec<_>>(),
            [WINDOW, WINDOW, 20_000_000 - 5 - 2 * WINDOW]
        );
        // Windows let go of read back as they were.
        assert!(windows.concat() == data[5..]);
        assert_eq!(Spooled::from(data.clone()).windows(0..10).count(), 1);
    }

    #[test]
    fn an_empty_spool_is_empty_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let spool = SpoolDir::new(dir.path()).create().unwrap();
        assert!(spool.is_empty());
        assert_eq!(&spool.finish().unwrap()[..], b"");
    }

    #[test]
    fn a_directory_that_cannot_hold_spool_files_is_not_asked_again() {
        let spools = SpoolDir::new("/nonexistent/trawl-spool");
        assert!(spools.create().is_err());
        assert!(spools.create().is_err());
        assert!(spools.0.refused.load(Ordering::Relaxed));
    }
}
