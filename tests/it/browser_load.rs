//! A page as a browser loads it: headless Chromium's requests against a `--page-requisites`
//! crawl's WARC (`fixtures/page-as-chromium-loads-it`).

use std::collections::BTreeSet;
use std::path::Path;

use crate::crawl_site::crawl_without_delay;
use crate::harness::{read_records, text};
use crate::server::{Route, Web};

/// The fixture's files, each with the type a server gives its extension.
fn fixture_files() -> Vec<(String, &'static str, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/page-as-chromium-loads-it");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            let ext = name.rsplit('.').next().unwrap_or_default();
            let media = match ext {
                "html" => "text/html; charset=utf-8",
                "xhtml" => "application/xhtml+xml",
                "css" => "text/css",
                "js" => "text/javascript",
                "svg" => "image/svg+xml",
                "png" => "image/png",
                "jpg" => "image/jpeg",
                "webp" => "image/webp",
                "woff2" => "font/woff2",
                "woff" => "font/woff",
                "mp4" => "video/mp4",
                "mp3" => "audio/mpeg",
                "vtt" => "text/vtt",
                "pdf" => "application/pdf",
                "webmanifest" => "application/manifest+json",
                other => panic!("no type for .{other}"),
            };
            (format!("/{name}"), media, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Every URL headless Chromium asks for as it loads the page (stylesheets and what they
/// import, fonts, picture sources, media, objects, SVG uses, module scripts, the manifest,
/// frames and what they need, an `iframe srcdoc`'s image, ...) is in the WARC of a `--page-requisites` crawl of the same page
/// on another host: a replay has what the browser needs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_with_requisites_archives_all_that_chromium_loads() {
    let web = Web::default();
    let crawled = web.host("127.0.0.115").await;
    let browsed = web.host("127.0.0.116").await;
    let files = fixture_files();
    for (path, media, body) in &files {
        crawled.route(path, Route::typed(200, media, body));
        browsed.route(path, Route::typed(200, media, body));
    }
    let out = tempfile::tempdir().unwrap();
    let res = crawl_without_delay(
        crawled.url("/index.html"),
        out.path(),
        &["--page-requisites", "--no-sitemaps"],
    )
    .await;
    assert_eq!(res.status.code(), Some(0), "{}", text(&res));
    let archived: BTreeSet<String> = read_records(out.path())
        .into_iter()
        .filter(|r| r.warc_type == "response")
        .filter_map(|r| {
            r.target_uri?
                .strip_prefix(&crawled.url(""))
                .map(str::to_string)
        })
        .collect();

    let chromium = which("chromium").unwrap_or_else(|| "/usr/bin/chromium".into());
    let profile_dir = tempfile::tempdir().unwrap();
    let profile = format!("--user-data-dir={}", profile_dir.path().display());
    let page = browsed.url("/index.html");
    // Off the async runtime (the page's server runs on it), bounded by coreutils' timeout.
    let program = chromium.clone();
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new("timeout")
            .args([
                "90",
                &program,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
            ])
            .args([&profile, "--virtual-time-budget=5000", "--dump-dom", &page])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("run timeout (coreutils)")
    })
    .await
    .unwrap();
    assert!(
        status.success(),
        "{chromium} loading the page: {status} (scripts/test installs chromium)"
    );
    let served: BTreeSet<&str> = files.iter().map(|(p, _, _)| p.as_str()).collect();
    let asked: BTreeSet<String> = web
        .paths_of(&browsed)
        .into_iter()
        .filter(|p| served.contains(p.as_str()))
        .collect();
    // The page loads much of what it names (the test means nothing if Chromium did not),
    // down to what its frames need: an HTML frame's stylesheet and its image, an SVG frame's
    // script and image, an XHTML frame's image past its `<title/>` and its
    // `<?xml-stylesheet?>`'s image, and a frameset's frame's image.
    assert!(asked.len() >= 35, "chromium asked for {asked:?}");
    for path in [
        "/frame-css-bg.png",
        "/svgpan.js",
        "/graph-node.png",
        "/xhtml-img.png",
        "/menu-img.png",
        "/xhtml-css-bg.png",
    ] {
        assert!(asked.contains(path), "chromium asked for {asked:?}");
    }
    let missing: Vec<&String> = asked.difference(&archived).collect();
    assert!(
        missing.is_empty(),
        "chromium asked for {missing:?}, which the crawl did not archive (archived: {archived:?})"
    );
}

/// The path of `program` on `PATH`.
fn which(program: &str) -> Option<String> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join(program))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
}
