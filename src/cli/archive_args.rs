//! Flags of the commands that read finished WARC files back: `trawl index`, `trawl wacz`,
//! `trawl derive`, `trawl search-index` and `trawl search`.

use std::path::PathBuf;

use clap::Args;

use super::values::parse_size;

/// Flags of `trawl index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// WARC files (.warc.gz or .warc) or directories holding them (subdirectories searched too).
    #[arg(value_name = "WARC", required = true)]
    pub warcs: Vec<PathBuf>,

    /// Write the index here instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Which derivative `trawl derive` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DeriveKind {
    /// Plain text (WARC conversion records).
    Wet,
    /// Metadata and links as JSON (WARC metadata records).
    Wat,
    /// Both.
    All,
}

/// Flags of `trawl derive`.
#[derive(Debug, Args)]
pub struct DeriveArgs {
    /// wet, wat or all.
    #[arg(value_enum, value_name = "KIND")]
    pub kind: DeriveKind,

    /// WARC files (.warc.gz or .warc) or directories holding them (subdirectories searched too).
    #[arg(value_name = "WARC", required = true)]
    pub warcs: Vec<PathBuf>,

    /// Directory for the derivatives (created if missing).
    #[arg(long, short = 'o', value_name = "DIR", required = true)]
    pub output: PathBuf,

    /// Most bytes of text kept per page in WET.
    #[arg(long, value_name = "SIZE", default_value = "1MiB", value_parser = parse_size)]
    pub max_text: u64,

    /// Do not identify the language of WET text.
    #[arg(long)]
    pub no_language: bool,

    /// gzip level of the derivative records (0-9).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=9))]
    pub gzip_level: u32,
}

/// Flags of `trawl wacz`.
#[derive(Debug, Args)]
pub struct WaczArgs {
    /// The WACZ file to write.
    #[arg(value_name = "OUT.wacz")]
    pub output: PathBuf,

    /// WARC files (.warc.gz or .warc) or directories holding them (subdirectories searched too).
    #[arg(value_name = "WARC", required = true)]
    pub warcs: Vec<PathBuf>,

    /// Title recorded in datapackage.json.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    /// Give each page in pages.jsonl its text (as WET holds it), so ReplayWeb.page's
    /// full-text search works on the package (as Browsertrix's --text does).
    #[arg(long)]
    pub text: bool,
}

/// Flags of `trawl search-index`.
#[derive(Debug, Args)]
pub struct SearchIndexArgs {
    /// WARC files (.warc.gz or .warc) or directories holding them (subdirectories searched too).
    #[arg(value_name = "WARC", required = true)]
    pub warcs: Vec<PathBuf>,

    /// The index directory (created if missing; files it holds already are skipped).
    #[arg(long, short = 'o', value_name = "INDEX", required = true)]
    pub output: PathBuf,

    /// Commit after the WARC file that brings this many pages since the last commit (and at
    /// the end): what a kill can cost. Each commit makes new segments for tantivy to merge.
    #[arg(long, value_name = "PAGES", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub commit_every: u64,
}

/// Flags of `trawl search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The index directory (from `trawl search-index` or `trawl crawl --search-index`).
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,

    /// The query, in tantivy's syntax: words (all required), "a phrase", field:value
    /// (title, text, url, host, language, status, warc_file), AND / OR / NOT, +word, -word.
    /// A query that starts with `-` is taken as the query, not an option.
    #[arg(value_name = "QUERY", allow_hyphen_values = true)]
    pub query: String,

    /// Most hits shown.
    #[arg(long, short = 'n', value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub limit: u64,

    /// Print JSON (the total and each hit with its snippet and highlight ranges).
    #[arg(long)]
    pub json: bool,
}
