//! The flags of `trawl crawl` for what it says while it runs and when it ends: the log file,
//! the JSON report, the status line's interval, `--quiet` and `--verbose`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::parse_duration;

/// What trawl says while it runs and when it ends.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Append everything trawl says (log messages, notes, the status line, the final report) to
    /// this file instead of stderr; errors also go to stderr. wget's -a/--append-output and
    /// --output-file work too (appending: a resumed crawl keeps its earlier messages).
    #[arg(
        long,
        value_name = "FILE",
        visible_aliases = ["append-output", "output-file"],
        short_alias = 'a'
    )]
    pub log_file: Option<PathBuf>,

    /// Write the final report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,

    /// Interval of the one-line status printed when stderr is not a terminal.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub progress_interval: Duration,

    /// No progress and no report on stderr (errors are still printed).
    #[arg(long, short = 'q', conflicts_with = "verbose")]
    pub quiet: bool,

    /// More log output (-v: each fetch, -vv: debug; wget's -d/--debug is -v).
    #[arg(long, short = 'v', short_alias = 'd', alias = "debug", action = clap::ArgAction::Count)]
    pub verbose: u8,
}
