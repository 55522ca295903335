//! Issue 28: the seeds file is read as the crawl runs (`--seeds FILE`, `--seeds -`), a batch at
//! a time while fewer than `--seeds-ahead` URLs are queued. A crawl stopped mid-way through its
//! seeds resumes from where it read: every seed fetched once, none lost; bad lines are reported
//! with their line numbers (the first hundred per run) and all counted. A crawl killed after
//! fetching seeds it read since its last save point completes them from their records on
//! resume rather than fetching them (and what they led to) again.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::args;
use crate::harness::{read_json, spawn_trawl, text, trawl};
use crate::server::{Behavior, Host, Route, Web};

const SEEDS: usize = 3000;
/// Every 20th line is bad: 150 of them.
const BAD_EVERY: usize = 20;

/// Stops a crawl with SIGINT (resumable) and returns what it wrote; it must exit 130.
async fn interrupt(crawl: std::process::Child) -> std::process::Output {
    let pid = crawl.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let out = tokio::task::spawn_blocking(move || crawl.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    out
}

/// Waits until `host` was asked for `path`, and 300 ms more for the crawl to take its answer in.
async fn requested(web: &Web, host: &Host, path: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !web.paths_of(host).iter().any(|p| p == path) {
        assert!(Instant::now() < deadline, "{path} was not requested");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_stopped_while_reading_its_seeds_resumes_each_seed_once() {
    let web = Web::default();
    let h = web.host("127.0.46.1").await;
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    let mut lines = String::new();
    let mut bad = 0;
    for i in 0..SEEDS {
        let path = format!("/p/{i}");
        h.route(&path, Route::html("<p>a seed</p>"));
        lines.push_str(&h.url(&path));
        lines.push('\n');
        if i % BAD_EVERY == BAD_EVERY - 1 {
            lines.push_str(&format!("not a seed {i}\n"));
            bad += 1;
        }
    }
    std::fs::write(&seeds, &lines).unwrap();
    let out = dir.path().join("out");
    let crawl = |delay: &str| {
        args![
            "crawl",
            "--seeds",
            seeds.display(),
            "--out",
            out.display(),
            "--seeds-ahead",
            500,
            "--delay",
            delay,
            "--stats",
            dir.path().join("stats.json").display(),
            "-q"
        ]
    };

    // With 5 s between requests, the queue fills to --seeds-ahead and reading stops there; the
    // crawl is then interrupted (resumable).
    let first = spawn_trawl(crawl("5s"));
    let status = out.join(".trawl-status.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let queued = std::fs::read(&status)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["queued"].as_u64())
            .unwrap_or(0);
        if queued >= 499 {
            break;
        }
        assert!(Instant::now() < deadline, "the queue did not fill");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let first = interrupt(first).await;
    let first_err = String::from_utf8_lossy(&first.stderr).to_string();
    // The bad lines read so far, with their numbers (line 21 is the first).
    assert!(
        first_err.contains("line 21: \"not a seed 19\""),
        "{first_err}"
    );
    let requested_first = web.hits().len();
    assert!(
        requested_first <= 3,
        "{requested_first} requests with a 5 s delay"
    );

    // Resumed without the delay (after the host's saved clock): it goes on from where it read
    // and reaches the end.
    let second = trawl(crawl("0ms")).await;
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let second_err = String::from_utf8_lossy(&second.stderr).to_string();
    assert!(second_err.contains("going on from line"), "{second_err}");
    let mut per_path = std::collections::BTreeMap::<String, usize>::new();
    for hit in web.hits() {
        if hit.path.starts_with("/p/") {
            *per_path.entry(hit.path).or_default() += 1;
        }
    }
    assert_eq!(per_path.len(), SEEDS, "every seed fetched");
    let twice: Vec<_> = per_path.iter().filter(|(_, &n)| n > 1).collect();
    assert!(twice.is_empty(), "fetched twice: {twice:?}");
    let stats = read_json(&dir.path().join("stats.json"));
    assert_eq!(stats["seed_lines_skipped"], bad, "{stats}");
    assert!(stats["seed_problems"].as_array().unwrap().len() <= 100);

    // Standard input: `--seeds -`.
    let mut piped = Command::new(env!("CARGO_BIN_EXE_trawl"))
        .args(args![
            "crawl",
            "--seeds",
            "-",
            "--out",
            dir.path().join("stdin").display(),
            "--delay",
            "0ms",
            "-q"
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = piped.stdin.take().unwrap();
    writeln!(
        stdin,
        "# two seeds\nbogus line\n{}\n{}",
        h.url("/p/1"),
        h.url("/p/2")
    )
    .unwrap();
    drop(stdin);
    let piped = tokio::task::spawn_blocking(move || piped.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(piped.status.code(), Some(0), "{}", text(&piped));
    assert!(text(&piped).contains("line 2"), "{}", text(&piped));
    // Both seeds: the check at start read the input past its first seed, and what it read
    // is the crawl's too (the second seed was lost).
    for path in ["/p/1", "/p/2"] {
        let fetched = web.hits().iter().filter(|h| h.path == path).count();
        assert_eq!(
            fetched, 2,
            "{path} fetched again by the crawl from standard input"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_crawl_keeps_the_scope_its_seeds_file_and_their_redirects_made() {
    // The seeds file is read whole before the stop, so the resumed run does not read it again:
    // its hosts, and the host a seed redirected to, must still be in scope.
    let web = Web::default();
    let a = web.host("127.0.46.2").await;
    let moved = web.host("127.0.46.3").await;
    let target = web.host("127.0.46.4").await;
    a.route("/", Route::html("<a href=/next>n</a>"));
    a.route("/next", Route::html("<p>a's next</p>"));
    moved.route("/", Route::redirect(301, &target.url("/start")));
    target.route("/start", Route::html("<a href=/next>n</a>"));
    target.route("/next", Route::html("<p>the target's next</p>"));
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n{}\n", a.url("/"), moved.url("/"))).unwrap();
    let out = dir.path().join("out");
    let crawl = |delay: &str| {
        args![
            "crawl",
            "--seeds",
            seeds.display(),
            "--out",
            out.display(),
            "--scope",
            "host",
            "--allow-private",
            "--delay",
            delay,
            "--stats",
            dir.path().join("stats.json").display(),
            "-q"
        ]
    };
    // Stopped once the redirect is in (3 s between requests: the pages behind it wait).
    let first = spawn_trawl(crawl("3s"));
    requested(&web, &moved, "/").await;
    interrupt(first).await;
    assert!(!web.paths_of(&target).contains(&"/next".to_string()));

    let second = trawl(crawl("0ms")).await;
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let stats = read_json(&dir.path().join("stats.json"));
    assert_eq!(stats["filtered"]["scope"], 0, "{stats}");
    assert!(web.paths_of(&a).contains(&"/next".to_string()), "{stats}");
    assert!(
        web.paths_of(&target).contains(&"/next".to_string()),
        "{stats}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_crawl_still_falls_back_to_http_for_a_bare_host_read_before_the_stop() {
    let web = Web::default();
    // The first host holds the one fetch slot with a robots.txt sent a byte every 2 s.
    let slow = web.host("127.0.46.6").await;
    slow.behave(
        "/robots.txt",
        Behavior::Drip {
            head: Vec::new(),
            body: Route::typed(200, "text/plain", b"User-agent: *\n").wire_bytes(),
            every: Duration::from_secs(2),
        },
    );
    slow.route("/", Route::html("<p>slow</p>"));
    // The bare host: nothing on 443, its site on 80.
    let bare = web.host_on("127.0.46.5", 80).await;
    bare.route("/", Route::html("<a href=/next>n</a>"));
    bare.route("/next", Route::html("<p>reached over http</p>"));
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n127.0.46.5\n", slow.url("/"))).unwrap();
    let out = dir.path().join("out");
    let crawl = |concurrency: u32| {
        args![
            "crawl",
            "--seeds",
            seeds.display(),
            "--out",
            out.display(),
            "-c",
            concurrency,
            "--delay",
            "0ms",
            "--shutdown-timeout",
            "1s",
            // The dripped robots.txt holds the slot until the stop, however late that comes.
            "--fetch-timeout",
            "30s",
            "--stats",
            dir.path().join("stats.json").display(),
            "-q"
        ]
    };
    let first = spawn_trawl(crawl(1));
    requested(&web, &slow, "/robots.txt").await;
    interrupt(first).await;
    assert!(
        web.paths_of(&bare).is_empty(),
        "the bare host was tried before the stop"
    );

    // The resumed run finds the first host's robots.txt whole.
    slow.route(
        "/robots.txt",
        Route::typed(200, "text/plain", b"User-agent: *\n"),
    );
    let second = trawl(crawl(2)).await;
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let stats = read_json(&dir.path().join("stats.json"));
    assert!(
        web.paths_of(&bare).contains(&"/next".to_string()),
        "{stats} {}",
        text(&second)
    );
}

/// Seeds read from the file after the last save point (here: the one before the first fetch,
/// the periodic one being 5 s away) and fetched before a kill -9: the resumed run reads the
/// file on from the saved position as far as the replay of the WARC tail needs, so each seed
/// and each page it led to is completed from its record. Only a fetch in flight at the kill
/// is repeated (one host: at most one), besides the robots.txt and sitemap probes, which the
/// replay does not rebuild.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeds_fetched_after_the_last_save_point_are_not_fetched_again_after_a_kill() {
    let web = Web::default();
    let h = web.host("127.0.0.130").await;
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    let mut lines = String::new();
    let mut pages = Vec::new();
    for i in 0..30 {
        let (seed, child) = (format!("/s{i}"), format!("/s{i}/child"));
        h.route(&seed, Route::html(&format!("<a href={child}>c</a>")));
        h.route(&child, Route::html("<p>a child</p>"));
        lines.push_str(&h.url(&seed));
        lines.push('\n');
        pages.extend([seed, child]);
    }
    std::fs::write(&seeds, &lines).unwrap();
    let out = dir.path().join("out");
    let crawl = args![
        "crawl",
        "--seeds",
        seeds.display(),
        "--out",
        out.display(),
        "--delay",
        "30ms",
        "-q"
    ];
    let mut child = spawn_trawl(crawl.clone());
    let deadline = Instant::now() + Duration::from_secs(30);
    while web.paths_of(&h).len() < 20 {
        assert!(Instant::now() < deadline, "the crawl did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = web.paths_of(&h).len();

    let again = trawl(crawl).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let fetched = web.paths_of(&h);
    let repeats: Vec<&String> = pages
        .iter()
        .filter(|p| fetched.iter().filter(|f| f == p).count() > 1)
        .collect();
    assert!(
        repeats.len() <= 1,
        "{} of the {before} requests before the kill repeated: {repeats:?}",
        repeats.len()
    );
    for page in &pages {
        assert!(fetched.contains(page), "{page} never fetched");
    }
}

/// A host on `ip` whose `/` links to `/p0` .. `/p{pages - 1}`.
async fn root_and_pages(web: &Web, ip: &str, pages: usize) -> Host {
    let h = web.host(ip).await;
    let links: String = (0..pages).map(|i| format!("<a href=/p{i}>p</a>")).collect();
    h.route("/", Route::html(&links));
    for i in 0..pages {
        h.route(&format!("/p{i}"), Route::html("<p>p</p>"));
    }
    h
}

/// A seed appended to the seeds file of an interrupted crawl that had read the file to its
/// end is read on resume (the file grew past where reading stopped). Before, the saved
/// position said "done" and the file was not looked at again (found by an exploratory run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_appended_before_a_resume_is_read() {
    let web = Web::default();
    let h = root_and_pages(&web, "127.0.46.5", 20).await;
    h.route("/appended", Route::html("<p>appended</p>"));
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", h.url("/"))).unwrap();
    let out = dir.path().join("out");
    let crawl = args![
        "crawl",
        "--seeds",
        seeds.display(),
        "--out",
        out.display(),
        "--delay",
        "300ms",
        "-q"
    ];
    let first = spawn_trawl(crawl.clone());
    requested(&web, &h, "/p0").await;
    interrupt(first).await;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&seeds)
        .unwrap();
    writeln!(file, "{}", h.url("/appended")).unwrap();
    let resumed = trawl(crawl).await;
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert!(
        web.paths_of(&h).contains(&"/appended".to_string()),
        "{:?}",
        web.paths_of(&h)
    );
}

/// An interrupted crawl resumed without its seeds named again (`trawl crawl -o OUT`): its
/// state keeps them, the scope they made and the SSRF guard's leave for an IP-literal seed,
/// and the crawl finishes. Before, it exited 3 ("no usable seed"; found by an exploratory
/// run). A directory with no crawl state still needs seeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_crawl_resumes_without_its_seeds_named_again() {
    let web = Web::default();
    let h = root_and_pages(&web, "127.0.46.6", 10).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let first = spawn_trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.display(),
        "--delay",
        "300ms",
        "-q"
    ]);
    requested(&web, &h, "/p0").await;
    interrupt(first).await;
    let resumed = trawl(args![
        "crawl",
        "--out",
        out.display(),
        "--delay",
        "0ms",
        "-q"
    ])
    .await;
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    let paths = web.paths_of(&h);
    assert!(
        (0..10).all(|i| paths.contains(&format!("/p{i}"))),
        "{paths:?}"
    );
    let empty = dir.path().join("empty");
    let none = trawl(args!["crawl", "--out", empty.display(), "-q"]).await;
    assert_eq!(none.status.code(), Some(3), "{}", text(&none));
}
