//! The Netscape cookies.txt format that wget, curl and browsers' cookie exporters read and
//! write: one cookie per line, seven TAB-separated fields (domain, include-subdomains flag,
//! path, secure flag, expiry in Unix seconds with 0 for a session cookie, name, value), `#`
//! comments, and curl's `#HttpOnly_` prefix on the domain of an HttpOnly cookie. No crate
//! reads or writes it, so it is done here (docs/DESIGN.md).

use cookie::time::OffsetDateTime;
use cookie_store::{Cookie, CookieDomain, CookieExpiration, RawCookie};
use url::Url;

/// The prefix curl writes before the domain of an HttpOnly cookie.
const HTTP_ONLY_PREFIX: &str = "#HttpOnly_";

/// Cookies read from a cookies.txt file.
#[derive(Debug, Clone, Default)]
pub struct CookiesTxt {
    /// The unexpired cookies, in file order.
    pub cookies: Vec<Cookie<'static>>,
    /// Lines that are not a cookie (1-based line number, why), for the user.
    pub bad_lines: Vec<(usize, String)>,
    /// Cookies skipped because they had expired.
    pub expired: usize,
}

/// Reads `text` in the cookies.txt format.
pub fn parse(text: &str) -> CookiesTxt {
    let mut out = CookiesTxt::default();
    let now = OffsetDateTime::now_utc();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        let (line, http_only) = match line.strip_prefix(HTTP_ONLY_PREFIX) {
            Some(rest) => (rest, true),
            None => (line, false),
        };
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_line(line, http_only) {
            Ok(c) if c.expires_by(&now) => out.expired += 1,
            Ok(c) => out.cookies.push(c),
            Err(why) => out.bad_lines.push((i + 1, why)),
        }
    }
    out
}

fn parse_line(line: &str, http_only: bool) -> Result<Cookie<'static>, String> {
    let fields: Vec<&str> = line.split('\t').collect();
    // Some exporters drop the TAB before an empty value.
    let [domain, subdomains, path, secure, expires, name, value] = match fields[..] {
        [a, b, c, d, e, f, g] => [a, b, c, d, e, f, g],
        [a, b, c, d, e, f] => [a, b, c, d, e, f, ""],
        _ => return Err(format!("{} TAB-separated fields, not 7", fields.len())),
    };
    let flag = |s: &str, what: &str| match s.to_ascii_uppercase().as_str() {
        "TRUE" => Ok(true),
        "FALSE" => Ok(false),
        _ => Err(format!("{what} is {s:?}, not TRUE or FALSE")),
    };
    let subdomains = flag(subdomains, "the include-subdomains field")?;
    let secure = flag(secure, "the secure field")?;
    let expires: i64 = expires
        .trim()
        .parse()
        .map_err(|_| format!("expiry {expires:?} is not a number of seconds"))?;
    let host = domain.trim().trim_start_matches('.').to_ascii_lowercase();
    if host.is_empty() || name.is_empty() {
        return Err("no domain or no name".into());
    }
    let path = if path.starts_with('/') { path } else { "/" };
    let url = Url::parse(&format!("https://{host}{path}"))
        .map_err(|e| format!("domain {host:?}: {e}"))?;
    let mut raw = RawCookie::build((name.to_string(), value.to_string()))
        .path(path.to_string())
        .secure(secure)
        .http_only(http_only);
    // A leading dot is how older files say "and its subdomains".
    if subdomains || domain.starts_with('.') {
        raw = raw.domain(host.clone());
    }
    let mut cookie = Cookie::try_from_raw_cookie(&raw.build(), &url)
        .map_err(|e| e.to_string())?
        .into_owned();
    if expires > 0 {
        let at = OffsetDateTime::from_unix_timestamp(expires)
            .map_err(|_| format!("expiry {expires} is out of range"))?;
        cookie.expires = CookieExpiration::from(at);
    }
    Ok(cookie)
}

/// `cookies` in the cookies.txt format, session cookies with expiry 0. Cookies whose name or
/// value cannot be written on one line are left out.
pub fn write<'a>(cookies: impl Iterator<Item = &'a Cookie<'static>>) -> String {
    let mut out = String::from(
        "# Netscape HTTP Cookie File\n# Written by trawl; session cookies have expiry 0.\n\n",
    );
    for c in cookies {
        let (name, value) = c.name_value();
        let unwritable = |s: &str| s.contains(['\t', '\r', '\n']);
        if unwritable(name) || unwritable(value) {
            continue;
        }
        let (domain, subdomains) = match &c.domain {
            CookieDomain::HostOnly(h) => (h.clone(), "FALSE"),
            CookieDomain::Suffix(d) => (format!(".{d}"), "TRUE"),
            CookieDomain::NotPresent | CookieDomain::Empty => continue,
        };
        let expires = match c.expires {
            CookieExpiration::AtUtc(at) => at.unix_timestamp().max(1),
            CookieExpiration::SessionEnd => 0,
        };
        let prefix = if c.http_only() == Some(true) {
            HTTP_ONLY_PREFIX
        } else {
            ""
        };
        let secure = if c.secure() == Some(true) {
            "TRUE"
        } else {
            "FALSE"
        };
        let path = String::from(&c.path);
        out.push_str(&format!(
            "{prefix}{domain}\t{subdomains}\t{path}\t{secure}\t{expires}\t{name}\t{value}\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# Netscape HTTP Cookie File\n\
        \n\
        .example.org\tTRUE\t/\tFALSE\t4102444800\tconsent\tyes\n\
        #HttpOnly_www.example.org\tFALSE\t/members\tTRUE\t0\tsession\tabc123\n\
        old.example.org\tFALSE\t/\tFALSE\t1000\tgone\tx\n\
        broken line\n\
        a.org\tFALSE\t/\tMAYBE\t0\tn\tv\n\
        b.org\tFALSE\t/\tFALSE\t0\tempty\n";

    #[test]
    fn reads_what_wget_and_curl_write() {
        let read = parse(FILE);
        assert_eq!(read.cookies.len(), 3, "{:?}", read.cookies);
        assert_eq!(read.expired, 1);
        assert_eq!(
            read.bad_lines.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            [6, 7]
        );
        let consent = &read.cookies[0];
        assert_eq!(consent.domain, CookieDomain::Suffix("example.org".into()));
        assert!(consent.matches(&Url::parse("http://sub.example.org/x").unwrap()));
        let session = &read.cookies[1];
        assert_eq!(session.http_only(), Some(true));
        assert!(!session.is_persistent());
        assert!(session.matches(&Url::parse("https://www.example.org/members/a").unwrap()));
        // Secure: not over plain http; host-only: not on a subdomain.
        assert!(!session.matches(&Url::parse("http://www.example.org/members/a").unwrap()));
        assert!(!session.matches(&Url::parse("https://x.www.example.org/members/").unwrap()));
        assert_eq!(read.cookies[2].name_value(), ("empty", ""));
    }

    #[test]
    fn round_trips() {
        let read = parse(FILE);
        let text = write(read.cookies.iter());
        let again = parse(&text);
        assert!(again.bad_lines.is_empty(), "{text}");
        assert_eq!(again.cookies, read.cookies);
    }
}
