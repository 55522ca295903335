//! WACZ 1.1.1 packaging: the WARCs (stored, not deflated), a CDXJ index, pages.jsonl and
//! datapackage.json with SHA-256 hashes, plus datapackage-digest.json. With `--text`, each
//! page in pages.jsonl carries its text as WET holds it (Browsertrix's `text` field, which
//! ReplayWeb.page's full-text search reads); pages.jsonl is then written through a file
//! beside the package rather than held in memory.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use serde::Serialize;

use crate::whole_file::part_path;

use crate::derive::{page_text, DeriveLimits};
use crate::index::cdxj::{entries_with_titles, CdxjEntry};
use crate::index::IndexError;
use crate::warc::reader::records;

/// The WACZ version written.
pub const WACZ_VERSION: &str = "1.1.1";

/// Why a WACZ could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WaczError {
    /// Reading an input or writing the package failed.
    #[error("{path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The zip writer failed.
    #[error("zip: {0}")]
    Zip(#[from] zip::result::ZipError),
    /// A JSON document could not be serialized.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// No WARC file was given.
    #[error("no WARC files to package")]
    Empty,
}

/// What went into a package.
#[derive(Debug)]
pub struct WaczSummary {
    /// WARC files packaged.
    pub warcs: usize,
    /// Index lines.
    pub index_lines: usize,
    /// Pages listed.
    pub pages: usize,
    /// Faults that stopped the reading of a WARC file: its records before the fault are
    /// indexed and listed, and the file is packaged whole.
    pub faults: Vec<IndexError>,
}

/// One file of the package, as datapackage.json lists it.
#[derive(Serialize)]
struct Resource {
    name: String,
    path: String,
    hash: String,
    bytes: u64,
}

impl Resource {
    fn new(path: String, hash: String, bytes: u64) -> Self {
        let name = path
            .rsplit('/')
            .next()
            .unwrap_or(&path)
            .to_ascii_lowercase();
        Resource {
            name,
            path,
            hash,
            bytes,
        }
    }
}

/// datapackage.json (Frictionless Data Package with the WACZ fields).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DataPackage<'a> {
    profile: &'static str,
    resources: &'a [Resource],
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(rename = "mainPageURL", skip_serializing_if = "Option::is_none")]
    main_page_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    main_page_date: Option<&'a str>,
    created: &'a str,
    #[serde(rename = "wacz_version")]
    wacz_version: &'static str,
    software: String,
}

/// datapackage-digest.json.
#[derive(Serialize)]
struct PackageDigest {
    path: &'static str,
    hash: String,
}

/// The header line of pages.jsonl.
#[derive(Serialize)]
struct PagesHeader {
    format: &'static str,
    id: &'static str,
    title: &'static str,
}

/// One line of pages.jsonl.
#[derive(Serialize)]
struct PageLine<'a> {
    id: &'a str,
    url: &'a str,
    ts: &'a str,
    title: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
}

/// A page listed in pages.jsonl, and where its response record is.
struct PageRow {
    id: String,
    url: String,
    ts: String,
    title: Option<String>,
    filename: String,
    offset: u64,
}

impl PageRow {
    fn line(&self, text: Option<&str>) -> Result<String, WaczError> {
        Ok(serde_json::to_string(&PageLine {
            id: &self.id,
            url: &self.url,
            ts: &self.ts,
            // "id" and "title" keep every row non-blank for table validators (frictionless
            // reads the columns from the header line, which has id and title).
            title: self.title.as_deref().unwrap_or(&self.url),
            text,
        })? + "\n")
    }
}

/// The pages of `entries`: each URL once, at its first capture.
fn page_rows(entries: &[CdxjEntry]) -> Vec<PageRow> {
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    for e in entries.iter().filter(|e| e.page) {
        let (Some(url), Some(date)) = (&e.url, &e.date) else {
            continue;
        };
        if !seen.insert(url.clone()) {
            continue;
        }
        let id = format!("{:x}", Sha256::digest(format!("{url} {date}").as_bytes()));
        rows.push(PageRow {
            id: id[..16].to_string(),
            url: url.clone(),
            ts: date.clone(),
            title: e.title.clone(),
            filename: e.filename.clone(),
            offset: e.offset,
        });
    }
    rows
}

/// pages.jsonl, being written to a file: its bytes and their SHA-256.
struct PagesFile {
    path: PathBuf,
    file: io::BufWriter<File>,
    hasher: Sha256,
    bytes: u64,
}

impl PagesFile {
    fn create(path: PathBuf) -> Result<PagesFile, WaczError> {
        let file = File::create(&path).map_err(|source| WaczError::Io {
            path: path.clone(),
            source,
        })?;
        let mut pages = PagesFile {
            path,
            file: io::BufWriter::new(file),
            hasher: Sha256::new(),
            bytes: 0,
        };
        let header = serde_json::to_string(&PagesHeader {
            format: "json-pages-1.0",
            id: "pages",
            title: "All Pages",
        })? + "\n";
        pages.write(&header)?;
        Ok(pages)
    }

    fn write(&mut self, line: &str) -> Result<(), WaczError> {
        self.hasher.update(line.as_bytes());
        self.bytes += line.len() as u64;
        self.file
            .write_all(line.as_bytes())
            .map_err(|source| WaczError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// Flushes; returns the hash and length.
    fn finish(mut self) -> Result<(String, u64), WaczError> {
        self.file.flush().map_err(|source| WaczError::Io {
            path: self.path.clone(),
            source,
        })?;
        Ok((format!("sha256:{:x}", self.hasher.finalize()), self.bytes))
    }
}

/// Writes pages.jsonl to `path`: `rows` in order, each with its text when `text` is set.
fn write_pages(
    path: PathBuf,
    rows: &[PageRow],
    warcs: &[PathBuf],
    text: bool,
) -> Result<(String, u64), WaczError> {
    let mut pages = PagesFile::create(path)?;
    if !text {
        for row in rows {
            pages.write(&row.line(None)?)?;
        }
        return pages.finish();
    }
    let limits = DeriveLimits::default();
    for w in warcs {
        let name = w
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut wanted: HashMap<u64, &PageRow> = rows
            .iter()
            .filter(|r| r.filename == name)
            .map(|r| (r.offset, r))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let input = records(w).map_err(|source| WaczError::Io {
            path: w.clone(),
            source,
        })?;
        // Records come in file order, which is the order of the rows of this file; a file
        // read to a fault is read no further than its last row.
        for item in input {
            if wanted.is_empty() {
                break;
            }
            let (record, _) = item.map_err(|source| WaczError::Io {
                path: w.clone(),
                source,
            })?;
            if let Some(row) = wanted.remove(&record.offset) {
                let text = page_text(&record, &limits).map(|p| p.wet_block());
                pages.write(&row.line(text.as_deref())?)?;
            }
        }
    }
    pages.finish()
}

fn stored(size: u64) -> SimpleFileOptions {
    SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .large_file(size >= u32::MAX as u64)
}

/// Writes `out` from `warcs`.
pub fn write_wacz(
    out: &Path,
    warcs: &[PathBuf],
    title: Option<&str>,
    text: bool,
) -> Result<WaczSummary, WaczError> {
    if warcs.is_empty() {
        return Err(WaczError::Empty);
    }
    let (mut entries, mut faults) = (Vec::new(), Vec::new());
    for w in warcs {
        let (readable, fault) = entries_with_titles(w);
        entries.extend(readable);
        faults.extend(fault);
    }
    let mut lines: Vec<String> = entries.iter().map(|e| e.line()).collect();
    lines.sort();
    let index = lines.iter().map(|l| format!("{l}\n")).collect::<String>();

    let rows = page_rows(&entries);
    let first_page = rows.first().map(|r| (r.url.clone(), r.ts.clone()));
    let pages_path = out.with_extension("pages.jsonl.part");
    let written = write_pages(pages_path.clone(), &rows, warcs, text).and_then(|pages| {
        write_package(
            out,
            warcs,
            Package {
                title,
                index: &index,
                pages: (&pages_path, pages),
                first_page: first_page.as_ref(),
            },
        )
    });
    let _ = std::fs::remove_file(&pages_path);
    written?;
    Ok(WaczSummary {
        warcs: warcs.len(),
        index_lines: lines.len(),
        pages: rows.len(),
        faults,
    })
}

/// What goes into the package beside the WARCs.
struct Package<'a> {
    title: Option<&'a str>,
    index: &'a str,
    /// pages.jsonl's file, hash and length.
    pages: (&'a Path, (String, u64)),
    /// URL and date of the first page.
    first_page: Option<&'a (String, String)>,
}

/// Writes the zip.
fn write_package(out: &Path, warcs: &[PathBuf], package: Package) -> Result<(), WaczError> {
    // Written as OUT.part and renamed at the end: a failed or stopped run leaves a package
    // already there as it was.
    let part = part_path(out);
    let written = write_zip(&part, warcs, package).and_then(|()| {
        std::fs::rename(&part, out).map_err(|source| WaczError::Io {
            path: out.to_path_buf(),
            source,
        })
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    written
}

/// Writes the zip to `out`.
fn write_zip(out: &Path, warcs: &[PathBuf], package: Package) -> Result<(), WaczError> {
    let Package {
        title,
        index,
        pages,
        first_page,
    } = package;
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WaczError::Io { path, source }
    };
    let file = File::create(out).map_err(io_err(out))?;
    let mut zip = ZipWriter::new(file);
    let mut resources = Vec::new();
    let mut names = HashSet::new();
    for w in warcs {
        let name = w
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !names.insert(name.clone()) {
            return Err(WaczError::Io {
                path: w.clone(),
                source: io::Error::other("two WARC files share this name"),
            });
        }
        let size = std::fs::metadata(w).map_err(io_err(w))?.len();
        let path = format!("archive/{name}");
        zip.start_file(path.as_str(), stored(size))?;
        let mut input = File::open(w).map_err(io_err(w))?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut bytes = 0u64;
        loop {
            let n = input.read(&mut buf).map_err(io_err(w))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            zip.write_all(&buf[..n]).map_err(io_err(out))?;
            bytes += n as u64;
        }
        resources.push(Resource::new(
            path,
            format!("sha256:{:x}", hasher.finalize()),
            bytes,
        ));
    }
    let path = "indexes/index.cdx";
    zip.start_file(path, stored(index.len() as u64))?;
    zip.write_all(index.as_bytes()).map_err(io_err(out))?;
    resources.push(Resource::new(
        path.to_string(),
        format!("sha256:{:x}", Sha256::digest(index.as_bytes())),
        index.len() as u64,
    ));
    let (pages_path, (hash, bytes)) = pages;
    let path = "pages/pages.jsonl";
    zip.start_file(path, stored(bytes))?;
    let mut input = File::open(pages_path).map_err(io_err(pages_path))?;
    io::copy(&mut input, &mut zip).map_err(io_err(out))?;
    resources.push(Resource::new(path.to_string(), hash, bytes));

    let created = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let package = serde_json::to_string_pretty(&DataPackage {
        profile: "data-package",
        resources: &resources,
        title,
        main_page_url: first_page.as_ref().map(|(url, _)| url.as_str()),
        main_page_date: first_page.as_ref().map(|(_, date)| date.as_str()),
        created: &created,
        wacz_version: WACZ_VERSION,
        software: format!("trawl {}", env!("CARGO_PKG_VERSION")),
    })? + "\n";
    zip.start_file("datapackage.json", stored(package.len() as u64))?;
    zip.write_all(package.as_bytes()).map_err(io_err(out))?;
    let digest = serde_json::to_string_pretty(&PackageDigest {
        path: "datapackage.json",
        hash: format!("sha256:{:x}", Sha256::digest(package.as_bytes())),
    })? + "\n";
    zip.start_file("datapackage-digest.json", stored(digest.len() as u64))?;
    zip.write_all(digest.as_bytes()).map_err(io_err(out))?;
    zip.finish()?.sync_all().map_err(io_err(out))?;
    Ok(())
}
