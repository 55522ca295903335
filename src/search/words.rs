//! How the search index cuts text into words: as tantivy's default tokenizer does (runs of
//! letters and digits, lower-cased), except that Chinese, Japanese and Korean script, written
//! without spaces between words, is cut into overlapping pairs of characters (`東京都` →
//! `東京`, `京都`), as Lucene's CJK analyzer does. A query is cut the same way, and its pairs
//! must stand side by side, so a word of two or more characters is found inside a run of
//! text; a page's characters are each a word too, at their pairs' positions, so that a word
//! of one (`猫`, `水`) is found as well (Lucene's `outputUnigrams`; a query's run is cut into
//! pairs alone, so indexes written before match as they did). With the default tokenizer a
//! whole run between punctuation was one word: `東京都` found nothing in `東京都は日本の首都です`.
//!
//! Thai, Lao, Khmer and Myanmar, written without spaces too, are cut into pairs the same way
//! (a dictionary would cut them into words; pairs find every word without one). Combining
//! marks belong to the word they mark (`cafe` + U+0301 is one word, not `cafe` and a mark),
//! and each word is NFKC-normalized, as Elasticsearch's ICU normalizer does: the composed and
//! decomposed `café` are one word, and so are full-width `Ｔｏｋｙｏ` and `tokyo`, half-width
//! `ｶﾞｲﾄﾞ` and `ガイド` (found by an exploratory search: each gave no hit for the other). As
//! that normalizer folds them, a soft hyphen or a joiner inside a word is no part of it and
//! Turkish `İ` is `i`. Words up to 255 characters are kept (Lucene's limit; tantivy's 40
//! bytes dropped Russian words of 21 letters).
//!
//! It is registered under tantivy's own name, `default`, which the schema's text fields name:
//! the schema stays what other tantivy readers (tantivy-py) open and query as before, and
//! their default cuts all but CJK text the same way.

use tantivy::tokenizer::{
    LowerCaser, TextAnalyzer, Token, TokenStream, Tokenizer, TokenizerManager,
};
use tantivy::Index;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// The tokenizer's name in the schema: tantivy's default, which this one takes the place of.
const WORDS: &str = "default";

/// Longest word indexed, in characters, as Lucene's standard tokenizer (a longer run is a
/// hash or an encoding, not a word). tantivy's default, 40 bytes, dropped Russian, Greek or
/// Hindi words of 13 to 20 letters and German compounds (found by an exploratory search).
const MAX_WORD_CHARS: usize = 255;

/// Puts this tokenizer in `index`'s place of the default one (on every open: the tokenizers
/// are not stored in the index). Pages are cut with the single characters of CJK runs too.
pub fn register(index: &Index) {
    index.tokenizers().register(WORDS, analyzer(Words::index()));
}

/// The tokenizers a query is cut with: CJK runs into pairs alone (or one character alone),
/// which the pages' pairs and single characters, at the same positions, both match.
pub fn query_tokenizers() -> TokenizerManager {
    let tokenizers = TokenizerManager::default();
    tokenizers.register(WORDS, analyzer(Words::query()));
    tokenizers
}

fn analyzer(words: Words) -> TextAnalyzer {
    TextAnalyzer::builder(words).filter(LowerCaser).build()
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
        | 0xFF66..=0xFF9F   // half-width Katakana and its voiced sound marks
        | 0x20000..=0x2FFFF // CJK extensions B and on
    )
}

/// A kana voiced sound mark that NFKC joins to the kana before it (half-width `ﾃﾞ` is `デ`,
/// as is `テ` + U+3099): one character with it, so that the pairs match those of the
/// composed text.
fn is_kana_mark(c: char) -> bool {
    matches!(c, '\u{3099}' | '\u{309A}' | '\u{FF9E}' | '\u{FF9F}')
}

/// Invisible characters inside a word that leave it one word and are no part of it (the
/// Default_Ignorable format characters ICU's nfkc_cf folding removes): a soft hyphen
/// (`Bundes&shy;gesundheits&shy;ministerium`), the joiners of Persian or Indic script, a
/// word joiner, a byte order mark.
fn is_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{AD}' | '\u{34F}' | '\u{200C}' | '\u{200D}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}'
    )
}

/// A word: a byte range of the text, and whether it stands at the position of the word
/// before it (a CJK character beside the pair it begins).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    from: usize,
    to: usize,
    same_position: bool,
}

impl Span {
    fn new(from: usize, to: usize) -> Span {
        Span {
            from,
            to,
            same_position: false,
        }
    }
}

/// Where the words of `text` are. A CJK run is cut into overlapping pairs of characters;
/// with `single`, each character is a word too, at its pair's position (a run of one is its
/// character alone either way). A one-character word in running text (`猫`, `水`) is found
/// so, while a longer word, cut into pairs, is matched by the pairs alone.
fn spans(text: &str, single: bool) -> Vec<Span> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end = at + c.len_utf8();
        if is_cjk(c) {
            let mut run = vec![(at, end)];
            while let Some(&(next, d)) = chars.peek() {
                let to = next + d.len_utf8();
                if is_kana_mark(d) {
                    run.last_mut().expect("a run starts with a character").1 = to;
                } else if is_cjk(d) {
                    run.push((next, to));
                } else {
                    break;
                }
                chars.next();
            }
            if let [(from, to)] = run[..] {
                out.push(Span::new(from, to));
                continue;
            }
            for pair in run.windows(2) {
                out.push(Span::new(pair[0].0, pair[1].1));
                if single {
                    let (from, to) = pair[0];
                    out.push(Span {
                        from,
                        to,
                        same_position: true,
                    });
                }
            }
            if single {
                let (from, to) = run[run.len() - 1];
                out.push(Span {
                    from,
                    to,
                    same_position: true,
                });
            }
        } else if c.is_alphanumeric() {
            let mut to = end;
            while let Some(&(next, d)) = chars.peek() {
                let joined = d.is_alphanumeric() || is_combining_mark(d) || is_ignorable(d);
                if !joined || is_cjk(d) {
                    break;
                }
                to = next + d.len_utf8();
                chars.next();
            }
            out.push(Span::new(at, to));
        }
    }
    out
}

/// The tokenizer.
#[derive(Clone, Default)]
pub struct Words {
    /// Each CJK character a word too (pages; a query is cut into pairs alone).
    single: bool,
    token: Token,
}

impl Words {
    /// As pages are cut.
    fn index() -> Words {
        Words {
            single: true,
            token: Token::default(),
        }
    }

    /// As queries are cut.
    fn query() -> Words {
        Words::default()
    }
}

/// Its token stream over one text.
pub struct WordStream<'a> {
    text: &'a str,
    spans: std::vec::IntoIter<Span>,
    token: &'a mut Token,
}

impl Tokenizer for Words {
    type TokenStream<'a> = WordStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream<'a> {
        self.token.reset();
        WordStream {
            text,
            spans: spans(text, self.single).into_iter(),
            token: &mut self.token,
        }
    }
}

impl TokenStream for WordStream<'_> {
    fn advance(&mut self) -> bool {
        loop {
            let Some(span) = self.spans.next() else {
                return false;
            };
            if !span.same_position {
                self.token.position = self.token.position.wrapping_add(1);
            }
            let word = &self.text[span.from..span.to];
            // Too long a word is left out, its position kept (as tantivy's filter did).
            if word.len() > MAX_WORD_CHARS && word.chars().count() > MAX_WORD_CHARS {
                continue;
            }
            self.token.offset_from = span.from;
            self.token.offset_to = span.to;
            self.token.text.clear();
            match word.is_ascii() {
                true => self.token.text.push_str(word),
                // Turkish `İ` is `i` (simple case mapping, as Lucene's; the full one is
                // `i` + U+0307, which `istanbul` does not match).
                false => self
                    .token
                    .text
                    .extend(word.nfkc().filter(|&c| !is_ignorable(c)).map(|c| {
                        if c == '\u{130}' {
                            'I'
                        } else {
                            c
                        }
                    })),
            }
            return true;
        }
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
        spans(text, false)
            .into_iter()
            .map(|s| &text[s.from..s.to])
            .collect()
    }

    fn tokens(mut words: Words, text: &str) -> Vec<(String, usize)> {
        let mut stream = words.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push((stream.token().text.clone(), stream.token().position));
        }
        out
    }

    fn texts(text: &str) -> Vec<String> {
        tokens(Words::query(), text)
            .into_iter()
            .map(|(t, _)| t)
            .collect()
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
        assert_eq!(texts("cafe\u{301}"), texts("caf\u{e9}"));
        assert_eq!(texts("Ｔｏｋｙｏ"), ["Tokyo"]);
        assert_eq!(texts("ｶﾀｶﾅ"), texts("カタカナ"));
        // Half-width kana with voiced marks, and kana with a combining one, are the
        // composed kana.
        assert_eq!(texts("ﾃﾞｰﾀ ｶﾞｲﾄﾞ"), texts("データ ガイド"));
        assert_eq!(texts("テ\u{3099}ータ"), texts("データ"));
    }

    #[test]
    fn a_page_gives_each_cjk_character_at_its_pairs_position() {
        let page = tokens(Words::index(), "東京都 猫");
        let expect = [
            ("東京", 0),
            ("東", 0),
            ("京都", 1),
            ("京", 1),
            ("都", 1),
            ("猫", 2),
        ];
        let expect: Vec<(String, usize)> = expect.iter().map(|&(t, p)| (t.into(), p)).collect();
        assert_eq!(page, expect);
        // A query's run is cut into pairs alone.
        assert_eq!(texts("東京都"), ["東京", "京都"]);
    }

    #[test]
    fn soft_hyphens_joiners_and_dotted_capital_i_are_folded_and_long_words_kept() {
        assert_eq!(
            texts("Bundes\u{AD}gesundheits\u{AD}ministerium"),
            ["Bundesgesundheitsministerium"]
        );
        assert_eq!(texts("می\u{200C}خواهم"), ["میخواهم"]);
        assert_eq!(texts("İstanbul"), texts("Istanbul"));
        assert_eq!(texts("достопримечательности").len(), 1);
        let long = "a".repeat(MAX_WORD_CHARS + 1);
        assert_eq!(texts(&format!("x {long} y")), ["x", "y"]);
        // The position of a word left out is kept: a phrase does not match across it.
        let positions: Vec<usize> = tokens(Words::query(), &format!("x {long} y"))
            .into_iter()
            .map(|(_, p)| p)
            .collect();
        assert_eq!(positions, [0, 2]);
    }
}
