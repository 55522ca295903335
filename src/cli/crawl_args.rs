//! Flags of `trawl crawl` (and the value types only they use): what to crawl, how politely,
//! what to archive and where, limits, state, logging and a shared crawl's settings. Names are a
//! contract with users' scripts: add aliases, never rename.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::values::*;
use super::RequestArgs;
use crate::url_rules::ScopeKind;

/// `--accept` when not given: pages only.
pub const DEFAULT_ACCEPT: &str = "text/html,application/xhtml+xml";

/// `--order` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    /// Breadth-first by link depth.
    Bfs,
    /// Fewer path segments first.
    PathDepth,
    /// Uniformly random.
    Random,
    /// Most backlinks first (URLs and hosts).
    Backlinks,
}

/// What `--politeness` is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Politeness {
    /// Each host name.
    Host,
    /// Each resolved IP address.
    Ip,
    /// Each registrable domain.
    Domain,
}

/// What `trawl crawl --help` says after the flags.
const CRAWL_AFTER_HELP: &str = "\
Re-using an output directory:
  interrupted crawl (signal, kill, crash, --time-limit)  resumed where it stopped
  finished crawl (all done, or --max-pages/--max-bytes)  refused (exit 7) unless
      --recrawl   a new crawl in the same --out: WARC serials continue, the old state is
                  kept as .trawl-state.previous, and with --dedup pages unchanged since
                  the earlier crawls become revisit records
      --fresh     the saved state is discarded and the crawl starts over (WARCs kept)

Durations need a unit: 500ms, 2s, 1m 30s, 1h (wget's --wait takes bare seconds).
Sizes: 20MiB, 1GB, 65536 (bytes); one letter counts in 1024s as in wget (500k, 2M, 1G).

Exit codes:
  0    finished: all queued URLs done, or a page/byte target reached
  1    internal error
  2    bad arguments, or an input file that cannot be read
  3    no usable seed
  4    finished, but some URLs failed for good or hosts were given up (see the report)
  5    output error: an output file or directory cannot be written (disk full, permissions)
  6    another trawl process uses this output directory or state
  7    the output directory holds a finished crawl, or WARC files without their crawl state
       (use --recrawl or --fresh)
  8    stopped at --time-limit; state saved, the next run resumes
  9    a shared crawl (--redis) cannot go on: Redis unreachable, or its state lost
  130  stopped by SIGINT/SIGTERM; state saved, the next run resumes";

/// Flags of `trawl crawl`. Names are a contract with users' scripts: add aliases, never rename.
#[derive(Debug, Args)]
#[command(after_help = CRAWL_AFTER_HELP)]
pub struct CrawlArgs {
    /// Read flags from a TOML file: every crawl flag by its long name (`delay = "2s"`,
    /// `exclude = ["/cal/"]`, `dedup = true`, `seeds = "seeds.txt"`), seed URLs as
    /// `urls = ["https://a.org/"]`. Flags on the command line win.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Seed URLs or bare hosts (bare hosts try https, then http).
    #[arg(value_name = "SEED")]
    pub seeds: Vec<String>,

    /// File of seeds ('-': standard input): one URL or host per line; blank lines and '#'
    /// comments ignored. Read as the crawl runs, from where a resumed crawl stopped.
    #[arg(long = "seeds", short = 'i', visible_aliases = ["seeds-file", "input-file"], value_name = "FILE")]
    pub seeds_file: Option<PathBuf>,

    /// Read more of the seeds file while fewer than N URLs are queued.
    #[arg(long, value_name = "N", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub seeds_ahead: u64,

    /// Directory for WARC files (created if missing).
    #[arg(long, short = 'o', value_name = "DIR", default_value = "warcs")]
    pub out: PathBuf,

    /// Stop after this many pages are archived (a page: 2xx response of an accepted type).
    #[arg(long, value_name = "N")]
    pub max_pages: Option<u64>,

    /// Stop after this many response bytes were downloaded (e.g. 10GB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_bytes: Option<u64>,

    /// Least free disk space under --out for new fetches to start: below it the crawl waits
    /// (running fetches finish) and goes on when space returns. 0 turns the guard off.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size)]
    pub min_free: u64,

    /// Serve the live console (web page, JSON API, /metrics) on this address: PORT (on
    /// 127.0.0.1) or ADDR:PORT. Changes need the token printed at start (or --console-token).
    #[arg(long, value_name = "ADDR", value_parser = parse_console_addr)]
    pub console: Option<std::net::SocketAddr>,

    /// The console's token for changes (at least 16 characters, no spaces) instead of a
    /// random one.
    #[arg(long, value_name = "TOKEN", requires = "console", value_parser = parse_console_token)]
    pub console_token: Option<String>,

    /// Stop gracefully after this long (e.g. 6h), saving state; the next run resumes
    /// (exit code 8). Keeps a cron window.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub time_limit: Option<Duration>,

    /// Start a new crawl in an output directory that holds a finished one (WARCs kept, serials
    /// continue; with --dedup, unchanged pages become revisits of the earlier crawls).
    #[arg(long, conflicts_with = "fresh")]
    pub recrawl: bool,

    /// Discard the saved crawl state in the output directory and start over (WARCs kept).
    #[arg(long)]
    pub fresh: bool,

    /// Join, or start, a crawl shared by many workers through this Redis server
    /// (redis://HOST:PORT/DB). Needs --crawl-id; every worker runs the same options.
    #[arg(
        long,
        value_name = "URL",
        requires = "crawl_id",
        help_heading = "Shared crawl (Redis)"
    )]
    pub redis: Option<String>,

    /// The shared crawl's name in Redis (also its warcinfo crawlId).
    #[arg(
        long,
        value_name = "ID",
        requires = "redis",
        help_heading = "Shared crawl (Redis)"
    )]
    pub crawl_id: Option<String>,

    /// This worker's name in a shared crawl; restarting it with the same name resumes its
    /// part. Default: host name, --out directory name and a hash of its path.
    #[arg(
        long,
        value_name = "NAME",
        requires = "redis",
        help_heading = "Shared crawl (Redis)"
    )]
    pub worker_id: Option<String>,

    /// How long a worker holds a host without renewing its lease; a killed worker's hosts go
    /// to the others after this.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration, requires = "redis", help_heading = "Shared crawl (Redis)")]
    pub lease: Duration,

    /// Simultaneous fetches (never more than one per host).
    #[arg(long, short = 'c', value_name = "N", default_value_t = 32)]
    pub concurrency: usize,

    /// Minimum time between two requests to one host.
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = parse_duration)]
    pub delay: Duration,

    /// Highest per-host delay a robots.txt Crawl-delay, a Retry-After or the back-off after
    /// 429/503 answers may ask for.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub max_delay: Duration,

    /// After each answer, a host also waits this many times as long as the fetch took
    /// (Heritrix's delayFactor, 5 there): a server that slows down is asked less often. Up to
    /// --max-delay; 0 (the default) leaves the wait to --delay and the site.
    #[arg(long, value_name = "F", default_value_t = 0.0, value_parser = parse_delay_factor)]
    pub delay_factor: f64,

    /// Read at most this many bytes per second from the network, over all connections at once
    /// (wget's name; e.g. 500k, 2M): for a crawl that must leave room on a shared link. Bodies
    /// are paced as they arrive; the waits do not count toward --fetch-timeout.
    #[arg(long, value_name = "SIZE", value_parser = parse_rate)]
    pub limit_rate: Option<u64>,

    /// Most link hops from a seed (0 = seeds only); unlimited when not given.
    #[arg(long, value_name = "N")]
    pub max_depth: Option<u32>,

    /// Which hosts links may lead to: the seeds' exact hosts, their registrable domains, or any
    /// (wget's -r and -m make it host: wget stays on the seed's host without -H).
    /// [default: domain]
    #[arg(long, value_enum)]
    pub scope: Option<ScopeKind>,

    /// Do not ascend to the parent directory (wget's name, and its -np): on a seed's host, follow only links
    /// inside the seed's directory, its path up to the last `/` (`/docs/v2/` for
    /// `/docs/v2/index.html`; mind the trailing slash). Other hosts in scope are not limited,
    /// nor page requisites and sitemaps; a seed that redirects adds its target's directory.
    #[arg(long)]
    pub no_parent: bool,

    /// Only follow URLs matching this regex (repeatable; any may match).
    #[arg(long, visible_alias = "accept-regex", value_name = "REGEX")]
    pub include: Vec<String>,

    /// Never follow URLs matching this regex (repeatable).
    #[arg(long, visible_alias = "reject-regex", value_name = "REGEX")]
    pub exclude: Vec<String>,

    /// User-Agent header; its first word is the robots.txt agent name.
    #[arg(long, short = 'U', value_name = "UA", default_value = concat!("trawl/", env!("CARGO_PKG_VERSION"), " (+https://github.com/trawl-crawler/trawl)"))]
    pub user_agent: String,

    /// Content records per WARC file before rotating (the warcinfo record is not counted).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub records_per_file: u64,

    /// WARC file size before rotating (e.g. 1GB, 500MiB; 0: no size rotation, as wget's 0).
    #[arg(long, value_name = "SIZE", default_value = "1GB", value_parser = parse_size)]
    pub warc_max_size: u64,

    /// WARC file name prefix: PREFIX-YYYYMMDDhhmmss-NNNNN.warc.gz.
    #[arg(long, value_name = "PREFIX", default_value = "trawl")]
    pub warc_prefix: String,

    /// gzip level of WARC records (0-9): 3 takes ~30% less compression time than 6 for files
    /// 5-7% larger (docs/PERFORMANCE.md); 6 or 9 for the smallest archives.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=9))]
    pub gzip_level: u32,

    /// Longest silence while waiting for response bytes.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub timeout: Duration,

    /// TCP connect and TLS handshake timeout.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub connect_timeout: Duration,

    /// Longest time for one whole fetch; a body cut by it is archived with WARC-Truncated: time.
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = parse_duration)]
    pub fetch_timeout: Duration,

    /// Largest body archived; longer bodies are cut and marked WARC-Truncated: length.
    #[arg(long, value_name = "SIZE", default_value = "20MiB", value_parser = parse_size)]
    pub max_body_size: u64,

    /// Largest response head (status line and headers) accepted.
    #[arg(long, value_name = "SIZE", default_value = "256KiB", value_parser = parse_size)]
    pub max_header_size: u64,

    /// Most header fields accepted in one response.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_headers: usize,

    /// Most decompressed bytes of one page handed to link extraction (gzip/brotli bombs).
    #[arg(long, value_name = "SIZE", default_value = "32MiB", value_parser = parse_size)]
    pub max_decoded_size: u64,

    /// Longest URL queued; longer links are dropped.
    #[arg(long, value_name = "N", default_value_t = 2048)]
    pub max_url_length: usize,

    /// Most pages archived per host; unlimited when not given.
    #[arg(long, value_name = "N")]
    pub max_pages_per_host: Option<u64>,

    /// Most path segments in a queued URL (crawler traps such as endless calendars).
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_path_depth: usize,

    /// Most times one path segment may occur in a URL path (/a/b/a/b/a/b/... traps).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub max_path_repeats: usize,

    /// Most hosts of one site (registrable domain) links are followed to: a wildcard-DNS site
    /// linking endless subdomains stops there (0: no limit).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_hosts_per_site: usize,

    /// Most redirect hops followed from one URL.
    #[arg(
        long,
        visible_alias = "max-redirect",
        value_name = "N",
        default_value_t = 10
    )]
    pub max_redirects: u32,

    /// Allow connections to loopback, private, link-local and other non-public addresses, for
    /// whole-network crawls (refused by default; an IP-literal seed allows exactly its own
    /// address and port, never its whole class).
    #[arg(long)]
    pub allow_private: bool,

    /// Refuse URLs on non-default ports; with a list (--deny-ports=22,25, or --deny-ports 22,25
    /// when the next word is only port numbers), refuse exactly those ports. A seed after the
    /// flag is never taken for a port.
    #[arg(
        long,
        value_name = "PORTS",
        num_args = 0..=1,
        require_equals = true,
        value_delimiter = ','
    )]
    pub deny_ports: Option<Vec<u16>>,

    /// What per-server politeness (one request at a time, --delay between them) is keyed by:
    /// each host name, each resolved IP address (many names on one shared server or CDN
    /// address), or each registrable domain (a.example.org and b.example.org together).
    #[arg(long, value_enum, value_name = "KEY", default_value_t = Politeness::Host)]
    pub politeness: Politeness,

    /// The order of each host's queue: bfs (link depth), path-depth (fewer path segments
    /// first), backlinks (URLs and hosts more crawled pages link to first, re-ranked every
    /// second) or random (uniform over the host's queued URLs, for sampling).
    #[arg(long, value_enum, value_name = "ORDER", default_value_t = Order::Bfs)]
    pub order: Order,

    /// Also archive what each archived page needs to render in replay (wget's name): images
    /// (src, srcset), stylesheets and what they import or url(), icons, preloads, scripts,
    /// media, lazy loaders' data-src/data-srcset, frames (an HTML frame's own too, and its
    /// links are followed). From any host, under robots.txt and politeness; not pages.
    #[arg(long, short = 'p')]
    pub page_requisites: bool,

    /// Fetch and archive the sitemaps each site's robots.txt lists (else its /sitemap.xml),
    /// index files and gzip included, and crawl the URLs they list, one hop from the seeds
    /// (on by default, but for a crawl limited by --max-depth or -l, or -r's default of 5,
    /// which this flag turns them on for). Sitemaps of hosts out of scope, or that the
    /// domain and directory lists or --exclude keep out, are not fetched.
    #[arg(long, overrides_with = "no_sitemaps")]
    pub sitemaps: bool,

    /// Do not fetch sitemaps.
    #[arg(long)]
    pub no_sitemaps: bool,

    /// Pin HOST on PORT to ADDR (curl's syntax; repeatable; ADDR may be a comma-separated
    /// list, IPv6 in brackets; HOST * pins every name on PORT). Pinned addresses may be
    /// connected to even when private or loopback.
    #[arg(long, value_name = "HOST:PORT:ADDR", allow_hyphen_values = true)]
    pub resolve: Vec<String>,

    /// Accept invalid TLS certificates (expired, self-signed, wrong name).
    #[arg(long, visible_alias = "no-check-certificate")]
    pub insecure: bool,

    /// Also trust the certificate authorities in this PEM file (wget's name), beside the
    /// compiled-in Mozilla roots: an intranet's own authority, without --insecure.
    #[arg(long, value_name = "FILE")]
    pub ca_certificate: Option<PathBuf>,

    /// Content types archived (comma-separated or repeated; 'text/*' style wildcards allowed,
    /// '*/*' for everything; media types, not wget's file extensions). Links whose extension
    /// has an accepted type are queued (.pdf with application/pdf); HTML of a type not
    /// accepted is read for links, not archived.
    #[arg(
        long,
        value_name = "TYPES",
        value_delimiter = ',',
        default_value = DEFAULT_ACCEPT
    )]
    pub accept: Vec<String>,

    /// Retries of a fetch that failed with a network error, with doubling backoff, or that
    /// was answered with a --retry-status code (the host slows down; Retry-After is obeyed).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub retries: u32,

    /// How long a host that stopped answering is waited for. After 3 failed connections in a
    /// row (any of its URLs), its URLs wait in their queue while one request at a time
    /// checks whether it is back (doubling waits, up to 5 minutes apart); after this long
    /// without an answer, its queued URLs are dropped and counted (exit code 4). 0 drops
    /// them as soon as it is found down, as a host that has not answered in this run is. A
    /// host that takes requests and sends nothing back is given up after this long of it.
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = parse_duration)]
    pub host_down_limit: Duration,

    /// HTTP statuses that mean "slow down and try again later" (429, 503 by default; 4xx/5xx
    /// only): the host's delay grows (up to --max-delay), the URL is retried, and only the
    /// last answer is archived. An empty value turns this off. wget's --retry-on-http-error
    /// works too.
    #[arg(
        long,
        alias = "retry-on-http-error",
        value_name = "CODES",
        value_delimiter = ',',
        default_value = "429,503",
        value_parser = parse_retry_status
    )]
    pub retry_status: Vec<Option<u16>>,

    /// Most distinct links taken from one page (an API index lists thousands; each running
    /// fetch may hold this many at once).
    #[arg(long, value_name = "N", default_value_t = 20_000)]
    pub max_links_per_page: usize,

    /// First wait before fetching a 429/5xx/unreachable robots.txt again (doubles per attempt;
    /// a longer Retry-After is obeyed up to --max-delay; the origin is given up after
    /// --robots-attempts attempts).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub robots_retry: Duration,

    /// Fetches of a 429/5xx/unreachable robots.txt before its origin is given up (with the
    /// default --robots-retry: 3 give up after 30 s; 10 after 25 min, as no wait is over 5 min).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=30))]
    pub robots_attempts: u32,

    /// Do not fetch or obey robots.txt (recorded in the warcinfo record).
    #[arg(long)]
    pub ignore_robots: bool,

    /// Operator contact written into the warcinfo record.
    #[arg(long, value_name = "TEXT")]
    pub operator: Option<String>,

    /// Add "name: value" to the warcinfo record of every WARC file (repeatable; wget's flag),
    /// such as a description of the collection; a name trawl writes too (isPartOf, operator)
    /// takes this value instead.
    #[arg(long, value_name = "FIELD", value_parser = parse_warc_field)]
    pub warc_header: Vec<(String, String)>,

    /// Content-seen test: a 2xx response whose payload digest was already archived is
    /// written as a revisit record (HTTP headers kept, body omitted).
    #[arg(long)]
    pub dedup: bool,

    /// Also dedup against the captures listed in this index of earlier crawls: CDXJ, or a
    /// CDX file with its " CDX" header line (wget's --warc-cdx, whose --warc-dedup this is too)
    /// (repeatable; implies --dedup).
    #[arg(long, value_name = "FILE.cdxj", alias = "warc-dedup")]
    pub dedup_index: Vec<PathBuf>,

    /// When the crawl ends, write a sorted CDXJ index of every WARC file in --out to
    /// OUT/index.cdxj (with --finished-dir: each WARC file's own NAME.cdxj, moved with it).
    #[arg(long)]
    pub cdxj: bool,

    /// Move each closed WARC file, with its WET/WAT and CDXJ, to this directory (a rename on
    /// one file system; else copy, fsync, rename). Resume and --dedup look here too.
    #[arg(long, value_name = "DIR", alias = "finished-warc-dir")]
    pub finished_dir: Option<PathBuf>,

    /// Run this shell command once per closed WARC file, with its path (after the move to
    /// --finished-dir) appended, or in place of each {}; also in $TRAWL_FILE. Two run at once;
    /// a failure is logged and the file kept.
    #[arg(long, value_name = "CMD")]
    pub on_close: Option<String>,

    /// Write a WET file (plain text of each page, Common Crawl's format) beside each WARC file
    /// as it closes: X.warc.gz gives X.warc.wet.gz.
    #[arg(long)]
    pub wet: bool,

    /// Write a WAT file (metadata, HTML head and links as JSON, Common Crawl's format) beside
    /// each WARC file as it closes: X.warc.gz gives X.warc.wat.gz.
    #[arg(long)]
    pub wat: bool,

    /// Index the pages of each WARC file in this full-text search index (tantivy) as the file
    /// closes, from the same text as WET; `trawl search INDEX QUERY` searches it, and the
    /// console gets a search box. Locked while the crawl runs.
    #[arg(long, value_name = "INDEX")]
    pub search_index: Option<PathBuf>,

    /// Write a metadata record per page with its outlinks and fetch timing.
    #[arg(long)]
    pub metadata_records: bool,

    /// Directory for crawl state (frontier, counters), used to resume; default OUT/.trawl-state.
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,

    /// After SIGINT/SIGTERM, how long in-flight fetches may take before they are abandoned
    /// (a second signal abandons them at once). Finished records are always written and the
    /// WARC file closed.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub shutdown_timeout: Duration,

    /// What trawl says while it runs and when it ends.
    #[command(flatten)]
    pub report: super::ReportArgs,

    /// Request headers, cookies.
    #[command(flatten)]
    pub request: RequestArgs,

    /// wget's names, folded into the flags above (`config::Config::from_args`).
    #[command(flatten)]
    pub wget: super::WgetArgs,
}
