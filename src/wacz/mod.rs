//! WACZ 1.1.1 packaging: the WARCs (stored, not deflated), a CDXJ index, pages.jsonl and
//! datapackage.json with SHA-256 hashes, plus datapackage-digest.json.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::index::cdxj::{entries_of_file, py_json_string};
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

struct Resource {
    path: String,
    hash: String,
    bytes: u64,
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
        entries.extend(entries_of_file(w)?);
    }
    let mut lines: Vec<String> = entries.iter().map(|e| e.line()).collect();
    lines.sort();
    let index = lines.iter().map(|l| format!("{l}\n")).collect::<String>();

    let mut pages = String::from(
        "{\"format\": \"json-pages-1.0\", \"id\": \"pages\", \"title\": \"All Pages\"}\n",
    );
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
        pages.push_str(&format!(
            "{{\"id\": \"{}\", \"url\": {}, \"ts\": {}, \"title\": {}}}\n",
            &id[..16],
            py_json_string(url),
            py_json_string(date),
            py_json_string(url)
        ));
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
        resources.push(Resource {
            path,
            hash: format!("sha256:{:x}", hasher.finalize()),
            bytes,
        });
    }
    for (path, data) in [
        ("indexes/index.cdx", index.as_bytes()),
        ("pages/pages.jsonl", pages.as_bytes()),
    ] {
        zip.start_file(path, stored(data.len() as u64))?;
        zip.write_all(data).map_err(io_err(out))?;
        resources.push(Resource {
            path: path.to_string(),
            hash: format!("sha256:{:x}", Sha256::digest(data)),
            bytes: data.len() as u64,
        });
    }

    let created = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let package = datapackage(&resources, title, first_page.as_ref(), &created);
    zip.start_file("datapackage.json", stored(package.len() as u64))?;
    zip.write_all(package.as_bytes()).map_err(io_err(out))?;
    let digest = format!(
        "{{\n  \"path\": \"datapackage.json\",\n  \"hash\": \"sha256:{:x}\"\n}}\n",
        Sha256::digest(package.as_bytes())
    );
    zip.start_file("datapackage-digest.json", stored(digest.len() as u64))?;
    zip.write_all(digest.as_bytes()).map_err(io_err(out))?;
    zip.finish()?.sync_all().map_err(io_err(out))?;
    Ok(WaczSummary {
        warcs: warcs.len(),
        index_lines: lines.len(),
        pages: page_count,
    })
}

fn datapackage(
    resources: &[Resource],
    title: Option<&str>,
    main: Option<&(String, String)>,
    created: &str,
) -> String {
    let items: Vec<String> = resources
        .iter()
        .map(|r| {
            let name = r.path.rsplit('/').next().unwrap_or(&r.path).to_ascii_lowercase();
            format!(
                "    {{\n      \"name\": {},\n      \"path\": {},\n      \"hash\": {},\n      \"bytes\": {}\n    }}",
                py_json_string(&name),
                py_json_string(&r.path),
                py_json_string(&r.hash),
                r.bytes
            )
        })
        .collect();
    let mut out = format!(
        "{{\n  \"profile\": \"data-package\",\n  \"resources\": [\n{}\n  ],\n",
        items.join(",\n")
    );
    if let Some(t) = title {
        out.push_str(&format!("  \"title\": {},\n", py_json_string(t)));
    }
    if let Some((url, date)) = main {
        out.push_str(&format!(
            "  \"mainPageURL\": {},\n  \"mainPageDate\": {},\n",
            py_json_string(url),
            py_json_string(date)
        ));
    }
    out.push_str(&format!(
        "  \"created\": {},\n  \"wacz_version\": \"{WACZ_VERSION}\",\n  \"software\": \"trawl {}\"\n}}\n",
        py_json_string(created),
        env!("CARGO_PKG_VERSION")
    ));
    out
}
