//! After a kill -9, the replay of the WARC files written since the last save point rebuilds
//! what each archived capture led to, as its job read it: a stylesheet fetched as a page's
//! requisite leads to the images it names, a page to its requisites, so nothing the killed
//! run had still to fetch is lost and nothing it had fetched is fetched again.

use std::io::{BufRead, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::args;
use crate::harness::{spawn_trawl, text, trawl};
use crate::server::{Host, Route, Web};

/// Killed between a stylesheet and the image only it names (the delay spaces the fetches,
/// all before the first periodic save point): the resumed run fetches the image, once, and
/// none of the page, its stylesheet or its icon again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stylesheet_archived_before_a_kill_still_leads_to_its_images() {
    let web = Web::default();
    let h = web.host("127.0.0.131").await;
    h.route(
        "/",
        Route::html(r#"<link rel=stylesheet href=/site.css><link rel=icon href=/icon.png>"#),
    );
    h.route(
        "/site.css",
        Route::typed(200, "text/css", b"body { background: url(/back.png) }"),
    );
    for png in ["/back.png", "/icon.png"] {
        h.route(png, Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let crawl = |delay: &str| crawl_args(&h, &out, delay, &["--page-requisites"]);
    // Its records written, the next fetch (1.5 s away) not begun.
    let killed_after = kill_once(&web, &h, &crawl("1500ms"), &out, "/site.css", |paths| {
        paths.iter().any(|p| p == "/site.css")
    })
    .await;
    assert!(
        !killed_after.iter().any(|p| p == "/back.png"),
        "killed too late: {killed_after:?}"
    );
    resume_and_count_once(
        &web,
        &h,
        crawl("700ms"),
        &["/", "/site.css", "/back.png", "/icon.png"],
    )
    .await;
}

/// Killed after robots.txt (moved by a redirect), the sitemap it lists and a page, before the
/// first periodic save point: the replay applies the robots.txt rules and reads the sitemap
/// from their records, so the resumed run fetches neither again (before, each was fetched
/// once more per crash), still obeys the rules, and fetches every page once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_txt_and_its_sitemap_archived_before_a_kill_are_not_fetched_again() {
    let web = Web::default();
    let h = web.host("127.0.0.140").await;
    h.route("/robots.txt", Route::redirect(301, "/robots-moved.txt"));
    h.route(
        "/robots-moved.txt",
        Route::typed(
            200,
            "text/plain",
            b"User-agent: *\nDisallow: /private\nSitemap: /map.xml\n",
        ),
    );
    let map = format!(
        "<urlset><url><loc>{}</loc></url><url><loc>{}</loc></url></urlset>",
        h.url("/a"),
        h.url("/b")
    );
    h.route(
        "/map.xml",
        Route::typed(200, "application/xml", map.as_bytes()),
    );
    h.route("/", Route::html("<a href=/c>c</a> <a href=/private>no</a>"));
    for page in ["/a", "/b", "/c", "/private"] {
        h.route(page, Route::html("<p>a page</p>"));
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let crawl = |delay: &str| crawl_args(&h, &out, delay, &[]);
    // Its records written, the next fetch (1.5 s away) not begun.
    let before = kill_once(
        &web,
        &h,
        &crawl("1500ms"),
        &out,
        "a page after the sitemap",
        |paths| {
            paths
                .iter()
                .skip_while(|p| *p != "/map.xml")
                .nth(1)
                .is_some()
        },
    )
    .await;
    assert!(before.len() < 7, "killed too late: {before:?}");
    let once = [
        "/robots.txt",
        "/robots-moved.txt",
        "/map.xml",
        "/",
        "/a",
        "/b",
        "/c",
    ];
    let fetched = resume_and_count_once(&web, &h, crawl("600ms"), &once).await;
    assert!(!fetched.iter().any(|p| p == "/private"), "{fetched:?}");
}

/// `trawl crawl` of `h`'s root into `out`, `delay` between its fetches, with `extra` flags.
fn crawl_args(h: &Host, out: &Path, delay: &str, extra: &[&str]) -> Vec<String> {
    let mut a = args![
        "crawl",
        h.url("/"),
        "--out",
        out.display(),
        "--delay",
        delay,
        "-q"
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Runs `crawl` and kills it with -9 once the host's requests satisfy `ready` (`what`: what
/// is waited for) and the response record of the last of them is in a WARC file in `out`
/// (waited for, not slept: a loaded machine writes it late, and a fixed wait then killed
/// before it, or after the next fetch began); the paths requested by then.
async fn kill_once(
    web: &Web,
    h: &Host,
    crawl: &[String],
    out: &Path,
    what: &str,
    ready: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let mut child = spawn_trawl(crawl.to_vec());
    let deadline = Instant::now() + Duration::from_secs(30);
    let last = loop {
        let paths = web.paths_of(h);
        if ready(&paths) {
            break paths.last().cloned().expect("a request");
        }
        assert!(Instant::now() < deadline, "{what} was not fetched");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    while !has_response(out, &h.url(&last)) {
        assert!(Instant::now() < deadline, "{last} was not archived");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    web.paths_of(h)
}

/// Runs `crawl` to its end and asserts that each of `paths` was requested once in all; the
/// paths requested.
async fn resume_and_count_once(
    web: &Web,
    h: &Host,
    crawl: Vec<String>,
    paths: &[&str],
) -> Vec<String> {
    let again = trawl(crawl).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let fetched = web.paths_of(h);
    for path in paths {
        let times = fetched.iter().filter(|p| p == path).count();
        assert_eq!(times, 1, "{path} fetched {times} times: {fetched:?}");
    }
    fetched
}

/// True when a WARC file in `out`, the one still being written included, holds a response
/// record for `url` in a complete gzip member.
fn has_response(out: &Path, url: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(out) else {
        return false;
    };
    let target = format!("WARC-Target-URI: {url}\r\n");
    entries.flatten().any(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.contains(".warc.gz") {
            return false;
        }
        let Ok(file) = std::fs::File::open(entry.path()) else {
            return false;
        };
        // Whole members only (one record each): one the writer is still writing ends the read.
        let mut reader = std::io::BufReader::new(file);
        let mut text = Vec::new();
        while reader.fill_buf().is_ok_and(|b| !b.is_empty()) {
            let mut member = Vec::new();
            if flate2::bufread::GzDecoder::new(&mut reader)
                .read_to_end(&mut member)
                .is_err()
            {
                break;
            }
            text.extend_from_slice(&member);
        }
        let text = String::from_utf8_lossy(&text);
        text.split("WARC/1.1\r\n")
            .any(|head| head.starts_with("WARC-Type: response\r\n") && head.contains(&target))
    })
}
