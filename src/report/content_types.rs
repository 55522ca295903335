//! The archived responses counted by the media type their server declared, with the bytes
//! received for them: what a crawl brought home, as Heritrix's mimetype report tells it. A
//! hostile web can send any number of made-up types, so the table is bounded.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Most distinct types kept; responses of further types count under [`OTHER`].
pub const MAX_TYPES: usize = 100;
/// The key of responses without a Content-Type.
pub const NONE: &str = "none";
/// The key of responses whose type is not a `type/subtype` token pair (or is over 100 bytes).
pub const INVALID: &str = "invalid";
/// The key of responses of types past [`MAX_TYPES`].
pub const OTHER: &str = "other";

/// Responses and bytes of one type.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeCount {
    /// Responses archived.
    pub responses: u64,
    /// Bytes received for them (heads and bodies as they came).
    pub bytes: u64,
}

/// Archived responses by declared media type (lower-case, without parameters).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ContentTypes(BTreeMap<String, TypeCount>);

impl ContentTypes {
    /// Counts one archived response of `media` type (`None`: no Content-Type) and `bytes`.
    pub fn count(&mut self, media: Option<&str>, bytes: u64) {
        let key = match media {
            None => NONE,
            Some(m) if !is_media_type(m) => INVALID,
            Some(m) if self.0.len() >= MAX_TYPES && !self.0.contains_key(m) => OTHER,
            Some(m) => m,
        };
        let entry = match self.0.get_mut(key) {
            Some(entry) => entry,
            None => self.0.entry(key.to_string()).or_default(),
        };
        entry.responses += 1;
        entry.bytes += bytes;
    }

    /// All types, by name.
    #[cfg(test)]
    pub fn all(&self) -> &BTreeMap<String, TypeCount> {
        &self.0
    }

    /// The `n` types with the most responses (ties by name), and how many types there are.
    pub fn top(&self, n: usize) -> (Vec<(&str, TypeCount)>, usize) {
        let mut all: Vec<(&str, TypeCount)> =
            self.0.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        all.sort_by(|a, b| b.1.responses.cmp(&a.1.responses).then(a.0.cmp(b.0)));
        let total = all.len();
        all.truncate(n);
        (all, total)
    }
}

/// True for `type/subtype` made of RFC 9110 token characters, at most 100 bytes.
fn is_media_type(m: &str) -> bool {
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    m.len() <= 100 && m.split_once('/').is_some_and(|(t, s)| token(t) && token(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_counted_with_their_bytes_and_bounded() {
        let mut t = ContentTypes::default();
        t.count(Some("text/html"), 100);
        t.count(Some("text/html"), 50);
        t.count(None, 7);
        t.count(Some("text html"), 1);
        t.count(Some(&format!("text/{}", "x".repeat(200))), 1);
        let html = TypeCount {
            responses: 2,
            bytes: 150,
        };
        assert_eq!(t.all()["text/html"], html);
        assert_eq!(t.all()[NONE].bytes, 7);
        assert_eq!(t.all()[INVALID].responses, 2);
        for i in 0..MAX_TYPES * 2 {
            t.count(Some(&format!("application/x-made-up-{i}")), 1);
        }
        assert_eq!(t.all().len(), MAX_TYPES + 1);
        assert_eq!(t.all()[OTHER].responses, MAX_TYPES as u64 + 3);
        // A type already counted keeps its own row.
        t.count(Some("text/html"), 1);
        assert_eq!(t.all()["text/html"].responses, 3);
        let (top, total) = t.top(2);
        assert_eq!(total, MAX_TYPES + 1);
        assert_eq!(top[0].0, OTHER);
        assert_eq!(
            top[1],
            (
                "text/html",
                TypeCount {
                    responses: 3,
                    bytes: 151
                }
            )
        );
    }
}
