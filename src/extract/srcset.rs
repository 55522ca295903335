//! The URLs of a `srcset` (or `imagesrcset`) attribute, split as the HTML standard's "parse a
//! srcset attribute" splits it.
//!
//! A candidate's URL runs to the next whitespace, so commas inside it stay (`a,1.png 2x`, and a
//! `data:image/png;base64,...` placeholder, which splitting at every comma would turn into a
//! relative URL); commas ending a URL end the candidate; otherwise its descriptors run to the
//! next comma outside parentheses.

/// The candidate URLs of `srcset`, in order; empty ones are skipped.
pub fn srcset_urls(srcset: &str) -> impl Iterator<Item = &str> {
    let mut rest = srcset;
    std::iter::from_fn(move || loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || is_space(c));
        if rest.is_empty() {
            return None;
        }
        let url_end = rest.find(is_space).unwrap_or(rest.len());
        let (raw_url, after) = rest.split_at(url_end);
        let url = raw_url.trim_end_matches(',');
        rest = if url.len() < raw_url.len() {
            after
        } else {
            &after[descriptors_end(after)..]
        };
        if !url.is_empty() {
            return Some(url);
        }
    })
}

/// Where a candidate's descriptors end: at the first comma outside parentheses, or at the end.
fn descriptors_end(s: &str) -> usize {
    let mut in_parens = false;
    for (i, c) in s.char_indices() {
        match c {
            '(' => in_parens = true,
            ')' => in_parens = false,
            ',' if !in_parens => return i,
            _ => {}
        }
    }
    s.len()
}

/// ASCII whitespace as the HTML standard defines it.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0C' | '\r')
}

#[cfg(test)]
mod tests {
    use super::srcset_urls;

    fn urls(s: &str) -> Vec<&str> {
        srcset_urls(s).collect()
    }

    #[test]
    fn candidates_with_and_without_descriptors() {
        assert_eq!(urls("a.png 1x, b.png 2x"), ["a.png", "b.png"]);
        assert_eq!(urls("a.png"), ["a.png"]);
        assert_eq!(
            urls("  a.png, b.png 200w ,c.png"),
            ["a.png", "b.png", "c.png"]
        );
        assert_eq!(urls("a.png 100w,\n\tb.png 200w"), ["a.png", "b.png"]);
    }

    #[test]
    fn commas_inside_a_url_stay() {
        assert_eq!(
            urls("/img/a,1.png 100w, /c2.png 200w"),
            ["/img/a,1.png", "/c2.png"]
        );
        // No whitespace after the comma: one URL, as the standard reads it.
        assert_eq!(urls("a.png,b.png"), ["a.png,b.png"]);
        assert_eq!(
            urls("data:image/gif;base64,R0lGODlhAQABAAAAACw= 1x, real.png 2x"),
            ["data:image/gif;base64,R0lGODlhAQABAAAAACw=", "real.png"]
        );
    }

    #[test]
    fn trailing_commas_end_a_candidate() {
        assert_eq!(urls("a.png,, b.png"), ["a.png", "b.png"]);
        assert_eq!(urls(",,,"), Vec::<&str>::new());
        assert_eq!(urls(""), Vec::<&str>::new());
    }

    #[test]
    fn a_comma_in_parentheses_does_not_end_descriptors() {
        assert_eq!(urls("a.png future(1, 2), b.png 2x"), ["a.png", "b.png"]);
    }
}
