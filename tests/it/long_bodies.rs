//! Many long bodies at once. Past 1 MiB a body goes on in an unnamed spool file under `--out`
//! (`src/spool.rs`), and so does its compressed record, so a crawl of many long downloads does
//! not hold each of them, twice, in memory; what is archived is the same, byte for byte.

use crate::args;
use crate::body_caps::chunked_as;
use crate::harness::{assert_valid, read_records, text, trawl};
use crate::hostile_cases::{raw, responses};
use crate::server::{Host, Route, Web};

const MIB: usize = 1 << 20;

/// `len` bytes that do not compress (xorshift), so that a record's gzip member is as long as
/// its body.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// The response record of `path` on `host`: exactly one.
fn block_of(records: &[crate::harness::Rec], host: &Host, path: &str) -> (Vec<u8>, Option<String>) {
    let url = host.url(path);
    let found: Vec<_> = responses(records, path)
        .into_iter()
        .filter(|r| r.target_uri.as_deref() == Some(url.as_str()))
        .collect();
    assert_eq!(found.len(), 1, "{url}");
    (found[0].block.clone(), found[0].truncated.clone())
}

/// `trawl crawl` archiving every type into `out`/warcs with its stats in `out`/stats.json,
/// quietly, with `extra` flags (seeds among them).
fn archive_all(out: &std::path::Path, extra: Vec<String>) -> Vec<String> {
    let mut a = args![
        "crawl",
        "--out",
        out.join("warcs").display(),
        "--stats",
        out.join("stats.json").display(),
        "--accept",
        "*/*",
        "-q"
    ];
    a.extend(extra);
    a
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_long_bodies_at_once_are_archived_whole_without_holding_them_in_memory() {
    let web = Web::default();
    let mut hosts = Vec::new();
    for i in 0..12u8 {
        let h = web.host(&format!("127.0.0.{}", 180 + i)).await;
        h.route(
            "/",
            Route::html(
                "<a href=/long.bin>a</a> <a href=/chunked.bin>b</a> <a href=/cut.bin>c</a>",
            ),
        );
        let seed = u64::from(i) + 1;
        h.route(
            "/long.bin",
            Route::typed(200, "application/octet-stream", &noise(6 * MIB, seed)),
        );
        h.route(
            "/chunked.bin",
            Route::typed(200, "application/octet-stream", &noise(2 * MIB, seed + 100)).chunked(),
        );
        h.route(
            "/cut.bin",
            Route::typed(200, "application/octet-stream", &noise(7 * MIB, seed + 200)),
        );
        hosts.push(h);
    }
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("warcs");
    let stats_path = out.path().join("stats.json");
    let mut a = args![
        "--delay",
        "0ms",
        "--concurrency",
        12,
        "--max-body-size",
        "6MiB",
        // Stored, not compressed: each member as long as its body, and quick to make in the
        // debug build.
        "--gzip-level",
        0,
        "--no-sitemaps"
    ];
    a.extend(hosts.iter().map(|h| h.url("/")));
    let result = trawl(archive_all(out.path(), a)).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));

    let records = read_records(&dir);
    for h in &hosts {
        for path in ["/long.bin", "/chunked.bin"] {
            let (block, truncated) = block_of(&records, h, path);
            assert_eq!(truncated, None, "{path}");
            assert!(
                block == h.wire_bytes(path),
                "{} not archived byte for byte",
                h.url(path)
            );
        }
        // Cut at the cap: the head and the first 6 MiB of the body, as received.
        let (block, truncated) = block_of(&records, h, "/cut.bin");
        assert_eq!(truncated.as_deref(), Some("length"));
        let wire = h.wire_bytes("/cut.bin");
        let head = wire.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        assert!(block == wire[..head + 6 * MIB], "cut body differs");
    }
    // Digests, framing and warcio's reading of every record.
    assert_valid(&dir).await;
    // Unnamed spool files leave nothing beside the WARCs.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name.ends_with(".warc.gz") || name.starts_with(".trawl"),
            "left in --out: {name}"
        );
    }
    // 12 bodies of 6 MiB in flight, each with a 6 MiB member: held in memory (as before the
    // spool files) the peak was 120 MB on this debug build, twice; with them 70 and 74 MB.
    let stats = crate::harness::read_json(&stats_path);
    let peak = stats["peak_rss_bytes"].as_u64().unwrap();
    assert!(peak < 95 << 20, "peak RSS {} MB", peak >> 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wgets_warc_tempdir_names_where_long_bodies_are_spooled() {
    let web = Web::default();
    let h = web.host("127.0.0.196").await;
    h.route("/", Route::html("<a href=/long.bin>a</a>"));
    h.route(
        "/long.bin",
        Route::typed(200, "application/octet-stream", &noise(2 * MIB, 7)),
    );
    let out = tempfile::tempdir().unwrap();
    let spool = tempfile::tempdir().unwrap();
    let dir = out.path().join("warcs");
    let crawl = |tempdir: String| {
        args![
            "crawl",
            h.url("/"),
            "--out",
            dir.display(),
            "--accept",
            "*/*",
            "--warc-tempdir",
            tempdir,
            "-q"
        ]
    };
    // A directory that is not there is named before the crawl starts.
    let missing = out.path().join("missing");
    let refused = trawl(crawl(missing.display().to_string())).await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("--warc-tempdir"),
        "{}",
        text(&refused)
    );

    let done = trawl(crawl(spool.path().display().to_string())).await;
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let records = read_records(&dir);
    let (block, truncated) = block_of(&records, &h, "/long.bin");
    assert_eq!(truncated, None);
    assert!(block == h.wire_bytes("/long.bin"));
    assert_eq!(std::fs::read_dir(spool.path()).unwrap().count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_whose_spool_file_fills_the_disk_is_cut_there_not_held_in_memory() {
    // A raised cap (an archivist keeping videos) and a spool directory on a 4 MiB file system:
    // the body goes to its spool file until the disk is full, and is cut there (a full disk
    // must not become an exhausted memory); the crawl goes on.
    let web = Web::default();
    let h = web.host("127.0.0.200").await;
    h.route(
        "/",
        Route::html("<a href=/video.bin>v</a><a href=/next>n</a>"),
    );
    h.route(
        "/video.bin",
        Route::typed(200, "application/octet-stream", &noise(40 * MIB, 11)),
    );
    h.route("/next", Route::html("<p>reached</p>"));
    let small = crate::unattended::Tmpfs::mount("4m");
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("warcs");
    let stats_path = out.path().join("stats.json");
    let done = trawl(archive_all(
        out.path(),
        args![
            h.url("/"),
            "--max-body-size",
            "1GiB",
            "--warc-tempdir",
            small.path.display()
        ],
    ))
    .await;
    let stats = crate::harness::read_json(&stats_path);
    assert_eq!(stats["errors"]["spool_file"], 1, "{stats} {}", text(&done));
    let records = read_records(&dir);
    let (block, truncated) = block_of(&records, &h, "/video.bin");
    assert_eq!(truncated.as_deref(), Some("length"));
    let sent = h.wire_bytes("/video.bin");
    assert!(
        // The spool file's share of the 4 MiB, the read it could not take (at most 1 MiB of
        // room) and a small read more; not what a fast peer had in the socket's buffer.
        block.len() > 3 * MIB && block.len() < 6 * MIB,
        "{} bytes archived",
        block.len()
    );
    assert!(
        sent.starts_with(&block),
        "the bytes as received, up to the cut"
    );
    assert!(!responses(&records, "/next").is_empty(), "{stats}");
    assert_valid(&dir).await;
    let peak = stats["peak_rss_bytes"].as_u64().unwrap();
    assert!(peak < 95 << 20, "peak RSS {} MB", peak >> 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_body_longer_than_the_memory_it_may_take_is_read_a_window_at_a_time() {
    let web = Web::default();
    let h = web.host("127.0.0.197").await;
    h.route(
        "/",
        Route::html("<a href=/disk.img>a</a> <a href=/stream.img>b</a>"),
    );
    let body = noise(96 * MIB, 11);
    h.route(
        "/disk.img",
        Route::typed(200, "application/octet-stream", &body),
    );
    // Chunked, in 64 KiB chunks: de-chunked into a spool file of its own, the response's
    // pages let go as the de-chunking reads them.
    let stream = chunked_as("application/octet-stream", &body, 64 << 10);
    h.behave("/stream.img", raw(&stream));
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("warcs");
    let stats_path = out.path().join("stats.json");
    let result = trawl(archive_all(
        out.path(),
        args![h.url("/"), "--max-body-size", "128MiB", "--gzip-level", 0],
    ))
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    // Each pass over a body (the search for a chunked one's end, its de-chunking, its
    // digests, its compression, the writer's write) reads its spool file 8 MiB at a time:
    // the crawl never holds the 96 MiB. On this debug build: 50 MB with the plain body
    // alone, 138 MB with its passes reading it whole; 61 MB with the chunked one too, 140 MB
    // with the chunked passes not letting go as they read.
    let stats = crate::harness::read_json(&stats_path);
    let peak = stats["peak_rss_bytes"].as_u64().unwrap();
    assert!(peak < 90 << 20, "peak RSS {} MB", peak >> 20);
    let records = read_records(&dir);
    for (path, wire) in [
        ("/disk.img", h.wire_bytes("/disk.img")),
        ("/stream.img", stream),
    ] {
        let (block, truncated) = block_of(&records, &h, path);
        assert_eq!(truncated, None);
        assert!(block == wire, "{path}");
    }
    assert_valid(&dir).await;
}
