//! Searching the index: tantivy's query syntax over title and text (terms, "phrases",
//! field:term, AND/OR/NOT, +/-), every term required unless OR says otherwise (as web search
//! engines do; Lucene's default is any term), title matches weighted double. Each hit carries
//! what leads to its record (WARC file and offset) and a snippet of the text with the matched
//! words marked.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use serde::Serialize;
use tantivy::collector::{Count, TopDocs};
use tantivy::directory::MmapDirectory;
use tantivy::query::QueryParser;
use tantivy::schema::{FieldType, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument};

use super::query_text::escape_text_marks;
use super::schema::Fields;
use super::SearchError;

/// Most hits asked for at once.
pub const MAX_LIMIT: usize = 10_000;
/// Characters of text in a snippet.
const SNIPPET_CHARS: usize = 200;
/// Longest query taken.
const MAX_QUERY: usize = 4096;

/// One hit.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// Relevance (BM25).
    pub score: f32,
    /// The page's URL.
    pub url: String,
    /// Its title.
    pub title: Option<String>,
    /// When it was captured (RFC 3339).
    pub date: String,
    /// HTTP status.
    pub status: u64,
    /// Language identified.
    pub language: Option<String>,
    /// WARC-Payload-Digest.
    pub digest: Option<String>,
    /// The WARC file holding the response record.
    pub warc_file: String,
    /// The record's offset in that file.
    pub offset: u64,
    /// Text around the matches.
    pub snippet: String,
    /// Byte ranges of `snippet` that matched.
    pub highlights: Vec<(usize, usize)>,
}

impl Hit {
    /// The snippet with matched words between `open` and `close`.
    pub fn marked_snippet(&self, open: &str, close: &str) -> String {
        let mut out = String::with_capacity(self.snippet.len() + 8 * self.highlights.len());
        let mut at = 0;
        for &(start, end) in &self.highlights {
            if start < at || end > self.snippet.len() {
                continue;
            }
            out.push_str(&self.snippet[at..start]);
            out.push_str(open);
            out.push_str(&self.snippet[start..end]);
            out.push_str(close);
            at = end;
        }
        out.push_str(&self.snippet[at..]);
        out
    }
}

/// What a search found.
#[derive(Debug, Clone, Serialize)]
pub struct Results {
    /// Documents matching, in all.
    pub total: usize,
    /// The best of them, best first.
    pub hits: Vec<Hit>,
}

/// An index opened for searching; it sees new commits (a crawl indexing as it goes).
pub struct SearchReader {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    dir: PathBuf,
}

impl SearchReader {
    /// Opens the index in `dir`.
    pub fn open(dir: &Path) -> Result<SearchReader, SearchError> {
        if !dir.join("meta.json").exists() {
            return Err(SearchError::Missing {
                dir: dir.to_path_buf(),
            });
        }
        let tantivy = |source| SearchError::Tantivy {
            dir: dir.to_path_buf(),
            source,
        };
        let directory = MmapDirectory::open(dir).map_err(|e| tantivy(e.into()))?;
        let index = Index::open(directory).map_err(tantivy)?;
        super::words::register(&index);
        let fields = Fields::of(&index.schema()).ok_or_else(|| SearchError::NotAnIndex {
            dir: dir.to_path_buf(),
        })?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::OnCommitWithDelay)
            .try_into()
            .map_err(tantivy)?;
        Ok(SearchReader {
            index,
            reader,
            fields,
            dir: dir.to_path_buf(),
        })
    }

    /// Pages in the index.
    pub fn pages(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// The best `limit` hits of `query`.
    pub fn search(&self, query: &str, limit: usize) -> Result<Results, SearchError> {
        if query.len() > MAX_QUERY {
            return Err(SearchError::Query(format!(
                "the query is longer than {MAX_QUERY} bytes"
            )));
        }
        let f = self.fields;
        let schema = self.index.schema();
        let mut parser = QueryParser::new(
            schema.clone(),
            vec![f.title, f.text],
            super::words::query_tokenizers(),
        );
        parser.set_conjunction_by_default();
        parser.set_field_boost(f.title, 2.0);
        let whole = |name: &str| {
            let entry = schema.get_field(name).map(|f| schema.get_field_entry(f));
            entry.is_ok_and(|e| match e.field_type() {
                FieldType::Str(o) => o
                    .get_indexing_options()
                    .is_some_and(|i| i.tokenizer() == "raw"),
                _ => false,
            })
        };
        let written = escape_text_marks(query, |name| schema.get_field(name).is_ok(), whole);
        let query = parser
            .parse_query(&written)
            .map_err(|e| SearchError::Query(e.to_string()))?;
        let searcher = self.reader.searcher();
        let tantivy = |source| SearchError::Tantivy {
            dir: self.dir.clone(),
            source,
        };
        let limit = limit.clamp(1, MAX_LIMIT);
        let (top, total) = searcher
            .search(
                &query,
                &(TopDocs::with_limit(limit).order_by_score(), Count),
            )
            .map_err(tantivy)?;
        let mut snippets = SnippetGenerator::create(&searcher, &*query, f.text).map_err(tantivy)?;
        snippets.set_max_num_chars(SNIPPET_CHARS);
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address).map_err(tantivy)?;
            let text = |field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            let number = |field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
            // tantivy counts a snippet's length in bytes: as many characters in every script
            // (the text's bytes per character, from its start; the text is borrowed, not
            // copied, for each hit).
            let body = doc.get_first(f.text).and_then(|v| v.as_str()).unwrap_or("");
            snippets.set_max_num_chars(SNIPPET_CHARS * bytes_per_char(body));
            let snippet = snippets.snippet_from_doc(&doc);
            let (snippet, highlights) = if snippet.fragment().is_empty() {
                (lead(body), Vec::new())
            } else {
                let ranges = snippet.highlighted().iter().map(|r| (r.start, r.end));
                (snippet.fragment().to_string(), merged(ranges))
            };
            let secs = doc
                .get_first(f.date)
                .and_then(|v| v.as_datetime())
                .map_or(0, |d| d.into_timestamp_secs());
            let date = UNIX_EPOCH + Duration::from_secs(secs.max(0) as u64);
            hits.push(Hit {
                score,
                url: text(f.url).unwrap_or_default(),
                title: text(f.title),
                date: humantime::format_rfc3339_seconds(date).to_string(),
                status: number(f.status),
                language: text(f.language),
                digest: text(f.digest),
                warc_file: text(f.warc_file).unwrap_or_default(),
                offset: number(f.offset),
                snippet,
                highlights,
            });
        }
        Ok(Results { total, hits })
    }
}

/// The mean bytes per character of the first 1,000 characters of `text` (at least 1).
fn bytes_per_char(text: &str) -> usize {
    let sample = text.chars().take(1000);
    let (chars, bytes) = sample.fold((0, 0), |(n, b), c| (n + 1, b + c.len_utf8()));
    (bytes / chars.max(1)).max(1)
}

/// Highlight ranges in order, those that overlap or touch made one (a CJK word's pairs,
/// `東京` and `京都` of `東京都`, overlap: the second was left unmarked).
fn merged(ranges: impl Iterator<Item = (usize, usize)>) -> Vec<(usize, usize)> {
    let mut sorted: Vec<(usize, usize)> = ranges.collect();
    sorted.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(sorted.len());
    for (start, end) in sorted {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

/// The first words of a text, for a hit that matched in its title only.
fn lead(text: &str) -> String {
    if text.chars().count() <= SNIPPET_CHARS {
        return text.to_string();
    }
    let cut: String = text.chars().take(SNIPPET_CHARS).collect();
    match cut.rfind(' ') {
        Some(space) => format!("{}…", &cut[..space]),
        None => format!("{cut}…"),
    }
}
