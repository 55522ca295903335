//! Which shared crawl an output directory was written for: `.trawl-shared.json`, the crawl id
//! and when Redis's record of that crawl was created. A crawl whose state Redis lost (a restart
//! without its data) ends every worker with exit 9; a supervisor that starts the same command
//! lines again found Redis empty, created the crawl anew under the same id, and every page was
//! archived a second time into the same directories (found by an exploratory run: 309 pages
//! twice). A worker now refuses to write for a crawl of its id created at another time than
//! the one its directory was written for.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::whole_file::write_whole;

/// The mark's file name in the output directory.
const MARK: &str = ".trawl-shared.json";

#[derive(Debug, Serialize, Deserialize)]
struct Mark {
    crawl_id: String,
    created: String,
}

/// Why `out` may not be written for crawl `crawl_id` whose record was `created`: it was
/// written for a crawl of that id created at another time. `None` when it may.
pub fn written_for_another(out: &Path, crawl_id: &str, created: &str) -> Option<String> {
    let text = std::fs::read(out.join(MARK)).ok()?;
    let mark: Mark = serde_json::from_slice(&text).ok()?;
    (mark.crawl_id == crawl_id && !mark.created.is_empty() && mark.created != created).then(|| {
        format!(
            "{} was written for it as created at {}, but Redis's crawl of that id was created at {created}: it began again, and this worker would archive its pages a second time; or give another --out",
            out.display(),
            mark.created
        )
    })
}

/// Notes in `out` that it is written for crawl `crawl_id` created at `created` (a failure to
/// write it is no reason to stop: the check is a guard, not the crawl's state).
pub fn mark(out: &Path, crawl_id: &str, created: &str) {
    let mark = Mark {
        crawl_id: crawl_id.to_string(),
        created: created.to_string(),
    };
    if let Ok(json) = serde_json::to_vec_pretty(&mark) {
        let _ = write_whole(&out.join(MARK), &json);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_of_an_earlier_crawl_of_the_id_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(written_for_another(dir.path(), "c1", "T1"), None);
        mark(dir.path(), "c1", "T1");
        assert_eq!(written_for_another(dir.path(), "c1", "T1"), None);
        let refused = written_for_another(dir.path(), "c1", "T2").unwrap();
        assert!(
            refused.contains("created at T1") && refused.contains("T2"),
            "{refused}"
        );
        // Another crawl id in the directory is another matter (not this guard's).
        assert_eq!(written_for_another(dir.path(), "c2", "T2"), None);
    }
}
