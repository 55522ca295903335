//! One sorted run of the seen set: an immutable file of fixed-size entries in key order, in
//! 4 KiB blocks, followed by an index of each block's first key and a trailer. A lookup reads
//! one block with a positional read (no memory map: a mapped file's pages would count in the
//! crawler's resident memory); a merge reads runs front to back in large chunks.
//!
//! ```text
//! block 0 .. block B-1   146 entries of 28 bytes each (the last block padded with zeros)
//! index                  B first keys, 16 bytes each
//! trailer (32 bytes)     "TRWLSEEN", entries u64 LE, blocks u64 LE, CRC-32 of index u32 LE, 0u32
//! ```
//!
//! An entry is a seen key (host id, fingerprint) and the last 12 bytes of the URL's queue key
//! (depth or rank, sequence number); the host id, the queue key's first 4 bytes, is the seen
//! key's.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::crawl_db::layout::{QueueKey, SeenKey};

/// Bytes of a seen key.
const KEY: usize = 16;
/// Bytes of an entry: the seen key and the queue key without its host id.
pub(super) const ENTRY: usize = KEY + 12;
/// Bytes of a block.
const BLOCK: usize = 4096;
/// Entries in a block.
const PER_BLOCK: usize = BLOCK / ENTRY;
const MAGIC: &[u8; 8] = b"TRWLSEEN";
const TRAILER: usize = 32;
/// Blocks read at once by a sequential cursor (1 MiB).
const CHUNK_BLOCKS: usize = 256;
/// Entries read around a key's estimated place in its block, when the block is not read
/// whole (672 bytes rather than 4 KiB; keys are fingerprints, spread evenly, so the estimate
/// is off by about 6 entries).
const WINDOW: usize = 24;

/// The bytes of a run: a file, or memory for a store in memory.
#[derive(Debug)]
enum Bytes {
    File(File),
    Memory(Vec<u8>),
}

impl Bytes {
    fn read_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        match self {
            Bytes::File(f) => f.read_exact_at(buf, at),
            Bytes::Memory(v) => {
                let src = usize::try_from(at)
                    .ok()
                    .and_then(|at| v.get(at..at.checked_add(buf.len())?))
                    .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
                buf.copy_from_slice(src);
                Ok(())
            }
        }
    }
}

/// An open run.
#[derive(Debug)]
pub(super) struct Run {
    id: u64,
    bytes: Bytes,
    entries: u64,
    /// The first key of each block.
    index: Vec<SeenKey>,
    /// Where the file is (none in memory).
    path: Option<PathBuf>,
}

fn damaged(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// The queue key an entry's value stands for.
fn queue_key_of(key: &SeenKey, value: &[u8]) -> QueueKey {
    let mut q = [0u8; 16];
    q[..4].copy_from_slice(&key[..4]);
    q[4..].copy_from_slice(value);
    q
}

/// Finds `key` among the sorted entries in `block`.
fn search_block(block: &[u8], key: &SeenKey) -> Option<QueueKey> {
    let n = block.len() / ENTRY;
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let entry = &block[mid * ENTRY..][..ENTRY];
        match entry[..KEY].cmp(&key[..]) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Some(queue_key_of(key, &entry[KEY..])),
        }
    }
    None
}

impl Run {
    /// Opens the run file `path` and checks its trailer and index.
    pub(super) fn open(path: &Path, id: u64) -> io::Result<Run> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        if len < TRAILER as u64 {
            return Err(damaged("shorter than its trailer"));
        }
        let mut trailer = [0u8; TRAILER];
        file.read_exact_at(&mut trailer, len - TRAILER as u64)?;
        if &trailer[..8] != MAGIC {
            return Err(damaged("no trailer"));
        }
        let word = |at: usize| u64::from_le_bytes(trailer[at..at + 8].try_into().expect("8"));
        let (entries, blocks) = (word(8), word(16));
        let crc = u32::from_le_bytes(trailer[24..28].try_into().expect("4"));
        let expected = blocks
            .checked_mul((BLOCK + KEY) as u64)
            .and_then(|b| b.checked_add(TRAILER as u64));
        if expected != Some(len) || blocks != entries.div_ceil(PER_BLOCK as u64) {
            return Err(damaged("its length does not match its trailer"));
        }
        let mut raw = vec![0u8; blocks as usize * KEY];
        file.read_exact_at(&mut raw, blocks * BLOCK as u64)?;
        if crc32fast::hash(&raw) != crc {
            return Err(damaged("its index fails its checksum"));
        }
        let index = raw
            .chunks_exact(KEY)
            .map(|k| k.try_into().expect("16 bytes"))
            .collect();
        Ok(Run {
            id,
            bytes: Bytes::File(file),
            entries,
            index,
            path: Some(path.to_path_buf()),
        })
    }

    /// The run's id (its place in the manifest and its file name).
    pub(super) fn id(&self) -> u64 {
        self.id
    }

    /// Entries in the run.
    pub(super) fn entries(&self) -> u64 {
        self.entries
    }

    /// Bytes the run takes (blocks, index and trailer).
    pub(super) fn size(&self) -> u64 {
        self.index.len() as u64 * (BLOCK + KEY) as u64 + TRAILER as u64
    }

    /// Memory the run's index takes.
    pub(super) fn index_bytes(&self) -> usize {
        self.index.capacity() * KEY
    }

    /// The file, when on disk.
    pub(super) fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Entries in block `i`.
    fn block_entries(&self, i: usize) -> usize {
        (self.entries - (i * PER_BLOCK) as u64).min(PER_BLOCK as u64) as usize
    }

    /// Blocks in the run.
    pub(super) fn blocks(&self) -> usize {
        self.index.len()
    }

    /// The block that would hold `key`, at block `from` or after it (a key at or after the
    /// first key of block `from`, unless `from` is 0): galloping from there, so that lookups
    /// of ascending keys cost little more than a step each.
    fn block_from(&self, key: &SeenKey, from: usize) -> Option<usize> {
        let rest = self.index.get(from..)?;
        let (mut lo, mut step) = (0, 1);
        while lo + step < rest.len() && rest[lo + step] <= *key {
            lo += step;
            step *= 2;
        }
        let hi = (lo + step).min(rest.len());
        let p = lo + rest[lo..hi].partition_point(|first| first <= key);
        p.checked_sub(1).map(|i| from + i)
    }

    /// Reads the entries of block `i` into `buf`.
    fn read_block(&self, i: usize, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.resize(self.block_entries(i) * ENTRY, 0);
        self.bytes.read_at(buf, (i * BLOCK) as u64)
    }

    /// Syncs the file to disk.
    pub(super) fn sync(&self) -> io::Result<()> {
        match &self.bytes {
            Bytes::File(f) => f.sync_all(),
            Bytes::Memory(_) => Ok(()),
        }
    }

    /// A reader for lookups of keys in ascending order. With `whole`, it reads whole blocks
    /// and keeps the last one (for many keys per block); without, it reads a window of each
    /// block around the key.
    pub(super) fn lookup(&self, whole: bool) -> Lookup<'_> {
        Lookup {
            run: self,
            whole,
            floor: 0,
            block: None,
            buf: Vec::new(),
        }
    }

    /// A reader of every entry in key order.
    pub(super) fn cursor(&self) -> Cursor<'_> {
        Cursor {
            run: self,
            next_block: 0,
            buf: Vec::new(),
            at: 0,
        }
    }
}

/// Lookups of ascending keys in one run.
pub(super) struct Lookup<'a> {
    run: &'a Run,
    /// Read whole blocks.
    whole: bool,
    /// The block of the last key looked up: the next key's is there or after.
    floor: usize,
    /// The whole block in `buf`, if one is.
    block: Option<usize>,
    buf: Vec<u8>,
}

impl Lookup<'_> {
    /// The queue key stored for `key` (at or after the last key looked up), if the run holds
    /// it.
    pub(super) fn get(&mut self, key: &SeenKey) -> io::Result<Option<QueueKey>> {
        let Some(i) = self.run.block_from(key, self.floor) else {
            return Ok(None);
        };
        self.floor = i;
        if self.block == Some(i) {
            return Ok(search_block(&self.buf, key));
        }
        if !self.whole {
            if let Some(found) = self.get_near(i, key)? {
                return Ok(found);
            }
        }
        self.block = None;
        self.run.read_block(i, &mut self.buf)?;
        self.block = Some(i);
        Ok(search_block(&self.buf, key))
    }

    /// Looks `key` up in the entries of block `i` around its estimated place, from the
    /// block's first key and the next block's (same host: the fingerprints between them are
    /// spread evenly); none when the key may lie outside the entries read.
    fn get_near(&mut self, i: usize, key: &SeenKey) -> io::Result<Option<Option<QueueKey>>> {
        let n = self.run.block_entries(i);
        let (Some(first), Some(next)) = (self.run.index.get(i), self.run.index.get(i + 1)) else {
            return Ok(None);
        };
        if n < WINDOW * 2 || first[..4] != next[..4] {
            return Ok(None);
        }
        let word = |k: &SeenKey| u64::from_be_bytes(k[4..12].try_into().expect("8 bytes"));
        let (a, b, x) = (word(first), word(next), word(key));
        if b <= a {
            return Ok(None);
        }
        let at = (u128::from(x.saturating_sub(a)) * n as u128 / u128::from(b - a)) as usize;
        let start = at.saturating_sub(WINDOW / 2).min(n - WINDOW);
        self.block = None;
        self.buf.resize(WINDOW * ENTRY, 0);
        self.run
            .bytes
            .read_at(&mut self.buf, (i * BLOCK + start * ENTRY) as u64)?;
        let low = &self.buf[..KEY];
        let high = &self.buf[(WINDOW - 1) * ENTRY..][..KEY];
        let inside = (start == 0 || low <= &key[..]) && (start + WINDOW == n || high >= &key[..]);
        Ok(inside.then(|| search_block(&self.buf, key)))
    }
}

/// Every entry of a run in key order, read a chunk of blocks at a time.
pub(super) struct Cursor<'a> {
    run: &'a Run,
    next_block: usize,
    /// Entries read and not yet returned, packed.
    buf: Vec<u8>,
    at: usize,
}

impl Cursor<'_> {
    /// The next entry: its key and queue key.
    pub(super) fn next_entry(&mut self) -> io::Result<Option<(SeenKey, QueueKey)>> {
        if self.at >= self.buf.len() && !self.fill()? {
            return Ok(None);
        }
        let entry = &self.buf[self.at..][..ENTRY];
        self.at += ENTRY;
        let key: SeenKey = entry[..KEY].try_into().expect("16 bytes");
        Ok(Some((key, queue_key_of(&key, &entry[KEY..]))))
    }

    /// Reads the next chunk of blocks; false at the end.
    fn fill(&mut self) -> io::Result<bool> {
        let blocks = self.run.index.len();
        if self.next_block >= blocks {
            return Ok(false);
        }
        let n = CHUNK_BLOCKS.min(blocks - self.next_block);
        let mut raw = vec![0u8; n * BLOCK];
        self.run
            .bytes
            .read_at(&mut raw, (self.next_block * BLOCK) as u64)?;
        self.buf.clear();
        for (j, block) in raw.chunks_exact(BLOCK).enumerate() {
            let len = self.run.block_entries(self.next_block + j) * ENTRY;
            self.buf.extend_from_slice(&block[..len]);
        }
        self.next_block += n;
        self.at = 0;
        Ok(true)
    }
}

/// Where a run being written goes.
enum Sink {
    File {
        out: BufWriter<File>,
        tmp: PathBuf,
        path: PathBuf,
    },
    Memory(Vec<u8>),
}

/// Writes a run from entries in ascending key order.
pub(super) struct RunWriter {
    id: u64,
    sink: Sink,
    index: Vec<SeenKey>,
    entries: u64,
    last: Option<SeenKey>,
}

impl RunWriter {
    /// A run to be written as `path` (through `path` + `.tmp`, renamed when finished).
    pub(super) fn to_file(path: PathBuf, id: u64) -> io::Result<RunWriter> {
        let tmp = path.with_extension("tmp");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        Ok(RunWriter::with(
            id,
            Sink::File {
                out: BufWriter::with_capacity(1 << 20, file),
                tmp,
                path,
            },
        ))
    }

    /// A run held in memory.
    pub(super) fn in_memory(id: u64) -> RunWriter {
        RunWriter::with(id, Sink::Memory(Vec::new()))
    }

    fn with(id: u64, sink: Sink) -> RunWriter {
        RunWriter {
            id,
            sink,
            index: Vec::new(),
            entries: 0,
            last: None,
        }
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.sink {
            Sink::File { out, .. } => out.write_all(bytes),
            Sink::Memory(v) => {
                v.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// Appends an entry; keys must come in strictly ascending order.
    pub(super) fn push(&mut self, key: &SeenKey, queue_key: &QueueKey) -> io::Result<()> {
        if self.last.is_some_and(|last| last >= *key) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "seen-set run keys out of order",
            ));
        }
        if self.entries.is_multiple_of(PER_BLOCK as u64) {
            if self.entries > 0 {
                self.write(&[0u8; BLOCK - PER_BLOCK * ENTRY])?;
            }
            self.index.push(*key);
        }
        self.write(key)?;
        self.write(&queue_key[4..])?;
        self.entries += 1;
        self.last = Some(*key);
        Ok(())
    }

    /// Entries written so far.
    pub(super) fn entries(&self) -> u64 {
        self.entries
    }

    /// Pads the last block, writes the index and trailer, and opens the run for reading. A
    /// file is renamed into place; with `sync` it is synced first (else the caller syncs it
    /// before a commit names it).
    pub(super) fn finish(mut self, sync: bool) -> io::Result<Run> {
        if self.entries > 0 {
            let used = match (self.entries % PER_BLOCK as u64) as usize {
                0 => PER_BLOCK,
                n => n,
            };
            self.write(&vec![0u8; BLOCK - used * ENTRY])?;
        }
        let index: Vec<u8> = self.index.iter().flatten().copied().collect();
        self.write(&index)?;
        let mut trailer = [0u8; TRAILER];
        trailer[..8].copy_from_slice(MAGIC);
        trailer[8..16].copy_from_slice(&self.entries.to_le_bytes());
        trailer[16..24].copy_from_slice(&(self.index.len() as u64).to_le_bytes());
        trailer[24..28].copy_from_slice(&crc32fast::hash(&index).to_le_bytes());
        self.write(&trailer)?;
        let (bytes, path) = match self.sink {
            Sink::File { out, tmp, path } => {
                let file = out.into_inner().map_err(|e| e.into_error())?;
                if sync {
                    file.sync_all()?;
                }
                std::fs::rename(&tmp, &path)?;
                (Bytes::File(file), Some(path))
            }
            Sink::Memory(v) => (Bytes::Memory(v), None),
        };
        Ok(Run {
            id: self.id,
            bytes,
            entries: self.entries,
            index: self.index,
            path,
        })
    }

    /// Gives up a run being written, removing its file.
    pub(super) fn abandon(self) {
        if let Sink::File { tmp, .. } = self.sink {
            let _ = std::fs::remove_file(tmp);
        }
    }
}
