//! WET and WAT derivatives: the text of hand-checked fixture pages (entities, scripts, nested
//! blocks, non-UTF-8 charsets), the WAT head and links, both read by warcio and FastWARC
//! (scripts/derive_check.py); `trawl derive` against crawl-time derivatives, catching up after
//! an interrupted derivation; hostile bodies bounded; page titles in WACZ.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::args;
use crate::harness::{run_script, text, trawl, warc_files};
use crate::server::{Host, Route, Web};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/text")
}

/// (name, Content-Type) of each fixture page.
fn fixture_pages() -> Vec<(String, String)> {
    std::fs::read_to_string(fixtures().join("pages.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (n, t) = l.split_once('\t').unwrap();
            (n.to_string(), t.to_string())
        })
        .collect()
}

const INDEX: &str = r#"<html><head><title>Fixtures</title>
<meta name="description" content="text fixtures">
<link rel="stylesheet" href="/s.css"></head>
<body><h1>Text fixtures</h1>
<p>This page links to every fixture page of the text extraction tests, so that the crawler
finds them all and the derivatives can be compared with the texts written by hand.</p>
LINKS</body></html>"#;

async fn fixture_site() -> (Web, Host) {
    let web = Web::default();
    let h = web.host("127.0.0.60").await;
    let mut links = String::new();
    for (name, ctype) in fixture_pages() {
        let body = std::fs::read(fixtures().join(format!("{name}.html"))).unwrap();
        h.route(&format!("/{name}.html"), Route::typed(200, &ctype, &body));
        links.push_str(&format!(
            "<a href=\"/{name}.html\">Page <b>{name}</b></a>\n"
        ));
    }
    h.route("/", Route::html(&INDEX.replace("LINKS", &links)));
    h.route("/s.css", Route::typed(200, "text/css", b"p{}"));
    // A single-page app's server answers every path with its HTML shell, robots.txt and
    // sitemap.xml too.
    for path in ["/robots.txt", "/sitemap.xml"] {
        h.route(
            path,
            Route::html("<!doctype html><title>App</title><div id=app></div>"),
        );
    }
    (web, h)
}

/// A crawl of the fixture site into `out`, no delay, 6 records per WARC, plus `extra` flags.
async fn crawl_fixtures(h: &Host, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut a = args![
        "crawl",
        h.url("/"),
        "--out",
        out.display(),
        "--delay",
        "0ms",
        "-q",
        "--records-per-file",
        "6"
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    trawl(a).await
}

async fn check(warc_dir: &Path, derived_dir: &Path) -> Value {
    let out = run_script(
        "derive_check.py",
        args![warc_dir.display(), derived_dir.display()],
    )
    .await;
    assert!(out.status.success(), "derive_check: {}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["errors"],
        serde_json::json!([]),
        "{}",
        report["errors"]
    );
    report
}

fn derivative_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wet.gz") || n.ends_with(".wat.gz") || n.ends_with(".part"))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_wet_and_wat_match_hand_written_texts() {
    let (_web, h) = fixture_site().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let res = crawl_fixtures(&h, &out, &["--wet", "--wat"]).await;
    assert!(res.status.success(), "{}", text(&res));
    // Every WARC got both derivatives beside it, and no partial file is left.
    let warcs = warc_files(&out);
    assert!(warcs.len() >= 3, "rotation should give several files");
    assert_eq!(derivative_names(&out).len(), 2 * warcs.len());
    let report = check(&out, &out).await;

    for (name, _) in fixture_pages() {
        let expected = std::fs::read_to_string(fixtures().join(format!("{name}.txt"))).unwrap();
        let got = &report["wet"][h.url(&format!("/{name}.html"))]["text"];
        assert_eq!(
            got.as_str(),
            Some(expected.trim_end()),
            "WET text of {name}"
        );
    }
    let index = &report["wet"][h.url("/")];
    assert_eq!(index["lang"], "eng", "{index}");
    assert!(index["text"]
        .as_str()
        .unwrap()
        .starts_with("Fixtures\nText fixtures\nThis page"));
    // The stylesheet is archived but has no text.
    assert!(report["wet"][h.url("/s.css")].is_null());

    let wat = &report["wat"][h.url("/")]["Envelope"]["Payload-Metadata"]["HTTP-Response-Metadata"];
    assert_eq!(wat["Response-Message"]["Status"], "200");
    assert_eq!(wat["Headers"]["Content-Type"], "text/html; charset=utf-8");
    let html = &wat["HTML-Metadata"];
    assert_eq!(html["Head"]["Title"], "Fixtures");
    assert_eq!(
        html["Head"]["Metas"][0],
        serde_json::json!({"name": "description", "content": "text fixtures"})
    );
    assert_eq!(
        html["Head"]["Link"][0],
        serde_json::json!({"path": "LINK@/href", "url": "/s.css", "rel": "stylesheet"})
    );
    assert_eq!(
        html["Links"][0],
        serde_json::json!({"path": "A@/href", "url": "/entities.html", "text": "Page entities"})
    );
    assert_eq!(
        html["Links"].as_array().unwrap().len(),
        fixture_pages().len()
    );

    // WACZ pages carry the titles (decoded with each page's charset).
    let wacz = dir.path().join("c.wacz");
    let res = trawl(args!["wacz", wacz.display(), out.display()]).await;
    assert!(res.status.success(), "{}", text(&res));
    let pages = read_zip_entry(&wacz, "pages/pages.jsonl");
    let title_of = |url: &str| -> Option<String> {
        pages.lines().skip(1).find_map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["url"] == url).then(|| v["title"].as_str().unwrap().to_string())
        })
    };
    assert_eq!(title_of(&h.url("/")).as_deref(), Some("Fixtures"));
    // A robots.txt or sitemap answered with HTML is no page (each was listed, and the main
    // page).
    assert_eq!(title_of(&h.url("/robots.txt")), None, "{pages}");
    assert_eq!(title_of(&h.url("/sitemap.xml")), None, "{pages}");
    let package: Value = serde_json::from_str(&read_zip_entry(&wacz, "datapackage.json")).unwrap();
    assert_eq!(package["mainPageURL"], h.url("/"), "{package}");
    assert_eq!(
        title_of(&h.url("/meta-shift-jis.html")).as_deref(),
        Some("日本語のページ")
    );
}

fn read_zip_entry(path: &Path, name: &str) -> String {
    let out = std::process::Command::new(crate::harness::python())
        .args([
            "-c",
            "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())",
        ])
        .arg(path)
        .arg(name)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn derive_command_and_catching_up_on_resume() {
    let (_web, h) = fixture_site().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let res = crawl_fixtures(&h, &out, &[]).await;
    assert!(res.status.success(), "{}", text(&res));
    assert!(derivative_names(&out).is_empty());
    let first_warcs = warc_files(&out);

    // Afterwards, from the WARCs.
    let derived = dir.path().join("derived");
    let res = trawl(args![
        "derive",
        "all",
        out.display(),
        "-o",
        derived.display()
    ])
    .await;
    assert!(res.status.success(), "{}", text(&res));
    let offline = check(&out, &derived).await;

    // A derivation killed mid-way leaves only a .part file: it does not count as done. A
    // recrawl with --wet/--wat first derives the earlier WARCs, then its own as they close.
    let stale = out.join(format!(
        "{}.wet.gz.part",
        first_warcs[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".gz")
    ));
    std::fs::write(&stale, b"half a file").unwrap();
    let res = crawl_fixtures(&h, &out, &["--recrawl", "--wet", "--wat"]).await;
    assert!(res.status.success(), "{}", text(&res));
    let all_warcs = warc_files(&out);
    assert!(all_warcs.len() > first_warcs.len());
    let names = derivative_names(&out);
    assert_eq!(names.len(), 2 * all_warcs.len(), "{names:?}");
    assert!(!stale.exists(), "the stale .part file was replaced");
    let during = check(&out, &out).await;
    // The same WARCs give the same text, whichever way they were derived.
    for (url, page) in offline["wet"].as_object().unwrap() {
        assert_eq!(during["wet"][url]["text"], page["text"], "{url}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bodies_are_bounded() {
    let web = Web::default();
    let h = web.host("127.0.0.61").await;
    h.route(
        "/",
        Route::html(r#"<a href="/huge">h</a><a href="/binary">b</a><a href="/deep">d</a><a href="/links">l</a><a href="/bomb">g</a><a href="/unclosed">u</a>"#),
    );
    h.route(
        "/huge",
        Route::html(&format!("<p>{}</p>", "word ".repeat(400_000))),
    );
    let garbage: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    h.route("/binary", Route::typed(200, "text/html", &garbage));
    h.route(
        "/deep",
        Route::html(&format!(
            "{}deep{}",
            "<div>".repeat(50_000),
            "</div>".repeat(50_000)
        )),
    );
    h.route("/links", Route::html(&"<a href=/x>x</a>".repeat(30_000)));
    // 200 KB of spaces gzip to a few hundred bytes; the page is archived as sent.
    h.route(
        "/bomb",
        Route::html(&format!("<p>{}bomb</p>", " ".repeat(5_000_000))).gzip(),
    );
    h.route(
        "/unclosed",
        Route::html("<title>never closed <p>and <a href=/z>an anchor"),
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let res = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.display(),
        "--delay",
        "0ms",
        "-q",
        "--max-depth",
        "1"
    ])
    .await;
    assert!(res.status.success(), "{}", text(&res));
    let derived = dir.path().join("derived");
    let res = trawl(args![
        "derive",
        "all",
        out.display(),
        "-o",
        derived.display(),
        "--max-text",
        "4KiB"
    ])
    .await;
    assert!(res.status.success(), "{}", text(&res));
    let report = check(&out, &derived).await;
    for (url, page) in report["wet"].as_object().unwrap() {
        assert!(page["text"].as_str().unwrap().len() <= 4096 + 2048, "{url}");
    }
    assert!(report["wet"][h.url("/huge")]["text"]
        .as_str()
        .unwrap()
        .starts_with("word word"));
    // A text cut at its cap says so; a whole one says nothing.
    assert_eq!(report["wet"][h.url("/huge")]["truncated"], "length");
    assert!(report["wet"][h.url("/deep")]["text"] == "deep");
    assert!(report["wet"][h.url("/deep")]["truncated"].is_null());
    assert_eq!(report["wet"][h.url("/bomb")]["text"], "bomb");
    let links = &report["wat"][h.url("/links")]["Envelope"]["Payload-Metadata"]
        ["HTTP-Response-Metadata"]["HTML-Metadata"]["Links"];
    assert_eq!(links.as_array().unwrap().len(), 10_000, "links capped");
    let unclosed = &report["wat"][h.url("/unclosed")]["Envelope"]["Payload-Metadata"]
        ["HTTP-Response-Metadata"]["HTML-Metadata"];
    assert!(unclosed["Head"]["Title"]
        .as_str()
        .unwrap()
        .starts_with("never closed"));
}
