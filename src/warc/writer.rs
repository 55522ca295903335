//! The single WARC writer: owns the open file, appends finished gzip members, rotates, and
//! renames `.open` files when they are closed.
//!
//! It runs on its own OS thread (file I/O is blocking) and is fed by a bounded channel: when the
//! disk is slow, fetchers wait on `send` instead of piling records up in memory. It stops when
//! every sender is dropped (the crawl is over) or on the first I/O error, which it returns; the
//! crawl notices the closed channel and stops.
//!
//! How it waits for the next batch (parked, or lingering a millisecond while many fetches run) is
//! `warc/intake.rs`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::mpsc;

use super::intake::{self, Producers};
use super::naming::WarcNaming;
use super::rotation::Rotation;
use crate::record::{gzip_member, warcinfo_record};

/// Records that must land in the same file, in order (e.g. a request and its response).
#[derive(Debug)]
pub struct Batch {
    /// Each element is one record as a complete gzip member.
    pub members: Vec<Vec<u8>>,
    /// Told once the members are written to the file (the crawl then counts the job as done).
    pub ack: Option<tokio::sync::oneshot::Sender<()>>,
    /// Also flush the current file to stable storage before acknowledging (checkpoints).
    pub sync: bool,
}

impl Batch {
    /// Records to append, acknowledged once written.
    pub fn acknowledged(members: Vec<Vec<u8>>) -> (Batch, tokio::sync::oneshot::Receiver<()>) {
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

/// Batches up to this size are joined into one write.
const JOIN_UP_TO: u64 = 1 << 20;

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
    thread: std::thread::JoinHandle<Result<WriterReport, WarcError>>,
}

impl WriterHandle {
    /// Waits for the writer to finish (drop every sender first) and returns its report.
    pub fn finish(self) -> Result<WriterReport, WarcError> {
        drop(self.sender);
        self.thread.join().unwrap_or_else(|_| {
            Err(WarcError::Io {
                path: PathBuf::new(),
                source: std::io::Error::other("WARC writer thread panicked"),
            })
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
    /// Reused buffer for joining a batch's members into one write.
    scratch: Vec<u8>,
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
            scratch: Vec::new(),
        }
    }

    fn run(mut self, mut receiver: mpsc::Receiver<Batch>) -> Result<WriterReport, WarcError> {
        let producers = self.config.producers.clone();
        while let Some(mut batch) = intake::next(&mut receiver, &producers) {
            let result = if batch.members.is_empty() {
                self.sync_current()
            } else {
                self.append(&batch).and_then(|()| {
                    if batch.sync {
                        self.sync_current()
                    } else {
                        Ok(())
                    }
                })
            };
            if let Err(e) = result {
                receiver.close();
                self.salvage_current();
                return Err(e);
            }
            if let Some(ack) = batch.ack.take() {
                let _ = ack.send(());
            }
        }
        self.close_current()?;
        Ok(self.report)
    }

    fn append(&mut self, batch: &Batch) -> Result<(), WarcError> {
        let batch_records = batch.members.len() as u64;
        let batch_bytes = batch.bytes();
        if let Some(cur) = &self.current {
            if self.config.rotation.needs_new_file(
                cur.records,
                cur.good_len,
                batch_records,
                batch_bytes,
            ) {
                self.close_current()?;
            }
        }
        if self.current.is_none() {
            self.open_new()?;
        }
        let cur = self.current.as_mut().expect("opened above");
        // One write per batch (a page's request and response records together): half the
        // system calls of a write per member. Large batches are written member by member
        // rather than copied. A failed write is cut back to `good_len`.
        let io_err = |source| WarcError::Io {
            path: cur.open_path.clone(),
            source,
        };
        if batch.members.len() > 1 && batch_bytes <= JOIN_UP_TO {
            self.scratch.clear();
            for member in &batch.members {
                self.scratch.extend_from_slice(member);
            }
            cur.file.write_all(&self.scratch).map_err(io_err)?;
        } else {
            for member in &batch.members {
                cur.file.write_all(member).map_err(io_err)?;
            }
        }
        cur.good_len += batch_bytes;
        self.shown.bytes.store(cur.good_len, Ordering::Relaxed);
        cur.records += batch_records;
        self.report.records += batch_records;
        self.report.bytes += batch_bytes;
        self.counter.fetch_add(batch_bytes, Ordering::Relaxed);
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

fn sync_dir(dir: &std::path::Path) {
    // Makes the rename durable; not supported everywhere, so failures are ignored.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::MultiGzDecoder;
    use std::io::Read;

    fn config(dir: &std::path::Path, records_per_file: u64) -> WriterConfig {
        WriterConfig {
            dir: dir.to_path_buf(),
            serials_also_in: None,
            prefix: "t".into(),
            rotation: Rotation {
                records_per_file,
                max_file_size: u64::MAX,
            },
            gzip_level: 6,
            info: vec![("software".into(), "trawl-test".into())],
            queue: 4,
            closed_files: None,
            producers: Producers::default(),
        }
    }

    fn read_all(path: &std::path::Path) -> String {
        let mut s = String::new();
        MultiGzDecoder::new(File::open(path).unwrap())
            .read_to_string(&mut s)
            .unwrap();
        s
    }

    #[test]
    fn rotates_by_record_count_and_renames_open_files() {
        let dir = tempfile::tempdir().unwrap();
        let handle = spawn_writer(config(dir.path(), 4)).unwrap();
        for i in 0..5 {
            let members = vec![
                gzip_member(format!("req{i}").as_bytes(), 6),
                gzip_member(format!("resp{i}").as_bytes(), 6),
            ];
            handle
                .sender
                .blocking_send(Batch {
                    members,
                    ack: None,
                    sync: false,
                })
                .unwrap();
        }
        let report = handle.finish().unwrap();
        assert_eq!(report.files.len(), 3);
        assert_eq!(report.records, 10 + 3);
        let first = read_all(&report.files[0]);
        assert!(first.starts_with("WARC/1.1\r\nWARC-Type: warcinfo"));
        assert!(first.ends_with("req0resp0req1resp1"), "{first}");
        assert!(read_all(&report.files[2]).ends_with("req4resp4"));
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".open")
            })
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn no_records_means_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let report = spawn_writer(config(dir.path(), 4))
            .unwrap()
            .finish()
            .unwrap();
        assert!(report.files.is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
