//! `trawl search-index` and `trawl search`: the full-text index of WARC files, written and
//! queried from the command line.

use std::io::Write;

use super::archive_commands::warc_inputs;
use crate::cli::{SearchArgs, SearchIndexArgs};
use crate::exit::ExitCode;
use crate::search::{Results, SearchError, SearchIndexer, SearchReader, WriterBudget};

/// The exit code for an error of the index.
fn code_of(e: &SearchError) -> ExitCode {
    match e {
        SearchError::Locked { .. } => ExitCode::Locked,
        SearchError::NotAnIndex { .. } | SearchError::Missing { .. } | SearchError::Query(_) => {
            ExitCode::BadArguments
        }
        SearchError::Io { .. } | SearchError::Tantivy { .. } => ExitCode::OutputError,
    }
}

pub(super) fn run_search_index(args: SearchIndexArgs) -> ExitCode {
    let files = match warc_inputs(&args.warcs) {
        Ok(files) => files,
        Err(code) => return code,
    };
    let mut indexer = match SearchIndexer::open(&args.output, WriterBudget::COMMAND) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("trawl: error: {e}");
            return code_of(&e);
        }
    };
    let (mut pages, mut indexed, mut already, mut damaged, mut revisits) = (0, 0, 0, 0, 0);
    let mut dirty = false;
    // A file not read whole (unreadable, not a WARC, damaged) exits 2 once the others are
    // indexed, as `trawl index` and `derive` do: before, a warning and exit 0 (cron saw none).
    let mut faulty = false;
    for file in &files {
        match indexer.add_file(file) {
            Ok(o) if o.already => already += 1,
            Ok(o) => {
                indexed += 1;
                pages += o.pages;
                damaged += o.damaged;
                if let Some((offset, error)) = &o.first_damage {
                    faulty = true;
                    eprintln!(
                        "trawl: warning: {}: {} damaged record(s) skipped, the first at offset {offset}: {error}",
                        file.display(),
                        o.damaged
                    );
                }
                revisits += o.revisits;
                dirty = true;
                if indexer.uncommitted() >= args.commit_every {
                    if let Err(e) = indexer.commit() {
                        eprintln!("trawl: error: {e}");
                        return code_of(&e);
                    }
                    dirty = false;
                }
            }
            Err(e @ SearchError::Io { .. }) => {
                // One unreadable file does not stop the others; it is indexed next time.
                eprintln!("trawl: warning: {e}");
                faulty = true;
            }
            Err(e) => {
                eprintln!("trawl: error: {e}");
                return code_of(&e);
            }
        }
    }
    if dirty {
        if let Err(e) = indexer.commit() {
            eprintln!("trawl: error: {e}");
            return code_of(&e);
        }
    }
    eprintln!(
        "trawl: indexed {pages} page(s) from {indexed} WARC file(s) into {} ({already} indexed before, {revisits} revisit(s) point to their original, {damaged} damaged record(s) skipped; {} file(s) in the index)",
        args.output.display(),
        indexer.files()
    );
    match faulty {
        true => ExitCode::BadArguments,
        false => ExitCode::Success,
    }
}

pub(super) fn run_search(args: SearchArgs) -> ExitCode {
    let results = SearchReader::open(&args.index)
        .and_then(|reader| reader.search(&args.query, args.limit as usize));
    let results = match results {
        Ok(r) => r,
        Err(e) => {
            eprintln!("trawl: error: {e}");
            return code_of(&e);
        }
    };
    let out = if args.json {
        serde_json::to_string_pretty(&results).map(|j| j + "\n")
    } else {
        Ok(render(&results))
    };
    let written = out
        .map_err(std::io::Error::other)
        .and_then(|text| std::io::stdout().lock().write_all(text.as_bytes()));
    match written {
        Ok(()) => ExitCode::Success,
        // A closed pipe (`| head`) is not an error of the search.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::Success,
        Err(e) => {
            eprintln!("trawl: error: {e}");
            ExitCode::OutputError
        }
    }
}

/// Archived text as a terminal shows it: control characters (an escape sequence in a page's
/// title could set the terminal's title or clear it) and line ends as spaces.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Hits as text: rank, title, URL; capture date, status and record; the snippet with the
/// matched words in [brackets].
fn render(results: &Results) -> String {
    let mut out = format!(
        "{} hit(s){}\n",
        results.total,
        if results.total > results.hits.len() {
            format!(", best {} shown", results.hits.len())
        } else {
            String::new()
        }
    );
    for (i, hit) in results.hits.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {}\n   {}\n   {}  status {}  {} @ {}\n",
            i + 1,
            printable(hit.title.as_deref().unwrap_or("(no title)")),
            printable(&hit.url),
            hit.date,
            hit.status,
            printable(&hit.warc_file),
            hit.offset
        ));
        let snippet = printable(&hit.marked_snippet("[", "]"));
        if !snippet.is_empty() {
            out.push_str(&format!("   {snippet}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Hit;

    #[test]
    fn archived_control_characters_do_not_reach_the_terminal() {
        let hit = Hit {
            score: 1.0,
            url: "http://a.org/\u{1b}[2J".into(),
            title: Some("\u{1b}]0;pwned\u{7}News".into()),
            date: "2026-11-29T00:00:00Z".into(),
            status: 200,
            language: None,
            digest: None,
            warc_file: "a.warc.gz".into(),
            offset: 0,
            snippet: "rain\u{1b}[31m falls\u{9b}".into(),
            highlights: vec![(0, 4)],
        };
        let shown = render(&Results {
            total: 1,
            hits: vec![hit],
        });
        assert!(
            !shown.chars().any(|c| c.is_control() && c != '\n'),
            "{shown:?}"
        );
        assert!(shown.contains("[rain]"), "{shown}");
    }
}
