//! A crawl state already in the output directory, met at start-up: an interrupted crawl is
//! resumed; a finished one is refused (exit 7), started anew (`--recrawl`, its state set aside)
//! or discarded (`--fresh`); and one that stopped at its page or byte target is resumed from
//! its frontier when that budget is raised above what it reached. WARC files without a state
//! are refused too (exit 7) unless `--recrawl` or `--fresh` says to start beside them.

use std::path::PathBuf;

use super::save_point::{SavedCrawl, StateError, STATE_META};
use super::setup::SetupError;
use super::CrawlError;
use crate::config::{ExistingState, OutputConfig, RunConfig};
use crate::crawl_db::{CrawlDb, FrontierStorage, STORE_FILE};
use crate::report::{StopReason, Tally};

/// Opens the crawl database, first acting on a crawl state already there: resumed as it is,
/// refused when finished (unless `--recrawl`, which sets it aside, or a page or byte budget
/// raised above what the crawl reached, which resumes it), discarded by `--fresh`.
pub(super) fn open_state(output: &OutputConfig, run: &RunConfig) -> Result<CrawlDb, CrawlError> {
    let dir = &output.state_dir;
    let open = || CrawlDb::open(dir).map_err(|e| CrawlError::State(e.into()));
    if !dir.join(STORE_FILE).exists() {
        // WARC files with no state beside them: a state deleted, or kept elsewhere by a
        // `--state` the command line lost. Started over, the crawl would archive again all
        // they hold (a cron job's silent doubling).
        let warcs = warc_files_in(&output.out);
        if output.existing_state == ExistingState::Resume && warcs > 0 {
            return Err(SetupError::StateMissing {
                out: output.out.clone(),
                warcs,
                state: dir.clone(),
            }
            .into());
        }
        return open();
    }
    let state_dir_error = |source| SetupError::StateDir {
        path: dir.clone(),
        source,
    };
    if output.existing_state == ExistingState::Fresh {
        std::fs::remove_dir_all(dir).map_err(state_dir_error)?;
        tracing::warn!(
            "--fresh: discarded the saved crawl state in {}; starting over",
            dir.display()
        );
        return open();
    }
    let db = open()?;
    let blob = db.meta_get(STATE_META).map_err(StateError::from)?;
    let Some(saved) = SavedCrawl::decode(dir, blob.as_deref())? else {
        return Ok(db);
    };
    let Some(reason) = saved.stopped.filter(|r| r.is_finished()) else {
        return Ok(db);
    };
    if output.existing_state == ExistingState::Resume {
        if let Some(raised) = raised_budget(reason, &saved.tally, run) {
            tracing::warn!(
                "the crawl in {} had stopped at its {}; {raised}: resuming it from its frontier",
                output.out.display(),
                reason.describe(),
            );
            return Ok(db);
        }
    }
    if output.existing_state != ExistingState::Recrawl {
        return Err(SetupError::Finished {
            out: output.out.clone(),
            reason: reason.describe(),
            extend: extend_hint(reason, &saved.tally),
        }
        .into());
    }
    drop(db); // closed before its directory moves
    let previous = PathBuf::from(format!("{}.previous", dir.display()));
    if previous.exists() {
        std::fs::remove_dir_all(&previous).map_err(state_dir_error)?;
    }
    std::fs::rename(dir, &previous).map_err(state_dir_error)?;
    tracing::warn!(
        "--recrawl: the crawl in {} had finished ({}); starting a new one (its state is kept in {})",
        output.out.display(),
        reason.describe(),
        previous.display()
    );
    open()
}

/// When a crawl that stopped at its page or byte target (`reason`, with counters `tally`) is run
/// again with that budget raised above what it reached (or lifted), what was raised, in words:
/// the crawl goes on from its frontier. `None` when the budget is not raised, or the crawl
/// ended for another reason (its frontier was done).
fn raised_budget(reason: StopReason, tally: &Tally, run: &RunConfig) -> Option<String> {
    match (reason, run.max_pages, run.max_bytes) {
        (StopReason::TargetReached, None, _) => Some("no --max-pages now".into()),
        (StopReason::TargetReached, Some(max), _) if max > tally.pages => Some(format!(
            "--max-pages {max} is above the {} pages archived",
            tally.pages
        )),
        (StopReason::ByteLimit, _, None) => Some("no --max-bytes now".into()),
        (StopReason::ByteLimit, _, Some(max)) if max > tally.bytes_downloaded => Some(format!(
            "--max-bytes {max} is above the {} bytes downloaded",
            tally.bytes_downloaded
        )),
        _ => None,
    }
}

/// How a finished crawl could go on, for the message of exit 7.
fn extend_hint(reason: StopReason, tally: &Tally) -> String {
    match reason {
        StopReason::TargetReached => format!(
            "to continue it from its frontier, raise --max-pages above the {} pages archived; ",
            tally.pages
        ),
        StopReason::ByteLimit => format!(
            "to continue it from its frontier, raise --max-bytes above the {} bytes downloaded; ",
            tally.bytes_downloaded
        ),
        _ => String::new(),
    }
}

/// How many WARC files (`*.warc.gz`) `dir` holds.
fn warc_files_in(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".warc.gz"))
            .count()
    })
}
