//! The console's search box: `GET /api/search?q=QUERY[&limit=N]` over the crawl's
//! `--search-index`, which the crawl fills as each WARC file closes. The index is opened on
//! the first search (it may not exist when the console starts) and sees each new commit;
//! queries run off the async workers, two at a time, with a small limit on hits.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

use crate::search::{SearchError, SearchReader};

/// Most hits a console search returns.
const MAX_HITS: usize = 50;
/// Searches running at once.
const AT_ONCE: usize = 2;

/// The search index the console answers from.
pub struct SearchBox {
    dir: PathBuf,
    reader: Mutex<Option<Arc<SearchReader>>>,
    slots: Semaphore,
}

impl std::fmt::Debug for SearchBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchBox").field("dir", &self.dir).finish()
    }
}

/// An answer: HTTP status and JSON body.
pub type Answer = (u16, serde_json::Value);

impl SearchBox {
    /// A box over the index in `dir`.
    pub fn new(dir: PathBuf) -> Self {
        SearchBox {
            dir,
            reader: Mutex::new(None),
            slots: Semaphore::new(AT_ONCE),
        }
    }

    /// The reader, opened on first use.
    fn reader(&self) -> Result<Arc<SearchReader>, SearchError> {
        let mut slot = self.reader.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = slot.as_ref() {
            return Ok(r.clone());
        }
        let reader = Arc::new(SearchReader::open(&self.dir)?);
        *slot = Some(reader.clone());
        Ok(reader)
    }

    /// Answers the URI query string of a search request.
    pub async fn answer(self: &Arc<Self>, query_string: Option<&str>) -> Answer {
        let mut query = None;
        let mut limit = 10;
        for (k, v) in url::form_urlencoded::parse(query_string.unwrap_or("").as_bytes()) {
            match k.as_ref() {
                "q" => query = Some(v.into_owned()),
                "limit" => limit = v.parse().unwrap_or(10),
                _ => {}
            }
        }
        let Some(query) = query.filter(|q| !q.trim().is_empty()) else {
            return refusal(400, "give the query as ?q=");
        };
        let Ok(_slot) = self.slots.acquire().await else {
            return refusal(503, "the console is closing");
        };
        let this = self.clone();
        let limit = limit.clamp(1, MAX_HITS);
        let found = tokio::task::spawn_blocking(move || {
            let reader = this.reader()?;
            let results = reader.search(&query, limit)?;
            Ok::<_, SearchError>((results, reader.pages()))
        })
        .await;
        match found {
            Ok(Ok((results, pages))) => (
                200,
                serde_json::json!({"ok": true, "pages": pages, "total": results.total, "hits": results.hits}),
            ),
            Ok(Err(e @ SearchError::Query(_))) => refusal(400, &e.to_string()),
            Ok(Err(SearchError::Missing { .. })) => refusal(
                503,
                "nothing indexed yet: pages are indexed as each WARC file closes",
            ),
            Ok(Err(e)) => refusal(500, &e.to_string()),
            Err(_) => refusal(500, "the search failed"),
        }
    }
}

fn refusal(status: u16, why: &str) -> Answer {
    (status, serde_json::json!({"ok": false, "error": why}))
}
