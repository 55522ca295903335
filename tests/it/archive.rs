//! Archive-grade output: revisit records, CDXJ equal to cdxj-indexer's, WACZ valid for py-wacz,
//! metadata records, and replay of every page through pywb.

use std::path::Path;

use crate::args;
use crate::harness::{python, read_json, read_records, run_script, text, trawl, Rec};
use crate::server::{Host, Route, Web};

const PAGE_A: &str = "<html><body><h1>A</h1><p>the same body twice</p></body></html>";

async fn archive_site() -> (Web, Host) {
    let web = Web::default();
    let h = web.host("127.0.0.18").await;
    h.route(
        "/",
        Route::html(r#"<a href="/a">a</a><a href="/a-copy">copy</a><a href="/b">b</a><a href="/redirect">r</a><a href="/gz">gz</a><a href="/chunked">c</a>"#),
    );
    h.route("/a", Route::html(PAGE_A));
    h.route("/a-copy", Route::html(PAGE_A));
    h.route("/b", Route::html("<p>b, the redirect target</p>"));
    h.route("/redirect", Route::redirect(301, "/b"));
    h.route("/gz", Route::html("<p>gzip-encoded page</p>").gzip());
    h.route(
        "/chunked",
        Route::html(&"<p>chunked page</p>".repeat(10)).chunked(),
    );
    (web, h)
}

fn venv_bin(name: &str) -> std::path::PathBuf {
    python().parent().unwrap().join(name)
}

async fn run(cmd: std::path::PathBuf, args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(cmd).args(args).output().unwrap()
    })
    .await
    .unwrap()
}

fn by_type<'a>(records: &'a [Rec], t: &str) -> Vec<&'a Rec> {
    records.iter().filter(|r| r.warc_type == t).collect()
}

fn warc_header(rec_dir: &Path, id: &str, name: &str) -> Option<String> {
    for file in crate::harness::warc_files(rec_dir) {
        for record in trawl::warc::reader::read_records(&file).unwrap() {
            if record.header("WARC-Record-ID") == Some(id) {
                return record.header(name).map(str::to_string);
            }
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dedup_index_wacz_metadata_and_replay() {
    let (_web, h) = archive_site().await;
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("crawl1");
    let stats = out.path().join("s1.json");
    let result = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        dir.display(),
        "--stats",
        stats.display(),
        "--dedup",
        "--cdxj",
        "--metadata-records",
        "--delay",
        "0ms",
        "--concurrency",
        1,
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(&dir);

    // The copy is a revisit of /a; everything else is stored in full.
    let revisits = by_type(&records, "revisit");
    assert_eq!(revisits.len(), 1, "{revisits:?}");
    assert_eq!(revisits[0].path(), "/a-copy");
    assert_eq!(
        warc_header(&dir, &revisits[0].id, "WARC-Refers-To-Target-URI").as_deref(),
        Some(h.url("/a").as_str())
    );
    let original = by_type(&records, "response")
        .into_iter()
        .find(|r| r.path() == "/a")
        .unwrap();
    assert_eq!(
        warc_header(&dir, &revisits[0].id, "WARC-Refers-To").as_deref(),
        Some(original.id.as_str())
    );
    let s = read_json(&stats);
    assert_eq!(s["revisits"], 1);
    assert!(s["bytes_saved"].as_u64().unwrap() >= PAGE_A.len() as u64);

    // One metadata record per page, linked to its capture, listing outlinks.
    let metadata = by_type(&records, "metadata");
    assert_eq!(metadata.len(), 6, "pages: / a a-copy b gz chunked");
    let home = metadata.iter().find(|m| m.path() == "/").unwrap();
    let home_capture = records
        .iter()
        .find(|r| r.warc_type == "response" && r.path() == "/")
        .unwrap();
    assert_eq!(
        home.concurrent_to.as_deref(),
        Some(home_capture.id.as_str())
    );
    let body = String::from_utf8_lossy(&home.block);
    assert!(
        body.contains(&format!("outlink: {}\r\n", h.url("/a-copy"))),
        "{body}"
    );
    assert!(
        body.contains("hopsFromSeed: 0\r\n") && body.contains("fetchTimeMs: "),
        "{body}"
    );

    // Valid for strict readers.
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));

    // The crawl's CDXJ, trawl index and cdxj-indexer agree line for line.
    let ours = std::fs::read_to_string(dir.join("index.cdxj")).unwrap();
    let warcs: Vec<String> = crate::harness::warc_files(&dir)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut indexer_args = vec!["-s".to_string()];
    indexer_args.extend(warcs.clone());
    let theirs = run(venv_bin("cdxj-indexer"), indexer_args).await;
    assert!(theirs.status.success(), "{}", text(&theirs));
    assert_eq!(
        ours,
        String::from_utf8_lossy(&theirs.stdout),
        "CDXJ differs from cdxj-indexer"
    );
    let index_cmd = trawl(args!["index", dir.display()]).await;
    assert_eq!(String::from_utf8_lossy(&index_cmd.stdout), ours);
    assert!(ours.contains("\"mime\": \"warc/revisit\""));

    // WACZ validates with py-wacz.
    let wacz = out.path().join("crawl.wacz");
    let packed = trawl(args![
        "wacz",
        wacz.display(),
        dir.display(),
        "--title",
        "archive test"
    ])
    .await;
    assert_eq!(packed.status.code(), Some(0), "{}", text(&packed));
    let valid = run(venv_bin("wacz"), args!["validate", "-f", wacz.display()]).await;
    assert!(
        String::from_utf8_lossy(&valid.stdout).contains("Validation succeeded"),
        "{}",
        text(&valid)
    );

    // Every page replays with its original body through pywb (the revisit resolves to /a's
    // payload), and the redirect replays as a redirect.
    let mut manifest = Vec::new();
    for (path, body) in [
        ("/a", PAGE_A.to_string()),
        ("/a-copy", PAGE_A.to_string()),
        ("/b", "<p>b, the redirect target</p>".to_string()),
        ("/gz", "<p>gzip-encoded page</p>".to_string()),
        ("/chunked", "<p>chunked page</p>".repeat(10)),
    ] {
        let file = out.path().join(format!("expect{}", path.replace('/', "_")));
        std::fs::write(&file, body).unwrap();
        manifest.push(serde_json::json!({"url": h.url(path), "expect": file}));
    }
    manifest.push(serde_json::json!({"url": h.url("/redirect"), "expect_location": h.url("/b")}));
    let manifest_path = out.path().join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let replay = run_script(
        "pywb_replay.py",
        args![
            "--warcs",
            dir.display(),
            "--manifest",
            manifest_path.display()
        ],
    )
    .await;
    assert!(replay.status.success(), "{}", text(&replay));

    // A second crawl deduplicated against the first crawl's index stores no page body again.
    let dir2 = out.path().join("crawl2");
    let stats2 = out.path().join("s2.json");
    let again = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        dir2.display(),
        "--stats",
        stats2.display(),
        "--dedup-index",
        dir.join("index.cdxj").display(),
        "--delay",
        "0ms",
        "-q"
    ])
    .await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let records2 = read_records(&dir2);
    let full_pages: Vec<String> = by_type(&records2, "response")
        .into_iter()
        .filter(|r| r.status() == Some(200) && r.path() != "/robots.txt")
        .map(|r| r.path())
        .collect();
    assert!(full_pages.is_empty(), "pages stored again: {full_pages:?}");
    assert_eq!(read_json(&stats2)["revisits"], 6);
    let check2 = run_script("warc_check.py", args![dir2.display()]).await;
    assert!(check2.status.success(), "{}", text(&check2));
}

/// `--warc-header` (wget's flag): fields added to the warcinfo record of every file, or put in
/// place of trawl's own; the files stay valid for warcio.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warc_headers_go_into_every_warcinfo_record() {
    let web = Web::default();
    let h = web.host("127.0.0.89").await;
    h.route("/", Route::html(r#"<a href="/a">a</a><a href="/b">b</a>"#));
    h.route("/a", Route::html("<p>a</p>"));
    h.route("/b", Route::html("<p>b</p>"));
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        h.url("/"),
        "--allow-private",
        "--delay",
        "0ms",
        "--records-per-file",
        "2",
        "--operator",
        "ops@example.org",
        "--warc-header",
        "description: Weekly news crawl, v2",
        "--warc-header",
        "ISPARTOF: news-2026",
        "--out",
        out.path().display()
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(out.path());
    let infos = by_type(&records, "warcinfo");
    assert!(infos.len() >= 2, "one warcinfo per file");
    for info in infos {
        let block = String::from_utf8_lossy(&info.block);
        let lines: Vec<&str> = block.lines().collect();
        assert!(
            lines.contains(&"description: Weekly news crawl, v2"),
            "{block}"
        );
        assert!(lines.contains(&"isPartOf: news-2026"), "{block}");
        assert!(lines.contains(&"operator: ops@example.org"), "{block}");
        assert_eq!(
            block.to_lowercase().matches("ispartof").count(),
            1,
            "{block}"
        );
    }
    crate::harness::assert_valid(out.path()).await;
}
