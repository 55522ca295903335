//! The crawl flags that shape each request: extra header fields, the cookie jar, the proxy
//! and name resolution.

use std::path::PathBuf;

use clap::Args;

use super::values::{parse_dns_server, parse_header, parse_referer};
use crate::fetch::proxy::Proxy;

/// Flags of `trawl crawl` for what each request carries.
#[derive(Debug, Args)]
#[command(next_help_heading = "Requests")]
pub struct RequestArgs {
    /// Add "Name: value" to every request (repeatable), as wget's and curl's --header; an
    /// Accept or Accept-Encoding replaces trawl's. Host, Content-Length, Transfer-Encoding,
    /// Connection and User-Agent (use --user-agent) are refused.
    #[arg(long = "header", value_name = "HEADER", value_parser = parse_header)]
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,

    /// Send no Referer. By default a request carries the URL of the page, stylesheet or
    /// sitemap its URL was found in, as wget sends one, under browsers' default
    /// policy: the whole URL within its origin, the origin alone to other origins, nothing
    /// from https to http. Redirects keep the first request's. Servers that refuse images
    /// without one (hotlink protection) then answer as they answer visitors.
    #[arg(long, conflicts_with = "referer")]
    pub no_referer: bool,

    /// Send this Referer with the seeds (wget's name), e.g. for a start page that is only
    /// served when reached from another page.
    #[arg(long, value_name = "URL", value_parser = parse_referer)]
    pub referer: Option<String>,

    /// HTTP Basic credentials (wget's name) for sites that ask for them: a host in the crawl's
    /// scope that answers 401 with a Basic challenge gets them, its URL is fetched again, and
    /// every later request to that host carries them. Other hosts never see them. The request
    /// records hold them (base64), as wget's WARCs do. wget's --user works too.
    #[arg(long, value_name = "USER", alias = "user")]
    pub http_user: Option<String>,

    /// The password of --http-user (empty when not given); a config file (--config) keeps it
    /// out of the process list.
    #[arg(
        long,
        value_name = "PASSWORD",
        requires = "http_user",
        aliases = ["http-passwd", "password"]
    )]
    pub http_password: Option<String>,

    /// Send no cookies and keep none (by default a cookie jar keeps what servers set, as
    /// wget and Heritrix do, and sends it back; RFC 6265).
    #[arg(long, conflicts_with_all = ["load_cookies", "save_cookies"])]
    pub no_cookies: bool,

    /// Start the cookie jar with the cookies in FILE (Netscape cookies.txt, as wget, curl and
    /// browsers' exporters write it); on a resumed crawl they replace saved ones of the same
    /// name.
    #[arg(long, value_name = "FILE")]
    pub load_cookies: Option<PathBuf>,

    /// Write the cookie jar to FILE (Netscape cookies.txt, session cookies included) when the
    /// crawl stops.
    #[arg(long, value_name = "FILE")]
    pub save_cookies: Option<PathBuf>,

    /// Send every request through this proxy: http://[user:pass@]host:port (absolute form for
    /// http, CONNECT for https), socks5h://host:port (the proxy resolves names: Tor, .onion)
    /// or socks5://host:port (names resolved here). Environment variables such as http_proxy
    /// are not read.
    #[arg(long, value_name = "URL", value_parser = Proxy::parse)]
    pub proxy: Option<Proxy>,

    /// Archive each name resolution the crawl makes, once per name and TTL (at least a
    /// minute), as a `response` record for dns:NAME (text/dns, as Heritrix writes it).
    #[arg(long)]
    pub dns_records: bool,

    /// Send DNS lookups to this resolver instead of the system's (repeatable; ADDR or
    /// ADDR:PORT, port 53 by default), e.g. a local caching resolver on a large crawl.
    #[arg(long, value_name = "ADDR[:PORT]", value_parser = parse_dns_server)]
    pub dns_server: Vec<std::net::SocketAddr>,
}
