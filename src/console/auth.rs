//! Who may do what through the console: anyone who reaches it may read; a change needs the
//! crawl's token in a request header (never a cookie, so another site's page cannot make a
//! browser send it), compared in constant time. On a loopback address the `Host` header must
//! name a loopback host too, so a page on another site cannot read the console through a DNS
//! name rebound to 127.0.0.1.

use std::net::IpAddr;

use subtle::ConstantTimeEq;

/// The header that carries the token (`Authorization: Bearer TOKEN` works too).
pub const TOKEN_HEADER: &str = "x-trawl-token";

/// A new random token: 128 bits from the operating system, as 32 hex digits.
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes)?;
    Ok(data_encoding::HEXLOWER.encode(&bytes))
}

/// What a request's credentials amount to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// No token given.
    Anonymous,
    /// A token that is not the crawl's.
    WrongToken,
    /// The crawl's token.
    Operator,
}

/// Checks the token given in [`TOKEN_HEADER`] or as a bearer token against `expected`.
pub fn access(expected: &str, header: Option<&str>, authorization: Option<&str>) -> Access {
    let given = header.or_else(|| authorization.and_then(|a| a.strip_prefix("Bearer ")));
    match given {
        None => Access::Anonymous,
        Some(given) if bool::from(given.trim().as_bytes().ct_eq(expected.as_bytes())) => {
            Access::Operator
        }
        Some(_) => Access::WrongToken,
    }
}

/// True when a request with this `Host` header may be answered on a connection that came in
/// at the console's address `local`: any host at an address reached on purpose (a console
/// bound to the network, asked by name); a loopback name or address at a loopback one. The
/// connection's own address is asked, not the bound one: a console bound to `0.0.0.0` also
/// listens on 127.0.0.1, where a page that rebinds its name to 127.0.0.1 in the operator's
/// browser could otherwise read the crawl's status and its search index (found by an
/// exploratory run).
pub fn host_allowed(local: IpAddr, host_header: Option<&str>) -> bool {
    if !local.to_canonical().is_loopback() {
        return true;
    }
    let Some(host) = host_header else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_compared_whole() {
        let t = new_token().unwrap();
        assert_eq!(t.len(), 32);
        assert_ne!(t, new_token().unwrap());
        assert_eq!(access(&t, Some(&t), None), Access::Operator);
        assert_eq!(
            access(&t, None, Some(&format!("Bearer {t}"))),
            Access::Operator
        );
        assert_eq!(access(&t, Some(&t[..31]), None), Access::WrongToken);
        assert_eq!(access(&t, Some(""), None), Access::WrongToken);
        assert_eq!(access(&t, None, Some(&t)), Access::Anonymous);
        assert_eq!(access(&t, None, None), Access::Anonymous);
    }

    #[test]
    fn a_loopback_console_answers_loopback_names_only() {
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        for ok in [
            "127.0.0.1:8080",
            "localhost:1",
            "LOCALHOST",
            "[::1]:9",
            "127.9.9.9",
        ] {
            assert!(host_allowed(lo, Some(ok)), "{ok}");
        }
        for bad in ["evil.example:8080", "10.0.0.1:80", "", "[::2]:1"] {
            assert!(!host_allowed(lo, Some(bad)), "{bad}");
        }
        assert!(!host_allowed(lo, None));
        assert!(host_allowed(
            "192.168.1.5".parse().unwrap(),
            Some("crawler.lan")
        ));
        // A wildcard console reached at 127.0.0.1, or at it as an IPv4-mapped address.
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(!host_allowed(mapped, Some("rebind.attacker.example")));
        assert!(host_allowed(mapped, Some("localhost:9100")));
    }
}
