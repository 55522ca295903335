//! SURT keys, as the Python `surt` package (used by pywb and cdxj-indexer) computes them.
//!
//! A faithful port of `surt.surt(url)` with default options: handyurl parsing, Google URL
//! canonicalization (unescape repeatedly, escape once, path normalization, IP forms), then IA
//! canonicalization (lower-case, strip `www\d*.`, default port, session ids, trailing slash,
//! query reordering), rendered without scheme as `com,example)/path?query`. It must produce the
//! same bytes as the Python code, because CDXJ lines are compared with cdxj-indexer's.

use std::sync::OnceLock;

use regex::bytes::Regex;

#[derive(Debug, Default)]
struct HandyUrl {
    scheme: Option<Vec<u8>>,
    host: Option<Vec<u8>>,
    port: Option<u32>,
    path: Option<Vec<u8>>,
    query: Option<Vec<u8>>,
    last_delimiter: Option<&'static [u8]>,
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid regex"))
}

/// The SURT key of `url`; like cdxj-indexer, the URL itself when it cannot be parsed.
pub fn surt(url: &str) -> String {
    if url.is_empty() {
        return "-".into();
    }
    if url.starts_with("filedesc") {
        return url.into();
    }
    match parse(url.as_bytes()) {
        Some(mut h) => {
            google_canonicalize(&mut h);
            ia_canonicalize(&mut h);
            String::from_utf8_lossy(&render(&h)).into_owned()
        }
        None => url.into(),
    }
}

fn parse(url: &[u8]) -> Option<HandyUrl> {
    static HAS_PROTOCOL: OnceLock<Regex> = OnceLock::new();
    static MULTIPLE_PROTOCOLS: OnceLock<Regex> = OnceLock::new();
    static RFC2396: OnceLock<Regex> = OnceLock::new();
    let url: Vec<u8> = url
        .trim_ascii()
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'\n' | b'\r' | b'\t'))
        .collect();
    let url = if re(&HAS_PROTOCOL, r"^[a-zA-Z][a-zA-Z0-9+\-.]*:").is_match(&url) {
        url
    } else {
        [b"http://".as_slice(), &url].concat()
    };
    let multi = re(&MULTIPLE_PROTOCOLS, r"^(https?://)+");
    let url = match multi.captures(&url) {
        Some(c) => {
            let whole = c.get(0).expect("match").end();
            [c.get(1).expect("group").as_bytes(), &url[whole..]].concat()
        }
        None => url,
    };
    let caps = re(
        &RFC2396,
        r"^(([a-zA-Z][a-zA-Z0-9+.-]*):)?((//([^/?#]*))?([^?#]*)(\?([^#]*))?)?(#(.*))?$",
    )
    .captures(&url)?;
    let group = |i: usize| caps.get(i).map_or(&b""[..], |m| m.as_bytes()).to_vec();
    let non_empty = |v: Vec<u8>| (!v.is_empty()).then_some(v);
    let scheme = non_empty(group(2));
    let mut netloc = group(5);
    while netloc.last() == Some(&b':') {
        netloc.pop();
    }
    let (mut hostname, port) = split_netloc(&netloc)?;
    let mut path = non_empty(group(6));
    let query = non_empty(group(8));
    if scheme.as_deref().is_some_and(|s| s.starts_with(b"http")) && hostname.is_none() {
        if let Some(p) = &path {
            let trimmed: &[u8] = {
                let start = p.iter().position(|&b| b != b'/').unwrap_or(p.len());
                &p[start..]
            };
            let (h, rest) = match trimmed.iter().position(|&b| b == b'/') {
                Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
                None => (trimmed, &b""[..]),
            };
            hostname = Some(h.to_vec());
            path = Some([b"/".as_slice(), rest].concat());
        }
    }
    let last_delimiter = (url.ends_with(b"?") && query.is_none()).then_some(&b"?"[..]);
    Some(HandyUrl {
        scheme,
        host: hostname.filter(|h| !h.is_empty()),
        port,
        path,
        query,
        last_delimiter,
    })
}

/// Python's SplitResult.hostname (lower-cased, brackets removed) and .port (None for empty or
/// zero; a non-numeric or out-of-range port makes surt fail, hence `None` overall).
#[allow(clippy::type_complexity)]
fn split_netloc(netloc: &[u8]) -> Option<(Option<Vec<u8>>, Option<u32>)> {
    let hostinfo = match netloc.iter().rposition(|&b| b == b'@') {
        Some(i) => &netloc[i + 1..],
        None => netloc,
    };
    let (host, port): (&[u8], &[u8]) = if hostinfo.first() == Some(&b'[') {
        match hostinfo.iter().position(|&b| b == b']') {
            Some(close) => {
                let after = &hostinfo[close + 1..];
                let port = after.strip_prefix(b":").unwrap_or(b"");
                (&hostinfo[1..close], port)
            }
            None => (hostinfo, b""),
        }
    } else {
        match hostinfo.iter().position(|&b| b == b':') {
            Some(i) => (&hostinfo[..i], &hostinfo[i + 1..]),
            None => (hostinfo, b""),
        }
    };
    let port = if port.is_empty() {
        None
    } else {
        let text = std::str::from_utf8(port).ok()?;
        if !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u32 = text.parse().ok()?;
        if n > 65535 {
            return None;
        }
        (n != 0).then_some(n)
    };
    let host = (!host.is_empty()).then(|| host.to_ascii_lowercase());
    Some((host, port))
}

fn google_canonicalize(h: &mut HandyUrl) {
    if let Some(q) = h.query.take() {
        h.query = Some(escape_once(&unescape_repeatedly(&q)));
    }
    if let Some(host) = h.host.take() {
        let mut host = unescape_repeatedly(&host);
        if !host.is_ascii() {
            let text = String::from_utf8_lossy(&host).into_owned();
            let ascii = url::quirks::domain_to_ascii(&text);
            if !ascii.is_empty() {
                host = ascii.into_bytes();
            }
        }
        let mut host = replace_double_dots(&host);
        while host.first() == Some(&b'.') {
            host.remove(0);
        }
        while host.last() == Some(&b'.') {
            host.pop();
        }
        h.host = Some(match attempt_ip_formats(&host) {
            Some(ip) => ip,
            None => escape_once(&host.to_ascii_lowercase()),
        });
    }
    let path = h.path.take().map(|p| unescape_repeatedly(&p));
    let path = if h.host.is_some() {
        Some(normalize_path(path.as_deref()))
    } else {
        path
    };
    h.path = path.map(|p| escape_once(&p));
}

fn replace_double_dots(host: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(host.len());
    let mut i = 0;
    while i < host.len() {
        if host[i] == b'.' && host.get(i + 1) == Some(&b'.') {
            out.push(b'.');
            i += 2;
        } else {
            out.push(host[i]);
            i += 1;
        }
    }
    out
}

fn normalize_path(path: Option<&[u8]>) -> Vec<u8> {
    let Some(path) = path.filter(|p| !p.is_empty()) else {
        return b"/".to_vec();
    };
    let mut kept: Vec<&[u8]> = Vec::new();
    for p in path.split(|&b| b == b'/').skip(1) {
        match p {
            b"." => {}
            b".." => {
                if kept.pop().is_none() {
                    kept.push(p);
                }
            }
            _ => kept.push(p),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, init)) = kept.split_last() {
        for p in init {
            if !p.is_empty() {
                out.extend_from_slice(p);
                out.push(b'/');
            }
        }
        out.extend_from_slice(last);
    }
    out
}

/// Python's `socket.inet_aton`-style parsing of the numeric host forms surt tries.
fn attempt_ip_formats(host: &[u8]) -> Option<Vec<u8>> {
    static DECIMAL: OnceLock<Regex> = OnceLock::new();
    static OCTAL: OnceLock<Regex> = OnceLock::new();
    if !host.is_empty() && host.iter().all(u8::is_ascii_digit) {
        let n = std::str::from_utf8(host).ok()?.parse::<u128>().ok()? as u64 & 0xffff_ffff;
        return Some(std::net::Ipv4Addr::from(n as u32).to_string().into_bytes());
    }
    let numeric = re(
        &DECIMAL,
        r"^([1-9][0-9]*)(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$",
    )
    .is_match(host)
        || re(&OCTAL, r"^(0[0-7]*)(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$").is_match(host);
    if !numeric {
        return None;
    }
    inet_aton(std::str::from_utf8(host).ok()?).map(|ip| ip.to_string().into_bytes())
}

fn inet_aton(text: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<u64> = text
        .split('.')
        .map(|p| {
            if p.len() > 1 && p.starts_with('0') {
                u64::from_str_radix(&p[1..], 8).ok()
            } else {
                p.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    let value = match parts.as_slice() {
        [a] => *a,
        [a, b] if *a < 256 && *b < (1 << 24) => (a << 24) | b,
        [a, b, c] if *a < 256 && *b < 256 && *c < (1 << 16) => (a << 24) | (b << 16) | c,
        [a, b, c, d] if [a, b, c, d].iter().all(|v| **v < 256) => {
            (a << 24) | (b << 16) | (c << 8) | d
        }
        _ => return None,
    };
    u32::try_from(value).ok().map(std::net::Ipv4Addr::from)
}

/// `urllib.parse.unquote_to_bytes`, repeated until nothing changes.
fn unescape_repeatedly(input: &[u8]) -> Vec<u8> {
    let mut current = input.to_vec();
    loop {
        let next = unquote(&current);
        if next == current {
            return current;
        }
        current = next;
    }
}

fn unquote(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'%' {
            if let (Some(h), Some(l)) = (
                input.get(i + 1).and_then(|b| (*b as char).to_digit(16)),
                input.get(i + 2).and_then(|b| (*b as char).to_digit(16)),
            ) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(input[i]);
        i += 1;
    }
    out
}

/// `urllib.parse.quote_from_bytes` with surt's safe set: escapes controls, space, `#`, `%`,
/// DEL and non-ASCII bytes, with upper-case hex.
fn escape_once(input: &[u8]) -> Vec<u8> {
    const SAFE: &[u8] = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~";
    let mut out = Vec::with_capacity(input.len());
    for &b in input {
        if b.is_ascii_alphanumeric() || SAFE.contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
    out
}

fn ia_canonicalize(h: &mut HandyUrl) {
    static WWW: OnceLock<Regex> = OnceLock::new();
    if let Some(host) = h.host.take() {
        let host = host.to_ascii_lowercase();
        let host = match re(&WWW, r"^www\d*\.").find(&host) {
            Some(m) => host[m.end()..].to_vec(),
            None => host,
        };
        h.host = Some(host);
    }
    if let Some(scheme) = &h.scheme {
        let default = match scheme.to_ascii_lowercase().as_slice() {
            b"http" => Some(80),
            b"https" => Some(443),
            _ => Some(0),
        };
        if h.port == default {
            h.port = None;
        }
    }
    if let Some(path) = h.path.take() {
        let mut path = strip_path_session_id(&path.to_ascii_lowercase());
        if path.len() > 1 && path.ends_with(b"/") {
            path.pop();
        }
        h.path = Some(path);
    }
    match h.query.take() {
        Some(q) => {
            let q = alpha_reorder(&strip_query_session_id(&q).to_ascii_lowercase());
            h.query = (!q.is_empty()).then_some(q);
        }
        None => h.last_delimiter = None,
    }
}

fn strip_path_session_id(path: &[u8]) -> Vec<u8> {
    static P1: OnceLock<Regex> = OnceLock::new();
    static P2: OnceLock<Regex> = OnceLock::new();
    let mut path = path.to_vec();
    for r in [
        re(
            &P1,
            r"(?i)^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^\?]+\.aspx.*)$",
        ),
        re(&P2, r"(?i)^(.*/)(\([0-9a-z]{24}\)/)([^\?]+\.aspx.*)$"),
    ] {
        if let Some(c) = r.captures(&path) {
            path = [
                c.get(1).expect("g1").as_bytes(),
                c.get(3).expect("g3").as_bytes(),
            ]
            .concat();
        }
    }
    path
}

fn strip_query_session_id(query: &[u8]) -> Vec<u8> {
    static Q: OnceLock<Vec<Regex>> = OnceLock::new();
    let patterns = Q.get_or_init(|| {
        [
            r"(?i)^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$",
            r"(?i)^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$",
            r"(?i)^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$",
            r"(?i)^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$",
            r"(?i)^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$",
        ]
        .iter()
        .map(|p| Regex::new(p).expect("valid regex"))
        .collect()
    });
    let mut query = query.to_vec();
    for r in patterns {
        if let Some(c) = r.captures(&query) {
            let g1 = c.get(1).map_or(&b""[..], |m| m.as_bytes());
            query = match c.get(2).map(|m| m.as_bytes()).filter(|g| !g.is_empty()) {
                Some(g2) => [g1, g2].concat(),
                None => g1.to_vec(),
            };
        }
    }
    query
}

fn alpha_reorder(query: &[u8]) -> Vec<u8> {
    if query.len() <= 1 {
        return query.to_vec();
    }
    let mut args: Vec<(&[u8], Option<&[u8]>)> = query
        .split(|&b| b == b'&')
        .map(|a| match a.iter().position(|&b| b == b'=') {
            Some(i) => (&a[..i], Some(&a[i + 1..])),
            None => (a, None),
        })
        .collect();
    // Python sorts tuples: ('a',) < ('a', ''), which is exactly None < Some(_).
    args.sort();
    let mut out = Vec::with_capacity(query.len());
    for (k, v) in args {
        out.extend_from_slice(k);
        if let Some(v) = v {
            out.push(b'=');
            out.extend_from_slice(v);
        }
        out.push(b'&');
    }
    out.pop();
    out
}

fn render(h: &HandyUrl) -> Vec<u8> {
    let host = h.host.as_ref().map(|host| {
        let mut parts: Vec<&[u8]> = host.split(|&b| b == b'.').collect();
        parts.reverse();
        parts.join(&b","[..])
    });
    let mut s = Vec::new();
    match &host {
        None => {
            s.extend_from_slice(h.scheme.as_deref().unwrap_or(b""));
            s.push(b':');
        }
        Some(host) => {
            s.extend_from_slice(host);
            if let Some(port) = h.port {
                s.extend_from_slice(format!(":{port}").as_bytes());
            }
            s.push(b')');
        }
    }
    match &h.path {
        Some(p) if !p.is_empty() => s.extend_from_slice(p),
        _ if h.query.is_some() => s.push(b'/'),
        _ => {}
    }
    if let Some(q) = &h.query {
        s.push(b'?');
        s.extend_from_slice(q);
    }
    if let Some(d) = h.last_delimiter {
        s.extend_from_slice(d);
    }
    s
}

#[cfg(test)]
mod tests;
