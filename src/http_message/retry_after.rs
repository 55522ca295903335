//! The `Retry-After` header (RFC 9110 10.2.3): how long a server that answered 429 or 503 asks
//! a client to wait, given as seconds or as an HTTP date.

use std::time::{Duration, SystemTime};

use super::ResponseHead;

/// Longest wait read from a header; `--max-delay` caps it further.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(86_400);

/// The wait `head` asks for at `now`: its `Retry-After` as delay-seconds or an HTTP date (a
/// date in the past asks for no wait). `None` when absent or unreadable.
pub fn retry_after(head: &ResponseHead, now: SystemTime) -> Option<Duration> {
    let value = std::str::from_utf8(head.header("Retry-After")?)
        .ok()?
        .trim();
    let wait = if value.bytes().all(|b| b.is_ascii_digit()) && !value.is_empty() {
        // A number too long for u64 is still "a very long time".
        Duration::from_secs(value.parse::<u64>().unwrap_or(u64::MAX).min(86_400))
    } else {
        let at = httpdate::parse_http_date(value).ok()?;
        at.duration_since(now).unwrap_or_default()
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_message::parse_response_head;

    fn head(value: &str) -> ResponseHead {
        let raw = format!("HTTP/1.1 429 Too Many Requests\r\nRetry-After: {value}\r\n\r\n");
        parse_response_head(raw.as_bytes()).unwrap()
    }

    #[test]
    fn seconds_dates_and_nonsense() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let secs = |v: &str| retry_after(&head(v), now).map(|d| d.as_secs());
        assert_eq!(secs("2"), Some(2));
        assert_eq!(secs(" 120 "), Some(120));
        assert_eq!(secs("99999999999999999999999"), Some(86_400));
        assert_eq!(secs("Sun, 06 Nov 1994 08:50:07 GMT"), Some(30));
        // RFC 850 and asctime forms are HTTP dates too.
        assert_eq!(secs("Sunday, 06-Nov-94 08:49:47 GMT"), Some(10));
        assert_eq!(secs("Sun Nov  6 08:49:39 1994"), Some(2));
        assert_eq!(secs("Sun, 06 Nov 1994 08:00:00 GMT"), Some(0));
        assert_eq!(secs("-5"), None);
        assert_eq!(secs("soon"), None);
        assert_eq!(secs(""), None);
        let raw = b"HTTP/1.1 503 X\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(retry_after(&parse_response_head(raw).unwrap(), now), None);
    }
}
