//! The single WARC writer: owns the open file, appends finished gzip members, rotates, and
//! renames `.open` files when they are closed.
//!
//! It runs on its own OS thread (file I/O is blocking) and is fed by a bounded channel: when the
//! disk is slow, fetchers wait on `send` instead of piling records up in memory. It stops when
//! every sender is dropped (the crawl is over) or on the first I/O error, which it returns; the
//! crawl notices the closed channel and stops.
//!
//! How it waits for the next batch (parked, or lingering up to 3 ms while many fetches run) is
//! `warc/intake.rs`. Each wake takes every batch already queued (up to a bound) and appends them
//! with one vectored write, then acknowledges them: a system call per wake, not per page.

use std::fs::{File, OpenOptions};
use std::io::{IoSlice, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::mpsc;

use super::intake::{self, Producers};
use super::naming::WarcNaming;
use super::rotation::Rotation;
use crate::record::{gzip_member, warcinfo_record};
use crate::spool::Spooled;

/// Records that must land in the same file, in order (e.g. a request and its response).
#[derive(Debug)]
pub struct Batch {
    /// Each element is one record as a complete gzip member.
    pub members: Vec<Spooled>,
    /// Told once the members are written to the file (the crawl then counts the job as done).
    pub ack: Option<tokio::sync::oneshot::Sender<()>>,
    /// Also flush the current file to stable storage before acknowledging (checkpoints).
    pub sync: bool,
}

impl Batch {
    /// Records to append, acknowledged once written.
    pub fn acknowledged(members: Vec<Spooled>) -> (Batch, tokio::sync::oneshot::Receiver<()>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        (
            Batch {
                members,
                ack: Some(tx),
                sync: false,
            },
            rx,
        )
    }

    /// A request to sync the current file, acknowledged when done.
    pub fn sync_request() -> (Batch, tokio::sync::oneshot::Receiver<()>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        (
            Batch {
                members: Vec::new(),
                ack: Some(tx),
                sync: true,
            },
            rx,
        )
    }
}

impl Batch {
    fn bytes(&self) -> u64 {
        self.members.iter().map(|m| m.len() as u64).sum()
    }
}

/// What the writer needs to know.
#[derive(Debug, Clone)]
pub struct WriterConfig {
    /// Output directory (must exist).
    pub dir: PathBuf,
    /// Another directory whose files' serials the new ones continue after (`--finished-dir`,
    /// where closed files move).
    pub serials_also_in: Option<PathBuf>,
    /// File name prefix.
    pub prefix: String,
    /// Rotation limits.
    pub rotation: Rotation,
    /// gzip level for the warcinfo record (others arrive compressed).
    pub gzip_level: u32,
    /// Fields of the warcinfo record that opens every file.
    pub info: Vec<(String, String)>,
    /// Batches that may wait in the channel.
    pub queue: usize,
    /// Told the path of each file once it is closed and renamed (for derivatives).
    pub closed_files: Option<std::sync::mpsc::Sender<PathBuf>>,
    /// The fetches running, counted by the crawl: how the writer waits for batches depends on
    /// how many may come (see `warc/intake.rs`).
    pub producers: Producers,
}

/// A failure of the output, which ends the crawl.
#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    /// Creating, writing, syncing or renaming a file failed.
    #[error("WARC output {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// What the writer did, returned when it stops.
#[derive(Debug, Default, Clone)]
pub struct WriterReport {
    /// Closed files, in order.
    pub files: Vec<PathBuf>,
    /// Records written, warcinfo included.
    pub records: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// Most batches one wake of the writer takes from its queue and writes together.
const GROUP_BATCHES: usize = 64;

/// A wake of the writer takes no more batches once it holds this many bytes.
const GROUP_BYTES: u64 = 8 << 20;

/// The file being written, for the live console: its final name and its length so far.
#[derive(Debug, Default)]
pub struct CurrentFile {
    name: std::sync::Mutex<Option<String>>,
    bytes: AtomicU64,
}

impl CurrentFile {
    /// The final name of the open file and its bytes so far; `None` between files.
    pub fn get(&self) -> Option<(String, u64)> {
        let name = self.name.lock().ok()?.clone()?;
        Some((name, self.bytes.load(Ordering::Relaxed)))
    }

    fn set(&self, name: Option<&str>, bytes: u64) {
        if let Ok(mut slot) = self.name.lock() {
            *slot = name.map(str::to_string);
        }
        self.bytes.store(bytes, Ordering::Relaxed);
    }
}

/// The crawl's side of the writer.
pub struct WriterHandle {
    /// Where batches go; cloned into every fetching task. The writer stops once all clones drop.
    pub sender: mpsc::Sender<Batch>,
    /// Bytes written so far, for progress display.
    pub bytes_written: Arc<AtomicU64>,
    /// Serial of the file being written, or of the next one when none is open: records of jobs
    /// not yet saved in crawl state are in this file or later ones.
    pub replay_from: Arc<AtomicU64>,
    /// The file being written.
    pub current: Arc<CurrentFile>,
    thread: std::thread::JoinHandle<(WriterReport, Option<WarcError>)>,
}

impl WriterHandle {
    /// Waits for the writer to finish (drop every sender first) and returns its report, of
    /// what it wrote also when it failed, and its error if it did.
    pub fn finish(self) -> (WriterReport, Option<WarcError>) {
        drop(self.sender);
        self.thread.join().unwrap_or_else(|_| {
            let e = WarcError::Io {
                path: PathBuf::new(),
                source: std::io::Error::other("WARC writer thread panicked"),
            };
            (WriterReport::default(), Some(e))
        })
    }
}

/// Starts the writer thread.
pub fn spawn_writer(config: WriterConfig) -> Result<WriterHandle, WarcError> {
    let mut naming =
        WarcNaming::new(&config.dir, &config.prefix).map_err(|source| WarcError::Io {
            path: config.dir.clone(),
            source,
        })?;
    if let Some(other) = &config.serials_also_in {
        naming
            .continue_after_files_in(other)
            .map_err(|source| WarcError::Io {
                path: other.clone(),
                source,
            })?;
    }
    let (sender, receiver) = mpsc::channel(config.queue.max(1));
    let bytes_written = Arc::new(AtomicU64::new(0));
    let replay_from = Arc::new(AtomicU64::new(naming.next_serial()));
    let counter = bytes_written.clone();
    let serial = replay_from.clone();
    let current = Arc::new(CurrentFile::default());
    let shown = current.clone();
    let thread = std::thread::Builder::new()
        .name("warc-writer".into())
        .spawn(move || {
            let mut writer = Writer::new(config, naming, counter, serial);
            writer.shown = shown;
            writer.run(receiver)
        })
        .map_err(|source| WarcError::Io {
            path: PathBuf::new(),
            source,
        })?;
    Ok(WriterHandle {
        sender,
        bytes_written,
        replay_from,
        current,
        thread,
    })
}

struct OpenFile {
    file: File,
    name: String,
    open_path: PathBuf,
    records: u64,
    /// Bytes of complete members; on a failed write the file is cut back to this length.
    good_len: u64,
}

struct Writer {
    config: WriterConfig,
    naming: WarcNaming,
    current: Option<OpenFile>,
    report: WriterReport,
    counter: Arc<AtomicU64>,
    replay_from: Arc<AtomicU64>,
    /// What the console shows of `current`.
    shown: Arc<CurrentFile>,
}

impl Writer {
    fn new(
        config: WriterConfig,
        naming: WarcNaming,
        counter: Arc<AtomicU64>,
        replay_from: Arc<AtomicU64>,
    ) -> Self {
        Writer {
            config,
            naming,
            current: None,
            report: WriterReport::default(),
            counter,
            replay_from,
            shown: Default::default(),
        }
    }

    fn run(mut self, mut receiver: mpsc::Receiver<Batch>) -> (WriterReport, Option<WarcError>) {
        let producers = self.config.producers.clone();
        let mut group = Vec::with_capacity(GROUP_BATCHES);
        while let Some(first) = intake::next(&mut receiver, &producers) {
            let mut bytes = first.bytes();
            group.push(first);
            if bytes < GROUP_BYTES {
                intake::more(&mut receiver, &mut group, GROUP_BATCHES, |batch| {
                    bytes += batch.bytes();
                    bytes < GROUP_BYTES
                });
            }
            if let Err(e) = self.write_group(&group) {
                receiver.close();
                self.salvage_current();
                return (self.report, Some(e));
            }
            for batch in group.drain(..) {
                if let Some(ack) = batch.ack {
                    let _ = ack.send(());
                }
            }
        }
        let closed = self.close_current();
        (self.report, closed.err())
    }

    /// Appends the batches of one wake, in order, with as few system calls as the rotation
    /// allows (one vectored write per file, no copy), then syncs if any batch asked for it.
    /// A batch is never split across files.
    fn write_group(&mut self, group: &[Batch]) -> Result<(), WarcError> {
        let mut pending: Vec<&Spooled> = Vec::new();
        let (mut records, mut bytes) = (0, 0);
        for batch in group.iter().filter(|b| !b.members.is_empty()) {
            let (batch_records, batch_bytes) = (batch.members.len() as u64, batch.bytes());
            if let Some(cur) = &self.current {
                if self.config.rotation.needs_new_file(
                    cur.records + records,
                    cur.good_len + bytes,
                    batch_records,
                    batch_bytes,
                ) {
                    self.write_pending(&mut pending, records, bytes)?;
                    (records, bytes) = (0, 0);
                    self.close_current()?;
                }
            }
            if self.current.is_none() {
                self.open_new()?;
            }
            pending.extend(batch.members.iter());
            records += batch_records;
            bytes += batch_bytes;
        }
        self.write_pending(&mut pending, records, bytes)?;
        if group.iter().any(|b| b.sync || b.members.is_empty()) {
            self.sync_current()?;
        }
        Ok(())
    }

    /// Writes `pending` (`records` records, `bytes` bytes) to the open file and counts them. A
    /// failed write leaves the file's good length where it was, to be cut back to.
    fn write_pending(
        &mut self,
        pending: &mut Vec<&Spooled>,
        records: u64,
        bytes: u64,
    ) -> Result<(), WarcError> {
        let Some(cur) = self.current.as_mut() else {
            return Ok(());
        };
        if pending.is_empty() {
            return Ok(());
        }
        write_members(&mut cur.file, pending).map_err(|source| WarcError::Io {
            path: cur.open_path.clone(),
            source,
        })?;
        pending.clear();
        cur.good_len += bytes;
        self.shown.bytes.store(cur.good_len, Ordering::Relaxed);
        cur.records += records;
        self.report.records += records;
        self.report.bytes += bytes;
        self.counter.fetch_add(bytes, Ordering::Relaxed);
        Ok(())
    }

    fn sync_current(&mut self) -> Result<(), WarcError> {
        match &self.current {
            Some(cur) => cur.file.sync_data().map_err(|source| WarcError::Io {
                path: cur.open_path.clone(),
                source,
            }),
            None => Ok(()),
        }
    }

    fn open_new(&mut self) -> Result<(), WarcError> {
        let now = SystemTime::now();
        self.replay_from
            .store(self.naming.next_serial(), Ordering::Release);
        let (name, open_path) = self.naming.next(now);
        let io_err = |source| WarcError::Io {
            path: open_path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&open_path)
            .map_err(io_err)?;
        let info = warcinfo_record(&name, now, &self.config.info);
        let member = gzip_member(&info.bytes, self.config.gzip_level);
        file.write_all(&member).map_err(io_err)?;
        let len = member.len() as u64;
        self.report.records += 1;
        self.report.bytes += len;
        self.counter.fetch_add(len, Ordering::Relaxed);
        self.shown.set(Some(&name), len);
        self.current = Some(OpenFile {
            file,
            name,
            open_path,
            records: 0,
            good_len: len,
        });
        Ok(())
    }

    fn close_current(&mut self) -> Result<(), WarcError> {
        let Some(cur) = self.current.take() else {
            return Ok(());
        };
        self.shown.set(None, 0);
        let final_path = self.naming.dir().join(&cur.name);
        let io_err = |source| WarcError::Io {
            path: cur.open_path.clone(),
            source,
        };
        cur.file.sync_all().map_err(io_err)?;
        drop(cur.file);
        std::fs::rename(&cur.open_path, &final_path).map_err(io_err)?;
        sync_dir(self.naming.dir());
        self.replay_from
            .store(self.naming.next_serial(), Ordering::Release);
        if let Some(closed) = &self.config.closed_files {
            let _ = closed.send(final_path.clone());
        }
        self.report.files.push(final_path);
        Ok(())
    }

    /// After a failed write: cut the file back to its last complete member and close it, so
    /// what was written stays valid. Best effort: the original error is what gets reported.
    fn salvage_current(&mut self) {
        if let Some(cur) = &self.current {
            if cur.file.set_len(cur.good_len).is_err() {
                return;
            }
        }
        let _ = self.close_current();
    }
}

/// `write_all` for a list of buffers: `writev` until all of it is written.
/// Writes `members` in order: those in memory together in vectored writes, each spooled one
/// (a long response's, `spool.rs`) on its own, a window at a time, each window's pages let go
/// once written, so that the process holds one window of such a member, not a whole wake's
/// of members.
fn write_members(file: &mut File, members: &[&Spooled]) -> std::io::Result<()> {
    let mut run: Vec<IoSlice<'_>> = Vec::new();
    for member in members {
        if member.spool_dir().is_none() {
            run.push(IoSlice::new(member));
            continue;
        }
        write_all_vectored(file, &mut run)?;
        run.clear();
        for window in member.windows(0..member.len()) {
            file.write_all(window)?;
        }
    }
    write_all_vectored(file, &mut run)
}

fn write_all_vectored(file: &mut File, mut slices: &mut [IoSlice<'_>]) -> std::io::Result<()> {
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn sync_dir(dir: &std::path::Path) {
    // Makes the rename durable; not supported everywhere, so failures are ignored.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests;
