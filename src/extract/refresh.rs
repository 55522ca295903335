//! The refresh syntax, `5; url='/next'`: the `content` of a `<meta http-equiv=refresh>` and
//! the value of a `Refresh` response header, both read for the URL they send a browser to.

/// The URL part of a meta refresh `content` value such as `5; url='/next'` (the syntax of the
/// `Refresh` response header too), read as the HTML standard's "shared declarative refresh
/// steps" read it: a time (digits, dots), then `;`, `,` or white space (`0 url=/next` and
/// `0 /next` are refreshes too, as browsers take them), then the URL, after an optional
/// `url =` and inside optional quotes.
pub fn meta_refresh_url(content: &str) -> Option<&str> {
    let is_space = |c: char| matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' ');
    let content = content.trim_start_matches(is_space);
    if !content.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let rest = content.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    if !rest.starts_with(|c: char| c == ';' || c == ',' || is_space(c)) {
        return None;
    }
    let rest = rest.trim_start_matches(is_space);
    let rest = rest.strip_prefix([';', ',']).unwrap_or(rest);
    let rest = rest.trim_start_matches(is_space);
    let rest = match rest.get(..3) {
        Some(p) if p.eq_ignore_ascii_case("url") => {
            let after = rest[3..].trim_start_matches(is_space);
            after
                .strip_prefix('=')
                .map_or(rest, |r| r.trim_start_matches(is_space))
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
        // White space alone may part the time from the URL.
        assert_eq!(
            meta_refresh_url("0 url=/target1.html"),
            Some("/target1.html")
        );
        assert_eq!(meta_refresh_url("0 /target2.html"), Some("/target2.html"));
        assert_eq!(meta_refresh_url("0.5\n; URL='/t3'"), Some("/t3"));
        // No time, or a time run into the URL, is no refresh.
        assert_eq!(meta_refresh_url("url=/x"), None);
        assert_eq!(meta_refresh_url(";url=/x"), None);
        assert_eq!(meta_refresh_url("5url=/x"), None);
    }
}
