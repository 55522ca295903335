//! The cookie jar against a site that sets a session cookie on its home page and serves its
//! members' area only to a request that sends it back: archived with the jar (the default),
//! refused without it (`--no-cookies`), archived with `--load-cookies` alone, kept across a
//! resume, and written by `--save-cookies`.

use crate::args;
use std::path::Path;

use crate::harness::{read_records, text, trawl, Rec};
use crate::server::{Behavior, Host, Route, Web};

const SESSION: &str = "session=s3cr3t";

/// `/` sets the session cookie and links to `/members/`, which answers 403 without it.
fn gated_site(host: &Host) {
    let mut home = Route::html(r#"<a href="/members/">members</a> <a href="/about">about</a>"#);
    home.headers
        .push(("Set-Cookie".into(), format!("{SESSION}; Path=/; HttpOnly")));
    home.headers.push((
        "Set-Cookie".into(),
        "tracker=1; Domain=127.0.0.3; Path=/".into(),
    ));
    host.route("/", home);
    host.route("/about", Route::html("<p>about</p>"));
    host.behave(
        "/members/",
        Behavior::Gated {
            cookie: SESSION.into(),
            with: Route::html(r#"<p>members only</p><a href="/members/list">list</a>"#),
            without: Route::typed(403, "text/html", b"<p>log in first</p>"),
        },
    );
    host.behave(
        "/members/list",
        Behavior::Gated {
            cookie: SESSION.into(),
            with: Route::html("<p>the list</p>"),
            without: Route::typed(403, "text/html", b"<p>log in first</p>"),
        },
    );
}

/// The HTTP status of the response archived for a URL ending in `path`.
fn status_of(records: &[Rec], path: &str) -> Option<u16> {
    records
        .iter()
        .find(|r| {
            r.warc_type == "response" && r.target_uri.as_deref().is_some_and(|u| u.ends_with(path))
        })?
        .status()
}

/// Crawls `url` into `out` with no delay and `extra` flags; the crawl must succeed. Returns
/// its output text.
async fn crawl(url: String, out: &Path, extra: &[&str]) -> String {
    let mut args = args!["crawl", url, "--out", out.display(), "--delay", "0ms"];
    args.extend(extra.iter().map(|a| a.to_string()));
    let result = trawl(args).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    text(&result)
}

/// The request record sent for a URL ending in `path`.
fn request_of<'a>(records: &'a [Rec], path: &str) -> &'a Rec {
    records
        .iter()
        .find(|r| {
            r.warc_type == "request" && r.target_uri.as_deref().is_some_and(|u| u.ends_with(path))
        })
        .unwrap_or_else(|| panic!("no request record for {path}"))
}

#[tokio::test]
async fn the_jar_opens_the_members_area_and_no_cookies_keeps_it_shut() {
    let web = Web::default();
    let a = web.host("127.0.0.3").await;
    gated_site(&a);
    let out = tempfile::tempdir().unwrap();
    let saved = out.path().join("cookies.txt");
    let saved_arg = saved.display().to_string();
    crawl(
        a.url("/"),
        &out.path().join("jar"),
        &["--save-cookies", &saved_arg, "-q"],
    )
    .await;
    let records = read_records(&out.path().join("jar"));
    assert_eq!(status_of(&records, "/members/"), Some(200));
    assert_eq!(status_of(&records, "/members/list"), Some(200));
    // The cookie sent is in the request record, as the bytes sent.
    let request = String::from_utf8_lossy(&request_of(&records, "/members/").block).to_string();
    assert!(
        request.contains(&format!("\r\nCookie: {SESSION}; tracker=1\r\n"))
            || request.contains(&format!("\r\nCookie: tracker=1; {SESSION}\r\n")),
        "{request}"
    );
    let first = String::from_utf8_lossy(&request_of(&records, "/").block).to_string();
    assert!(!first.contains("Cookie:"), "{first}");
    // --save-cookies: the session cookie, HttpOnly, in the Netscape format.
    let file = std::fs::read_to_string(&saved).unwrap();
    assert!(file.starts_with("# Netscape HTTP Cookie File"), "{file}");
    assert!(
        file.contains("#HttpOnly_127.0.0.3\tFALSE\t/\tFALSE\t0\tsession\ts3cr3t\n"),
        "{file}"
    );

    let none = out.path().join("none");
    crawl(a.url("/"), &none, &["--no-cookies", "-q"]).await;
    let records = read_records(&none);
    assert_eq!(status_of(&records, "/members/"), Some(403));
    assert_eq!(status_of(&records, "/members/list"), None, "never linked");
    assert!(records
        .iter()
        .filter(|r| r.warc_type == "request")
        .all(|r| !String::from_utf8_lossy(&r.block).contains("Cookie:")));
}

#[tokio::test]
async fn load_cookies_alone_opens_the_members_area() {
    let web = Web::default();
    let a = web.host("127.0.0.3").await;
    gated_site(&a);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("cookies.txt");
    // As a browser's exporter writes it: a comment, a leading-dot domain, a bad line.
    std::fs::write(
        &file,
        "# Netscape HTTP Cookie File\n\
         127.0.0.3\tFALSE\t/members\tFALSE\t0\tsession\ts3cr3t\n\
         this line is not a cookie\n",
    )
    .unwrap();
    let file_arg = file.display().to_string();
    let log = crawl(
        a.url("/members/"),
        &out.path().join("w"),
        &["--load-cookies", &file_arg],
    )
    .await;
    let records = read_records(&out.path().join("w"));
    assert_eq!(status_of(&records, "/members/"), Some(200));
    assert_eq!(status_of(&records, "/members/list"), Some(200));
    assert!(log.contains("line 3"), "the bad line is reported: {log}");

    // A file with no cookie at all, or none at all, stops the crawl before it starts.
    std::fs::write(&file, "garbage\n").unwrap();
    for path in [file.clone(), out.path().join("missing.txt")] {
        let refused = trawl(args![
            "crawl",
            a.url("/"),
            "--out",
            out.path().join("x").display(),
            "--load-cookies",
            path.display()
        ])
        .await;
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
        assert!(
            text(&refused).contains("--load-cookies"),
            "{}",
            text(&refused)
        );
    }
}

#[tokio::test]
async fn a_resumed_crawl_keeps_its_cookies() {
    let web = Web::default();
    let a = web.host("127.0.0.3").await;
    gated_site(&a);
    let out = tempfile::tempdir().unwrap();
    // The first run stops after the home page: the cookie is set, /members/ is queued.
    crawl(a.url("/"), out.path(), &["--max-pages", "1", "-q"]).await;
    assert_eq!(status_of(&read_records(out.path()), "/members/"), None);
    // The raised target resumes the crawl from its frontier, with the saved jar.
    crawl(a.url("/"), out.path(), &["--max-pages", "10", "-q"]).await;
    let records = read_records(out.path());
    assert_eq!(status_of(&records, "/members/"), Some(200));
    assert_eq!(status_of(&records, "/members/list"), Some(200));
}

/// A cookie check: `/check` answers a request without its cookie by setting it and
/// redirecting to itself; with the cookie, the page. Followed once the cookie is kept (as
/// Chromium and wget follow it); without the jar a redirect to itself is fetched once.
#[tokio::test]
async fn a_redirect_to_itself_that_sets_a_cookie_is_followed_with_it() {
    let web = Web::default();
    let a = web.host("127.0.0.3").await;
    a.route(
        "/",
        Route::html(r#"<a href="/check">in</a><a href="/stuck">s</a><a href="/refused">r</a>"#),
    );
    // A check that never lets in: one fetch more, with the cookie, and no loop after it.
    let mut stuck = Route::redirect(302, "/stuck");
    stuck
        .headers
        .push(("Set-Cookie".into(), "stuck=1; Path=/".into()));
    a.route("/stuck", stuck);
    // A cookie the jar refuses (another domain) changes nothing: fetched once.
    let mut refused = Route::redirect(302, "/refused");
    refused.headers.push((
        "Set-Cookie".into(),
        "x=1; Domain=elsewhere.example; Path=/".into(),
    ));
    a.route("/refused", refused);
    let mut set_and_return = Route::redirect(302, "/check");
    set_and_return
        .headers
        .push(("Set-Cookie".into(), format!("{SESSION}; Path=/")));
    a.behave(
        "/check",
        Behavior::Gated {
            cookie: SESSION.into(),
            with: Route::html(r#"<p>past the check</p><a href="/inside">inside</a>"#),
            without: set_and_return,
        },
    );
    a.route("/inside", Route::html("<p>inside</p>"));
    let out = tempfile::tempdir().unwrap();
    crawl(a.url("/"), &out.path().join("jar"), &["-q"]).await;
    let records = read_records(&out.path().join("jar"));
    let statuses: Vec<Option<u16>> = records
        .iter()
        .filter(|r| r.warc_type == "response" && r.path() == "/check")
        .map(Rec::status)
        .collect();
    assert_eq!(statuses, [Some(302), Some(200)]);
    assert_eq!(status_of(&records, "/inside"), Some(200));
    let fetches = |path: &str| {
        records
            .iter()
            .filter(|r| r.warc_type == "response" && r.path() == path)
            .count()
    };
    assert_eq!((fetches("/stuck"), fetches("/refused")), (2, 1));

    let none = out.path().join("none");
    crawl(a.url("/"), &none, &["--no-cookies", "-q"]).await;
    let records = read_records(&none);
    let checks = records
        .iter()
        .filter(|r| r.warc_type == "response" && r.path() == "/check")
        .count();
    assert_eq!(checks, 1, "without a jar the cookie would never be sent");
    assert_eq!(status_of(&records, "/inside"), None);
}
