//! Seed parsing: one URL or bare host per line, with line-numbered problems.

use url::Url;

use crate::url_rules::canonicalize;

/// A usable seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// The canonical seed URL.
    pub url: Url,
    /// True for bare hosts: tried as `https://HOST/` first, then `http://HOST/` if TLS cannot be
    /// established.
    pub http_fallback: bool,
}

/// A seed line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedProblem {
    /// 1-based line number (0 for command-line seeds).
    pub line: usize,
    /// The offending text.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl std::fmt::Display for SeedProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {:?}: {}", self.line, self.text, self.reason)
        } else {
            write!(f, "{:?}: {}", self.text, self.reason)
        }
    }
}

/// Parses one seed: a full http(s) URL, or a bare host (optionally with a path).
pub fn parse_seed(text: &str) -> Result<Seed, String> {
    let text = text.trim();
    if text.chars().any(char::is_whitespace) {
        return Err("contains whitespace".into());
    }
    let (candidate, http_fallback) = match text.split_once("://") {
        Some((scheme, _)) => {
            if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
                return Err(format!(
                    "unsupported scheme {scheme:?} (only http and https)"
                ));
            }
            (text.to_string(), false)
        }
        None => {
            if text.contains(':') && text.parse::<std::net::SocketAddr>().is_err() {
                let (host, port) = text.split_once(':').unwrap_or((text, ""));
                let port_digits = port.split('/').next().unwrap_or("");
                if host.is_empty() || port_digits.parse::<u16>().is_err() {
                    return Err("not a URL or host name".into());
                }
            }
            (format!("https://{text}"), true)
        }
    };
    let url = Url::parse(&candidate).map_err(|e| format!("invalid URL: {e}"))?;
    let host = url.host_str().unwrap_or("");
    if host.is_empty() {
        return Err("no host".into());
    }
    if http_fallback && url.domain().is_some() && !host.contains('.') && host != "localhost" {
        return Err("bare host has no dot; write a full URL if this is intended".into());
    }
    let url = canonicalize(&url).ok_or_else(|| "not a crawlable http(s) URL".to_string())?;
    Ok(Seed { url, http_fallback })
}

/// Parses a seeds file: blank lines and `#` comments are skipped, bad lines reported.
/// Each usable seed is passed through `check` (the crawl's URL limits), which may refuse it.
pub fn parse_seed_lines(
    content: &str,
    check: &dyn Fn(Seed) -> Result<Seed, String>,
) -> (Vec<Seed>, Vec<SeedProblem>) {
    let mut seeds = Vec::new();
    let mut problems = Vec::new();
    for (index, raw) in content.lines().enumerate() {
        let line = raw.trim().trim_start_matches('\u{feff}');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_seed(line).and_then(check) {
            Ok(seed) => seeds.push(seed),
            Err(reason) => problems.push(SeedProblem {
                line: index + 1,
                text: line.chars().take(200).collect(),
                reason,
            }),
        }
    }
    (seeds, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_hosts_become_https_with_fallback() {
        let s = parse_seed("ufmg.br").unwrap();
        assert_eq!(s.url.as_str(), "https://ufmg.br/");
        assert!(s.http_fallback);
        let s = parse_seed("www.ufmg.br/pt/").unwrap();
        assert_eq!(s.url.as_str(), "https://www.ufmg.br/pt/");
        let s = parse_seed("127.0.0.1:8080").unwrap();
        assert_eq!(s.url.as_str(), "https://127.0.0.1:8080/");
    }

    #[test]
    fn full_urls_are_kept_without_fallback() {
        let s = parse_seed("HTTP://Example.org/a#x").unwrap();
        assert_eq!(s.url.as_str(), "http://example.org/a");
        assert!(!s.http_fallback);
    }

    #[test]
    fn file_parsing_reports_line_numbers_and_skips_comments() {
        let content = "# seeds\n\nhttp://a.org/\nftp://b.org/\n  c.org  \nnot a url\nhttp://\nhttp://d.org/x y\n";
        let (seeds, problems) = parse_seed_lines(content, &Ok);
        let urls: Vec<&str> = seeds.iter().map(|s| s.url.as_str()).collect();
        assert_eq!(urls, ["http://a.org/", "https://c.org/"]);
        let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [4, 6, 7, 8]);
        assert!(problems[0].reason.contains("scheme"));
    }

    #[test]
    fn dotless_bare_word_is_rejected() {
        assert!(parse_seed("intranet").is_err());
        assert!(parse_seed("localhost").is_ok());
    }
}
