//! The WARC output checked by third-party readers: warcio (iteration, digests, `warcio check`),
//! an independent payload-digest check of chunked responses, and replay through pywb.

use crate::args;
use crate::crawl_site::site;
use crate::harness::{read_records, run_script, text, trawl};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warcio_reads_every_record_and_digests_verify() {
    let site = site().await;
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    let result = trawl(args![
        "crawl",
        site.a.url("/"),
        site.b.url("/"),
        "--out",
        dir.display(),
        "--delay",
        "0ms",
        "--records-per-file",
        8,
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let json = out.path().join("summary.json");
    let check = run_script(
        "warc_check.py",
        args![dir.display(), "--json", json.display()],
    )
    .await;
    assert!(
        check.status.success(),
        "warc_check failed:\n{}",
        text(&check)
    );

    // The independent checker saw chunked responses and verified their (de-chunked) payload
    // digests; make sure that case was really exercised.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let chunked = summary
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["records"].as_array().unwrap().iter())
        .filter(|r| r["type"] == "response" && r["http_headers_raw_chunked"] == true)
        .count();
    assert!(
        chunked >= 2,
        "expected chunked responses in the crawl, saw {chunked}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pywb_replays_a_captured_page_with_its_original_bytes() {
    let site = site().await;
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w");
    let result = trawl(args![
        "crawl",
        site.a.url("/"),
        "--out",
        dir.display(),
        "--delay",
        "0ms",
        "--max-depth",
        1,
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(&dir);
    let page = records
        .iter()
        .find(|r| r.warc_type == "response" && r.path() == "/page1")
        .expect("page1 archived");
    let body_start = page
        .block
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap()
        + 4;
    let expect = out.path().join("expected.html");
    std::fs::write(&expect, &page.block[body_start..]).unwrap();
    let replay = run_script(
        "pywb_replay.py",
        args![
            "--warcs",
            dir.display(),
            "--url",
            site.a.url("/page1"),
            "--expect",
            expect.display()
        ],
    )
    .await;
    assert!(
        replay.status.success(),
        "pywb replay failed:\n{}",
        text(&replay)
    );
}
