//! The `Referer` each request carries: the document its URL was found in, under browsers'
//! default policy (the whole URL within its origin, the origin alone elsewhere, nothing from
//! https to http), kept through redirects and resumes; `--referer` for the seeds and
//! `--no-referer` to send none; a page's own policy (`<meta name="referrer">`, the
//! `Referrer-Policy` header) for its links. Checked on the server's side and in the request
//! records.

use std::path::Path;
use std::process::Output;

use crate::args;
use crate::harness::{read_records, text, trawl, Rec};
use crate::server::{Behavior, Host, Route, Web};

/// The Referer field of the one request the server saw for `path` on `host`.
pub(crate) fn referer(web: &Web, host: &Host, path: &str) -> Option<String> {
    let mut sent = web.field_of_requests(host, path, "referer");
    assert_eq!(sent.len(), 1, "requests for {path}");
    sent.pop().flatten()
}

/// Crawls from `seed` into `out` with no delay and `flags`; loopback addresses allowed.
pub(crate) async fn crawl(seed: &str, out: &Path, flags: &[&str]) -> Output {
    let mut args = args![
        "crawl",
        seed,
        "--allow-private",
        "--delay",
        "0ms",
        "--out",
        out.display()
    ];
    args.extend(flags.iter().map(|f| f.to_string()));
    trawl(args).await
}

fn status_of(records: &[Rec], url: &str) -> Option<u16> {
    records
        .iter()
        .find(|r| r.warc_type == "response" && r.target_uri.as_deref() == Some(url))?
        .status()
}

/// An image that only a page of `host` may load: 200 with a Referer from it, 403 without.
fn hotlinked(host: &Host, path: &str) {
    host.behave(
        path,
        Behavior::Hotlinked {
            referer: host.url("/"),
            with: Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\nok"),
            without: Route::typed(403, "text/plain", b"no hotlinking"),
        },
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_carry_the_referer_a_browser_sends() {
    let web = Web::default();
    let a = web.host("127.0.0.84").await;
    let b = web.host("127.0.0.85").await;
    let secure = web.tls_host("127.0.0.86").await;
    let secure_url = |path: &str| format!("https://{}{path}", secure.addr);
    let page = a.url("/docs/page.html?s=1");
    a.route(
        "/docs/page.html?s=1",
        Route::html(&format!(
            r#"<link rel="stylesheet" href="/s.css"><img src="/img/logo.png">
            <a href="next.html#part">next</a><a href="/moved">moved</a>
            <a href="{}">other host</a><a href="{}">secure</a>"#,
            b.url("/b.html"),
            secure_url("/s.html"),
        )),
    );
    a.route(
        "/s.css",
        Route::typed(200, "text/css", b"body{background:url(/img/bg.png)}"),
    );
    hotlinked(&a, "/img/logo.png");
    hotlinked(&a, "/img/bg.png");
    a.route("/docs/next.html", Route::html("<p>next</p>"));
    a.route("/moved", Route::redirect(301, &b.url("/landing.html")));
    a.route("/from-https.html", Route::html("<p>from https</p>"));
    b.route("/b.html", Route::html("<p>b</p>"));
    b.route("/landing.html", Route::html("<p>landing</p>"));
    secure.route(
        "/s.html",
        Route::html(&format!(
            r#"<a href="{}">down to http</a><a href="/s2.html?k=v">same origin</a>"#,
            a.url("/from-https.html")
        )),
    );
    secure.route("/s2.html?k=v", Route::html("<p>s2</p>"));
    let out = tempfile::tempdir().unwrap();
    let flags = [
        "--referer",
        "https://portal.example/links?from=mail",
        "--page-requisites",
        "--scope",
        "any",
        "--insecure",
    ];
    let result = crawl(&page, out.path(), &flags).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));

    // The seed: the operator's --referer; robots.txt: none.
    let portal = Some("https://portal.example/links?from=mail");
    assert_eq!(referer(&web, &a, "/docs/page.html?s=1").as_deref(), portal);
    assert_eq!(referer(&web, &a, "/robots.txt").as_deref(), None);
    // Within the page's origin: the whole URL, without the fragment of the link.
    let whole = Some(page.as_str());
    assert_eq!(referer(&web, &a, "/docs/next.html").as_deref(), whole);
    assert_eq!(referer(&web, &a, "/s.css").as_deref(), whole);
    assert_eq!(referer(&web, &a, "/img/logo.png").as_deref(), whole);
    // What a stylesheet loads is referred by the stylesheet.
    assert_eq!(
        referer(&web, &a, "/img/bg.png").as_deref(),
        Some(a.url("/s.css").as_str())
    );
    // To another origin: the page's origin alone, for a link and for a redirect's target,
    // which keeps the first request's referrer.
    let origin = a.url("/");
    let origin = Some(origin.as_str());
    assert_eq!(referer(&web, &b, "/b.html").as_deref(), origin);
    assert_eq!(referer(&web, &a, "/moved").as_deref(), whole);
    assert_eq!(referer(&web, &b, "/landing.html").as_deref(), origin);
    assert_eq!(referer(&web, &secure, "/s.html").as_deref(), origin);
    // From https: the whole URL within its origin, nothing down to http.
    assert_eq!(
        referer(&web, &secure, "/s2.html?k=v").as_deref(),
        Some(secure_url("/s.html").as_str())
    );
    assert_eq!(referer(&web, &a, "/from-https.html").as_deref(), None);

    // The hotlink-protected images were archived as a visitor sees them.
    let records = read_records(out.path());
    assert_eq!(status_of(&records, &a.url("/img/logo.png")), Some(200));
    assert_eq!(status_of(&records, &a.url("/img/bg.png")), Some(200));
    // And the request records hold the field as sent.
    let request = records
        .iter()
        .find(|r| {
            r.warc_type == "request" && r.target_uri.as_deref() == Some(&a.url("/img/bg.png"))
        })
        .expect("request record of bg.png");
    let sent = format!("\r\nReferer: {}\r\n", a.url("/s.css"));
    assert!(
        String::from_utf8_lossy(&request.block).contains(&sent),
        "{}",
        String::from_utf8_lossy(&request.block)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_referer_sends_none_and_an_operators_field_wins() {
    let web = Web::default();
    let a = web.host("127.0.0.84").await;
    a.route(
        "/",
        Route::html(r#"<a href="/p1">1</a><img src="/img/logo.png">"#),
    );
    a.route("/p1", Route::html(r#"<a href="/p2">2</a>"#));
    a.route("/p2", Route::html("<p>2</p>"));
    hotlinked(&a, "/img/logo.png");
    let out = tempfile::tempdir().unwrap();
    let (home, requisites) = (a.url("/"), "--page-requisites");
    let result = crawl(
        &home,
        &out.path().join("none"),
        &[requisites, "--no-referer"],
    )
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    assert_eq!(referer(&web, &a, "/p1").as_deref(), None);
    assert_eq!(referer(&web, &a, "/p2").as_deref(), None);
    let records = read_records(&out.path().join("none"));
    assert_eq!(status_of(&records, &a.url("/img/logo.png")), Some(403));

    web.log.lock().unwrap().clear();
    let fixed = format!("Referer: {}", a.url("/fixed"));
    let result = crawl(
        &home,
        &out.path().join("fixed"),
        &[requisites, "--header", &fixed],
    )
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    for path in ["/", "/p1", "/p2", "/img/logo.png"] {
        assert_eq!(
            referer(&web, &a, path).as_deref(),
            Some(a.url("/fixed").as_str()),
            "{path}"
        );
    }

    // Flags that cannot work are refused before anything is fetched.
    for bad in [
        &["--referer", "portal.example"][..],
        &["--referer", "http://a.org/", "--no-referer"],
    ] {
        let refused = crawl(&home, &out.path().join("bad"), bad).await;
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{bad:?}: {}",
            text(&refused)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_crawl_sends_the_referer_its_queue_was_given() {
    let web = Web::default();
    let a = web.host("127.0.0.84").await;
    let b = web.host("127.0.0.85").await;
    a.route(
        "/start?x=1",
        Route::html(&format!(
            r#"<a href="/next">n</a><a href="{}">b</a>"#,
            b.url("/b")
        )),
    );
    a.route("/next", Route::html("<p>next</p>"));
    b.route("/b", Route::html("<p>b</p>"));
    let out = tempfile::tempdir().unwrap();
    for max in ["1", "10"] {
        let seed = a.url("/start?x=1");
        let flags = ["--scope", "any", "--max-pages", max];
        let result = crawl(&seed, out.path(), &flags).await;
        assert_eq!(result.status.code(), Some(0), "{}", text(&result));
        if max == "1" {
            assert!(web.paths_of(&a).iter().all(|p| p != "/next"));
        }
    }
    // Queued by the first run, fetched by the second, with what the first one found.
    assert_eq!(
        referer(&web, &a, "/next").as_deref(),
        Some(a.url("/start?x=1").as_str())
    );
    assert_eq!(
        referer(&web, &b, "/b").as_deref(),
        Some(a.url("/").as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pages_own_referrer_policy_is_followed() {
    let web = Web::default();
    let a = web.host("127.0.0.108").await;
    a.route(
        "/",
        Route::html(r#"<a href="/quiet.html">q</a><a href="/origin-only.html">o</a>"#),
    );
    // A meta element and a header, each for the links of its page.
    a.route(
        "/quiet.html",
        Route::html(r#"<meta name="referrer" content="no-referrer"><a href="/from-quiet">x</a>"#),
    );
    let mut origin_only = Route::html(r#"<a href="/from-origin-only?q=1">x</a>"#);
    origin_only
        .headers
        .push(("Referrer-Policy".into(), "bogus, origin".into()));
    a.route("/origin-only.html", origin_only);
    a.route("/from-quiet", Route::html("<p>leaf</p>"));
    a.route("/from-origin-only", Route::html("<p>leaf</p>"));
    let out = tempfile::tempdir().unwrap();
    let result = crawl(&a.url("/"), out.path(), &[]).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    // The default within the origin: the whole URL.
    assert_eq!(referer(&web, &a, "/quiet.html"), Some(a.url("/")));
    assert_eq!(referer(&web, &a, "/from-quiet"), None);
    assert_eq!(referer(&web, &a, "/from-origin-only?q=1"), Some(a.url("/")));
}
