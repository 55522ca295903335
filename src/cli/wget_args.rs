//! GNU wget's names for what `trawl crawl` does under its own names, with wget's meanings, so
//! that a wget command line (`wget -r -l 3 -np -w 1 -e robots=off URL`) runs as it reads:
//! `--wait` takes bare seconds, `--level 0` and `inf` mean no limit, `-r` has wget's depth of 5,
//! `--tries` counts the first attempt. Each folds into the trawl flag it stands for
//! ([`WgetArgs::fold_into`]) before the configuration is read, and conflicts with it when both
//! are given; what no trawl flag says (`--random-wait`, `-D`, `-I`, `-X`, `--https-only`, `-4`,
//! ...) goes to the configuration ([`WgetOnly`]). Values are read as wget reads them
//! (`wget_values.rs`). wget's flags that change nothing in a WARC file are accepted
//! (`wget_no_effect.rs`), those trawl cannot honour refused by name (`wget_refused.rs`). wget's
//! multi-letter short options (`-np`, `-nd`, `-nH`, `-nc`, `-nv`) are rewritten to their long
//! names before parsing ([`wget_short_words`]); clap reads one letter per short option.

use std::ffi::OsString;
use std::time::Duration;

use clap::Args;

use super::wget_no_effect::WgetNoEffect;
use super::wget_requests::WgetRequests;
use super::wget_values::*;
use super::CrawlArgs;
use crate::fetch::Families;
use crate::url_rules::{DirLists, FileLists, HostLists, ScopeKind};

/// wget's depth for `-r` without `-l`.
const WGET_RECURSIVE_DEPTH: u32 = 5;

/// The wget-named flags of `trawl crawl`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "wget's names (wget's meanings)")]
pub struct WgetArgs {
    /// wget's -r: follow links (trawl always does), to wget's depth of 5 unless --level or
    /// --max-depth says otherwise, on the seed's host unless -H or --scope says otherwise,
    /// following what pages load (<img src>, scripts) as links and archiving every type
    /// unless --accept says otherwise (wget's WARC holds all it downloaded).
    #[arg(long, short = 'r')]
    pub recursive: bool,

    /// wget's -m: -r without a depth limit (wget's -N, timestamping, has no meaning for WARC
    /// files: every crawl archives what it fetches).
    #[arg(long, short = 'm')]
    pub mirror: bool,

    /// wget's -l: most link hops from a seed; 0 or inf: no limit (--max-depth 0 means seeds
    /// only).
    #[arg(
        long,
        short = 'l',
        value_name = "N|inf",
        value_parser = parse_level,
        conflicts_with = "max_depth",
    )]
    pub level: Option<Level>,

    /// wget's -w: seconds between two requests to one host (bare seconds, or wget's 2m, 1h, 1d;
    /// --delay with trawl's units).
    #[arg(
        long,
        short = 'w',
        value_name = "SECONDS",
        value_parser = parse_wait,
        conflicts_with = "delay",
    )]
    pub wait: Option<Duration>,

    /// wget's --random-wait: each wait between two requests to one host is drawn from 0.5 to
    /// 1.5 times --wait (or --delay); a longer robots.txt Crawl-delay is kept exact.
    #[arg(long)]
    pub random_wait: bool,

    /// wget's -H: follow links to any host (--scope any).
    #[arg(long, short = 'H', conflicts_with = "scope")]
    pub span_hosts: bool,

    /// wget's -D: follow only hosts in these domains (comma-separated; `a.org` takes
    /// `www.a.org`), for links and page requisites alike; with -H, any such host.
    #[arg(long, short = 'D', value_name = "DOMAINS", value_delimiter = ',')]
    pub domains: Vec<String>,

    /// wget's --exclude-domains: never follow hosts in these domains, links or requisites.
    #[arg(long, value_name = "DOMAINS", value_delimiter = ',')]
    pub exclude_domains: Vec<String>,

    /// wget's -I: follow only URLs in these directories and under them (comma-separated;
    /// `*`, `?`, `[...]` patterns do not cross a `/`), for links and page requisites alike.
    #[arg(long, short = 'I', value_name = "DIRS", value_delimiter = ',')]
    pub include_directories: Vec<String>,

    /// wget's -X: never URLs in these directories or under them (`-X /cgi-bin,/forum`).
    #[arg(long, short = 'X', value_name = "DIRS", value_delimiter = ',')]
    pub exclude_directories: Vec<String>,

    /// wget's -A: fetch only files whose name ends with one of these suffixes or matches one of
    /// these patterns (`-A pdf,'*.jp?g'`); directories and .html/.htm pages still pass while
    /// their links are followed. Archives every type then, unless --accept says otherwise
    /// (trawl's --accept takes media types; wget's long --accept is not this flag).
    #[arg(short = 'A', value_name = "SUFFIXES", value_delimiter = ',')]
    pub accept_files: Vec<String>,

    /// wget's -R: never fetch files whose name ends with one of these suffixes or matches
    /// one of these patterns (`-R zip,iso`); .html/.htm pages as -A says.
    #[arg(
        long = "reject",
        short = 'R',
        value_name = "SUFFIXES",
        value_delimiter = ','
    )]
    pub reject_files: Vec<String>,

    /// wget's -t: attempts per URL, the first included (--retries N-1). trawl caps retries, so
    /// 0 and inf are refused.
    #[arg(
        long,
        short = 't',
        value_name = "N",
        value_parser = parse_tries,
        conflicts_with = "retries",
    )]
    pub tries: Option<u32>,

    /// wget's -Q: stop after this many bytes were downloaded (10k, 5m as wget writes them, in
    /// units of 1024; 0 or inf: no quota; --max-bytes).
    #[arg(
        long,
        short = 'Q',
        value_name = "SIZE",
        value_parser = parse_quota,
        conflicts_with = "max_bytes",
    )]
    pub quota: Option<Quota>,

    /// wget's -e: a wgetrc command, read as the flag it names (-e page_requisites=on is -p,
    /// -e robots=off is --ignore-robots, -e https_proxy=H:P is --proxy), also as `execute`
    /// in a --config file. (Written as those flags before clap parses, `wgetrc_commands.rs`:
    /// this field is for --help.)
    #[arg(long, short = 'e', value_name = "COMMAND")]
    pub execute: Vec<String>,

    /// wget's -T: seconds of silence before a read gives up, and for a connection to be made
    /// (--timeout and --connect-timeout at once).
    #[arg(
        short = 'T',
        value_name = "SECONDS",
        value_parser = parse_wait,
        conflicts_with_all = ["timeout", "connect_timeout"],
    )]
    pub all_timeouts: Option<Duration>,

    /// wget's --read-timeout: seconds of silence before a read gives up (--timeout).
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = parse_wait,
        conflicts_with_all = ["timeout", "all_timeouts"],
    )]
    pub read_timeout: Option<Duration>,

    /// wget's --waitretry: the longest wait before a URL whose fetch failed is tried again
    /// (bare seconds; the waits double from 1 s, or --delay, up to this; 5 minutes without it).
    #[arg(long, value_name = "SECONDS", value_parser = parse_wait)]
    pub waitretry: Option<Duration>,

    /// wget's --ignore-case: -A, -R, -I and -X match names in any case.
    #[arg(long)]
    pub ignore_case: bool,

    /// wget's --https-only: follow only https:// links and page requisites (seeds and their
    /// redirects to https are fetched as given).
    #[arg(long)]
    pub https_only: bool,

    /// wget's --warc-tempdir: where long bodies and their records are spooled while they are
    /// recorded, in unnamed files (--out by default).
    #[arg(long, value_name = "DIR")]
    pub warc_tempdir: Option<std::path::PathBuf>,

    /// wget's flags for how each request is made.
    #[command(flatten)]
    pub requests: WgetRequests,

    /// wget's flags that change nothing in a WARC file.
    #[command(flatten)]
    pub no_effect: WgetNoEffect,
}

/// What wget's flags ask for that no flag of trawl's says.
#[derive(Debug, Clone, Default)]
pub struct WgetOnly {
    /// `--random-wait`.
    pub random_wait: bool,
    /// `--domains`, `--exclude-domains`.
    pub host_lists: HostLists,
    /// `--include-directories`, `--exclude-directories`.
    pub dir_lists: DirLists,
    /// `-A`, `-R`.
    pub file_lists: FileLists,
    /// `--waitretry`.
    pub retry_max_wait: Option<Duration>,
    /// `--https-only`.
    pub https_only: bool,
    /// `-4`, `-6`, `--prefer-family`.
    pub families: Families,
    /// `--dns-timeout`.
    pub dns_timeout: Option<Duration>,
    /// `--auth-no-challenge`.
    pub auth_no_challenge: bool,
    /// `--warc-tempdir`.
    pub spool_dir: Option<std::path::PathBuf>,
    /// `-r`/`-m`: what a page loads is followed as its links are.
    pub inline_links: bool,
}

impl WgetArgs {
    /// Writes what these flags mean into the trawl flags they stand for, and returns what
    /// only they say; an error for a list entry that is no host name or directory pattern.
    pub fn fold_into(self, args: &mut CrawlArgs) -> Result<WgetOnly, String> {
        if let Some(Level(depth)) = self.level {
            args.max_depth = depth;
        } else if self.recursive && !self.mirror && args.max_depth.is_none() {
            args.max_depth = Some(WGET_RECURSIVE_DEPTH);
        }
        if let Some(wait) = self.wait {
            args.delay = wait;
        }
        // wget's 0 is "never time out", which trawl does not do: a silent server would hold a
        // fetch for ever. Said with the flag as written.
        let never = |flag: &str| {
            format!("{flag} 0 (wget: never time out) is refused: trawl always gives up on a silent server; give a long time instead, e.g. {flag} 3600")
        };
        if let Some(timeout) = self.all_timeouts {
            if timeout.is_zero() {
                return Err(never("-T"));
            }
            args.timeout = timeout;
            args.connect_timeout = timeout;
        }
        if let Some(timeout) = self.read_timeout {
            if timeout.is_zero() {
                return Err(never("--read-timeout"));
            }
            args.timeout = timeout;
        }
        let recursive = self.recursive || self.mirror;
        if self.span_hosts {
            args.scope = Some(ScopeKind::Any);
        } else if recursive && args.scope.is_none() {
            // wget -r stays on the seed's host unless -H (-D alone does not widen it).
            args.scope = Some(ScopeKind::Host);
        }
        if let Some(tries) = self.tries {
            args.retries = tries - 1;
        }
        if let Some(Quota(bytes)) = self.quota {
            args.max_bytes = bytes;
        }
        self.requests.add_headers(&mut args.request.headers);
        let file_lists = !self.accept_files.is_empty() || !self.reject_files.is_empty();
        if (file_lists || recursive) && args.accept.join(",") == super::DEFAULT_ACCEPT {
            // wget's WARC holds every response it downloaded: `wget -r` keeps the PDFs and
            // archives its pages link to.
            args.accept = vec!["*/*".to_string()];
        }
        let mut dir_lists = DirLists::new(&self.include_directories, &self.exclude_directories)?;
        let mut file_lists =
            FileLists::new(&self.accept_files, &self.reject_files, args.page_requisites)?;
        if self.ignore_case {
            dir_lists = dir_lists.ignoring_case();
            file_lists = file_lists.ignoring_case();
        }
        Ok(WgetOnly {
            random_wait: self.random_wait,
            host_lists: HostLists::new(&self.domains, &self.exclude_domains)?,
            dir_lists,
            file_lists,
            retry_max_wait: self.waitretry,
            https_only: self.https_only,
            families: self.requests.families(),
            dns_timeout: self.requests.dns_timeout.filter(|t| !t.is_zero()),
            auth_no_challenge: self.requests.auth_no_challenge,
            spool_dir: self.warc_tempdir,
            inline_links: recursive,
        })
    }
}

/// `argv` with wget's multi-letter short options written as long ones (`-np` as
/// `--no-parent`), up to a `--`.
pub fn wget_short_words(argv: Vec<OsString>) -> Vec<OsString> {
    let mut after_separator = false;
    let mut out = Vec::with_capacity(argv.len());
    for arg in argv {
        if after_separator {
            out.push(arg);
            continue;
        }
        if arg.to_str() == Some("--") {
            after_separator = true;
        }
        // A bundle ending in a -n word, as wget's getopt reads it: `-mkEpnp` is `-mkEp -np`,
        // `-rnH` is `-r -nH` (clap bundles the letters before; -n is no trawl flag).
        // wget's letters are ASCII: any other argument (`-東京`, a query) is left as it is, and
        // is never cut inside a character.
        let split = arg.to_str().filter(|a| a.is_ascii()).and_then(|a| {
            let flags = a.strip_prefix('-').filter(|f| !f.starts_with('-'))?;
            let (letters, word) = flags.split_at(flags.len().checked_sub(2)?);
            // Only wget's letters that take no value: in `-enp`, `np` is -e's value.
            let bundled =
                !letters.is_empty() && letters.bytes().all(|b| WGET_SWITCHES.contains(&b));
            (bundled && n_word(word).is_some()).then(|| (format!("-{letters}"), word.to_string()))
        });
        match (
            split,
            arg.to_str()
                .and_then(|a| a.strip_prefix('-'))
                .and_then(n_word),
        ) {
            (Some((letters, word)), _) => {
                out.push(OsString::from(letters));
                out.push(OsString::from(n_word(&word).expect("checked")));
            }
            (None, Some(long)) => out.push(OsString::from(long)),
            (None, None) => out.push(arg),
        }
    }
    out
}

/// wget's one-letter options that take no value (`-r`, `-m`, `-k`, `-E`, `-p`, ...).
const WGET_SWITCHES: &[u8] = b"rmkKEpNSxHqvbFcL";

/// The long flag a wget `-n` word (`np`, `nd`, `nH`, `nc`, `nv`) stands for.
fn n_word(word: &str) -> Option<&'static str> {
    match word {
        "np" => Some("--no-parent"),
        "nd" => Some("--no-directories"),
        "nH" => Some("--no-host-directories"),
        "nc" => Some("--no-clobber"),
        "nv" => Some("--no-verbose"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn random_wait_reaches_the_frontier_settings() {
        let argv = [
            "trawl",
            "crawl",
            "--wait",
            "2",
            "--random-wait",
            "http://a.org/",
        ];
        let Ok(Cli {
            command: Command::Crawl(args),
        }) = Cli::try_parse_from(argv)
        else {
            panic!("parses");
        };
        let config = crate::config::Config::from_args(*args).unwrap();
        assert!(config.frontier.random_wait);
        assert_eq!(config.frontier.delay, Duration::from_secs(2));
    }

    #[test]
    fn a_bundle_ending_in_a_n_word_is_split_as_wget_reads_it() {
        let argv: Vec<OsString> = ["trawl", "-mkEpnp", "-rnH", "-enp", "-npx"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(
            wget_short_words(argv),
            [
                "trawl",
                "-mkEp",
                "--no-parent",
                "-r",
                "--no-host-directories",
                "-enp",
                "-npx"
            ]
        );
    }

    #[test]
    fn an_argument_of_other_characters_is_left_whole() {
        // `-東京 首都` (a search query) made the bundle split cut inside a character: a panic.
        let argv: Vec<OsString> = ["trawl", "-東京 首都", "-é", "-xé"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(wget_short_words(argv.clone()), argv);
    }

    #[test]
    fn only_whole_short_words_before_a_separator_are_rewritten() {
        let argv: Vec<OsString> = ["trawl", "-np", "-npx", "--", "-np"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(
            wget_short_words(argv),
            ["trawl", "--no-parent", "-npx", "--", "-np"]
                .iter()
                .map(OsString::from)
                .collect::<Vec<_>>()
        );
    }
}
