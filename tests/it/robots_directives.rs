//! What a site says to robots beyond the basics the full crawl checks: a page's
//! `<meta name="robots" content="nofollow">`, obeyed as wget and Heritrix obey it (and not with
//! `--ignore-robots`), the same said in an `X-Robots-Tag` field or to trawl by name (and not
//! when said to another robot), a robots.txt group named with a version (`User-agent: trawl/0.1`), and a
//! robots.txt first answered with 429 (waited for, as a 5xx, not read as "allow all"), and one
//! that fails longer than `--robots-attempts` allows or asks, by `Retry-After`, for a longer
//! wait than the back-off, and one cut short by the network (unreachable, not complete).

use std::time::Duration;

use crate::hostile_cases::crawl;
use crate::server::{Behavior, Host, Route, Web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_meta_nofollow_keeps_the_pages_links_unfollowed() {
    let web = Web::default();
    let h = web.host("127.0.0.50").await;
    h.route("/", Route::html("<a href=/closed>c</a><a href=/open>o</a>"));
    h.route(
        "/closed",
        Route::html(
            r#"<head><meta name="Robots" content="noindex, NOFOLLOW"></head>
            <img src=/pixel.gif><a href=/behind-closed>b</a><a href=/also-behind>a</a>"#,
        ),
    );
    h.route("/open", Route::html("<a href=/behind-open>b</a>"));
    for path in ["/behind-closed", "/also-behind", "/behind-open"] {
        h.route(path, Route::html("<p>leaf</p>"));
    }
    h.route("/pixel.gif", Route::typed(200, "image/gif", b"GIF89a"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &["--page-requisites"]).await;
    let fetched = web.paths_of(&h);
    for path in ["/closed", "/open", "/behind-open", "/pixel.gif"] {
        assert!(fetched.contains(&path.to_string()), "{path}: {fetched:?}");
    }
    assert!(!fetched
        .iter()
        .any(|p| p.contains("behind-closed") || p.contains("also-behind")));
    assert_eq!(stats["filtered"]["nofollow"], 2, "{stats}");
    // The page itself is archived (nofollow is not noarchive).
    assert_eq!(stats["pages_archived"], 4, "{stats}");

    let ignoring = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), ignoring.path(), &["--ignore-robots"]).await;
    assert_eq!(stats["pages_archived"], 6, "{stats}");
}

/// A page whose `nofollow` comes in its `X-Robots-Tag` field, for all or for trawl by name, or
/// in a meta named for trawl, is archived with its requisites and its links left; one said to
/// another robot is not trawl's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nofollow_in_the_x_robots_tag_field_or_to_trawl_by_name_is_obeyed() {
    let web = Web::default();
    let h = web.host("127.0.0.129").await;
    let closed = ["/all", "/named", "/listed", "/meta-named"];
    let open = ["/other-robot", "/other-meta", "/valued"];
    let mut index = String::new();
    for path in closed.iter().chain(&open) {
        index.push_str(&format!("<a href={path}>x</a>"));
    }
    h.route("/", Route::html(&index));
    let page = |path: &str, field: Option<&str>, head: &str| {
        let mut route = Route::html(&format!(
            "<head>{head}</head><img src={path}.gif><a href={path}/behind>b</a>"
        ));
        if let Some(value) = field {
            route.headers.push(("X-Robots-Tag".into(), value.into()));
        }
        route
            .headers
            .push(("Link".into(), format!("<{path}/linked>; rel=next")));
        route
    };
    h.route("/all", page("/all", Some("noindex, nofollow"), ""));
    h.route("/named", page("/named", Some("Trawl: nofollow"), ""));
    h.route(
        "/listed",
        page("/listed", Some("otherbot: noindex, trawl: none"), ""),
    );
    let meta_named = r#"<meta name="trawl" content="noindex,nofollow">"#;
    h.route("/meta-named", page("/meta-named", None, meta_named));
    h.route(
        "/other-robot",
        page("/other-robot", Some("otherbot: nofollow"), ""),
    );
    let other_meta = r#"<meta name="otherbot" content="nofollow">"#;
    h.route("/other-meta", page("/other-meta", None, other_meta));
    h.route(
        "/valued",
        page("/valued", Some("max-snippet: 20, noarchive"), ""),
    );
    for path in closed.iter().chain(&open) {
        h.route(&format!("{path}/behind"), Route::html("<p>leaf</p>"));
        h.route(&format!("{path}/linked"), Route::html("<p>leaf</p>"));
        h.route(
            &format!("{path}.gif"),
            Route::typed(200, "image/gif", b"GIF89a"),
        );
    }
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &["--page-requisites"]).await;
    let fetched = web.paths_of(&h);
    for path in closed.iter().chain(&open) {
        assert!(fetched.contains(&path.to_string()), "{path}: {fetched:?}");
        assert!(
            fetched.contains(&format!("{path}.gif")),
            "{path}: {fetched:?}"
        );
    }
    for path in closed {
        for after in ["/behind", "/linked"] {
            let behind = format!("{path}{after}");
            assert!(!fetched.contains(&behind), "{behind}: {fetched:?}");
        }
    }
    for path in open {
        for after in ["/behind", "/linked"] {
            let behind = format!("{path}{after}");
            assert!(fetched.contains(&behind), "{behind}: {fetched:?}");
        }
    }
    // The body's link of each closed page is counted; its header's is left uncounted.
    assert_eq!(stats["filtered"]["nofollow"], 4, "{stats}");

    let ignoring = tempfile::tempdir().unwrap();
    crawl(h.url("/"), ignoring.path(), &["--ignore-robots"]).await;
    let fetched = web.paths_of(&h);
    for path in closed {
        let behind = format!("{path}/behind");
        assert!(fetched.contains(&behind), "{behind}: {fetched:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_group_named_with_a_version_is_trawls() {
    let web = Web::default();
    let h = web.host("127.0.0.50").await;
    h.route(
        "/robots.txt",
        Route::typed(
            200,
            "text/plain",
            b"User-agent: *\nAllow: /\n\nUser-agent: Trawl/0.1 (+https://example.org/bot)\nDisallow: /private\n",
        ),
    );
    public_and_private(&h);
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    only_public_fetched(&web, &h, &stats);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_answered_429_is_waited_for_not_taken_as_allow_all() {
    let web = Web::default();
    let h = web.host("127.0.0.102").await;
    let rules = b"User-agent: *\nDisallow: /private\n";
    h.behave(
        "/robots.txt",
        Behavior::Answers(vec![
            Route::typed(429, "text/plain", b"slow down"),
            Route::typed(200, "text/plain", rules),
        ]),
    );
    public_and_private(&h);
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &["--robots-retry", "200ms"]).await;
    let robots = web
        .paths_of(&h)
        .iter()
        .filter(|p| *p == "/robots.txt")
        .count();
    assert_eq!(robots, 2, "{stats}");
    only_public_fetched(&web, &h, &stats);
}

/// A home page linking to `/public` and to `/private/x`, the path the tests' rules disallow.
fn public_and_private(h: &Host) {
    h.route(
        "/",
        Route::html("<a href=/private/x>p</a><a href=/public>o</a>"),
    );
    h.route("/public", Route::html("<p>public</p>"));
    h.route("/private/x", Route::html("<p>private</p>"));
}

/// Asserts that the crawl fetched `/public` and nothing under `/private`, which it counted.
fn only_public_fetched(web: &Web, h: &Host, stats: &serde_json::Value) {
    let fetched = web.paths_of(h);
    assert!(fetched.contains(&"/public".to_string()), "{fetched:?}");
    assert!(
        !fetched.iter().any(|p| p.starts_with("/private")),
        "{fetched:?}"
    );
    assert_eq!(stats["filtered"]["robots"], 1, "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_attempts_sets_how_long_a_failing_robots_txt_is_waited_for() {
    let web = Web::default();
    let h = web.host("127.0.0.107").await;
    let busy = || Route::typed(503, "text/plain", b"maintenance");
    let rules = Route::typed(200, "text/plain", b"User-agent: *\nDisallow: /private\n");
    public_and_private(&h);
    let out = tempfile::tempdir().unwrap();
    // Three 503s, then the file: the default three attempts give the site up.
    h.behave(
        "/robots.txt",
        Behavior::Answers(vec![busy(), busy(), busy(), rules.clone()]),
    );
    let flags = ["--robots-retry", "100ms"];
    let stats = crawl(h.url("/"), &out.path().join("default"), &flags).await;
    assert_eq!(stats["pages_archived"], 0, "{stats}");
    assert_eq!(stats["origins_given_up"], 1, "{stats}");
    // Four attempts reach it, and its rules hold.
    web.log.lock().unwrap().clear();
    h.behave(
        "/robots.txt",
        Behavior::Answers(vec![busy(), busy(), busy(), rules]),
    );
    let flags = ["--robots-retry", "100ms", "--robots-attempts", "4"];
    let stats = crawl(h.url("/"), &out.path().join("patient"), &flags).await;
    only_public_fetched(&web, &h, &stats);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_retry_after_is_waited_up_to_max_delay() {
    let web = Web::default();
    let h = web.host("127.0.0.109").await;
    let mut busy = Route::typed(503, "text/plain", b"maintenance");
    busy.headers.push(("Retry-After".into(), "3600".into()));
    let rules = Route::typed(200, "text/plain", b"User-agent: *\nDisallow: /private\n");
    h.behave("/robots.txt", Behavior::Answers(vec![busy, rules]));
    public_and_private(&h);
    let out = tempfile::tempdir().unwrap();
    let flags = ["--robots-retry", "100ms", "--max-delay", "1500ms"];
    let stats = crawl(h.url("/"), out.path(), &flags).await;
    let tries: Vec<_> = web
        .hits()
        .into_iter()
        .filter(|hit| hit.path == "/robots.txt")
        .map(|hit| hit.at)
        .collect();
    assert_eq!(tries.len(), 2, "{stats}");
    // Not the 100 ms back-off: the server's hour, cut to --max-delay.
    let waited = tries[1] - tries[0];
    assert!(waited >= Duration::from_millis(1450), "{waited:?}");
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    only_public_fetched(&web, &h, &stats);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_cut_short_by_the_network_is_not_obeyed_as_complete() {
    // The transfer breaks before the `Disallow` line: what arrived is not the site's file, so
    // the origin waits (RFC 9309's "unreachable") and, cut on every try, is given up. Before,
    // the fragment was taken for the rules and /private/x was fetched.
    let web = Web::default();
    let h = web.host("127.0.0.38").await;
    let sent = "User-agent: *\n# the rules follow\n";
    let cut = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{sent}",
        sent.len() + 40
    );
    h.behave(
        "/robots.txt",
        Behavior::Raw {
            bytes: cut.into_bytes(),
            reset: false,
        },
    );
    public_and_private(&h);
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(
        h.url("/"),
        out.path(),
        &["--robots-retry", "100ms", "--robots-attempts", "2"],
    )
    .await;
    let fetched = web.paths_of(&h);
    assert!(fetched.iter().all(|p| p == "/robots.txt"), "{fetched:?}");
    assert_eq!(fetched.len(), 2, "{fetched:?}");
    assert_eq!(stats["truncated"]["disconnect"], 2, "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_delay_cut_to_max_delay_is_said() {
    // The crawl then asks faster than the site wished: the operator is told so.
    let web = Web::default();
    let h = web.host("127.0.0.159").await;
    h.route(
        "/robots.txt",
        Route::typed(200, "text/plain", b"User-agent: *\nCrawl-delay: 60\n"),
    );
    h.route("/", Route::html("<a href=/next>n</a>"));
    h.route("/next", Route::html("<p>next</p>"));
    let out = tempfile::tempdir().unwrap();
    let result = crate::harness::trawl(crate::args![
        "crawl",
        h.url("/"),
        "--out",
        out.path().display(),
        "--max-delay",
        "300ms"
    ])
    .await;
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        crate::harness::text(&result)
    );
    let log = String::from_utf8_lossy(&result.stderr);
    assert!(log.contains("asks for a Crawl-delay of 60 s"), "{log}");
}
