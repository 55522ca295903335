//! The refresh syntax, `5; url='/next'`: the `content` of a `<meta http-equiv=refresh>` and
//! the value of a `Refresh` response header, both read for the URL they send a browser to.

/// The URL part of a meta refresh `content` value such as `5; url='/next'` (the syntax of the
/// `Refresh` response header too).
pub fn meta_refresh_url(content: &str) -> Option<&str> {
    let rest = content
        .trim_start()
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    let rest = rest.trim_start().strip_prefix([';', ','])?.trim_start();
    let rest = match rest.get(..3) {
        Some(p) if p.eq_ignore_ascii_case("url") => {
            let after = rest[3..].trim_start();
            after.strip_prefix('=').map_or(rest, str::trim_start)
        }
        _ => rest,
    };
    let rest = match rest.chars().next() {
        Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or(""),
        _ => rest.trim_end(),
    };
    (!rest.is_empty()).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_refresh_parser() {
        assert_eq!(meta_refresh_url("3;url=a"), Some("a"));
        assert_eq!(meta_refresh_url(" 3 , URL = \"b c\" "), Some("b c"));
        assert_eq!(meta_refresh_url("0; /direct"), Some("/direct"));
        assert_eq!(meta_refresh_url("10"), None);
    }
}
