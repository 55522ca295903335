//! A page as a browser loads it: headless Chromium's requests against a `--page-requisites`
//! crawl's WARC (`fixtures/page-as-chromium-loads-it`).

use std::collections::BTreeSet;
use std::path::Path;

use crate::harness::crawl_without_delay;
use crate::harness::{read_records, text};
use crate::server::{Route, Web};

/// The files under `fixtures/FIXTURE`, by path from its root, each with the type a server
/// gives its extension.
fn fixture_files(fixture: &str) -> Vec<(String, &'static str, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(fixture);
    let mut dirs = vec![root.clone()];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = path
                .strip_prefix(&root)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
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
            files.push((format!("/{name}"), media, std::fs::read(&path).unwrap()));
        }
    }
    files.sort();
    files
}

/// What headless Chromium asked for as it loaded `/index.html` of `fixtures/FIXTURE` from
/// one host, and what a `--page-requisites` crawl of the same files on another host
/// archived (paths of 2xx responses).
async fn chromium_and_the_crawl(
    fixture: &str,
    crawled_ip: &str,
    browsed_ip: &str,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let web = Web::default();
    let crawled = web.host(crawled_ip).await;
    let browsed = web.host(browsed_ip).await;
    let files = fixture_files(fixture);
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
    (asked, archived)
}

/// Fails naming what Chromium asked for and the crawl did not archive.
fn assert_archived_all_asked(asked: &BTreeSet<String>, archived: &BTreeSet<String>) {
    let missing: Vec<&String> = asked.difference(archived).collect();
    assert!(
        missing.is_empty(),
        "chromium asked for {missing:?}, which the crawl did not archive (archived: {archived:?})"
    );
}

/// Every URL headless Chromium asks for as it loads the page (stylesheets and what they
/// import, fonts, picture sources, media, objects, SVG uses, module scripts, the manifest,
/// frames and what they need, an `iframe srcdoc`'s image, ...) is in the WARC of a `--page-requisites` crawl of the same page
/// on another host: a replay has what the browser needs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_with_requisites_archives_all_that_chromium_loads() {
    let (asked, archived) =
        chromium_and_the_crawl("page-as-chromium-loads-it", "127.0.0.115", "127.0.0.116").await;
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
    assert_archived_all_asked(&asked, &archived);
    // Chromium asks for the manifest's icon (and the page's icon) late, after the page has
    // loaded, and not on every run when the machine is busy: the crawl must have it anyway.
    assert!(
        archived.contains("/manifest-icon.png"),
        "the manifest's icon: {archived:?}"
    );
}

/// A single-page app as bundlers build it names its images, chunks, worker and lazily
/// loaded stylesheet only in its scripts (module imports, `new URL(…, import.meta.url)`,
/// an import map, strings of asset paths): a `--page-requisites` crawl archives every one
/// Chromium loads, and nothing a comment or a regular expression mentions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_with_requisites_archives_what_a_bundled_apps_scripts_load() {
    let (asked, archived) =
        chromium_and_the_crawl("app-as-a-bundler-builds-it", "127.0.0.119", "127.0.0.120").await;
    // What only the scripts name, down to a lazily loaded chunk's image and stylesheet's
    // background: the test means nothing unless Chromium ran them.
    for path in [
        "/assets/vendor-77aa.js",
        "/assets/hero-5e6f.png",
        "/assets/lazy-pic-2e3f.svg",
        "/assets/lazy-bg-4a5b.png",
        "/assets/worker-1c2d.js",
        "/assets/icon-7b8c.svg",
        "/assets/inline-6c7d.png",
        "/static/media/logo.1f2e3d.png",
    ] {
        assert!(asked.contains(path), "chromium asked for {asked:?}");
    }
    assert_archived_all_asked(&asked, &archived);
    assert!(
        !archived.iter().any(|p| p.contains("never-in")),
        "{archived:?}"
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
