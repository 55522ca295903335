//! Feeds an html5ever tokenizer a whole document in pieces, so the tokenizer's input never
//! holds a second copy of a large page (a 20 MiB page fed whole was copied into one 20 MiB
//! buffer beside the response it came from). The tokenizer keeps its state between pieces, as
//! it does for a document arriving from the network, so the tokens are the same.

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{BufferQueue, TokenSink, Tokenizer};

/// Bytes per piece: most pages are one piece.
const PIECE: usize = 64 * 1024;

/// Feeds all of `html` to `tokenizer` and ends its input.
pub fn feed_document<Sink: TokenSink>(tokenizer: &Tokenizer<Sink>, html: &str) {
    let input = BufferQueue::default();
    let mut rest = html;
    while !rest.is_empty() {
        let mut end = rest.len().min(PIECE);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, after) = rest.split_at(end);
        input.push_back(StrTendril::from_slice(piece));
        let _ = tokenizer.feed(&input);
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
        feed_document(&tokenizer, html);
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
}
