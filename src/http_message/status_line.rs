//! Status lines as some servers write them outside RFC 9112's grammar: the protocol name in
//! lower case (`http/1.1 200 OK`) and several spaces between the parts (`HTTP/1.1  200 OK`).
//! Headless Chromium, curl and GNU wget read both (checked against a raw server, 2026-11-27),
//! and so do warcio and pywb in the records; httparse, and hyper with it, refuse them, and the
//! page was lost.
//!
//! Such a line is rewritten to the grammar at the same length ([`lenient`]), so that every
//! offset into the recorded bytes (the head's length, the body's start) stays as it is: the
//! fetcher hands hyper the rewritten line, trawl parses the head through it, and the record
//! keeps the line as received. The recorder hands hyper nothing of a first status line until
//! its end has arrived, so the rewrite sees the whole line however the server's writes split it.
//!
//! Left refused, because pywb cannot replay their records (checked: it answers with an error
//! page, or 500): tabs between the parts (which warcio does not read either) and a version
//! other than 1.0 and 1.1 (`HTTP/2 200 OK` on an HTTP/1 connection), though the three clients
//! read those too.

/// The status line that `head` starts with, rewritten to the grammar at its own length, when it
/// is one of the forms the module doc names; `None` when it needs no rewrite, is not complete
/// yet, or is not one of them.
pub fn lenient(head: &[u8]) -> Option<Vec<u8>> {
    // Asked of every response the fetcher reads: the usual line is told in a few tests.
    if is_grammatical(head) {
        return None;
    }
    let end = head.iter().position(|&b| b == b'\n')?;
    let line = head[..end].strip_suffix(b"\r").unwrap_or(&head[..end]);
    let (version, after_version) = read_version(line)?;
    let rest = skip_blanks(after_version);
    if rest.len() == after_version.len() {
        return None;
    }
    let code = rest.get(..3).filter(|c| c.iter().all(u8::is_ascii_digit))?;
    let after = &rest[3..];
    if after.first().is_some_and(|&b| b != b' ') {
        return None;
    }
    let reason = skip_blanks(after);
    let mut out = Vec::with_capacity(line.len());
    out.extend_from_slice(version);
    out.push(b' ');
    out.extend_from_slice(code);
    if !reason.is_empty() || out.len() < line.len() {
        out.push(b' ');
        out.extend_from_slice(reason);
    }
    out.resize(line.len(), b' ');
    (out != line).then_some(out)
}

/// `head` with its status line read through [`lenient`], when that rewrites it; the copy ends
/// with the head (a body is not copied).
pub fn with_lenient_line(head: &[u8]) -> Option<Vec<u8>> {
    let line = lenient(head)?;
    let end = head_end(head);
    let mut out = Vec::with_capacity(end);
    out.extend_from_slice(&line);
    out.extend_from_slice(&head[line.len()..end]);
    Some(out)
}

/// The length of the head at the start of `bytes` (through the empty line that ends it), or
/// all of `bytes` when it has not ended.
pub(super) fn head_end(bytes: &[u8]) -> usize {
    let mut i = 0;
    while let Some(lf) = bytes[i..].iter().position(|&b| b == b'\n') {
        let next = i + lf + 1;
        match bytes.get(next..) {
            Some([b'\n', ..]) => return next + 1,
            Some([b'\r', b'\n', ..]) => return next + 2,
            _ => i = next,
        }
    }
    bytes.len()
}

/// `head` starts with `HTTP/1.0` or `HTTP/1.1`, one space, three digits, and the line's end
/// or a space before a reason.
fn is_grammatical(head: &[u8]) -> bool {
    (head.starts_with(b"HTTP/1.1 ") || head.starts_with(b"HTTP/1.0 "))
        && head
            .get(9..12)
            .is_some_and(|c| c.iter().all(u8::is_ascii_digit))
        && matches!(head.get(12), None | Some(b' ' | b'\r' | b'\n'))
}

/// The version the line's protocol name stands for (`HTTP/1.1` or `HTTP/1.0`, the name in any
/// case), and the rest of the line.
fn read_version(line: &[u8]) -> Option<(&'static [u8], &[u8])> {
    let version: &'static [u8] = match line.get(..8)? {
        v if v.eq_ignore_ascii_case(b"HTTP/1.1") => b"HTTP/1.1",
        v if v.eq_ignore_ascii_case(b"HTTP/1.0") => b"HTTP/1.0",
        _ => return None,
    };
    Some((version, &line[8..]))
}

fn skip_blanks(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ').count();
    &s[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Option<String> {
        lenient(format!("{line}\r\nA: b\r\n\r\n").as_bytes()).map(|l| String::from_utf8(l).unwrap())
    }

    #[test]
    fn odd_status_lines_are_rewritten_at_their_length() {
        assert_eq!(read("http/1.1 200 OK").as_deref(), Some("HTTP/1.1 200 OK"));
        assert_eq!(
            read("HTTP/1.1  200 OK").as_deref(),
            Some("HTTP/1.1 200 OK ")
        );
        assert_eq!(
            read("Http/1.0  301  Moved").as_deref(),
            Some("HTTP/1.0 301 Moved  ")
        );
        assert_eq!(read("HTTP/1.0   404").as_deref(), Some("HTTP/1.0 404  "));
    }

    #[test]
    fn grammatical_lines_and_no_status_lines_are_left() {
        for line in [
            "HTTP/1.1 200 OK",
            "HTTP/1.1 200",
            "HTTP/1.0 200 ",
            "HTTP/2 200 OK",
            "HTTP/1.1\t200\tOK",
            "HTTP/1.1 20 OK",
            "HTTP/1.1 2000 OK",
            "HTTP/1.1200 OK",
            "HTTPS/1.1 200 OK",
            "ICY 200 OK",
            "HTTP/ 200 OK",
            "HTTP/1. 200 OK",
        ] {
            assert_eq!(read(line), None, "{line}");
        }
        assert_eq!(lenient(b"http/1.1 200 OK"), None, "incomplete");
    }

    #[test]
    fn the_copy_of_a_head_stops_where_it_ends() {
        let got = with_lenient_line(b"http/1.1 200 OK\nA: b\n\nbody").unwrap();
        assert_eq!(got, b"HTTP/1.1 200 OK\nA: b\n\n");
        let got = with_lenient_line(b"http/1.1 200 OK\r\n\r\nbody").unwrap();
        assert_eq!(got, b"HTTP/1.1 200 OK\r\n\r\n");
    }
}
