//! `--resolve HOST:PORT:ADDR[,ADDR...]` (curl's flag): names pinned to addresses, consulted
//! before DNS. For staging servers, a site moved to a new address, or tests; `*` as HOST pins
//! every name on that port. A pinned address is the operator's explicit choice, so the SSRF
//! guard allows that socket address (as it does an IP-literal seed).

use std::net::{IpAddr, SocketAddr};

/// One pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Lower-case host name, or `*` for any.
    pub host: String,
    /// The port it applies to.
    pub port: u16,
    /// Addresses, in the order given.
    pub addrs: Vec<IpAddr>,
}

impl Pin {
    /// The socket addresses this pin makes reachable.
    pub fn socket_addrs(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.addrs.iter().map(|ip| SocketAddr::new(*ip, self.port))
    }
}

/// Parses `HOST:PORT:ADDR[,ADDR...]`; IPv6 addresses in brackets (`[::1]`).
pub fn parse_pin(value: &str) -> Result<Pin, String> {
    let bad = |why: &str| format!("--resolve {value:?}: {why} (expected HOST:PORT:ADDR[,ADDR...])");
    let (host, rest) = value.split_once(':').ok_or_else(|| bad("no port"))?;
    let (port, addrs) = rest.split_once(':').ok_or_else(|| bad("no address"))?;
    let host = host.trim().trim_end_matches('.').to_lowercase();
    if host.is_empty() || host.contains(['/', '@', ' ']) {
        return Err(bad("not a host name"));
    }
    // As a URL's host is written: an internationalized name in its ASCII form (the pin of
    // `bücher.test` was never used, the URL's host being `xn--bcher-kva.test`).
    let host = match host.as_str() {
        "*" => host,
        _ => match url::Host::parse(&host) {
            Ok(url::Host::Domain(ascii)) => ascii,
            Ok(ip) => ip.to_string(),
            Err(_) => return Err(bad("not a host name")),
        },
    };
    let port: u16 = port
        .trim()
        .parse()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| bad("not a port number"))?;
    let addrs = addrs
        .split(',')
        .map(|a| {
            let a = a.trim();
            a.strip_prefix('[')
                .and_then(|a| a.strip_suffix(']'))
                .unwrap_or(a)
                .parse::<IpAddr>()
                .map_err(|_| bad(&format!("{a:?} is not an IP address")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Pin { host, port, addrs })
}

/// The pinned addresses of `host` on `port`: an exact pin first, then a `*` pin.
pub fn pinned<'a>(pins: &'a [Pin], host: &str, port: u16) -> Option<&'a [IpAddr]> {
    let host = host.trim_end_matches('.');
    let exact = pins
        .iter()
        .find(|p| p.port == port && p.host.eq_ignore_ascii_case(host));
    exact
        .or_else(|| pins.iter().find(|p| p.port == port && p.host == "*"))
        .map(|p| p.addrs.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_curl_syntax() {
        let p = parse_pin("Example.org:443:10.0.0.1,[::1]").unwrap();
        assert_eq!(p.host, "example.org");
        assert_eq!(p.port, 443);
        // An internationalized name is pinned as URLs write it (found by an exploratory
        // crawl: the pin of the Unicode name was never used).
        assert_eq!(
            parse_pin("Bücher.test:80:1.2.3.4").unwrap().host,
            "xn--bcher-kva.test"
        );
        assert_eq!(
            parse_pin("-a.example.org:443:1.2.3.4").unwrap().host,
            "-a.example.org"
        );
        assert_eq!(
            p.addrs,
            [
                "10.0.0.1".parse::<IpAddr>().unwrap(),
                "::1".parse().unwrap()
            ]
        );
        for bad in [
            "example.org",
            "example.org:80",
            "x:0:1.2.3.4",
            "x:80:nope",
            ":80:1.2.3.4",
        ] {
            assert!(parse_pin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn exact_before_wildcard_and_port_matters() {
        let pins = vec![
            parse_pin("*:80:127.0.0.9").unwrap(),
            parse_pin("a.test:80:127.0.0.1").unwrap(),
        ];
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(pinned(&pins, "A.test.", 80), Some(&[ip("127.0.0.1")][..]));
        assert_eq!(pinned(&pins, "b.test", 80), Some(&[ip("127.0.0.9")][..]));
        assert_eq!(pinned(&pins, "a.test", 443), None);
    }
}
