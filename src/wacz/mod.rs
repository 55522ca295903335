//! WACZ 1.1.1 packaging: the WARCs (stored, not deflated), a CDXJ index, pages.jsonl and
//! datapackage.json with SHA-256 hashes, plus datapackage-digest.json.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use serde::Serialize;

use crate::index::cdxj::entries_with_titles;
use crate::index::IndexError;

/// The WACZ version written.
pub const WACZ_VERSION: &str = "1.1.1";

/// Why a WACZ could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WaczError {
    /// Indexing an input failed.
    #[error(transparent)]
    Index(#[from] IndexError),
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
) -> Result<WaczSummary, WaczError> {
    if warcs.is_empty() {
        return Err(WaczError::Empty);
    }
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WaczError::Io { path, source }
    };
    let mut entries = Vec::new();
    for w in warcs {
        entries.extend(entries_with_titles(w)?);
    }
    let mut lines: Vec<String> = entries.iter().map(|e| e.line()).collect();
    lines.sort();
    let index = lines.iter().map(|l| format!("{l}\n")).collect::<String>();

    let mut pages = serde_json::to_string(&PagesHeader {
        format: "json-pages-1.0",
        id: "pages",
        title: "All Pages",
    })?;
    pages.push('\n');
    let mut seen = HashSet::new();
    let mut first_page = None;
    let mut page_count = 0;
    for e in entries.iter().filter(|e| e.page) {
        let (Some(url), Some(date)) = (&e.url, &e.date) else {
            continue;
        };
        if !seen.insert(url.clone()) {
            continue;
        }
        first_page.get_or_insert((url.clone(), date.clone()));
        // "id" and "title" keep every row non-blank for table validators (frictionless reads
        // the columns from the header line, which has id and title).
        let id = format!("{:x}", Sha256::digest(format!("{url} {date}").as_bytes()));
        pages.push_str(&serde_json::to_string(&PageLine {
            id: &id[..16],
            url,
            ts: date,
            title: e.title.as_deref().unwrap_or(url),
        })?);
        pages.push('\n');
        page_count += 1;
    }

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
    for (path, data) in [
        ("indexes/index.cdx", index.as_bytes()),
        ("pages/pages.jsonl", pages.as_bytes()),
    ] {
        zip.start_file(path, stored(data.len() as u64))?;
        zip.write_all(data).map_err(io_err(out))?;
        resources.push(Resource::new(
            path.to_string(),
            format!("sha256:{:x}", Sha256::digest(data)),
            data.len() as u64,
        ));
    }

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
    Ok(WaczSummary {
        warcs: warcs.len(),
        index_lines: lines.len(),
        pages: page_count,
    })
}
