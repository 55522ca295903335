//! How the search index cuts text into words: as tantivy's default tokenizer does (runs of
//! letters and digits, lower-cased, none over 40 bytes), except that Chinese, Japanese and
//! Korean script, written without spaces between words, is cut into overlapping pairs of
//! characters (`東京都` → `東京`, `京都`), as Lucene's CJK analyzer does. A query is cut the
//! same way, and its pairs must stand side by side, so a word of any length is found inside a
//! run of text. With the default tokenizer a whole run between punctuation was one word:
//! `東京都` found nothing in `東京都は日本の首都です`.
//!
//! Thai, Lao, Khmer and Myanmar, written without spaces too, are cut into pairs the same way
//! (a dictionary would cut them into words; pairs find every word without one). Combining
//! marks belong to the word they mark (`cafe` + U+0301 is one word, not `cafe` and a mark),
//! and each word is NFKC-normalized, as Elasticsearch's ICU normalizer does: the composed and
//! decomposed `café` are one word, and so are full-width `Ｔｏｋｙｏ` and `tokyo`, half-width
//! `ｶﾀｶﾅ` and `カタカナ` (found by an exploratory search: each gave no hit for the other).
//!
//! It is registered under tantivy's own name, `default`, which the schema's text fields name:
//! the schema stays what other tantivy readers (tantivy-py) open and query as before, and
//! their default cuts all but CJK text the same way.

use tantivy::tokenizer::{
    LowerCaser, RemoveLongFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};
use tantivy::Index;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// The tokenizer's name in the schema: tantivy's default, which this one takes the place of.
const WORDS: &str = "default";

/// Puts this tokenizer in `index`'s place of the default one (on every open: the tokenizers
/// are not stored in the index).
pub fn register(index: &Index) {
    let analyzer = TextAnalyzer::builder(Words::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .build();
    index.tokenizers().register(WORDS, analyzer);
}

/// True for a character of a script written without spaces between words.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF     // Thai, Lao
        | 0x1000..=0x109F   // Myanmar
        | 0x1780..=0x17FF   // Khmer
        | 0x3040..=0x30FF   // Hiragana, Katakana
        | 0x31F0..=0x31FF   // Katakana extensions
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xAC00..=0xD7AF   // Hangul syllables
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0xFF66..=0xFF9D   // half-width Katakana
        | 0x20000..=0x2FFFF // CJK extensions B and on
    )
}

/// Where the words of `text` are: byte ranges.
fn spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end = at + c.len_utf8();
        if is_cjk(c) {
            let mut run = vec![(at, end)];
            while let Some(&(next, d)) = chars.peek() {
                if !is_cjk(d) {
                    break;
                }
                run.push((next, next + d.len_utf8()));
                chars.next();
            }
            match run.len() {
                1 => out.push(run[0]),
                _ => out.extend(run.windows(2).map(|w| (w[0].0, w[1].1))),
            }
        } else if c.is_alphanumeric() {
            let mut to = end;
            while let Some(&(next, d)) = chars.peek() {
                if !(d.is_alphanumeric() || is_combining_mark(d)) || is_cjk(d) {
                    break;
                }
                to = next + d.len_utf8();
                chars.next();
            }
            out.push((at, to));
        }
    }
    out
}

/// The tokenizer.
#[derive(Clone, Default)]
pub struct Words {
    token: Token,
}

/// Its token stream over one text.
pub struct WordStream<'a> {
    text: &'a str,
    spans: std::vec::IntoIter<(usize, usize)>,
    token: &'a mut Token,
}

impl Tokenizer for Words {
    type TokenStream<'a> = WordStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream<'a> {
        self.token.reset();
        WordStream {
            text,
            spans: spans(text).into_iter(),
            token: &mut self.token,
        }
    }
}

impl TokenStream for WordStream<'_> {
    fn advance(&mut self) -> bool {
        let Some((from, to)) = self.spans.next() else {
            return false;
        };
        self.token.position = self.token.position.wrapping_add(1);
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.text.clear();
        let word = &self.text[from..to];
        match word.is_ascii() {
            true => self.token.text.push_str(word),
            false => self.token.text.extend(word.nfkc()),
        }
        true
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        spans(text).into_iter().map(|(a, b)| &text[a..b]).collect()
    }

    #[test]
    fn cjk_runs_become_pairs_and_other_words_stay_whole() {
        assert_eq!(
            words("東京都は首都"),
            ["東京", "京都", "都は", "は首", "首都"]
        );
        assert_eq!(
            words("Hello, wide-world 42"),
            ["Hello", "wide", "world", "42"]
        );
        assert_eq!(words("ABC東京 x 都 y"), ["ABC", "東京", "x", "都", "y"]);
        assert_eq!(words("서울특별시"), ["서울", "울특", "특별", "별시"]);
        assert_eq!(words("ไทย"), ["ไท", "ทย"]);
        assert_eq!(words("cafe\u{301} au lait"), ["cafe\u{301}", "au", "lait"]);
    }

    #[test]
    fn words_are_nfkc_normalized() {
        let tokens = |text: &str| {
            let mut words = Words::default();
            let mut stream = words.token_stream(text);
            let mut out = Vec::new();
            while stream.advance() {
                out.push(stream.token().text.clone());
            }
            out
        };
        assert_eq!(tokens("cafe\u{301}"), tokens("caf\u{e9}"));
        assert_eq!(tokens("Ｔｏｋｙｏ"), ["Tokyo"]);
        assert_eq!(tokens("ｶﾀｶﾅ"), tokens("カタカナ"));
    }
}
