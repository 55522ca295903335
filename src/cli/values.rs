//! Value parsers of the command line: durations, sizes, console address and token,
//! `--header` fields and `--retry-status` codes, each with the message a user sees when a
//! value is wrong.

use std::time::Duration;

/// `--console`: a bare port means 127.0.0.1 (loopback unless an address is given).
pub fn parse_console_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    let s = s.trim();
    if let Ok(port) = s.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse().map_err(|_| {
        format!("{s:?} is not PORT or ADDR:PORT (examples: 8080, 127.0.0.1:8080, [::1]:8080)")
    })
}

/// `--console-token`: long enough not to be guessed, and sendable in a header.
pub fn parse_console_token(s: &str) -> Result<String, String> {
    if s.len() < 16 || s.len() > 256 || !s.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("a console token is 16 to 256 visible ASCII characters".into());
    }
    Ok(s.to_string())
}

/// Parses human durations such as `250ms`, `2s`, `1m 30s`. A unit is required (`0` alone is
/// allowed): a bare `500` is ambiguous between seconds and milliseconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(n) = s.parse::<f64>() {
        if n == 0.0 {
            return Ok(Duration::ZERO);
        }
        if n.is_finite() && n > 0.0 {
            return Err(format!(
                "a duration needs a unit: write {s}ms or {s}s (examples: 250ms, 2s, 1m 30s)"
            ));
        }
    }
    if has_capital_m_unit(s) {
        return Err(format!(
            "{s:?}: M is a month to trawl and a minute to wget; write m for minutes or month \
             for months (examples: 2m, 1month)"
        ));
    }
    humantime::parse_duration(s)
        .map_err(|e| format!("{s:?} is not a duration: {e} (examples: 250ms, 2s, 1m 30s)"))
}

/// Whether `s` has the unit `M` alone (`1M`, `2 M`), humantime's month, which a wget user
/// (`-w 1M` is a minute there) or a reader of `1m` would not take for one.
fn has_capital_m_unit(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        let after_number = bytes[..i]
            .iter()
            .rev()
            .find(|c| !c.is_ascii_whitespace())
            .is_some_and(u8::is_ascii_digit);
        let unit_ends = bytes.get(i + 1).is_none_or(|c| !c.is_ascii_alphabetic());
        b == b'M' && after_number && unit_ends
    })
}

/// Parses one `--header "Name: value"`: a valid field name that trawl does not set itself
/// (framing and connection fields, Host, User-Agent) and a single-line value.
pub fn parse_header(s: &str) -> Result<(http::HeaderName, http::HeaderValue), String> {
    let (name, value) = s.split_once(':').ok_or_else(|| {
        format!("{s:?} is not \"Name: value\" (example: --header 'Accept-Language: de')")
    })?;
    let name = http::HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("{:?} is not a header field name", name.trim()))?;
    let refused = [
        (http::header::HOST, "it is the URL's"),
        (http::header::CONTENT_LENGTH, "requests have no body"),
        (http::header::TRANSFER_ENCODING, "requests have no body"),
        (
            http::header::CONNECTION,
            "trawl keeps connections alive itself",
        ),
        (
            http::header::USER_AGENT,
            "use --user-agent (its first word is the robots.txt agent)",
        ),
    ];
    if let Some((_, why)) = refused.iter().find(|(n, _)| *n == name) {
        return Err(format!("--header {name} is refused: {why}"));
    }
    // A proxy's header would go to the proxy for http, but through an https tunnel to the
    // site and into every request record (found by an exploratory crawl).
    if name.as_str().starts_with("proxy-") {
        return Err(format!(
            "--header {name} is refused: it would reach https sites through the tunnel; give the proxy's credentials in --proxy http://USER:PASS@HOST:PORT (sent to the proxy alone)"
        ));
    }
    let value = http::HeaderValue::from_str(value.trim())
        .map_err(|_| format!("the value of --header {name} must be one line of visible text"))?;
    Ok((name, value))
}

/// Parses `--referer`: an absolute http(s) URL of visible ASCII text, at most
/// [`crate::url_rules::referrer::MAX_REFERER`] bytes, sent as given.
pub fn parse_referer(s: &str) -> Result<String, String> {
    let s = s.trim();
    let is_url = url::Url::parse(s).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
    if !is_url || !s.bytes().all(|b| (0x21..0x7f).contains(&b)) {
        return Err(format!(
            "--referer {s:?} is not an http(s) URL in ASCII (example: --referer https://example.org/)"
        ));
    }
    let max = crate::url_rules::referrer::MAX_REFERER;
    if s.len() > max {
        return Err(format!(
            "--referer is {} bytes; at most {max} are sent",
            s.len()
        ));
    }
    Ok(s.to_string())
}

/// Parses one `--warc-header`: `name: value`, the name a WARC field name (an HTTP token),
/// the value one line of text.
pub fn parse_warc_field(s: &str) -> Result<(String, String), String> {
    let (name, value) = s.split_once(':').ok_or_else(|| {
        format!("{s:?} is not \"name: value\" (example: --warc-header 'description: news sites, weekly')")
    })?;
    let name = name.trim();
    if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(format!("{name:?} is not a WARC field name"));
    }
    let value = value.trim();
    if value.is_empty() || value.chars().any(char::is_control) {
        return Err(format!(
            "the value of --warc-header {name} must be one line of text"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Parses `--limit-rate`: a size per second, at least 1 KB (`500k`, `2M`, `1MiB`); 0 is no
/// limit, as in wget.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let rate = parse_size(s.trim().trim_end_matches("/s"))?;
    if rate > 0 && rate < 1000 {
        return Err(format!("--limit-rate {s} is below 1 KB per second"));
    }
    Ok(rate)
}

/// Parses `--delay-factor`: a number from 0 (off) to 1000.
pub fn parse_delay_factor(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if (0.0..=1000.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "--delay-factor {s} is not a number from 0 to 1000 (Heritrix's default is 5)"
        )),
    }
}

/// Parses one `--retry-status` code: a 4xx or 5xx status, or nothing (an empty value turns
/// the retries on status off).
pub fn parse_retry_status(s: &str) -> Result<Option<u16>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    match s.parse::<u16>() {
        Ok(code) if (400..600).contains(&code) => Ok(Some(code)),
        _ => Err(format!(
            "{s} is not a 4xx or 5xx status (example: --retry-status 429,503,502)"
        )),
    }
}

/// Parses one `--dns-server`: `ADDR` (port 53) or `ADDR:PORT` (`[v6]:PORT` for IPv6).
pub fn parse_dns_server(s: &str) -> Result<std::net::SocketAddr, String> {
    let s = s.trim();
    if let Ok(ip) = s.parse::<std::net::IpAddr>() {
        return Ok(std::net::SocketAddr::new(ip, 53));
    }
    s.parse().map_err(|_| {
        format!("{s:?} is not ADDR or ADDR:PORT (examples: 127.0.0.1, 127.0.0.1:5353, [::1]:53)")
    })
}

/// Parses human sizes as GNU tools and wget read them: a bare number is bytes; one letter
/// (`64k`, `2M`, `1g`, `1t`, any case) counts in units of 1024, as in wget's `--limit-rate`,
/// `--quota` and `--warc-max-size`; `KB`, `MB`, `GB` in units of 1000 and `KiB`, `MiB`, `GiB`
/// in units of 1024.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let shift = match s.chars().last().map(|c| c.to_ascii_lowercase()) {
        Some('k') => Some(10),
        Some('m') => Some(20),
        Some('g') => Some(30),
        Some('t') => Some(40),
        _ => None,
    };
    if let Some(shift) = shift {
        let number = s[..s.len() - 1].trim_end();
        if let Ok(n) = number.parse::<f64>() {
            if n.is_finite() && n >= 0.0 {
                // `as` saturates at u64::MAX.
                return Ok((n * (1u64 << shift) as f64) as u64);
            }
        }
    }
    let examples = "(examples: 1GB, 500MiB, 64k, 65536)";
    if s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty() {
        return s
            .parse::<u64>()
            .map_err(|_| format!("{s} bytes is more than any size trawl counts {examples}"));
    }
    if s.parse::<f64>().is_ok() {
        return Err(format!(
            "{s:?}: a size without a unit is a whole number of bytes {examples}"
        ));
    }
    s.parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("{s:?} is not a size: {e} {examples}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_size_or_duration_is_named_for_what_is_wrong_with_it() {
        assert!(parse_size("18446744073709551616")
            .unwrap_err()
            .contains("more than any size"));
        assert!(parse_size("1.5").unwrap_err().contains("whole number"));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert!(parse_duration("inf")
            .unwrap_err()
            .contains("is not a duration"));
        assert!(parse_duration("5").unwrap_err().contains("needs a unit"));
        assert!(parse_header("Proxy-Authorization: Basic eDp5")
            .unwrap_err()
            .contains("--proxy http://USER:PASS@"));
        assert!(parse_header("X-Proxy-Id: 1").is_ok());
    }

    #[test]
    fn rates_are_sizes_per_second() {
        assert_eq!(parse_rate("500k").unwrap(), parse_size("500k").unwrap());
        assert_eq!(parse_rate("2M/s").unwrap(), parse_size("2M").unwrap());
        assert!(parse_rate("10").is_err());
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn warc_fields_are_a_name_and_one_line() {
        let (name, value) = parse_warc_field("description: Weekly news, v2 ").unwrap();
        assert_eq!(
            (name.as_str(), value.as_str()),
            ("description", "Weekly news, v2")
        );
        for bad in ["description", "two words: x", ": x", "x:", "x: a\nb"] {
            assert!(parse_warc_field(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_referer_is_an_http_url() {
        let ok = parse_referer(" https://example.org/start?x=1 ").unwrap();
        assert_eq!(ok, "https://example.org/start?x=1");
        for bad in [
            "",
            "example.org",
            "/relative",
            "ftp://a.org/",
            "http://a.org/ä",
            "http://a.org/\tx",
        ] {
            assert!(parse_referer(bad).is_err(), "{bad:?}");
        }
        let long = format!("http://a.org/{}", "x".repeat(5000));
        assert!(parse_referer(&long).unwrap_err().contains("at most 4096"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        let bare = parse_duration("500").unwrap_err();
        assert!(bare.contains("500ms"), "{bare}");
        assert_eq!(parse_duration("1m 30s").unwrap(), Duration::from_secs(90));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1").is_err());
        assert_eq!(
            parse_duration("1month").unwrap(),
            parse_duration("30.44d").unwrap()
        );
        for month_or_minute in ["1M", "2 M", "1h 5M", "1M30s"] {
            let e = parse_duration(month_or_minute).unwrap_err();
            assert!(e.contains("write m for minutes"), "{month_or_minute}: {e}");
        }
    }

    #[test]
    fn dns_servers() {
        assert_eq!(
            parse_dns_server("127.0.0.1").unwrap(),
            "127.0.0.1:53".parse().unwrap()
        );
        assert_eq!(
            parse_dns_server("[::1]:5353").unwrap(),
            "[::1]:5353".parse().unwrap()
        );
        assert!(parse_dns_server("resolver.example").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1GB").unwrap(), 1_000_000_000);
        assert_eq!(parse_size("500MiB").unwrap(), 500 * 1024 * 1024);
        assert_eq!(parse_size("65536").unwrap(), 65536);
        assert!(parse_size("big").is_err());
        // One letter is wget's and GNU's unit of 1024; two are SI's.
        assert_eq!(parse_size("64k").unwrap(), 64 * 1024);
        assert_eq!(parse_size("2M").unwrap(), 2 << 20);
        assert_eq!(parse_size("1.5 g").unwrap(), 3 << 29);
        assert_eq!(parse_size("1KB").unwrap(), 1000);
        assert_eq!(parse_size("1KiB").unwrap(), 1024);
        assert!(parse_size("-1k").is_err());
        assert!(parse_size("k").is_err());
    }
}
