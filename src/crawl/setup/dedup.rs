//! The content-seen table a crawl starts with (`--dedup`): the indexes of earlier crawls
//! (`--dedup-index`: CDXJ, or CDX such as wget's) and the complete 2xx responses of the WARC
//! files already in the output directory, so a payload archived before is written as a revisit.

use std::path::PathBuf;
use std::sync::Arc;

use super::SetupError;
use crate::chain::content_seen::DedupTable;
use crate::config::Config;
use crate::crawl::CrawlError;
use crate::http_message::parse_response_head;
use crate::record::Original;
use crate::warc::naming::list_warc_files;
use crate::warc::reader::each_record;

/// The content-seen table for `--dedup`, if asked for.
pub(super) fn load_dedup(config: &Config) -> Result<Option<Arc<DedupTable>>, CrawlError> {
    let Some(files) = &config.chain.dedup else {
        return Ok(None);
    };
    let table = load_dedup_index(files)?;
    let earlier = load_earlier_captures(&table, &config.output.archive_dirs())?;
    if earlier > 0 {
        tracing::info!("--dedup: {earlier} payload(s) already archived in the output directory");
    }
    Ok(Some(Arc::new(table)))
}

/// Adds the full, complete 2xx responses of the finished WARC files in `out` to `table`, so
/// `--dedup` finds what earlier runs (before a restart, or earlier crawls before a
/// `--recrawl`) archived. Reads every such file once at start-up. Returns how many were added.
fn load_earlier_captures(table: &DedupTable, dirs: &[PathBuf]) -> Result<usize, SetupError> {
    let files = list_warc_files(dirs).unwrap_or_default();
    // Said, with its size, and then every 10 s: 2.5 GB of WARC files took 66 s before the
    // first fetch, with nothing in the log (found by an exploratory run).
    let bytes: u64 = files
        .iter()
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .sum();
    if !files.is_empty() {
        tracing::warn!(
            "--dedup: reading the captures of {} earlier WARC file(s) ({}) before the first fetch",
            files.len(),
            bytesize::ByteSize(bytes).display().si()
        );
    }
    let (started, mut said) = (std::time::Instant::now(), std::time::Instant::now());
    let mut added = 0;
    for (done, path) in files.iter().enumerate() {
        if said.elapsed() >= std::time::Duration::from_secs(10) {
            said = std::time::Instant::now();
            tracing::warn!(
                "--dedup: {done} of {} earlier WARC file(s) read in {:.0?}",
                files.len(),
                started.elapsed()
            );
        }
        let path = path.clone();
        let file: std::sync::Arc<std::path::Path> = std::sync::Arc::from(path.as_path());
        let error = |source| SetupError::EarlierWarc {
            path: path.clone(),
            source,
        };
        for record in each_record(&path).map_err(error)? {
            let record = record.map_err(error)?;
            if record.header("WARC-Type") != Some("response")
                || record.header("WARC-Truncated").is_some()
            {
                continue;
            }
            let (Some(digest), Some(uri), Some(date)) = (
                record.header("WARC-Payload-Digest"),
                record.target_uri(),
                record.header("WARC-Date"),
            ) else {
                continue;
            };
            let Some(head) = parse_response_head(&record.block) else {
                continue;
            };
            let body_len = record.block.len().saturating_sub(head.len) as u64;
            if !(200..300).contains(&head.status) || body_len == 0 {
                continue;
            }
            let original = Original {
                target_uri: uri.to_string(),
                date: date.to_string(),
                record_id: record.header("WARC-Record-ID").map(str::to_string),
                body_len: Some(body_len),
                stored: Some((file.clone(), record.offset)),
            };
            added += usize::from(table.insert(digest.to_string(), original));
        }
    }
    Ok(added)
}

/// The content-seen table preloaded from the CDXJ or CDX indexes of earlier crawls.
fn load_dedup_index(files: &[PathBuf]) -> Result<DedupTable, SetupError> {
    let table = DedupTable::default();
    for path in files {
        let added = table
            .load_index(path)
            .map_err(|source| SetupError::DedupIndex {
                path: path.clone(),
                source,
            })?;
        // A file that is no index (a WARC given by mistake, a text) reads as none: said, since
        // the crawl then deduplicates against nothing in it.
        match added {
            0 => tracing::warn!(
                "--dedup-index {}: no full 2xx capture found in it (a CDXJ or CDX index is expected); nothing is deduplicated against it",
                path.display()
            ),
            n => tracing::info!("--dedup-index {}: {n} capture(s)", path.display()),
        }
    }
    Ok(table)
}
