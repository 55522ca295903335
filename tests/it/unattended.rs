//! Unattended crawls: `--accept` and the extension pre-filter, back-off on 429/503 with
//! Retry-After, the hand-off of finished files, and the disk guard.

use std::path::Path;
use std::time::Duration;

use crate::args;
use crate::harness::{read_json, read_records, run_script, text, trawl};
use crate::server::{Behavior, Route, Web};

/// `--accept application/pdf`: links ending in `.pdf` are fetched (the extension pre-filter
/// lets through the extensions of accepted types), the HTML pages that link to them are read
/// for links but not archived, and of other non-HTML extensions only a probe per directory
/// is fetched.
#[tokio::test]
async fn accept_pdf_archives_linked_pdfs_and_reads_html_for_links_only() {
    let web = Web::default();
    let a = web.host("127.0.0.2").await;
    a.route(
        "/",
        Route::html(
            r#"<a href="/report.pdf">r</a> <a href="/docs/">d</a> <a href="/pic.jpg">p</a>
            <a href="/pic2.jpg">p</a>"#,
        ),
    );
    a.route(
        "/docs/",
        Route::html(r#"<a href="/docs/Manual.PDF">m</a> <a href="/docs/get-file">g</a>"#),
    );
    a.route(
        "/report.pdf",
        Route::typed(200, "application/pdf", b"%PDF-1.4 report"),
    );
    a.route(
        "/docs/Manual.PDF",
        Route::typed(200, "application/pdf", b"%PDF-1.4 manual"),
    );
    // A PDF behind a URL without the extension is still found by its Content-Type.
    a.route(
        "/docs/get-file",
        Route::typed(200, "application/pdf", b"%PDF-1.4 hidden"),
    );
    a.route("/pic.jpg", Route::typed(200, "image/jpeg", b"jpeg"));
    a.route("/pic2.jpg", Route::typed(200, "image/jpeg", b"jpeg"));
    let out = tempfile::tempdir().unwrap();
    let result = crawl_accepting(a.url("/"), out.path(), "application/pdf").await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(out.path());
    let mut archived: Vec<String> = records
        .iter()
        .filter(|r| {
            r.warc_type == "response" && r.status() == Some(200) && r.path() != "/robots.txt"
        })
        .map(|r| r.path())
        .collect();
    archived.sort();
    assert_eq!(
        archived,
        ["/docs/Manual.PDF", "/docs/get-file", "/report.pdf"]
    );
    let fetched: Vec<String> = web.hits().into_iter().map(|h| h.path).collect();
    assert!(fetched.contains(&"/docs/".to_string()), "{fetched:?}");
    let jpgs = fetched.iter().filter(|p| p.ends_with(".jpg")).count();
    assert_eq!(jpgs, 1, "{fetched:?}");
}

/// `--accept '*/*'` archives every type (it archived nothing before: the wildcard of all was
/// never matched), and a value that is no media type, as wget's `--accept pdf` is written, is
/// refused with the type to use.
#[tokio::test]
async fn accept_all_archives_every_type_and_an_extension_is_refused_with_a_hint() {
    let web = Web::default();
    let a = web.host("127.0.0.111").await;
    a.route(
        "/",
        Route::html(r#"<a href="/example.py">e</a> <a href="/pic.jpg">p</a>"#),
    );
    a.route(
        "/example.py",
        Route::typed(200, "text/x-python", b"print(1)"),
    );
    a.route("/pic.jpg", Route::typed(200, "image/jpeg", b"jpeg"));
    let out = tempfile::tempdir().unwrap();
    let crawl = |accept| crawl_accepting(a.url("/"), out.path(), accept);
    let refused = crawl("pdf").await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("application/pdf"),
        "{}",
        text(&refused)
    );
    assert!(web.hits().is_empty());
    let result = crawl("*/*").await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let mut archived: Vec<String> = read_records(out.path())
        .iter()
        .filter(|r| r.warc_type == "response" && r.status() == Some(200))
        .map(|r| r.path())
        .collect();
    archived.sort();
    assert_eq!(archived, ["/", "/example.py", "/pic.jpg"]);
}

/// A crawl from `url` into `out` with no delay that archives the `accept` types.
async fn crawl_accepting(url: String, out: &Path, accept: &str) -> std::process::Output {
    trawl(args![
        "crawl",
        url,
        "--out",
        out.display(),
        "--delay",
        "0ms",
        "--accept",
        accept,
        "-q"
    ])
    .await
}

fn slow_down(status: u16, retry_after: &str) -> Route {
    let mut route = Route::typed(status, "text/html", b"<html>slow down</html>");
    route
        .headers
        .push(("Retry-After".into(), retry_after.into()));
    route
}

/// A server that answers 429 with `Retry-After: 2` twice and then 200: the page is archived
/// once (the 200), each retry waits at least the 2 s asked for, the whole host waits with it,
/// and the answers are counted. A URL that stays 503 is archived once, its last answer.
#[tokio::test]
async fn a_429_with_retry_after_slows_the_host_and_only_the_last_answer_is_archived() {
    let web = Web::default();
    let a = web.host("127.0.0.2").await;
    a.route(
        "/",
        Route::html(r#"<a href="/limited">l</a> <a href="/down">d</a> <a href="/p1">1</a> <a href="/p2">2</a>"#),
    );
    a.behave(
        "/limited",
        Behavior::Answers(vec![
            slow_down(429, "2"),
            slow_down(429, "2"),
            Route::html("<p>finally</p>"),
        ]),
    );
    a.route("/down", slow_down(503, "1"));
    a.route("/p1", Route::html("<p>1</p>"));
    a.route("/p2", Route::html("<p>2</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("stats.json");
    let result = trawl(args![
        "crawl",
        a.url("/"),
        "--out",
        out.path().display(),
        "--stats",
        stats.display(),
        "--delay",
        "0ms",
        "--no-sitemaps",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let responses: Vec<(String, Option<u16>)> = read_records(out.path())
        .into_iter()
        .filter(|r| r.warc_type == "response")
        .map(|r| (r.path(), r.status()))
        .collect();
    let of = |path: &str| -> Vec<Option<u16>> {
        responses
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, s)| *s)
            .collect()
    };
    assert_eq!(of("/limited"), [Some(200)], "{responses:?}");
    // Still 503 after --retries (2): its last answer is what happened.
    assert_eq!(of("/down"), [Some(503)], "{responses:?}");
    let hits = web.hits();
    let limited: Vec<_> = hits.iter().filter(|h| h.path == "/limited").collect();
    assert_eq!(limited.len(), 3);
    assert_eq!(hits.iter().filter(|h| h.path == "/down").count(), 3);
    for pair in limited.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(gap >= Duration::from_millis(1950), "retried after {gap:?}");
    }
    // The whole host waited: nothing was asked of it in the 2 s after the first 429.
    nothing_asked_for_2s_after(&hits, limited[0].at, "/limited");
    let stats = read_json(&stats);
    // The two 429s and the three 503s: the last one, not retried, slows the host too.
    assert_eq!(stats["slowed_down"], 5, "{stats}");
    assert_eq!(stats["errors"]["http_429"], 2, "{stats}");
    assert_eq!(stats["errors"]["http_503"], 2, "{stats}");
    assert_eq!(stats["status_codes"]["200"], 4, "{stats}");
}

/// Asserts that no request in `hits` came in the 2 s after `at` (the answer to `what`).
fn nothing_asked_for_2s_after(hits: &[crate::server::Hit], at: std::time::Instant, what: &str) {
    for h in hits.iter().filter(|h| h.at > at) {
        let after = h.at - at;
        assert!(
            after >= Duration::from_millis(1950),
            "{} {after:?} after {what}",
            h.path
        );
    }
}

/// A last answer that asks to slow down still slows the host: a page out of tries
/// (`--retries 0`, as wget's `-t 1` sets), and a sitemap, which is not retried. Before, the
/// host's next request came after the plain delay.
#[tokio::test]
async fn a_last_answer_that_asks_to_slow_down_holds_the_host_back() {
    let web = Web::default();
    let a = web.host("127.0.0.212").await;
    a.route(
        "/",
        Route::html(r#"<a href="/busy">b</a> <a href="/p1">1</a> <a href="/p2">2</a>"#),
    );
    a.route("/sitemap.xml", slow_down(503, "2"));
    a.route("/busy", slow_down(429, "2"));
    a.route("/p1", Route::html("<p>1</p>"));
    a.route("/p2", Route::html("<p>2</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("stats.json");
    let result = trawl(args![
        "crawl",
        a.url("/"),
        "--out",
        out.path().display(),
        "--stats",
        stats.display(),
        "--delay",
        "0ms",
        "--retries",
        "0",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let hits = web.hits();
    for asked in ["/sitemap.xml", "/busy"] {
        let at = hits.iter().find(|h| h.path == asked).expect(asked).at;
        nothing_asked_for_2s_after(&hits, at, asked);
    }
    assert_eq!(hits.iter().filter(|h| h.path == "/busy").count(), 1);
    let stats = read_json(&stats);
    assert_eq!(stats["slowed_down"], 2, "{stats}");
    assert_eq!(stats["pages_archived"], 3, "{stats}");
}

/// A tmpfs mounted for one test, unmounted (lazily) when dropped.
pub(crate) struct Tmpfs {
    pub(crate) path: std::path::PathBuf,
    /// Removed after the unmount.
    _parent: tempfile::TempDir,
}

impl Tmpfs {
    pub(crate) fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fs");
        std::fs::create_dir(&path).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .status()
            .expect("run mount");
        assert!(
            mounted.success(),
            "this test mounts a small tmpfs and needs root (as scripts/test runs in CI)"
        );
        Tmpfs { path, _parent: dir }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.path)
            .status();
    }
}

/// `--min-free` on a small file system: while free space is below it the crawl starts no
/// fetch and says why (log, status file); once space is freed it goes on and finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn low_disk_space_pauses_the_crawl_until_space_returns() {
    let (web, host) = crate::server::linked_site("127.0.0.2", 20, 2000).await;
    let fs = Tmpfs::mount("128m");
    let filler = fs.path.join("filler");
    std::fs::write(&filler, vec![7u8; 100 << 20]).unwrap();
    let out = fs.path.join("warcs");
    let log = fs.path.join("log.txt");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(args![
            "crawl",
            host.url("/"),
            "--out",
            out.display(),
            "--delay",
            "0ms",
            "--min-free",
            "64MiB",
            "--log-file",
            log.display()
        ])
        .spawn()
        .unwrap();
    let status = out.join(".trawl-status.json");
    let waiting = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Ok(text) = std::fs::read_to_string(&status) {
                let s: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                if let Some(why) = s["waiting"].as_str() {
                    return why.to_string();
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the status file says the crawl waits");
    assert!(waiting.contains("disk space low"), "{waiting}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        web.hits().is_empty(),
        "fetched while the disk was low: {:?}",
        web.hits()
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "the crawl ended instead of waiting"
    );
    std::fs::remove_file(&filler).unwrap();
    let code = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(code.code(), Some(0));
    let pages = read_records(&out)
        .into_iter()
        .filter(|r| r.warc_type == "response" && r.status() == Some(200))
        .count();
    assert!(pages >= 21, "{pages} pages archived");
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("disk space low"), "{log}");
    assert!(log.contains("disk space back"), "{log}");
}

/// `--finished-dir` on another file system (a tmpfs: the copy, fsync, rename path) and
/// `--on-close`: every closed WARC file moves there with its WET and CDXJ, the command runs
/// once per file with the moved path; a crawl first run without the flags and resumed with
/// them hands off the earlier files too, and serial numbers continue past the moved ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_files_move_to_the_finished_dir_and_the_command_runs_once_each() {
    let (_web, host) = crate::server::linked_site("127.0.0.2", 30, 1500).await;
    let fs = Tmpfs::mount("64m");
    let finished = fs.path.join("finished");
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let log = work.path().join("closed.log");
    let crawl = |max_pages: u32, handoff: bool| {
        let mut a = args![
            "crawl",
            host.url("/"),
            "--out",
            out.display(),
            "--delay",
            "0ms",
            "--records-per-file",
            8,
            "--max-pages",
            max_pages,
            "--wet",
            "--cdxj",
            "-q"
        ];
        if handoff {
            a.extend(args![
                "--finished-dir",
                finished.display(),
                "--on-close",
                format!("echo {{}} >> '{}' && test -s", log.display())
            ]);
        }
        trawl(a)
    };
    let first = crawl(10, false).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let before = crate::harness::warc_files(&out).len();
    assert!(before >= 2, "{before} files");
    // The same crawl, resumed with a higher target and the hand-off flags.
    let second = crawl(1000, true).await;
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));

    assert!(crate::harness::warc_files(&out).is_empty(), "left in --out");
    let moved = crate::harness::warc_files(&finished);
    assert!(
        moved.len() > before,
        "{} files after the resume",
        moved.len()
    );
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let mut named: Vec<String> = lines.clone();
    named.sort();
    named.dedup();
    assert_eq!(
        named.len(),
        lines.len(),
        "a file handed to the command twice: {lines:?}"
    );
    let expected: Vec<String> = moved.iter().map(|p| p.display().to_string()).collect();
    assert_eq!(named, expected);
    for warc in &moved {
        let name = warc.file_name().unwrap().to_string_lossy().into_owned();
        let stem = name.strip_suffix(".warc.gz").unwrap();
        assert!(
            finished.join(format!("{stem}.warc.wet.gz")).exists(),
            "{stem}: WET"
        );
        assert!(
            finished.join(format!("{stem}.cdxj")).exists(),
            "{stem}: CDXJ"
        );
    }
    // Nothing half-copied is left, and every page is in the moved files once.
    let hidden: Vec<_> = std::fs::read_dir(&finished)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    let pages = read_records(&finished)
        .into_iter()
        .filter(|r| r.warc_type == "response" && r.status() == Some(200))
        .count();
    assert_eq!(pages, 31);
    let check = run_script("warc_check.py", args![finished.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
}

/// A seed that answers with an HTTP error (moved, mistyped, gone) is archived as data, and
/// said at default verbosity, where a cron job's log shows it; the exit code stays 0. So is a
/// seed of a type not archived, and one whose redirects loop or never end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_that_answers_an_error_is_named_in_the_log() {
    let web = Web::default();
    let h = web.host("127.0.0.95").await;
    h.route("/gone", Route::typed(410, "text/html", b"<p>gone</p>"));
    h.route(
        "/report.pdf",
        Route::typed(200, "application/pdf", b"%PDF-1.4 a report"),
    );
    h.route("/loop-a", Route::redirect(302, &h.url("/loop-b")));
    h.route("/loop-b", Route::redirect(302, &h.url("/loop-a")));
    for i in 0..30 {
        h.route(
            &format!("/r{i}"),
            Route::redirect(302, &h.url(&format!("/r{}", i + 1))),
        );
    }
    h.route(
        "/",
        Route::html("<a href=/missing>a dead link, not a seed</a><a href=/private/y>y</a>"),
    );
    h.route(
        "/robots.txt",
        Route::typed(200, "text/plain", b"User-agent: *\nDisallow: /private/\n"),
    );
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        h.url("/gone"),
        h.url("/"),
        h.url("/private/x"),
        h.url("/report.pdf"),
        h.url("/loop-a"),
        h.url("/r0"),
        "--out",
        out.path().display(),
        "--delay",
        "10ms",
        "--accept",
        "text/html"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let log = String::from_utf8_lossy(&result.stderr);
    // A seed of a type --accept does not take is named (before: fetched, dropped, not said).
    let dropped = format!(
        "seed {} is application/pdf, a type --accept does not take",
        h.url("/report.pdf")
    );
    assert!(log.contains(&dropped), "{log}");
    // So is a seed whose redirects loop or go on past --max-redirects (wget: "20
    // redirections exceeded"); before, exit 0 and nothing said.
    let looped = format!(
        "{} redirects to {}, which this crawl already has",
        h.url("/loop-b"),
        h.url("/loop-a")
    );
    assert!(log.contains(&looped), "{log}");
    assert!(
        log.contains("a seed redirected more than --max-redirects times"),
        "{log}"
    );
    assert!(
        log.contains(&format!("seed {} answered 410", h.url("/gone"))),
        "{log}"
    );
    assert!(!log.contains("answered 404"), "{log}");
    // A seed robots.txt keeps out is named too; a link it keeps out is only counted.
    let denied = format!("seed {} is disallowed by", h.url("/private/x"));
    assert!(log.contains(&denied), "{log}");
    assert!(!log.contains("/private/y is disallowed"), "{log}");
}
