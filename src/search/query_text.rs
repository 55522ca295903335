//! A query as a reader types it, written in tantivy's syntax before it is parsed: marks that
//! are part of a word to a reader and syntax to tantivy are escaped, as web search engines
//! and Lucene's word-based parsers read them (found by an exploratory search: `don't`,
//! `O'Reilly` and `l'hôpital` were syntax errors, tantivy reading `'` as a quote, and `10:30`
//! or `Note: x` asked for fields that do not exist).
//!
//! - `'` between two letters or digits is the word's apostrophe (`don't` is the phrase
//!   `don t`, as the page's text is cut);
//! - `:` after a word that is no field of the index is text (`10:30`);
//! - the value of a field that holds whole values (`url:`, `host:`, `warc_file:`…) runs to
//!   the next space and is quoted, so that `url:http://a.org/x` needs no quotes.
//!
//! Quoted phrases and `[…]`/`{…}` ranges are left as written.

/// `query` with apostrophes and colons that are text escaped; `field` tells whether a word
/// names a field of the index, and `whole` whether that field holds whole values.
pub fn escape_text_marks(
    query: &str,
    field: impl Fn(&str) -> bool,
    whole: impl Fn(&str) -> bool,
) -> String {
    let chars: Vec<char> = query.chars().collect();
    let mut out = String::with_capacity(query.len() + 8);
    // Where the current word began in `out` (after a space, a bracket or an operator).
    let mut word_start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' | '[' | '{' => {
                let close = match c {
                    '"' => '"',
                    '[' => ']',
                    _ => '}',
                };
                let end = closing(&chars, i, close);
                out.extend(&chars[i..end]);
                i = end;
                word_start = out.len();
                continue;
            }
            '\\' if i + 1 < chars.len() => {
                out.push(c);
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            '\'' if between_word_chars(&chars, i) => out.push_str("\\'"),
            ':' => {
                let word = out[word_start..].trim_start_matches(['+', '-']);
                if !field(word) {
                    out.push_str("\\:");
                } else if whole(word) && chars.get(i + 1).is_some_and(|&n| is_value_start(n)) {
                    let end = (i + 1..chars.len())
                        .find(|&j| chars[j].is_whitespace() || chars[j] == ')')
                        .unwrap_or(chars.len());
                    out.push_str(":\"");
                    for &v in &chars[i + 1..end] {
                        if matches!(v, '"' | '\\') {
                            out.push('\\');
                        }
                        out.push(v);
                    }
                    out.push('"');
                    i = end;
                    word_start = out.len();
                    continue;
                } else {
                    out.push(':');
                }
            }
            _ => {
                out.push(c);
                if c.is_whitespace() || matches!(c, '(' | ')') {
                    word_start = out.len();
                }
            }
        }
        i += 1;
    }
    out
}

/// The index just past the `close` that ends what opens at `open` (or the query's end).
fn closing(chars: &[char], open: usize, close: char) -> usize {
    let mut j = open + 1;
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 1,
            c if c == close => return j + 1,
            _ => {}
        }
        j += 1;
    }
    chars.len()
}

/// Whether `chars[i]` stands between two letters or digits.
fn between_word_chars(chars: &[char], i: usize) -> bool {
    let word = |j: Option<usize>| {
        j.and_then(|j| chars.get(j))
            .is_some_and(|c| c.is_alphanumeric())
    };
    word(i.checked_sub(1)) && word(Some(i + 1))
}

/// Whether a field's value starting with `c` is a bare value to quote (not a phrase, a range
/// or a group, which tantivy reads itself).
fn is_value_start(c: char) -> bool {
    !(c.is_whitespace() || matches!(c, '"' | '[' | '{' | '(' | '*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(query: &str) -> String {
        let fields = ["title", "text", "url", "host", "date", "status"];
        escape_text_marks(
            query,
            |w| fields.contains(&w),
            |w| matches!(w, "url" | "host"),
        )
    }

    #[test]
    fn apostrophes_and_colons_of_words_are_text() {
        assert_eq!(escaped("don't panic"), "don\\'t panic");
        assert_eq!(escaped("l'hôpital O'Reilly"), "l\\'hôpital O\\'Reilly");
        assert_eq!(escaped("'quoted phrase'"), "'quoted phrase'");
        assert_eq!(escaped("10:30 Note: x"), "10\\:30 Note\\: x");
        assert_eq!(
            escaped("title:news +text:rain -title:x"),
            "title:news +text:rain -title:x"
        );
        assert_eq!(
            escaped("url:http://a.org/x?q=1 rain"),
            "url:\"http://a.org/x?q=1\" rain"
        );
        assert_eq!(
            escaped("(host:a.org OR host:b.org)"),
            "(host:\"a.org\" OR host:\"b.org\")"
        );
        assert_eq!(escaped("url:\"http://a.org/\""), "url:\"http://a.org/\"");
        assert_eq!(
            escaped("date:[2026-11-01T00:00:00Z TO *] \"it's 10:30\""),
            "date:[2026-11-01T00:00:00Z TO *] \"it's 10:30\""
        );
        assert_eq!(escaped("a\\:b"), "a\\:b");
    }
}
