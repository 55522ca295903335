//! Derivatives for indexing: WET (plain text) and WAT (metadata and links as JSON) files made
//! from finished WARC files, in Common Crawl's formats, beside or apart from the WARCs.
//!
//! `X.warc.gz` gives `X.warc.wet.gz` and `X.warc.wat.gz` (Common Crawl's names). A WARC is read
//! one record at a time; each response is decoded and tokenized once for both derivatives.
//! Used by `trawl derive` and by `trawl crawl --wet/--wat` as each WARC closes.
//!
//! | part | file |
//! |---|---|
//! | the HTTP message in a record | `message.rs` |
//! | WAT JSON and records | `wat.rs` |
//! | WET records | `wet.rs` |
//! | language identification | `language.rs` |
//! | a derivative file being written | `output.rs` |

pub mod language;
pub mod message;
pub mod output;
pub mod wat;
pub mod wet;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::extract::{read_document, Document, DocumentOptions, TextCut};
use crate::http_message::media_type::parsed_as_xml;
use crate::record::builder::{derived_record, warc_date, warc_fields, WarcRecord};
use crate::record::sha1_digest;
use crate::warc::naming::list_warc_files;
use crate::warc::reader::{records, StoredRecord};

use message::{decoded_text, parse_message, TextKind};
use output::DerivedFile;
use wat::{wat_json, wat_record, Container};

/// Which derivatives to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Kinds {
    /// WET: plain text.
    pub wet: bool,
    /// WAT: metadata and links.
    pub wat: bool,
}

impl Kinds {
    fn suffixes(self) -> impl Iterator<Item = &'static str> {
        [(self.wet, "wet"), (self.wat, "wat")]
            .into_iter()
            .filter_map(|(on, s)| on.then_some(s))
    }
}

/// Caps on the work done per record.
#[derive(Debug, Clone, Copy)]
pub struct DeriveLimits {
    /// Most bytes of a body decoded (content coding removed).
    pub max_decoded: usize,
    /// Most bytes of text per page in WET.
    pub max_text: usize,
    /// Most links per page in WAT.
    pub max_links: usize,
    /// Identify the language of WET text.
    pub language: bool,
    /// gzip level of derivative records: 1 by default. Derivatives can be made again from
    /// the WARCs, and the text of the benchmark web's pages hardly compresses: at level 6
    /// compression was a third of derivation time.
    pub gzip_level: u32,
}

impl Default for DeriveLimits {
    fn default() -> Self {
        DeriveLimits {
            max_decoded: 16 << 20,
            max_text: 1 << 20,
            max_links: 10_000,
            language: true,
            gzip_level: 1,
        }
    }
}

/// What deriving one WARC file did.
#[derive(Debug, Default, Clone)]
pub struct DeriveSummary {
    /// Records read from the WARC.
    pub records: u64,
    /// WET conversion records written.
    pub wet_records: u64,
    /// WAT metadata records written.
    pub wat_records: u64,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// The WARC could not be read to its end (derivatives hold the records before the fault).
    pub read_error: Option<String>,
}

/// A derivative could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DeriveError {
    /// The WARC could not be opened.
    #[error("{path}: {source}")]
    Read {
        /// The WARC file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A derivative could not be written.
    #[error("writing {path}: {source}")]
    Write {
        /// The derivative file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The derivative of `warc` of kind `suffix` ("wet" or "wat") in `out_dir`.
pub fn derivative_path(warc: &Path, out_dir: &Path, suffix: &str) -> PathBuf {
    let name = warc
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".gz").unwrap_or(&name);
    out_dir.join(format!("{stem}.{suffix}.gz"))
}

/// True when `warc` lacks one of the derivatives `kinds` asks for in `dir`.
pub fn lacks_derivatives(warc: &Path, dir: &Path, kinds: Kinds) -> bool {
    kinds
        .suffixes()
        .any(|s| !derivative_path(warc, dir, s).exists())
}

/// The finished WARC files of `dir` that lack one of the derivatives `kinds` asks for.
pub fn pending(dir: &Path, kinds: Kinds) -> std::io::Result<Vec<PathBuf>> {
    Ok(list_warc_files(&[dir.to_path_buf()])?
        .into_iter()
        .filter(|w| lacks_derivatives(w, dir, kinds))
        .collect())
}

fn derivative_warcinfo(filename: &str, source: &str, info: &[(String, String)]) -> WarcRecord {
    let mut fields: Vec<(&str, &str)> = vec![
        ("software", concat!("trawl/", env!("CARGO_PKG_VERSION"))),
        ("format", "WARC File Format 1.0"),
        (
            "conformsTo",
            "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.0/",
        ),
        ("derivedFrom", source),
    ];
    // What the crawl said of itself carries over (isPartOf, operator, crawlId, ...).
    for (k, v) in info {
        if matches!(
            k.as_str(),
            "isPartOf" | "operator" | "description" | "publisher" | "crawlId" | "robots"
        ) {
            fields.push((k, v));
        }
    }
    let block = warc_fields(fields.into_iter());
    let date = warc_date(SystemTime::now());
    // As the crawl's own warcinfo: FastWARC, verifying digests, drops a record without one.
    let digest = sha1_digest(block.as_bytes());
    derived_record(
        "warcinfo",
        &[
            ("WARC-Date", &date),
            ("WARC-Filename", filename),
            ("WARC-Block-Digest", &digest),
            ("Content-Type", "application/warc-fields"),
        ],
        block.as_bytes(),
    )
}

/// robots.txt responses are archived, but their text is not the web's text.
fn is_robots_txt(record: &StoredRecord) -> bool {
    record
        .target_uri()
        .is_some_and(crate::url_rules::is_robots_txt)
}

fn is_success(message: &message::HttpMessage) -> bool {
    message.start[1].starts_with('2')
}

/// What a response yields for the derivatives: its document (HTML read once for both), and
/// what kind of text it is.
fn read_response(
    message: &message::HttpMessage,
    kinds: Kinds,
    limits: &DeriveLimits,
) -> Option<(TextKind, Document)> {
    let (kind, text) = decoded_text(message, limits.max_decoded)?;
    let doc = match kind {
        TextKind::Html => Some(read_document(
            &text,
            DocumentOptions {
                text: kinds.wet,
                metadata: kinds.wat,
                max_text: limits.max_text,
                max_links: limits.max_links,
                xml: message.media_type().is_some_and(|m| parsed_as_xml(&m)),
            },
        )),
        TextKind::Plain => {
            let mut text = text.replace("\r\n", "\n");
            let cut = text.len() > limits.max_text;
            if cut {
                let mut end = limits.max_text;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
            }
            Some(Document {
                text: text.trim().to_string(),
                text_cut: cut.then_some(TextCut::Length),
                ..Document::default()
            })
        }
    }?;
    Some((kind, doc))
}

/// True when a response's document is text that WET keeps: a 2xx answer that is not a
/// robots.txt, with a title or some text.
fn has_page_text(record: &StoredRecord, message: &message::HttpMessage, doc: &Document) -> bool {
    is_success(message) && !is_robots_txt(record) && !(doc.text.is_empty() && doc.title.is_none())
}

/// The text of a page as WET holds it, for the search index and `trawl wacz --text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageText {
    /// HTTP status.
    pub status: u16,
    /// The title, whitespace collapsed.
    pub title: Option<String>,
    /// The visible text (at most `max_text` bytes).
    pub text: String,
    /// The language identified (ISO 639-3), when asked for and reliable.
    pub language: Option<&'static str>,
}

impl PageText {
    /// The block of the page's WET record: title line, then the text.
    pub fn wet_block(&self) -> String {
        wet::wet_text(self.title.as_deref(), &self.text)
    }
}

/// The text of `record` when it is a response whose page WET would hold (2xx HTML or plain
/// text, not robots.txt), read with the same extraction and caps as WET.
pub fn page_text(record: &StoredRecord, limits: &DeriveLimits) -> Option<PageText> {
    let http = record
        .header("Content-Type")
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("application/http"));
    if record.header("WARC-Type") != Some("response") || !http {
        return None;
    }
    let message = parse_message(&record.block, true)?;
    let kinds = Kinds {
        wet: true,
        wat: false,
    };
    let (_, doc) = read_response(&message, kinds, limits)?;
    if !has_page_text(record, &message, &doc) {
        return None;
    }
    let language = limits
        .language
        .then(|| language::identify(&doc.text))
        .flatten();
    Some(PageText {
        status: message.start[1].parse().unwrap_or(0),
        title: doc.title,
        text: doc.text,
        language,
    })
}

struct Outputs {
    wet: Option<DerivedFile>,
    wat: Option<DerivedFile>,
}

fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> DeriveError {
    let path = path.to_path_buf();
    move |source| DeriveError::Write { path, source }
}

fn open_outputs(
    warc: &Path,
    out_dir: &Path,
    kinds: Kinds,
    gzip_level: u32,
    first: Option<&StoredRecord>,
) -> Result<Outputs, DeriveError> {
    let source = warc
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let info: Vec<(String, String)> = first
        .filter(|r| r.header("WARC-Type") == Some("warcinfo"))
        .map(|r| {
            String::from_utf8_lossy(&r.block)
                .lines()
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let open = |on: bool, suffix: &str| -> Result<Option<DerivedFile>, DeriveError> {
        if !on {
            return Ok(None);
        }
        let path = derivative_path(warc, out_dir, suffix);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let info = derivative_warcinfo(&name, &source, &info);
        DerivedFile::create(path.clone(), &info, gzip_level)
            .map(Some)
            .map_err(write_err(&path))
    };
    Ok(Outputs {
        wet: open(kinds.wet, "wet")?,
        wat: open(kinds.wat, "wat")?,
    })
}

/// Writes the derivatives `kinds` of the WARC file `warc` into `out_dir`.
pub fn derive_file(
    warc: &Path,
    out_dir: &Path,
    kinds: Kinds,
    limits: &DeriveLimits,
) -> Result<DeriveSummary, DeriveError> {
    let read_err = |source| DeriveError::Read {
        path: warc.to_path_buf(),
        source,
    };
    let mut input = records(warc).map_err(read_err)?.peekable();
    let first = match input.peek() {
        Some(Ok((record, _))) => Some(record.clone()),
        _ => None,
    };
    let mut outputs = open_outputs(warc, out_dir, kinds, limits.gzip_level, first.as_ref())?;
    let filename = warc
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut summary = DeriveSummary::default();
    for item in input {
        let (record, member) = match item {
            Ok(r) => r,
            Err(e) => {
                summary.read_error = Some(e.to_string());
                break;
            }
        };
        summary.records += 1;
        let warc_type = record.header("WARC-Type").unwrap_or("");
        let http = record
            .header("Content-Type")
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("application/http"));
        let message = match warc_type {
            "request" if http => parse_message(&record.block, false),
            // A revisit holds the response's head (a 304's, or the new 200's): its status and
            // fields are described as a response's, as Common Crawl's WAT describes them.
            "response" | "revisit" if http => parse_message(&record.block, true),
            _ => None,
        };
        let doc = match (&message, warc_type) {
            (Some(m), "response") => read_response(m, kinds, limits),
            _ => None,
        };
        if let Some(wat) = &mut outputs.wat {
            let c = Container {
                filename: &filename,
                member,
            };
            // HTML-Metadata for an HTML document only (a text/plain page has none).
            let html = doc
                .as_ref()
                .filter(|(kind, _)| *kind == TextKind::Html)
                .map(|(_, d)| d);
            let json = wat_json(&c, &record, message.as_ref(), html);
            wat.append(&wat_record(&c, &record, &json))
                .map_err(write_err(wat.path()))?;
            summary.wat_records += 1;
        }
        if let (Some(wet), Some((_, doc)), Some(m)) = (&mut outputs.wet, &doc, &message) {
            if has_page_text(&record, m, doc) {
                let text = wet::wet_text(doc.title.as_deref(), &doc.text);
                let language = limits
                    .language
                    .then(|| language::identify(&doc.text))
                    .flatten();
                let cut = doc.text_cut.map(TextCut::reason);
                wet.append(&wet::wet_record(&record, &text, language, cut))
                    .map_err(write_err(wet.path()))?;
                summary.wet_records += 1;
            }
        }
    }
    for file in [outputs.wet.take(), outputs.wat.take()]
        .into_iter()
        .flatten()
    {
        let path = file.path().to_path_buf();
        summary.files.push(file.finish().map_err(write_err(&path))?);
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivative_names_follow_common_crawl() {
        let out = Path::new("/o");
        assert_eq!(
            derivative_path(Path::new("/w/a-1.warc.gz"), out, "wet"),
            Path::new("/o/a-1.warc.wet.gz")
        );
        assert_eq!(
            derivative_path(Path::new("/w/a-1.warc"), out, "wat"),
            Path::new("/o/a-1.warc.wat.gz")
        );
    }

    /// As Common Crawl's WAT: repeated fields a list (two `Set-Cookie` values joined with a
    /// comma could not be told apart: their dates hold commas), a revisit's HTTP head
    /// described, no `HTML-Metadata` for a text/plain page.
    #[test]
    fn wat_lists_repeated_fields_describes_revisits_and_keeps_html_metadata_for_html() {
        let dir = tempfile::tempdir().unwrap();
        let record = |kind: &str, uri: &str, http: &str| {
            let head = format!(
                "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2026-01-02T03:04:05Z\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
                http.len()
            );
            crate::record::gzip_member(format!("{head}{http}\r\n\r\n").as_bytes(), 6)
        };
        let plain = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT\r\nSet-Cookie: b=2\r\n\r\nplain text";
        let revisit = "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n";
        let warc = dir.path().join("t.warc.gz");
        let bytes = [
            record("response", "http://a.test/t.txt", plain),
            record("revisit", "http://a.test/t.txt", revisit),
        ]
        .concat();
        std::fs::write(&warc, bytes).unwrap();
        let kinds = Kinds {
            wet: false,
            wat: true,
        };
        derive_file(&warc, dir.path(), kinds, &DeriveLimits::default()).unwrap();
        let wat = dir.path().join("t.warc.wat.gz");
        let json: Vec<serde_json::Value> = crate::warc::reader::read_records(&wat)
            .unwrap()
            .iter()
            .filter(|r| r.header("WARC-Type") == Some("metadata"))
            .map(|r| serde_json::from_slice(&r.block[..]).unwrap())
            .collect();
        let payload = |i: usize| &json[i]["Envelope"]["Payload-Metadata"]["HTTP-Response-Metadata"];
        assert_eq!(
            payload(0)["Headers"]["Set-Cookie"],
            serde_json::json!(["a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT", "b=2"])
        );
        assert!(payload(0).get("HTML-Metadata").is_none(), "{}", payload(0));
        assert_eq!(payload(1)["Response-Message"]["Status"], "304");
        assert_eq!(payload(1)["Headers"]["ETag"], "\"x\"");
    }
}
