//! GNU wget's flags that change nothing in what trawl archives, taken so that a wget command
//! line runs unchanged: those that shape the tree of files wget writes (a WARC file holds what
//! was received whatever they say), those wget itself turns off when it writes a WARC file
//! (`-N`, `--continue`, `--start-pos`), those that only change what wget prints, and those
//! that ask for what trawl always does. Each group is one field, its flags aliases.

use clap::Args;

/// wget's flags that change nothing in a WARC file.
#[derive(Debug, Clone, Default, Args)]
pub struct WgetNoEffect {
    /// wget's options for the tree of files it writes: -nd, -nH, --delete-after, -k
    /// (--convert-links), -E (--adjust-extension), -K (--backup-converted), -x
    /// (--force-directories), -nc (--no-clobber), --protocol-directories, --unlink,
    /// --convert-file-only, --save-headers, --content-on-error, --trust-server-names,
    /// --content-disposition, --xattr. trawl
    /// writes only WARC files, which wget's options leave as they are too, so these change
    /// nothing.
    #[arg(
        long,
        visible_aliases = [
            "no-host-directories", "delete-after", "convert-links", "adjust-extension",
            "html-extension", "backup-converted", "force-directories", "no-clobber",
            "protocol-directories", "unlink", "convert-file-only", "save-headers",
            "content-on-error", "trust-server-names", "content-disposition", "xattr"
        ],
        short_aliases = ['k', 'E', 'K', 'x'],
        action = clap::ArgAction::Count
    )]
    pub no_directories: u8,

    /// wget's file-tree options that take a value: -P (--directory-prefix), --cut-dirs,
    /// --default-page, --restrict-file-names, --backups; they change nothing either.
    #[arg(
        long = "directory-prefix",
        short = 'P',
        visible_aliases = ["cut-dirs", "default-page", "restrict-file-names", "backups"],
        value_name = "VALUE"
    )]
    pub file_tree_values: Vec<String>,

    /// wget's -N (--timestamping), --continue, --no-if-modified-since and
    /// --no-use-server-timestamps, which wget turns off when it writes a WARC file: every
    /// crawl archives what it fetches.
    #[arg(
        long = "timestamping",
        short = 'N',
        visible_aliases = ["continue", "no-if-modified-since", "no-use-server-timestamps"],
        action = clap::ArgAction::Count
    )]
    pub timestamping: u8,

    /// wget's --start-pos, which wget also turns off when it writes a WARC file.
    #[arg(long, value_name = "OFFSET")]
    pub start_pos: Option<String>,

    /// wget's -nv (--no-verbose), -S (--server-response) and --show-progress, which change
    /// what wget prints (trawl's request and response records hold every header; -v logs
    /// every fetch).
    #[arg(
        long = "no-verbose",
        short_alias = 'S',
        visible_aliases = ["server-response", "show-progress"],
        action = clap::ArgAction::Count
    )]
    pub no_verbose: u8,

    /// wget's --progress=TYPE and --report-speed=TYPE (what wget prints).
    #[arg(long, visible_alias = "report-speed", value_name = "TYPE")]
    pub progress: Option<String>,

    /// wget's flags for what trawl does anyway: --retry-connrefused (a refused connection is
    /// retried), --keep-session-cookies (--save-cookies keeps them), --no-proxy (no proxy
    /// unless --proxy), --no-dns-cache (names are looked up again as their TTL says),
    /// --no-warc-keep-log (trawl's log is not archived), --no-warc-digests (digests are
    /// cheap and kept), --no-config and --no-netrc (trawl reads neither file), --no-hsts
    /// (trawl fetches each URL with the scheme its link gives), --strict-comments (comments
    /// are read as browsers read them).
    #[arg(
        long = "retry-connrefused",
        visible_aliases = [
            "keep-session-cookies", "no-proxy", "no-dns-cache", "no-warc-keep-log",
            "no-warc-digests", "no-config", "no-netrc", "no-hsts", "strict-comments"
        ],
        action = clap::ArgAction::Count
    )]
    pub already_so: u8,

    /// wget's --hsts-file (no HSTS database is kept).
    #[arg(long, value_name = "PATH")]
    pub hsts_file: Option<String>,

    /// wget's --regex-type (posix or pcre): --accept-regex and --reject-regex are read with
    /// Rust's regex syntax, which takes POSIX's extended expressions and classes too.
    #[arg(long, value_name = "TYPE", value_parser = ["posix", "pcre"])]
    pub regex_type: Option<String>,
}
