//! A crawl of many hosts under a low open-files limit (`ulimit -n`, 1024 by default on Linux,
//! less in some containers): the idle keep-alive connections it keeps between a host's fetches
//! are held to what the limit leaves, so no connect and no write of the crawl's own files
//! fails for want of a descriptor.

use crate::harness::{read_json, text};
use crate::server::{Route, Web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_hosts_under_a_low_open_files_limit_lose_nothing() {
    let web = Web::default();
    let h = web.host("127.0.0.37").await;
    let port = h.addr.port();
    h.route("/", Route::html("<a href=/a>a</a><a href=/b>b</a>"));
    h.route("/a", Route::html("<p>a</p>"));
    h.route("/b", Route::html("<p>b</p>"));
    // 600 host names pinned to one server: with a delay between each host's fetches, every
    // host keeps a connection open between them, far more than 400 descriptors allow.
    let out = tempfile::tempdir().unwrap();
    let seeds = out.path().join("seeds.txt");
    let lines: Vec<String> = (0..600)
        .map(|i| format!("http://h{i}.many.test:{port}/"))
        .collect();
    std::fs::write(&seeds, lines.join("\n")).unwrap();
    let stats = out.path().join("stats.json");
    let command = format!(
        "ulimit -n 400 && exec {} crawl --seeds {} --resolve '*:{port}:127.0.0.37' --out {} \
         --stats {} --delay 1s --no-sitemaps -q",
        env!("CARGO_BIN_EXE_trawl"),
        seeds.display(),
        out.path().join("warcs").display(),
        stats.display(),
    );
    let result = tokio::task::spawn_blocking(move || {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let stats = read_json(&stats);
    assert_eq!(stats["pages_archived"], 1800, "{stats}");
    assert_eq!(stats["errors"], serde_json::json!({}), "{stats}");
}
