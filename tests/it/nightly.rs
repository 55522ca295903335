//! Nightly (cron) runs and first runs: finished vs interrupted crawls in an output directory,
//! `--recrawl` / `--fresh`, `--time-limit` / `--max-bytes`, checks before the first fetch,
//! `--log-file`, exit codes named in the report, and the messages a new user meets.

use std::path::Path;

use crate::args;
use crate::harness::{closed_port, read_json, read_records, text, trawl, warc_files};
use crate::server::linked_site;

fn crawl_args(seed: String, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut a = args![
        "crawl",
        seed,
        "--out",
        out.display(),
        "--stats",
        out.join("stats.json").display()
    ];
    if !extra.contains(&"--delay") {
        a.extend(args!["--delay", "10ms"]);
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn crawl_ids(out: &Path) -> Vec<String> {
    let mut ids: Vec<String> = read_records(out)
        .iter()
        .filter(|r| r.warc_type == "warcinfo")
        .filter_map(|r| {
            String::from_utf8_lossy(&r.block)
                .lines()
                .find_map(|l| l.strip_prefix("crawlId: ").map(str::to_string))
        })
        .collect();
    ids.dedup();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_crawl_is_refused_then_recrawled_with_dedup_or_started_fresh() {
    let (web, h) = linked_site("127.0.0.50", 4, 100).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let first = trawl(crawl_args(h.url("/"), &out, &["--dedup"])).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let requests = web.hits().len();

    // The same command again: refused with exit 7, nothing fetched, nothing written.
    let files = warc_files(&out).len();
    let again = trawl(crawl_args(h.url("/"), &out, &["--dedup", "-q"])).await;
    assert_eq!(again.status.code(), Some(7), "{}", text(&again));
    assert!(stderr(&again).contains("--recrawl"), "{}", stderr(&again));
    assert_eq!(web.hits().len(), requests);
    assert_eq!(warc_files(&out).len(), files);

    // --recrawl: a new crawl; serials continue, a new crawl id, and with --dedup every
    // unchanged page is a revisit of the first crawl's capture.
    let recrawl = trawl(crawl_args(h.url("/"), &out, &["--dedup", "--recrawl"])).await;
    assert_eq!(recrawl.status.code(), Some(0), "{}", text(&recrawl));
    // The read of the earlier files before the first fetch is said, with their size.
    assert!(
        stderr(&recrawl).contains("--dedup: reading the captures of 1 earlier WARC file(s)"),
        "{}",
        stderr(&recrawl)
    );
    assert!(web.hits().len() > requests);
    let stats = read_json(&out.join("stats.json"));
    assert_eq!(stats["pages_archived"], 5, "{stats}");
    assert_eq!(stats["revisits"], 5, "{stats}");
    assert_eq!(crawl_ids(&out).len(), 2, "{:?}", crawl_ids(&out));
    assert!(out.join(".trawl-state.previous").is_dir());
    let names: Vec<String> = warc_files(&out)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.len() > files, "{names:?}");
    let serials: std::collections::HashSet<&str> =
        names.iter().filter_map(|n| n.rsplit('-').next()).collect();
    assert_eq!(serials.len(), names.len(), "serials continue: {names:?}");

    // --fresh: the state is discarded and the crawl starts over.
    let before = web.hits().len();
    let fresh = trawl(crawl_args(h.url("/"), &out, &["--fresh"])).await;
    assert_eq!(fresh.status.code(), Some(0), "{}", text(&fresh));
    assert_eq!(read_json(&out.join("stats.json"))["pages_archived"], 5);
    assert!(web.hits().len() > before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_limit_stops_resumably_and_max_bytes_finishes() {
    let (web, h) = linked_site("127.0.0.51", 30, 100).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Room for a debug build's start on a loaded machine inside the limit, and 31 pages
    // (6.2 s of delays) well beyond it.
    let slow = ["--delay", "200ms", "--time-limit", "2s"];
    let cut = trawl(crawl_args(h.url("/"), &out, &slow)).await;
    assert_eq!(cut.status.code(), Some(8), "{}", text(&cut));
    let stats = read_json(&out.join("stats.json"));
    assert_eq!(stats["stop_reason"], "time_limit", "{stats}");
    let done = stats["pages_archived"].as_u64().unwrap();
    assert!(done > 0 && done < 31, "{stats}");
    // The next run (same command) resumes until the time limit or the end.
    let mut runs = 0;
    loop {
        let next = trawl(crawl_args(h.url("/"), &out, &slow)).await;
        runs += 1;
        match next.status.code() {
            Some(8) if runs < 30 => continue,
            Some(0) => break,
            other => panic!("{other:?}: {}", text(&next)),
        }
    }
    let last = read_json(&out.join("stats.json"));
    assert_eq!(last["pages_archived"], 31);
    // The rate is the last run's: its pages over its time (before, every run's pages).
    let rate = last["pages_per_sec"].as_f64().unwrap();
    let secs = last["elapsed_secs"].as_f64().unwrap();
    assert!(rate * secs < (31 - done) as f64 + 0.5, "{last}");
    let pages: Vec<String> = web
        .paths_of(&h)
        .into_iter()
        .filter(|p| p.starts_with("/p"))
        .collect();
    assert_eq!(pages.len(), 30, "each page fetched once: {pages:?}");

    // --max-bytes: stops once that much was downloaded; a finished crawl.
    let out2 = dir.path().join("out2");
    let capped = trawl(crawl_args(h.url("/"), &out2, &["--max-bytes", "1000"])).await;
    assert_eq!(capped.status.code(), Some(0), "{}", text(&capped));
    let stats = read_json(&out2.join("stats.json"));
    assert_eq!(stats["stop_reason"], "byte_limit", "{stats}");
    assert!(stats["pages_archived"].as_u64().unwrap() < 31, "{stats}");
}

/// Archived page URLs (200 responses) in `out`, in file order.
fn archived_pages(out: &Path) -> Vec<String> {
    read_records(out)
        .into_iter()
        .filter(|r| r.warc_type == "response" && r.status() == Some(200))
        .filter_map(|r| r.target_uri)
        .collect()
}

/// A crawl that stopped at its page or byte target goes on from its frontier when run again
/// with the target raised (or lifted); the same target again is still refused (exit 7), and
/// its message says how to continue. Pages in flight when the target was met are kept for
/// the next run, and no page is archived twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raised_page_or_byte_target_extends_a_finished_crawl() {
    let (_web, h) = linked_site("127.0.0.52", 40, 100).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let seed = h.url("/");
    let run = |extra: &'static [&'static str]| trawl(crawl_args(seed.clone(), &out, extra));

    let first = run(&["--max-pages", "5", "-c", "4"]).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    assert_eq!(
        read_json(&out.join("stats.json"))["stop_reason"],
        "target_reached"
    );

    // The same target: refused, and told how to go on.
    let same = run(&["--max-pages", "5", "-q"]).await;
    assert_eq!(same.status.code(), Some(7), "{}", text(&same));
    assert!(
        stderr(&same).contains("raise --max-pages above the 5 pages archived"),
        "{}",
        stderr(&same)
    );
    let lower = run(&["--max-pages", "3", "-q"]).await;
    assert_eq!(lower.status.code(), Some(7), "{}", text(&lower));

    // Raised: the crawl goes on to the new target, from its frontier (no new crawl id).
    let raised = run(&["--max-pages", "12"]).await;
    assert_eq!(raised.status.code(), Some(0), "{}", text(&raised));
    assert!(
        stderr(&raised).contains("resuming it from its frontier"),
        "{}",
        stderr(&raised)
    );
    let stats = read_json(&out.join("stats.json"));
    assert_eq!(stats["stop_reason"], "target_reached", "{stats}");
    assert_eq!(stats["pages_archived"], 12, "{stats}");
    assert_eq!(archived_pages(&out).len(), 12);
    assert_eq!(crawl_ids(&out).len(), 1, "{:?}", crawl_ids(&out));

    // Lifted: it runs to the end of its frontier; every page once.
    let lifted = run(&[]).await;
    assert_eq!(lifted.status.code(), Some(0), "{}", text(&lifted));
    let stats = read_json(&out.join("stats.json"));
    assert_eq!(stats["stop_reason"], "frontier_exhausted", "{stats}");
    let mut pages = archived_pages(&out);
    assert_eq!(pages.len(), 41, "{pages:?}");
    pages.sort();
    pages.dedup();
    assert_eq!(pages.len(), 41, "a page archived twice");
    // Exhausted is finished for good: the same command is refused without a budget hint.
    let done = run(&["-q"]).await;
    assert_eq!(done.status.code(), Some(7), "{}", text(&done));
    assert!(!stderr(&done).contains("raise --max"), "{}", stderr(&done));

    // --max-bytes the same way.
    let out2 = dir.path().join("out2");
    let bytes = |extra: &'static [&'static str]| trawl(crawl_args(h.url("/"), &out2, extra));
    let capped = bytes(&["--max-bytes", "2000"]).await;
    assert_eq!(capped.status.code(), Some(0), "{}", text(&capped));
    let reached = read_json(&out2.join("stats.json"));
    assert_eq!(reached["stop_reason"], "byte_limit", "{reached}");
    let again = bytes(&["--max-bytes", "2000", "-q"]).await;
    assert_eq!(again.status.code(), Some(7), "{}", text(&again));
    assert!(
        stderr(&again).contains("raise --max-bytes above"),
        "{}",
        stderr(&again)
    );
    let more = bytes(&["--max-bytes", "1MB"]).await;
    assert_eq!(more.status.code(), Some(0), "{}", text(&more));
    let stats = read_json(&out2.join("stats.json"));
    assert_eq!(stats["stop_reason"], "frontier_exhausted", "{stats}");
    let mut pages = archived_pages(&out2);
    let all = pages.len();
    pages.sort();
    pages.dedup();
    assert_eq!((all, pages.len()), (41, 41));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_and_inputs_are_checked_before_the_first_fetch() {
    let (web, h) = linked_site("127.0.0.52", 2, 100).await;
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("missing-dir").join("stats.json");
    let out = dir.path().join("out");
    let bad_stats = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.display(),
        "--stats",
        nowhere.display(),
        "-q"
    ])
    .await;
    assert_eq!(bad_stats.status.code(), Some(5), "{}", text(&bad_stats));
    assert!(
        stderr(&bad_stats).contains("--stats"),
        "{}",
        stderr(&bad_stats)
    );
    let bad_log = trawl(crawl_args(
        h.url("/"),
        &out,
        &["--log-file", "/nonexistent-dir/trawl.log"],
    ))
    .await;
    assert_eq!(bad_log.status.code(), Some(5), "{}", text(&bad_log));
    let bad_index = trawl(crawl_args(
        h.url("/"),
        &out,
        &["--dedup-index", "/nonexistent.cdxj"],
    ))
    .await;
    assert_eq!(bad_index.status.code(), Some(2), "{}", text(&bad_index));
    assert!(
        web.hits().is_empty(),
        "fetched before failing: {:?}",
        web.hits()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_file_gets_the_report_and_notes() {
    let (_web, h) = linked_site("127.0.0.53", 2, 100).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let log = dir.path().join("trawl.log");
    let run = trawl(crawl_args(
        h.url("/"),
        &out,
        &["--log-file", &log.display().to_string()],
    ))
    .await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(stderr(&run).is_empty(), "stderr: {}", stderr(&run));
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("trawl crawl report"), "{logged}");
    assert!(
        logged.contains("note: a seed is a loopback IP address"),
        "{logged}"
    );
    assert!(logged.contains("all queued URLs done"), "{logged}");

    // -q quiets stderr, not the log file: a crawl extended by a raised page target says so
    // there (before, -q dropped its warnings from the file too).
    let small = dir.path().join("small");
    let first = trawl(crawl_args(h.url("/"), &small, &["--max-pages", "1"])).await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let more = [
        "--max-pages",
        "2",
        "-q",
        "--log-file",
        &log.display().to_string(),
    ];
    let again = trawl(crawl_args(h.url("/"), &small, &more)).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stderr(&again).is_empty(), "stderr: {}", stderr(&again));
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("resuming it from its frontier"), "{logged}");
}

/// Output streams nobody reads (`2>/dev/full`, a closed pipe) cost the messages, not the
/// crawl: before, the first message panicked (exit 101) and no report file was written, and
/// `trawl status` panicked on its first line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_that_cannot_be_written_cost_the_messages_not_the_crawl() {
    let (_web, h) = linked_site("127.0.0.214", 2, 100).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let run = tokio::task::spawn_blocking({
        let args = crawl_args(h.url("/"), &out, &[]);
        move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_trawl"))
                .args(args)
                .stderr(full())
                .status()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert_eq!(run.code(), Some(0));
    let stats = read_json(&out.join("stats.json"));
    assert!(stats["pages_archived"].as_u64() > Some(1), "{stats}");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(["status", &out.display().to_string()])
        .stdout(full())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    // A log file on a full disk: no complaint on stderr for each event (a seed's 404 is one).
    let flags = ["--log-file", "/dev/full", "--fresh"];
    let mut args = crawl_args(h.url("/"), &out, &flags);
    args.push(h.url("/missing"));
    let logged = trawl(args).await;
    assert_eq!(logged.status.code(), Some(0), "{}", text(&logged));
    assert!(stderr(&logged).is_empty(), "{}", stderr(&logged));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_names_what_made_the_exit_code_and_speaks_words() {
    // A seed host whose robots.txt never answers: exit 4, and the report says why.
    let dead = format!("http://127.0.0.54:{}/", closed_port());
    let dir = tempfile::tempdir().unwrap();
    let run = trawl(crawl_args(
        dead.clone(),
        &dir.path().join("a"),
        &["--robots-retry", "10ms"],
    ))
    .await;
    assert_eq!(run.status.code(), Some(4), "{}", text(&run));
    let err = stderr(&run);
    assert!(err.contains("exit code 4 because"), "{err}");
    assert!(err.contains("robots.txt could not be reached"), "{err}");
    assert!(err.contains("giving up http://127.0.0.54"), "{err}");
    assert!(!err.contains("status codes"), "empty line printed: {err}");
    assert!(!err.contains("top hosts"), "empty line printed: {err}");
    assert!(!err.contains("FrontierExhausted"), "{err}");

    // A seed that cannot be connected to is reported at default verbosity, with the reason.
    let run = trawl(crawl_args(
        dead,
        &dir.path().join("b"),
        &["--ignore-robots", "--retries", "0"],
    ))
    .await;
    assert_eq!(run.status.code(), Some(4), "{}", text(&run));
    let err = stderr(&run);
    assert!(
        err.contains("could not be fetched") && err.contains("refused"),
        "{err}"
    );

    let (_web, h) = linked_site("127.0.0.55", 1, 100).await;
    let ok = trawl(crawl_args(h.url("/"), &dir.path().join("c"), &[])).await;
    let err = stderr(&ok);
    assert!(err.contains("all queued URLs done"), "{err}");
    assert!(err.contains("2xx responses of an accepted type"), "{err}");
    assert!(err.contains("duplicate:"), "{err}");
}

#[tokio::test]
async fn first_run_mistakes_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o").display().to_string();
    // A bare number is not a duration.
    let bare = trawl(args![
        "crawl",
        "http://127.0.0.1:1/",
        "--out",
        out,
        "--delay",
        "500"
    ])
    .await;
    assert_eq!(bare.status.code(), Some(2), "{}", text(&bare));
    assert!(stderr(&bare).contains("500ms"), "{}", stderr(&bare));
    // --max-pages 0 is refused.
    let zero = trawl(args![
        "crawl",
        "http://127.0.0.1:1/",
        "--out",
        out,
        "--max-pages",
        0
    ])
    .await;
    assert_eq!(zero.status.code(), Some(2), "{}", text(&zero));
    // --deny-ports never takes the seed after it as its value.
    let ports = trawl(args![
        "crawl",
        "--deny-ports",
        "http://127.0.0.1:1/",
        "--out",
        out
    ])
    .await;
    assert_eq!(ports.status.code(), Some(3), "{}", text(&ports));
    assert!(
        stderr(&ports).contains("--deny-ports"),
        "{}",
        stderr(&ports)
    );
    // A seed on port 0, which nothing answers, is refused with its reason.
    let port_zero = trawl(args!["crawl", "http://127.0.0.1:0/", "--out", out]).await;
    assert_eq!(port_zero.status.code(), Some(3), "{}", text(&port_zero));
    assert!(
        stderr(&port_zero).contains("port 0"),
        "{}",
        stderr(&port_zero)
    );
    // trawl index: one clear message per problem.
    let missing = trawl(args!["index", dir.path().join("nope.warc.gz").display()]).await;
    assert_eq!(missing.status.code(), Some(2));
    let err = stderr(&missing);
    assert_eq!(err.matches("o such file").count(), 1, "{err}");
    let text_file = dir.path().join("notes.warc");
    std::fs::write(&text_file, "hello\n").unwrap();
    let not_warc = trawl(args!["index", text_file.display()]).await;
    assert_eq!(not_warc.status.code(), Some(2));
    assert!(
        stderr(&not_warc).contains("not a WARC file"),
        "{}",
        stderr(&not_warc)
    );
    let empty = tempfile::tempdir().unwrap();
    let none = trawl(args!["index", empty.path().display()]).await;
    assert_eq!(none.status.code(), Some(2));
    assert!(stderr(&none).contains("no WARC files"), "{}", stderr(&none));
    let status = trawl(args!["status", empty.path().display()]).await;
    assert_eq!(status.status.code(), Some(2));
    assert!(
        stderr(&status).contains("no trawl crawl"),
        "{}",
        stderr(&status)
    );
}

#[tokio::test]
async fn help_completions_man_page_and_config_file() {
    let help = trawl(args!["crawl", "--help"]).await;
    let out = String::from_utf8_lossy(&help.stdout);
    for needle in [
        "resumed",
        "--recrawl",
        "--fresh",
        "--time-limit",
        "--max-bytes",
        "Exit codes",
        "130",
    ] {
        assert!(out.contains(needle), "{needle} missing from --help");
    }
    let bash = trawl(args!["completions", "bash"]).await;
    assert!(String::from_utf8_lossy(&bash.stdout).contains("_trawl"));
    let man = trawl(args!["man"]).await;
    assert!(String::from_utf8_lossy(&man.stdout).contains(".TH trawl"));

    // A config file: its values apply, the command line wins.
    let (web, h) = linked_site("127.0.0.56", 3, 100).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("trawl.toml");
    let out = dir.path().join("out");
    std::fs::write(
        &config,
        format!(
            "urls = [\"{}\"]\nout = \"{}\"\nmax-pages = 2\ndelay = \"10ms\"\nexclude = [\"/p2\"]\nquiet = true\n",
            h.url("/"),
            out.display()
        ),
    )
    .unwrap();
    let run = trawl(args![
        "crawl",
        "--config",
        config.display(),
        "--max-pages",
        3
    ])
    .await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(
        stderr(&run).is_empty(),
        "quiet from the file: {}",
        stderr(&run)
    );
    let paths = web.paths_of(&h);
    assert!(!paths.contains(&"/p2".to_string()), "{paths:?}");
    let pages = read_records(&out)
        .iter()
        .filter(|r| r.warc_type == "response" && r.status() == Some(200))
        .count();
    assert_eq!(pages, 3, "the command line's --max-pages wins");
    let bad = trawl(args![
        "crawl",
        "--config",
        dir.path().join("none.toml").display()
    ])
    .await;
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}

/// A trap found in the first night's crawl (a calendar, here) is excluded in the next run's
/// flags: the URLs already queued are checked against them as they come up, not fetched
/// because they were queued under the old ones. `--max-depth` the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_crawl_applies_its_new_exclude_and_depth_to_what_was_queued() {
    let web = crate::server::Web::default();
    let h = web.host("127.0.0.39").await;
    use crate::server::Route;
    h.route(
        "/",
        Route::html("<a href=/cal?m=1>c1</a><a href=/cal?m=2>c2</a><a href=/d1>d</a>"),
    );
    h.route("/cal?m=1", Route::html("<p>month 1</p>"));
    h.route("/cal?m=2", Route::html("<p>month 2</p>"));
    h.route("/d1", Route::html("<a href=/d2>deeper</a>"));
    h.route("/d2", Route::html("<p>two hops</p>"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let seed = h.url("/");
    let first = trawl(crawl_args(
        seed.clone(),
        &out,
        &["--max-pages", "1", "-c", "1"],
    ))
    .await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    // The next night excludes the calendar: the two months queued are not fetched.
    let next = ["--max-pages", "2", "--exclude", "/cal"];
    let second = trawl(crawl_args(seed.clone(), &out, &next)).await;
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let paths = web.paths_of(&h);
    assert!(!paths.iter().any(|p| p.starts_with("/cal")), "{paths:?}");
    assert!(paths.iter().any(|p| p == "/d1"), "{paths:?}");
    let stats = read_json(&out.join("stats.json"));
    assert_eq!(stats["filtered"]["pattern"], 2, "{stats}");
    // And the one after limits the depth: /d2, queued two hops deep, is not fetched.
    let third = ["--max-pages", "10", "--max-depth", "1"];
    let third = trawl(crawl_args(seed, &out, &third)).await;
    assert_eq!(third.status.code(), Some(0), "{}", text(&third));
    let paths = web.paths_of(&h);
    assert!(!paths.iter().any(|p| p == "/d2"), "{paths:?}");
    let stats = read_json(&out.join("stats.json"));
    assert_eq!(stats["filtered"]["depth"], 1, "{stats}");
}
