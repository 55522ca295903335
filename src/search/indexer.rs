//! Writing the search index: each WARC file's pages become tantivy documents (text extracted
//! on worker threads while one thread reads), committed per file during a crawl and every
//! `--commit-every` pages from `trawl search-index`. Which files the index holds (name, size, pages) is the commit's payload, so the list
//! and the documents are committed together: a run killed mid-file resumes from the last
//! commit with that file not yet indexed, and a file indexed before is skipped. tantivy's
//! writer lock (an flock, released when the process dies) keeps a second writer out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use tantivy::directory::error::LockError;
use tantivy::directory::MmapDirectory;
use tantivy::{DateTime, Index, IndexWriter, TantivyDocument, TantivyError, Term};

use super::schema::Fields;
use super::SearchError;
use crate::derive::{page_text, DeriveLimits};
use crate::warc::reader::{records_from, StoredRecord};
use crate::warc::salvage::{salvage_records, SalvageRecords, Salvaged};

/// What identifies the payload as trawl's.
const PAYLOAD_FORMAT: &str = "trawl-search-index-1";

/// A file the index holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct IndexedFile {
    /// Its size when indexed.
    size: u64,
    /// Pages indexed from it.
    pages: u64,
    /// The WARC-Record-ID of its first record (its warcinfo): two files of one name are one
    /// file moved (or grown, or repaired) when it is the same, two files when it is not.
    /// Absent from entries written before it was kept: those go by name and size alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first_record: Option<String>,
}

/// The commit payload.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Payload {
    format: String,
    /// By file name; a second file of a name already held (another crawl's
    /// `crawl-00000.warc.gz`) by the name, [`SAME_NAME`] and its first record's ID.
    files: BTreeMap<String, IndexedFile>,
}

/// Between a file's name and its first record's ID in the key of a file whose name the index
/// held already for another file.
const SAME_NAME: char = '\u{1f}';

impl Payload {
    /// The entries of files named `name`, with their keys.
    fn named<'a, 'n>(
        &'a self,
        name: &'n str,
    ) -> impl Iterator<Item = (&'a String, &'a IndexedFile)> + use<'a, 'n> {
        self.files.iter().filter(move |(key, _)| {
            key.as_str() == name
                || key
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with(SAME_NAME))
        })
    }

    /// The key of the entry for the file `name` whose first record is `first`: the entry
    /// of the same file if there is one, else a key of its own.
    fn key_of<'a>(&'a self, name: &str, first: Option<&str>) -> (String, Option<&'a IndexedFile>) {
        let same = self.named(name).find(|(_, f)| {
            f.first_record.is_none() || first.is_none() || f.first_record.as_deref() == first
        });
        match same {
            Some((key, file)) => (key.clone(), Some(file)),
            None if self.named(name).next().is_none() => (name.to_string(), None),
            None => (
                format!("{name}{SAME_NAME}{}", first.unwrap_or_default()),
                None,
            ),
        }
    }
}

/// What indexing one file did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FileOutcome {
    /// It was indexed before (same name, first record and size): nothing done.
    pub already: bool,
    /// Pages indexed.
    pub pages: u64,
    /// Revisit records passed over (their original is indexed where it was captured).
    pub revisits: u64,
    /// Damaged records skipped.
    pub damaged: u64,
    /// Where the first damaged record began and why it could not be read.
    pub first_damage: Option<(u64, String)>,
}

/// How much the writer may use.
#[derive(Debug, Clone, Copy)]
pub struct WriterBudget {
    /// tantivy's indexing threads.
    pub threads: usize,
    /// Memory for in-memory segments, all threads together.
    pub memory: usize,
    /// Threads extracting page text (the reading thread only reads and inflates).
    pub extract_threads: usize,
}

impl WriterBudget {
    /// `trawl search-index`: both cores, 128 MB.
    pub const COMMAND: WriterBudget = WriterBudget {
        threads: 2,
        memory: 128 << 20,
        extract_threads: 2,
    };
    /// Beside a crawl: one thread of each, 40 MB.
    pub const CRAWL: WriterBudget = WriterBudget {
        threads: 1,
        memory: 40 << 20,
        extract_threads: 1,
    };
}

/// Records read ahead of the extracting threads.
const EXTRACT_QUEUE: usize = 64;

/// An open search index being written (its lock held until dropped).
pub struct SearchIndexer {
    dir: PathBuf,
    writer: IndexWriter,
    fields: Fields,
    payload: Payload,
    limits: DeriveLimits,
    extract_threads: usize,
    uncommitted: u64,
}

impl SearchIndexer {
    /// Opens the index in `dir`, creating it (and `dir`) when missing. An existing directory
    /// that holds other files and no index is refused, as is an index written by another
    /// process right now.
    pub fn open(dir: &Path, budget: WriterBudget) -> Result<SearchIndexer, SearchError> {
        let io = |source| SearchError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let tantivy = |source| SearchError::Tantivy {
            dir: dir.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let has_meta = dir.join("meta.json").exists();
        if !has_meta && std::fs::read_dir(dir).map_err(io)?.next().is_some() {
            return Err(SearchError::NotAnIndex {
                dir: dir.to_path_buf(),
            });
        }
        let directory = MmapDirectory::open(dir).map_err(|e| tantivy(e.into()))?;
        let (schema, _) = Fields::build();
        let index = Index::open_or_create(directory, schema).map_err(|e| match e {
            TantivyError::SchemaError(_) => SearchError::NotAnIndex {
                dir: dir.to_path_buf(),
            },
            e => tantivy(e),
        })?;
        super::words::register(&index);
        let fields = Fields::of(&index.schema()).ok_or_else(|| SearchError::NotAnIndex {
            dir: dir.to_path_buf(),
        })?;
        let payload = read_payload(&index, dir)?;
        let writer = index
            .writer_with_num_threads(budget.threads, budget.memory)
            .map_err(|e| match e {
                TantivyError::LockFailure(LockError::LockBusy, _) => SearchError::Locked {
                    dir: dir.to_path_buf(),
                },
                e => tantivy(e),
            })?;
        Ok(SearchIndexer {
            dir: dir.to_path_buf(),
            writer,
            fields,
            payload,
            limits: DeriveLimits::default(),
            extract_threads: budget.extract_threads.max(1),
            uncommitted: 0,
        })
    }

    /// Files the index holds.
    pub fn files(&self) -> usize {
        self.payload.files.len()
    }

    /// True when `warc` (by name, first record and size) is in the index.
    /// The first record is read only when a file of its name and size is held (a crawl's
    /// start asks this of every finished file).
    pub fn holds(&self, warc: &Path) -> bool {
        let Ok(size) = std::fs::metadata(warc).map(|m| m.len()) else {
            return false;
        };
        let name = file_name(warc);
        if !self.payload.named(&name).any(|(_, f)| f.size == size) {
            return false;
        }
        let first = first_record_id(warc);
        let (_, held) = self.payload.key_of(&name, first.as_deref());
        held.is_some_and(|f| f.size == size)
    }

    /// Indexes the pages of `warc` and commits, unless the index holds it already. The same
    /// file (by name and first record) of another size replaces what was indexed of it; a
    /// file of a name held whose first record differs is another file, indexed beside it.
    ///
    /// A failure rolls the index back to its last commit, so that the next file is added by
    /// a working writer: tantivy's refuses everything after one failure (a full disk for a
    /// moment left a crawl's index without the rest of its files).
    pub fn index_file(&mut self, warc: &Path) -> Result<FileOutcome, SearchError> {
        let added = self.add_file(warc).and_then(|outcome| {
            if !outcome.already {
                self.commit()?;
            }
            Ok(outcome)
        });
        if added.is_err() {
            if let Err(e) = self.roll_back() {
                tracing::error!("search index: rolling back after a failure: {e}");
            }
        }
        added
    }

    /// What killed tantivy's writer, which says only "an index writer was killed" to the
    /// thread adding documents: the error of its indexing thread (a full disk), which
    /// preparing a commit joins and returns.
    fn why_killed(&mut self, killed: TantivyError) -> TantivyError {
        match self.writer.prepare_commit() {
            Err(cause) => cause,
            // Not killed after all: what was added stays for the next commit.
            Ok(_) => killed,
        }
    }

    /// Drops what was added since the last commit, and the writer with it for a new one.
    fn roll_back(&mut self) -> Result<(), SearchError> {
        let rolled = self.writer.rollback();
        rolled.map_err(|source| self.tantivy(source))?;
        self.payload = read_payload(self.writer.index(), &self.dir)?;
        self.uncommitted = 0;
        Ok(())
    }

    /// Adds the pages of `warc` without committing (see [`SearchIndexer::index_file`]); they
    /// and the file's place in the list become durable at the next [`SearchIndexer::commit`].
    pub fn add_file(&mut self, warc: &Path) -> Result<FileOutcome, SearchError> {
        let io = |source| SearchError::Io {
            path: warc.to_path_buf(),
            source,
        };
        let size = std::fs::metadata(warc).map_err(io)?.len();
        let name = file_name(warc);
        let first = first_record_id(warc);
        let (key, held) = self.payload.key_of(&name, first.as_deref());
        match held {
            Some(f) if f.size == size => {
                return Ok(FileOutcome {
                    already: true,
                    ..FileOutcome::default()
                })
            }
            // The same file, grown or repaired since: its pages are indexed again. Its
            // documents are known by the name alone, so this is refused when another file
            // of that name is held (its pages would go too).
            Some(_) if self.payload.named(&name).nth(1).is_some() => {
                return Err(io(std::io::Error::other(format!(
                    "changed since it was indexed, and another file of the name {name} is \
                     indexed too: index into a new directory to replace it"
                ))));
            }
            Some(_) => self
                .writer
                .delete_term(Term::from_field_text(self.fields.warc_file, &name)),
            None => 0,
        };
        let records = salvage_records(warc).map_err(io)?;
        let outcome = self.add_records(warc, records, &name)?;
        self.payload.files.insert(
            key,
            IndexedFile {
                size,
                pages: outcome.pages,
                first_record: first,
            },
        );
        self.uncommitted += outcome.pages;
        Ok(outcome)
    }

    /// Pages added since the last commit.
    pub fn uncommitted(&self) -> u64 {
        self.uncommitted
    }

    /// Reads `records` on this thread and turns them into documents on `extract_threads`
    /// threads (text extraction is most of the work; tantivy's writer takes documents from
    /// any thread).
    fn add_records(
        &mut self,
        warc: &Path,
        records: SalvageRecords,
        name: &str,
    ) -> Result<FileOutcome, SearchError> {
        let this = &*self;
        let pages = AtomicU64::new(0);
        let failed: Mutex<Option<TantivyError>> = Mutex::new(None);
        let (mut revisits, mut damaged) = (0, 0);
        let mut first_damage = None;
        let (tx, rx) = mpsc::sync_channel::<StoredRecord>(EXTRACT_QUEUE);
        let rx = Mutex::new(rx);
        std::thread::scope(|scope| {
            for _ in 0..this.extract_threads {
                scope.spawn(|| loop {
                    let next = rx.lock().map(|r| r.recv());
                    let Ok(Ok(record)) = next else { return };
                    let Some(doc) = this.document(&record, name) else {
                        continue;
                    };
                    match this.writer.add_document(doc) {
                        Ok(_) => {
                            pages.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            if let Ok(mut slot) = failed.lock() {
                                slot.get_or_insert(e);
                            }
                            return;
                        }
                    }
                });
            }
            for item in records {
                let record = match item {
                    Salvaged::Record(r) => r,
                    Salvaged::Damaged { offset, error } => {
                        tracing::warn!(
                            "{}: record at offset {offset} skipped: {error}",
                            warc.display()
                        );
                        damaged += 1;
                        first_damage.get_or_insert((offset, error));
                        continue;
                    }
                };
                let kind = record.header("WARC-Type").unwrap_or("");
                if kind == "revisit" {
                    revisits += 1;
                } else if kind == "response" && tx.send(record).is_err() {
                    // A worker is gone (tantivy failed): the error is reported below.
                    break;
                }
            }
            // The workers end when the queue is closed and empty.
            drop(tx);
        });
        if let Some(e) = failed.into_inner().ok().flatten() {
            let cause = self.why_killed(e);
            return Err(self.tantivy(cause));
        }
        Ok(FileOutcome {
            already: false,
            pages: pages.into_inner(),
            revisits,
            damaged,
            first_damage,
        })
    }

    /// Commits what was added, with the list of files as the payload.
    pub fn commit(&mut self) -> Result<(), SearchError> {
        self.payload.format = PAYLOAD_FORMAT.to_string();
        let payload = serde_json::to_string(&self.payload).unwrap_or_default();
        let mut prepared = self
            .writer
            .prepare_commit()
            .map_err(|source| SearchError::Tantivy {
                dir: self.dir.clone(),
                source,
            })?;
        prepared.set_payload(&payload);
        prepared.commit().map_err(|source| self.tantivy(source))?;
        self.uncommitted = 0;
        Ok(())
    }

    fn tantivy(&self, source: TantivyError) -> SearchError {
        SearchError::Tantivy {
            dir: self.dir.clone(),
            source,
        }
    }

    /// The document of a response record whose page has text, as WET reads it.
    fn document(&self, record: &StoredRecord, warc_file: &str) -> Option<TantivyDocument> {
        let page = page_text(record, &self.limits)?;
        let url = record.target_uri()?;
        let f = &self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.url, url);
        if let Some(host) = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
        {
            doc.add_text(f.host, host.to_ascii_lowercase());
        }
        if let Some(title) = &page.title {
            doc.add_text(f.title, title);
        }
        doc.add_text(f.text, &page.text);
        if let Some(lang) = page.language {
            doc.add_text(f.language, lang);
        }
        let date = record
            .header("WARC-Date")
            .and_then(|d| humantime::parse_rfc3339_weak(d).ok())
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64);
        doc.add_date(f.date, DateTime::from_timestamp_secs(date));
        doc.add_u64(f.status, u64::from(page.status));
        if let Some(digest) = record.header("WARC-Payload-Digest") {
            doc.add_text(f.digest, digest);
        }
        if let Some(id) = record.header("WARC-Record-ID") {
            doc.add_text(f.record_id, id);
        }
        doc.add_text(f.warc_file, warc_file);
        doc.add_u64(f.offset, record.offset);
        Some(doc)
    }
}

/// The payload of the index's last commit (empty for a new index).
fn read_payload(index: &Index, dir: &Path) -> Result<Payload, SearchError> {
    let metas = index.load_metas().map_err(|source| SearchError::Tantivy {
        dir: dir.to_path_buf(),
        source,
    })?;
    match metas.payload {
        None => Ok(Payload::default()),
        Some(text) => serde_json::from_str::<Payload>(&text)
            .ok()
            .filter(|p| p.format == PAYLOAD_FORMAT)
            .ok_or_else(|| SearchError::NotAnIndex {
                dir: dir.to_path_buf(),
            }),
    }
}

/// The WARC-Record-ID of the first record of `warc` (`None` when it cannot be read).
fn first_record_id(warc: &Path) -> Option<String> {
    let gzipped = warc.extension().is_some_and(|e| e == "gz");
    let (record, _) = records_from(warc, 0, gzipped).ok()?.next()?.ok()?;
    record.header("WARC-Record-ID").map(str::to_string)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
