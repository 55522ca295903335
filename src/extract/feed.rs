//! Feeds an html5ever tokenizer a whole document in pieces, so the tokenizer's input never
//! holds a second copy of a large page (a 20 MiB page fed whole was copied into one 20 MiB
//! buffer beside the response it came from). The tokenizer keeps its state between pieces, as
//! it does for a document arriving from the network, so the tokens are the same.
//!
//! Between pieces, [`Pace`] holds the tokenizer to a time that grows with the bytes read.
//! html5ever tests each attribute of a tag against the ones before it, so a tag of n distinct
//! attributes costs n²: one tag of 150,000 (a 1 MB page) took 14 s of CPU, and a 20 MiB
//! page of them would take hours, on a worker thread the crawl's other fetches share. A page
//! read slower than [`Pace`] allows is cut there, keeping what was read.

use std::cell::Cell;
use std::time::Duration;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{BufferQueue, TokenSink, Tokenizer};

/// Bytes per piece: most pages are one piece.
const PIECE: usize = 64 * 1024;
/// Tokenizer time any page may take past its first piece, whatever its length.
const BASE: Duration = Duration::from_secs(1);
/// And more for each byte read: half a second per MiB. html5ever reads ~130 MB/s in a
/// release build here (the benchmark's link extraction: ~90 us for a ~12 KB page), ~65 times
/// faster than this; a debug build is slower, and its tests' 2 MiB page stays inside.
const PER_MIB: Duration = Duration::from_millis(500);

/// How long tokenizing one page may take, shared by the documents read within it (`iframe
/// srcdoc`s). Counted in the thread's CPU time, so a loaded machine does not cut a page; the
/// clock is first read once a page's first piece is behind it, so a page of one piece (most
/// are) pays nothing for it.
#[derive(Debug, Default)]
pub struct Pace {
    /// Bytes fed so far.
    read: Cell<u64>,
    /// The thread's CPU time, and the bytes fed, when the clock was first read.
    started: Cell<Option<(Duration, u64)>>,
    /// The tokenizer was slower than allowed: nothing more is fed.
    cut: Cell<bool>,
}

impl Pace {
    /// True when a document was cut for being read too slowly.
    pub fn was_cut(&self) -> bool {
        self.cut.get()
    }

    /// Counts a piece of `len` bytes fed; cuts when the time since the clock was first read is
    /// past what the bytes since then allow.
    fn fed(&self, len: usize) {
        let read = self.read.get() + len as u64;
        self.read.set(read);
        // A page of one piece never reads the clock; a longer one starts it after its first.
        if read < PIECE as u64 {
            return;
        }
        let now = thread_cpu_time();
        match self.started.get() {
            None => self.started.set(Some((now, read))),
            Some((start, at)) => {
                let allowed = BASE + PER_MIB.mul_f64((read - at) as f64 / (1 << 20) as f64);
                if now.saturating_sub(start) > allowed {
                    self.cut.set(true);
                }
            }
        }
    }
}

/// The CPU time of the calling thread.
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Feeds `html` to `tokenizer` and ends its input: all of it, or the part read before `pace`
/// cut it.
pub fn feed_document<Sink: TokenSink>(tokenizer: &Tokenizer<Sink>, html: &str, pace: &Pace) {
    let input = BufferQueue::default();
    let mut rest = html;
    while !rest.is_empty() && !pace.was_cut() {
        let mut end = rest.len().min(PIECE);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, after) = rest.split_at(end);
        input.push_back(StrTendril::from_slice(piece));
        let _ = tokenizer.feed(&input);
        pace.fed(piece.len());
        rest = after;
    }
    tokenizer.end();
}

#[cfg(test)]
mod tests {
    use super::*;
    use html5ever::tokenizer::{Token, TokenSinkResult, TokenizerOpts};
    use std::cell::RefCell;

    /// Collects the tokens as text, merging adjacent character tokens.
    #[derive(Default)]
    struct Tokens(RefCell<Vec<String>>);

    impl TokenSink for Tokens {
        type Handle = ();
        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
            let mut out = self.0.borrow_mut();
            match token {
                Token::CharacterTokens(t) => match out.last_mut() {
                    Some(last) if last.starts_with("chars:") => last.push_str(&t),
                    _ => out.push(format!("chars:{t}")),
                },
                Token::ParseError(_) => {}
                other => out.push(format!("{other:?}")),
            }
            TokenSinkResult::Continue
        }
    }

    fn tokens_fed_whole(html: &str) -> Vec<String> {
        let tokenizer = Tokenizer::new(Tokens::default(), TokenizerOpts::default());
        let input = BufferQueue::default();
        input.push_back(StrTendril::from_slice(html));
        let _ = tokenizer.feed(&input);
        tokenizer.end();
        tokenizer.sink.0.into_inner()
    }

    fn tokens_fed_in_pieces(html: &str) -> Vec<String> {
        let tokenizer = Tokenizer::new(Tokens::default(), TokenizerOpts::default());
        feed_document(&tokenizer, html, &Pace::default());
        tokenizer.sink.0.into_inner()
    }

    #[test]
    fn pieces_give_the_same_tokens_as_the_whole_document() {
        // Tags, attributes, entities, CRLF and multi-byte characters across piece boundaries.
        let unit =
            "<p class=\"a&amp;b\">caf\u{e9} \u{1f980}\r\n<a href='/x?y=1&z=2'>l</a><!-- c -->";
        let html = unit.repeat(3 * PIECE / unit.len() + 7);
        assert!(html.len() > 2 * PIECE);
        assert_eq!(tokens_fed_in_pieces(&html), tokens_fed_whole(&html));
        // One attribute longer than a piece.
        let long = format!("<a href=\"/{}\">x</a>", "y".repeat(PIECE * 2));
        assert_eq!(tokens_fed_in_pieces(&long), tokens_fed_whole(&long));
        assert_eq!(tokens_fed_in_pieces(""), tokens_fed_whole(""));
    }

    #[test]
    fn a_long_page_of_ordinary_markup_is_read_whole() {
        let page = "<p class=x>text <a href=/y>y</a></p>\n".repeat((2 << 20) / 36);
        let pace = Pace::default();
        let tokenizer = Tokenizer::new(Tokens::default(), TokenizerOpts::default());
        feed_document(&tokenizer, &page, &pace);
        assert!(!pace.was_cut());
        assert!(pace.started.get().is_some(), "the clock was read");
    }
}
