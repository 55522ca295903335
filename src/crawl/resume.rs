//! Recovery after an unclean stop: the captures written after the last saved state are read
//! back from the WARC files and applied as if their fetches had just finished (taken out of the
//! queue, counted, links extracted from the archived body and offered again). Only URLs still
//! queued in the saved state are touched, so replaying a record twice changes nothing, and only
//! the fetches that were truly in flight at the kill are repeated.

use std::io;
use std::time::{Duration, Instant};

use url::Url;

use super::loop_state::LoopState;
use super::worker::{page_links, JobResult, Outcome};
use crate::http::parse_response_head;
use crate::url::resolve_link;
use crate::warc::naming::{list_warc_files, serial_of};
use crate::warc::reader::read_records;

/// Replays every capture in WARC files of serial `from_serial` or later; returns how many were
/// applied.
pub(super) fn replay(state: &mut LoopState, from_serial: u64, now: Instant) -> io::Result<usize> {
    let config = state.config.clone();
    let mut files: Vec<(u64, std::path::PathBuf)> =
        list_warc_files(std::slice::from_ref(&config.out))?
            .into_iter()
            .filter_map(|p| {
                let name = p.file_name()?.to_string_lossy().into_owned();
                let serial = serial_of(&name, &config.warc_prefix)?;
                (serial >= from_serial).then_some((serial, p))
            })
            .collect();
    files.sort();
    let mut applied = 0;
    for (_, path) in files {
        for record in read_records(&path)? {
            let kind = record.header("WARC-Type").unwrap_or("");
            if kind != "response" && kind != "revisit" {
                continue;
            }
            let Some(url) = record
                .header("WARC-Target-URI")
                .and_then(|u| Url::parse(u).ok())
            else {
                continue;
            };
            let Some(job) = state.frontier.take_queued(&url) else {
                continue;
            };
            let Some(head) = parse_response_head(&record.block) else {
                continue;
            };
            let status = head.status;
            let page = (200..300).contains(&status)
                && head.media_type().is_some_and(|m| config.accepts(&m));
            let truncated = record.header("WARC-Truncated").is_some();
            let mut faults = Vec::new();
            let links = if page && kind == "response" {
                let payload = head.payload(&record.block);
                page_links(&config, &url, &head, &payload, !truncated, &mut faults)
            } else {
                Vec::new()
            };
            let location = (300..400)
                .contains(&status)
                .then(|| head.header_str("location"))
                .flatten()
                .and_then(|l| resolve_link(&url, &l));
            state.handle(
                JobResult {
                    job,
                    conn: None,
                    outcome: Outcome::Archived {
                        status,
                        page,
                        links,
                        location,
                        truncated: record
                            .header("WARC-Truncated")
                            .map(|_| crate::exchange::Truncation::Disconnect),
                        robots_body: None,
                        faults,
                        bytes_saved: 0,
                    },
                    bytes: record.block.len() as u64,
                    elapsed: Duration::ZERO,
                },
                now,
            );
            applied += 1;
        }
    }
    Ok(applied)
}
