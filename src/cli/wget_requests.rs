//! GNU wget's flags for how each request is made: which of a name's addresses are used
//! (`-4`, `-6`, `--prefer-family`), how long a lookup may take (`--dns-timeout`), when
//! credentials are sent (`--auth-no-challenge`), and the fields that ask caches and servers
//! for a fresh, or an uncompressed, answer (`--no-cache`, `--compression`).

use std::time::Duration;

use clap::Args;
use http::header::{ACCEPT_ENCODING, CACHE_CONTROL, PRAGMA};
use http::{HeaderName, HeaderValue};

use super::wget_values::{parse_family, parse_wait};
use crate::fetch::Families;

/// wget's flags for how each request is made.
#[derive(Debug, Clone, Default, Args)]
pub struct WgetRequests {
    /// wget's --dns-timeout: the longest a name's lookup may take (bare seconds; without it,
    /// the resolver tries twice for 5 s each).
    #[arg(long, value_name = "SECONDS", value_parser = parse_wait)]
    pub dns_timeout: Option<Duration>,

    /// wget's --auth-no-challenge: the seeds' hosts get --http-user's credentials (Basic) from
    /// the first request, not once they ask (a site that answers a login page or a 404
    /// instead of a 401); other hosts in scope still once they ask.
    #[arg(long)]
    pub auth_no_challenge: bool,

    /// wget's -4: connect to IPv4 addresses only.
    #[arg(long, short = '4', conflicts_with_all = ["inet6_only", "prefer_family"])]
    pub inet4_only: bool,

    /// wget's -6: connect to IPv6 addresses only.
    #[arg(long, short = '6', conflicts_with = "prefer_family")]
    pub inet6_only: bool,

    /// wget's --prefer-family: try a host's IPv4 or IPv6 addresses first (IPv4, IPv6, or none:
    /// the resolver's order, IPv6 first).
    #[arg(long, value_name = "FAMILY", value_parser = parse_family)]
    pub prefer_family: Option<Families>,

    /// wget's --no-cache: ask servers and caches in between for a fresh answer
    /// (Cache-Control: no-cache and Pragma: no-cache on every request).
    #[arg(long)]
    pub no_cache: bool,

    /// wget's --compression: none asks for bodies as they are (Accept-Encoding: identity,
    /// wget's default, so payload digests match a wget crawl's); auto or gzip keep trawl's
    /// (gzip, deflate, br).
    #[arg(long, value_name = "TYPE", value_parser = ["auto", "gzip", "none"])]
    pub compression: Option<String>,
}

impl WgetRequests {
    /// The addresses `-4`, `-6` and `--prefer-family` ask for.
    pub fn families(&self) -> Families {
        match (self.inet4_only, self.inet6_only, self.prefer_family) {
            (true, _, _) => Families::Ipv4Only,
            (_, true, _) => Families::Ipv6Only,
            (_, _, Some(prefer)) => prefer,
            _ => Families::default(),
        }
    }

    /// Adds the fields `--no-cache` and `--compression none` ask for to `headers` (those of
    /// `--header`).
    pub fn add_headers(&self, headers: &mut Vec<(HeaderName, HeaderValue)>) {
        if self.no_cache {
            headers.push((CACHE_CONTROL, HeaderValue::from_static("no-cache")));
            headers.push((PRAGMA, HeaderValue::from_static("no-cache")));
        }
        if self.compression.as_deref() == Some("none") {
            headers.push((ACCEPT_ENCODING, HeaderValue::from_static("identity")));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn no_cache_and_compression_none_are_request_fields() {
        let headers = |flags: &[&str]| {
            let mut argv = vec!["trawl", "crawl"];
            argv.extend_from_slice(flags);
            argv.push("a.org");
            let Ok(Cli {
                command: Command::Crawl(mut args),
            }) = Cli::try_parse_from(argv)
            else {
                panic!("parses");
            };
            std::mem::take(&mut args.wget).fold_into(&mut args).unwrap();
            args.request
                .headers
                .iter()
                .map(|(n, v)| format!("{n}: {}", v.to_str().unwrap()))
                .collect::<Vec<_>>()
        };
        assert!(headers(&[]).is_empty());
        assert_eq!(
            headers(&["--no-cache", "--compression", "none"]),
            [
                "cache-control: no-cache",
                "pragma: no-cache",
                "accept-encoding: identity"
            ]
        );
        assert!(headers(&["--compression=auto"]).is_empty());
    }
}
