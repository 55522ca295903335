//! Recovery after an unclean stop: the captures written after the last save point are read
//! back from the WARC files and handed to the ledger as if their fetches had just finished.
//!
//! Each archived record becomes a [`Capture`] again and runs through the same chain stages as a
//! live fetch, as the kind of job it was queued as: the archive filter (is it a page?), what
//! it leads to (`job::found_in`: links, Location, requisites, a stylesheet's own, decode
//! faults) and the content-seen test (a response becomes an original for later revisits; a
//! revisit counts the bytes it saved). Only URLs still queued are touched (in the saved state,
//! or queued again by reading the seeds file on from the saved position), so replaying a record
//! twice changes nothing, and only the fetches that were truly in flight at the kill are
//! repeated. A robots.txt record applies its rules when its origin's are not known yet, and a
//! sitemap record is read when the sitemap waits on its host (`Frontier::take_probe`): the
//! resumed run fetches neither again.

use std::io;
use std::time::{Duration, Instant, SystemTime};

use url::Url;

use super::job::{found_in, JobResult, Outcome};
use super::ledger::Ledger;
use super::seed_feed::SeedFeed;
use crate::capture::Capture;
use crate::chain::content_seen::{content_seen, DedupTable};
use crate::chain::filter::{ArchiveRules, Verdict};
use crate::chain::outlinks::{sitemap_links, LinkRules};
use crate::exchange::{Exchange, Truncation};
use crate::fault::FaultKind;
use crate::frontier::{link_keys, Job, JobKind};
use crate::http_message::parse_response_head;
use crate::warc::naming::{list_warc_files, serial_of};
use crate::warc::reader::{each_record, records_from, StoredRecord};

/// The stages replay runs, with their options.
pub(super) struct ReplayChain<'a> {
    /// Stage 1.
    pub(super) archive: &'a ArchiveRules,
    /// Stage 2.
    pub(super) links: &'a LinkRules,
    /// Stage 3.
    pub(super) dedup: Option<&'a DedupTable>,
}

/// Replays every capture in the WARC files `prefix` wrote in `dir` with serial `from_serial`
/// or later; returns how many were applied. A capture of a URL not queued may be of a seed
/// the crashed run read from `seeds` after its last save point: the feed is read on (as far
/// as that run can have read) until the URL is queued.
pub(super) fn replay(
    ledger: &mut Ledger,
    chain: &ReplayChain<'_>,
    dirs: &[std::path::PathBuf],
    prefix: &str,
    from_serial: u64,
    mut seeds: Option<&mut SeedFeed>,
) -> io::Result<usize> {
    let mut files: Vec<(u64, std::path::PathBuf)> = list_warc_files(dirs)?
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            let serial = serial_of(&name, prefix)?;
            (serial >= from_serial).then_some((serial, p))
        })
        .collect();
    files.sort();
    let mut applied = 0;
    let mut captures = 0;
    for (_, path) in files {
        for record in each_record(&path)? {
            let record = record?;
            let kind = record.header("WARC-Type").unwrap_or("");
            let revisit = match kind {
                "response" => false,
                "revisit" => true,
                _ => continue,
            };
            let Some(url) = record.target_uri().and_then(|u| Url::parse(u).ok()) else {
                continue;
            };
            captures += 1;
            let Some(job) = take_queued(ledger, &url, seeds.as_deref_mut(), captures) else {
                continue;
            };
            let record_id = record.header("WARC-Record-ID").unwrap_or("").to_string();
            let digest = record.header("WARC-Payload-Digest").map(str::to_string);
            let Some(capture) = capture_of(record) else {
                continue;
            };
            // A revisit holds no payload: its original's, where a file here holds it, gives
            // the links the live fetch found (in a crawl after --recrawl the original is
            // the last crawl's, whose links this crawl never offered).
            let original = revisit
                .then(|| original_capture(chain.dedup, digest.as_deref()))
                .flatten();
            let archived = Archived {
                revisit,
                record_id: &record_id,
                payload_digest: digest.as_deref(),
                original: original.as_ref(),
            };
            let outcome = examine(chain, &capture, &job, &archived);
            let result = JobResult {
                job,
                conn: None,
                outcome,
                bytes: capture.exchange.response.len() as u64,
                elapsed: Duration::ZERO,
                login_asked: crate::fetch::site_login::LoginAsk::Nothing,
                slow_down: None,
            };
            // Replay never writes, so the writer cannot have closed.
            let _ = ledger.handle(result, Instant::now());
            applied += 1;
        }
    }
    Ok(applied)
}

/// The job of `url` if it is queued (or a robots.txt or sitemap probe the frontier would run
/// now), or once reading on in `seeds` queues it.
fn take_queued(
    ledger: &mut Ledger,
    url: &Url,
    mut seeds: Option<&mut SeedFeed>,
    captures: u64,
) -> Option<Job> {
    loop {
        if let Some(job) = ledger.frontier.take_queued(url) {
            return Some(job);
        }
        if let Some(job) = ledger.frontier.take_probe(url) {
            return Some(job);
        }
        let feed = seeds.as_deref_mut()?;
        if !feed.catch_up(ledger, Instant::now(), captures) {
            return None;
        }
    }
}

/// What the WARC record says beyond the capture itself.
struct Archived<'a> {
    /// A revisit record (head only).
    revisit: bool,
    /// Its WARC-Record-ID.
    record_id: &'a str,
    /// Its WARC-Payload-Digest.
    payload_digest: Option<&'a str>,
    /// For a revisit, the original capture it stands for, when a WARC file here holds it.
    original: Option<&'a Capture>,
}

/// The outcome a live fetch of this capture had, worked out by the same stages.
fn examine(
    chain: &ReplayChain<'_>,
    capture: &Capture,
    job: &Job,
    archived: &Archived<'_>,
) -> Outcome {
    // Robots.txt, sitemaps and requisites are archived whatever their type, never as pages.
    let support = job.kind != JobKind::Page;
    // It was archived, so the filter let it through: a page now was a page then (the budget
    // had room, or it would not have been written).
    let page = chain.archive.classify_capture(capture, support) == Verdict::Page;
    // A revisit's links are its original's payload's, read against its own URL; without the
    // original, none are offered.
    let mut found = match (archived.revisit, archived.original) {
        (false, _) => found_in(chain.links, capture, job, page),
        (true, Some(original)) => found_in(chain.links, original, job, page),
        (true, None) => found_in(chain.links, capture, job, false),
    };
    if matches!(job.kind, JobKind::Sitemap { .. }) && !archived.revisit {
        found.sitemap = Some(Box::new(sitemap_links(chain.links, capture, &job.url)));
    }
    let bytes_saved = if archived.revisit {
        revisit_saved(chain.dedup, archived.payload_digest)
    } else {
        let requisite = matches!(job.kind, JobKind::Requisite { .. });
        let payload = page || requisite && (200..300).contains(&capture.status());
        let seen = content_seen(chain.dedup, capture, payload);
        seen.remember(chain.dedup, capture, archived.record_id);
        0
    };
    let keys = link_keys(&found.links, &job.host);
    Outcome::Archived {
        status: capture.status(),
        page,
        found,
        keys,
        truncated: capture.exchange.truncated,
        body_fault: replayed_body_fault(capture.exchange.truncated),
        bytes_saved,
        media: capture.head.media_type(),
    }
}

/// The body fault the live fetch counted, as far as the archive tells: WARC-Truncated keeps
/// the reason (length, time, disconnect) but not which fault caused it. A cut by the server is
/// counted as `body_incomplete` (on disk a reset or broken chunk framing looks the same), a cut
/// by time as `body_timeout` (the whole-fetch timeout looks the same). See docs/DESIGN.md.
fn replayed_body_fault(truncated: Option<Truncation>) -> Option<FaultKind> {
    match truncated? {
        Truncation::Length => None,
        Truncation::Time => Some(FaultKind::BodyTimeout),
        Truncation::Disconnect => Some(FaultKind::BodyIncomplete),
    }
}

/// The bytes a replayed revisit saved: the body length of the original it refers to, when
/// the content-seen table knows it (see docs/DESIGN.md for when it does not).
fn revisit_saved(dedup: Option<&DedupTable>, payload_digest: Option<&str>) -> u64 {
    dedup
        .zip(payload_digest)
        .and_then(|(t, d)| t.lookup(d))
        .and_then(|o| o.body_len)
        .unwrap_or(0)
}

/// The original capture a revisit of `digest` stands for, read from the WARC file here that
/// holds it (the content-seen table knows where, for what it read at start-up).
fn original_capture(dedup: Option<&DedupTable>, digest: Option<&str>) -> Option<Capture> {
    let original = dedup?.lookup(digest?)?;
    let (path, offset) = original.stored?;
    let gzipped = path.extension().is_some_and(|e| e == "gz");
    let (record, _) = records_from(&path, offset, gzipped).ok()?.next()?.ok()?;
    (record.header("WARC-Type") == Some("response"))
        .then(|| capture_of(record))
        .flatten()
}

/// A capture rebuilt from an archived response or revisit record.
fn capture_of(record: StoredRecord) -> Option<Capture> {
    let head = parse_response_head(&record.block)?;
    let exchange = Exchange {
        target_uri: record.target_uri()?.to_string(),
        ip: record
            .header("WARC-IP-Address")
            .and_then(|ip| ip.parse().ok()),
        // Not needed to replay a capture into the frontier.
        tls: None,
        date: record
            .header("WARC-Date")
            .and_then(|d| humantime::parse_rfc3339(d).ok())
            .unwrap_or(SystemTime::UNIX_EPOCH),
        request: Vec::new(),
        interim: Vec::new(),
        truncated: record
            .header("WARC-Truncated")
            .map(Truncation::from_warc_value),
        response: record.block,
    };
    Some(Capture::new(exchange, head))
}
