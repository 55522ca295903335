//! What the seeds a crawl has read leave in its ledger, kept for the two that must learn it
//! later: the other workers of a shared crawl (the scope seeds), and the next run of a crawl of
//! its own, which reads its seeds file on from where it stopped and so would not see those
//! seeds again. That run needs the scope they made (their hosts or domains, their `--no-parent`
//! directories, the targets of their redirects) and the https-to-http fallback of the bare-host
//! seeds whose origin was not reached yet. The journal goes into the crawl state in chunks, one
//! per save point that had anything new (`seeds.N`), and is read back in order.

use serde::{Deserialize, Serialize};
use url::Url;

/// Name of the `n`-th saved chunk in the crawl state.
pub fn chunk_name(n: u64) -> String {
    format!("seeds.{n}")
}

/// One thing a seed left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Entry {
    /// A scope seed that widened the scope (a host, domain or directory new to it).
    Scope(String),
    /// A bare-host seed (its https URL): scope, and http to fall back to.
    Fallback(String),
    /// The https origin of a bare-host seed was reached, or fell back: its fallback is done.
    Reached(String),
    /// A socket address the SSRF guard allows: an IP-literal seed moved to this port of its
    /// address.
    Allowed(String),
}

/// The journal of this run, and the scope seeds for a shared crawl's other workers.
#[derive(Debug, Default)]
pub(crate) struct SeedJournal {
    /// Every scope seed added, for the other workers of a shared crawl (`None`: not shared).
    shared: Option<Vec<String>>,
    /// Entries since the last save point (`None`: not kept; a shared crawl's scope is in
    /// Redis).
    unsaved: Option<Vec<Entry>>,
    /// Chunks saved so far (crawl state).
    pub(crate) chunks: u64,
}

impl SeedJournal {
    /// Notes a scope seed; `widened` when it put something new in scope, `fallback` for a
    /// bare-host seed.
    pub(crate) fn scope_seed(&mut self, url: &Url, widened: bool, fallback: bool) {
        if let Some(shared) = &mut self.shared {
            shared.push(url.to_string());
        }
        let entry = match (fallback, widened) {
            (true, _) => Entry::Fallback(url.to_string()),
            (false, true) => Entry::Scope(url.to_string()),
            (false, false) => return,
        };
        if let Some(unsaved) = &mut self.unsaved {
            unsaved.push(entry);
        }
    }

    /// Notes that the SSRF guard allows `addr`, where an IP-literal seed moved.
    pub(crate) fn allowed(&mut self, addr: std::net::SocketAddr) {
        if let Some(unsaved) = &mut self.unsaved {
            unsaved.push(Entry::Allowed(addr.to_string()));
        }
    }

    /// Notes that a bare-host seed's https `origin` needs no fallback any more.
    pub(crate) fn reached(&mut self, origin: &str) {
        if let Some(unsaved) = &mut self.unsaved {
            unsaved.push(Entry::Reached(origin.to_string()));
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

    /// From now on, keeps entries for the crawl state, after `chunks` chunks saved by earlier
    /// runs.
    pub(crate) fn keep(&mut self, chunks: u64) {
        self.unsaved.get_or_insert_with(Vec::new);
        self.chunks = chunks;
    }

    /// The next chunk to save (its name and JSON), when there are entries since the last.
    pub(crate) fn next_chunk(&self) -> Option<(String, Vec<u8>)> {
        let unsaved = self.unsaved.as_ref().filter(|u| !u.is_empty())?;
        let json = serde_json::to_vec(unsaved).expect("plain data serializes");
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

/// The entries of a saved chunk.
pub fn read_chunk(bytes: &[u8]) -> Result<Vec<Entry>, serde_json::Error> {
    serde_json::from_slice(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_a_resumed_run_needs_is_kept_in_order() {
        let mut j = SeedJournal::default();
        let u = |s: &str| Url::parse(s).unwrap();
        j.scope_seed(&u("http://a.org/"), true, false);
        assert!(j.next_chunk().is_none(), "not kept before keep()");
        j.keep(3);
        j.scope_seed(&u("http://a.org/x"), false, false);
        assert!(j.next_chunk().is_none(), "the scope did not change");
        j.scope_seed(&u("http://b.org/"), true, false);
        j.scope_seed(&u("https://c.org/"), false, true);
        j.reached("https://c.org");
        j.allowed("127.0.0.2:8443".parse().unwrap());
        let (name, json) = j.next_chunk().unwrap();
        assert_eq!(name, "seeds.3");
        assert_eq!(
            read_chunk(&json).unwrap(),
            [
                Entry::Scope("http://b.org/".into()),
                Entry::Fallback("https://c.org/".into()),
                Entry::Reached("https://c.org".into()),
                Entry::Allowed("127.0.0.2:8443".into()),
            ]
        );
        j.chunk_saved();
        assert!(j.next_chunk().is_none());
        assert_eq!(j.chunks, 4);
        assert!(j.take_shared().is_empty());
    }
}
