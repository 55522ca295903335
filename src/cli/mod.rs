//! Command-line definitions (clap derive): raw values only. Validation that needs more than
//! one flag, or the file system, happens in `config.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod archive_args;
mod crawl_args;
mod report_args;
mod request_args;
mod values;
mod wget_args;
mod wget_no_effect;
mod wget_refused;
mod wget_requests;
mod wget_values;
mod wgetrc_commands;

pub use archive_args::*;
pub use crawl_args::*;
pub use report_args::ReportArgs;
pub use request_args::RequestArgs;
pub use values::*;
pub use wget_args::{wget_short_words, WgetArgs, WgetOnly};
pub use wget_refused::refused_wget_flag;
pub use wgetrc_commands::{wgetrc_commands, wgetrc_flags, WgetrcCommandLine};

/// trawl: an archival web crawler that writes WARC/1.1 files.
#[derive(Debug, Parser)]
#[command(
    name = "trawl",
    version,
    propagate_version = true,
    about,
    long_about = None,
    mut_subcommands = last_value_wins
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// A single-value flag given twice takes its last value, as wget's getopt does (a cron job's
/// `trawl crawl $DEFAULTS --delay 2s` overrides its defaults); lists (`--exclude`) keep every
/// value and counted flags (`-v -v`) count, which clap's `args_override_self` would reset.
fn last_value_wins(command: clap::Command) -> clap::Command {
    command.mut_args(|arg| match arg.get_action() {
        clap::ArgAction::Set | clap::ArgAction::SetTrue | clap::ArgAction::SetFalse
            if !arg.is_positional() =>
        {
            let id = arg.get_id().clone();
            arg.overrides_with(id)
        }
        _ => arg,
    })
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Crawl from seeds and write WARC files.
    Crawl(Box<CrawlArgs>),
    /// Write a sorted CDXJ index of WARC files (as pywb's cdxj-indexer does).
    Index(IndexArgs),
    /// Package WARC files as a WACZ (WARCs, CDXJ index, pages.jsonl, datapackage.json).
    Wacz(WaczArgs),
    /// Write WET (plain text) and/or WAT (metadata, links) files of WARC files, in Common
    /// Crawl's formats: X.warc.gz gives X.warc.wet.gz and X.warc.wat.gz.
    Derive(DeriveArgs),
    /// Build or update a full-text search index (tantivy) of the pages in WARC files: one
    /// document per page, files indexed before skipped.
    SearchIndex(SearchIndexArgs),
    /// Search an index made by search-index or crawl --search-index.
    Search(SearchArgs),
    /// Show the progress of a running or stopped crawl: in an output directory, or a shared
    /// crawl in Redis (--redis, --crawl-id).
    Status(StatusArgs),
    /// Stop every worker of a shared crawl gracefully (they save and exit; resumable).
    Stop(StopArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    Completions(CompletionsArgs),
    /// Print the man page (roff), e.g. `trawl man > trawl.1`.
    Man,
}

/// Flags of `trawl completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Flags of `trawl status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The crawl's output directory (its --out).
    #[arg(value_name = "DIR", required_unless_present = "redis")]
    pub dir: Option<PathBuf>,

    /// A shared crawl: the Redis server its workers use.
    #[arg(
        long,
        value_name = "URL",
        requires = "crawl_id",
        conflicts_with = "dir"
    )]
    pub redis: Option<String>,

    /// A shared crawl: its --crawl-id.
    #[arg(long, value_name = "ID", requires = "redis")]
    pub crawl_id: Option<String>,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `trawl stop`.
#[derive(Debug, Args)]
pub struct StopArgs {
    /// The Redis server the crawl's workers use.
    #[arg(long, value_name = "URL", required = true)]
    pub redis: String,

    /// The crawl's --crawl-id.
    #[arg(long, value_name = "ID", required = true)]
    pub crawl_id: String,
}

/// Keeps the older `--deny-ports 22,25` spelling working now that the list needs `=`: a
/// `--deny-ports` followed by a bare list of port numbers is joined into `--deny-ports=22,25`.
/// Anything else after it (a seed, another flag) is left alone, so it is never taken for ports.
pub fn join_port_lists(argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out = Vec::with_capacity(argv.len());
    let mut args = argv.into_iter().peekable();
    while let Some(arg) = args.next() {
        let is_list = |next: &std::ffi::OsString| {
            next.to_str().is_some_and(|s| {
                !s.is_empty()
                    && s.split(',')
                        .all(|p| !p.is_empty() && p.parse::<u16>().is_ok())
            })
        };
        if arg == "--deny-ports" && args.peek().is_some_and(is_list) {
            let list = args.next().expect("peeked");
            let mut joined = std::ffi::OsString::from("--deny-ports=");
            joined.push(list);
            out.push(joined);
        } else {
            out.push(arg);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_lists_keep_their_old_spelling_and_never_take_a_seed() {
        let os = |v: &[&str]| -> Vec<std::ffi::OsString> { v.iter().map(Into::into).collect() };
        let parsed = |v: &[&str]| match Cli::try_parse_from(join_port_lists(os(v))) {
            Ok(Cli {
                command: Command::Crawl(args),
            }) => (args.deny_ports, args.seeds),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            parsed(&["trawl", "crawl", "--deny-ports", "22,25", "http://a.org/"]),
            (Some(vec![22, 25]), vec!["http://a.org/".to_string()])
        );
        assert_eq!(
            parsed(&["trawl", "crawl", "--deny-ports", "http://a.org/"]),
            (Some(vec![]), vec!["http://a.org/".to_string()])
        );
        assert_eq!(
            parsed(&["trawl", "crawl", "--deny-ports=8080", "a.org"]),
            (Some(vec![8080]), vec!["a.org".to_string()])
        );
    }

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
