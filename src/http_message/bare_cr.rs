//! A CR that ends no line inside a response head (`X-A: a<CR>b`, or a value ending in
//! `<CR><CR><LF>` as a Windows program writing CRLF in text mode sends it). httparse, and hyper
//! with it, refuse such a head, and the page was lost; headless Chromium and GNU wget show it
//! (checked against a raw loopback server, 2026-11-28), and RFC 9110 section 5.5 lets a
//! recipient replace the CR with a space instead of refusing. trawl does: the fetcher hands
//! hyper the head with each such CR made a space ([`replace_in`], at the same length, so no
//! offset moves), the head parser reads it the same way ([`replaced`]), and the record keeps
//! the bytes as received. A head whose lines end in CR alone, or whose empty line is
//! `<CR><CR><LF>`, is still refused (Chromium shows no page for it either), as is a NUL.

use memchr::memchr;

/// Replaces with a space each CR in `bytes` that the next byte shows to end no line; `next` is
/// the byte after `bytes`, if it has arrived (a CR at the end with nothing after it is left:
/// the recorder hands hyper such a CR only once the byte after it arrived, or the stream
/// ended).
pub fn replace_in(bytes: &mut [u8], next: Option<u8>) {
    let mut at = 0;
    while let Some(found) = memchr(b'\r', &bytes[at..]) {
        let i = at + found;
        let after = bytes.get(i + 1).copied().or(next);
        if after.is_some_and(|b| b != b'\n') {
            bytes[i] = b' ';
        }
        at = i + 1;
    }
}

/// The head at the start of `bytes` (through its empty line; a body is not copied) with each
/// CR that ends no line made a space, when it has one.
pub fn replaced(bytes: &[u8]) -> Option<Vec<u8>> {
    let end = super::status_line::head_end(bytes);
    let head = &bytes[..end];
    if !(head.ends_with(b"\n\n") || head.ends_with(b"\n\r\n")) {
        // Not a whole head: nothing to parse, and a long body is not copied.
        return None;
    }
    // Asked only of a head that does not parse: the copy is made before knowing it differs.
    let mut out = head.to_vec();
    replace_in(&mut out, bytes.get(end).copied());
    (out != head).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cr_that_ends_no_line_becomes_a_space() {
        let mut head = b"HTTP/1.1 200 OK\r\nX-A: a\rb\r\nX-B: c\r\r\n\r\n".to_vec();
        replace_in(&mut head, None);
        assert_eq!(head, b"HTTP/1.1 200 OK\r\nX-A: a b\r\nX-B: c \r\n\r\n");
        // At the end of what arrived, a CR is left until what follows it is known.
        let mut cut = b"X-A: a\r".to_vec();
        replace_in(&mut cut, None);
        assert_eq!(cut, b"X-A: a\r");
        replace_in(&mut cut, Some(b'b'));
        assert_eq!(cut, b"X-A: a ");
        let mut line_end = b"X-A: a\r".to_vec();
        replace_in(&mut line_end, Some(b'\n'));
        assert_eq!(line_end, b"X-A: a\r");
    }

    #[test]
    fn the_head_is_copied_only_when_it_has_such_a_cr() {
        let raw = b"HTTP/1.1 200 OK\r\nX-A: a\rb\r\n\r\nbody\rmore";
        let head = replaced(raw).unwrap();
        assert_eq!(head, b"HTTP/1.1 200 OK\r\nX-A: a b\r\n\r\n");
        assert_eq!(replaced(b"HTTP/1.1 200 OK\r\n\r\nbody\rmore"), None);
        assert_eq!(replaced(b"HTTP/1.1 200 OK\r\nX-A: a\rb\r\n"), None);
    }
}
