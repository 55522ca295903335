//! The scope seeds a crawl adds as it runs (seeds read from a seeds file, the targets of a
//! seed's redirects), kept for the two that must learn them later: the other workers of a
//! shared crawl, and the next run of a crawl of its own, which reads its seeds file on from
//! where it stopped and so would not see them again. The saved ones go into the crawl state in
//! chunks, one per save point that had any, each URL once: only seeds that widened the scope
//! (a host, a domain or a `--no-parent` directory not in it before) are kept.

use url::Url;

/// Name of the `n`-th chunk of saved scope seeds in the crawl state.
pub fn chunk_name(n: u64) -> String {
    format!("scope.{n}")
}

/// Scope seeds added this run, for whoever must learn them.
#[derive(Debug, Default)]
pub(crate) struct ScopeSeeds {
    /// Every scope seed added, for the other workers of a shared crawl (`None`: not shared).
    shared: Option<Vec<String>>,
    /// The scope seeds that widened the scope since the last save point (`None`: not kept,
    /// the crawl is shared and Redis holds its scope).
    unsaved: Option<Vec<String>>,
    /// Chunks saved so far (crawl state).
    pub(crate) chunks: u64,
}

impl ScopeSeeds {
    /// Notes a scope seed; `widened` when it put something new in scope.
    pub(crate) fn added(&mut self, url: &Url, widened: bool) {
        if let Some(shared) = &mut self.shared {
            shared.push(url.to_string());
        }
        if let (true, Some(unsaved)) = (widened, &mut self.unsaved) {
            unsaved.push(url.to_string());
        }
    }

    /// From now on, keeps every scope seed for the other workers of a shared crawl.
    pub(crate) fn share(&mut self) {
        self.shared.get_or_insert_with(Vec::new);
    }

    /// The scope seeds added since the last call, for the other workers.
    pub(crate) fn take_shared(&mut self) -> Vec<String> {
        self.shared.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// From now on, keeps the scope seeds that widen the scope for the crawl state, after
    /// `chunks` chunks saved by earlier runs.
    pub(crate) fn keep(&mut self, chunks: u64) {
        self.unsaved.get_or_insert_with(Vec::new);
        self.chunks = chunks;
    }

    /// The next chunk to save (its name and JSON), when scope seeds were added since the last.
    pub(crate) fn next_chunk(&self) -> Option<(String, Vec<u8>)> {
        let unsaved = self.unsaved.as_ref().filter(|u| !u.is_empty())?;
        let json = serde_json::to_vec(unsaved).expect("strings serialize");
        Some((chunk_name(self.chunks), json))
    }

    /// The chunk [`Self::next_chunk`] gave is saved.
    pub(crate) fn chunk_saved(&mut self) {
        if let Some(unsaved) = &mut self.unsaved {
            unsaved.clear();
            self.chunks += 1;
        }
    }
}

/// The scope seeds of a saved chunk; an unreadable chunk is an error for the caller to report.
pub fn read_chunk(bytes: &[u8]) -> Result<Vec<String>, serde_json::Error> {
    serde_json::from_slice(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_seeds_that_widened_the_scope_are_saved_once() {
        let mut s = ScopeSeeds::default();
        let u = |s: &str| Url::parse(s).unwrap();
        s.added(&u("http://a.org/"), true);
        assert!(s.next_chunk().is_none(), "not kept before keep()");
        s.keep(3);
        s.added(&u("http://a.org/x"), false);
        assert!(s.next_chunk().is_none());
        s.added(&u("http://b.org/"), true);
        let (name, json) = s.next_chunk().unwrap();
        assert_eq!(name, "scope.3");
        assert_eq!(read_chunk(&json).unwrap(), ["http://b.org/"]);
        s.chunk_saved();
        assert!(s.next_chunk().is_none());
        assert_eq!(s.chunks, 4);
        assert!(s.take_shared().is_empty());
    }
}
