//! Process exit codes: a contract with cron jobs and scripts (documented in README.md).

/// Exit codes of `trawl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ExitCode {
    /// The crawl finished (target reached or frontier exhausted) with no failed URL.
    Success = 0,
    /// An unexpected internal error.
    Internal = 1,
    /// Bad command-line arguments (also clap's usage errors).
    BadArguments = 2,
    /// No usable seed.
    NoSeeds = 3,
    /// The crawl finished, but some URLs failed after their retries (network or protocol
    /// errors, or a host given up: unresolvable, its robots.txt unavailable, or not answering
    /// for `--host-down-limit`); HTTP error
    /// statuses are archived data, not failures.
    FetchErrors = 4,
    /// Writing the output failed (disk full, permissions); the files written are valid.
    OutputError = 5,
    /// Another trawl process is crawling into the same output directory.
    Locked = 6,
    /// The output directory holds a finished crawl, or WARC files without their crawl state;
    /// `--recrawl` or `--fresh` crawls again.
    AlreadyFinished = 7,
    /// Stopped at `--time-limit`; state saved, the next run resumes.
    TimeLimit = 8,
    /// A shared crawl's Redis could not be used: unreachable, set to evict keys, or it lost
    /// the crawl's state (restarted without its data).
    SharedStore = 9,
    /// Stopped by SIGINT/SIGTERM (or, for a shared crawl, `trawl stop`); WARC files were
    /// closed cleanly.
    Interrupted = 130,
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}
