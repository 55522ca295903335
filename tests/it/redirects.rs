//! Redirects as servers send them, followed as wget and browsers follow them: to the same page
//! with a session id, beyond the crawl's scope from an in-scope link, and a 3xx that names
//! its choices in its body instead of a Location.

use crate::harness::{assert_valid, read_records, Rec};
use crate::hostile_cases::crawl;
use crate::server::{Route, Web};

/// The target URIs of the 200 responses in `records`.
fn pages(records: &[Rec]) -> Vec<String> {
    let mut found: Vec<String> = records
        .iter()
        .filter(|r| r.warc_type == "response" && r.status() == Some(200))
        .filter_map(|r| r.target_uri.clone())
        .collect();
    found.sort();
    found
}

const SID: &str = "0123456789ABCDEF0123456789ABCDEF";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_that_adds_a_session_id_is_followed() {
    // A servlet's answer to a request without a session (Tomcat's encodeRedirectURL), and a
    // PHP shop's: the same page to the seen set, which leaves session ids out.
    let web = Web::default();
    let h = web.host("127.0.0.207").await;
    h.route(
        "/",
        Route::html("<a href=/app/>app</a> <a href=/shop>shop</a>"),
    );
    let mut moved = Route::redirect(302, &format!("/app/;jsessionid={SID}"));
    moved
        .headers
        .push(("Set-Cookie".into(), format!("JSESSIONID={SID}; Path=/app")));
    h.route("/app/", moved);
    h.route(
        &format!("/app/;jsessionid={SID}"),
        Route::html(&format!(
            "<p>app</p><a href=catalog;jsessionid={SID}>catalog</a>"
        )),
    );
    h.route(
        &format!("/app/catalog;jsessionid={SID}"),
        Route::html("<p>catalog</p>"),
    );
    let php = format!("/shop?PHPSESSID={}", SID.to_lowercase());
    h.route("/shop", Route::redirect(302, &php));
    h.route(&php, Route::html("<p>shop</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    let dir = out.path().join("warcs");
    let found = pages(&read_records(&dir));
    for path in [
        format!("/app/;jsessionid={SID}"),
        format!("/app/catalog;jsessionid={SID}"),
        php,
    ] {
        assert!(found.contains(&h.url(&path)), "{path}: {found:?}\n{stats}");
    }
    assert_valid(&dir).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_that_redirects_out_of_scope_brings_its_target_but_not_the_targets_links() {
    let web = Web::default();
    let site = web.host("127.0.0.208").await;
    let cdn = web.host("127.0.0.209").await;
    site.route(
        "/docs/v2/",
        Route::html("<a href=/docs/v2/report>report</a> <a href=/docs/v2/old>old</a>"),
    );
    site.route(
        "/docs/v2/report",
        Route::redirect(301, &cdn.url("/2024.html")),
    );
    site.route("/docs/v2/old", Route::redirect(301, "/docs/v3/old"));
    site.route(
        "/docs/v3/old",
        Route::html("<a href=/docs/v3/other>other</a>"),
    );
    site.route(
        "/docs/v3/other",
        Route::html("<p>outside the seed's directory</p>"),
    );
    cdn.route(
        "/2024.html",
        Route::html("<a href=/2025.html>next year</a>"),
    );
    cdn.route("/2025.html", Route::html("<p>another host</p>"));
    let out = tempfile::tempdir().unwrap();
    // --allow-private: the other host is on loopback, as no seed unlocks it.
    let flags = ["--no-parent", "--allow-private"];
    let stats = crawl(site.url("/docs/v2/"), out.path(), &flags).await;
    let found = pages(&read_records(&out.path().join("warcs")));
    // The moved pages, as wget -r -np fetches them (Heritrix: a redirect is a transclusion).
    assert!(found.contains(&cdn.url("/2024.html")), "{found:?}");
    assert!(found.contains(&site.url("/docs/v3/old")), "{found:?}");
    // Their links answer to the scope as any page's.
    assert!(!found.contains(&cdn.url("/2025.html")), "{found:?}");
    assert!(!found.contains(&site.url("/docs/v3/other")), "{found:?}");
    // Those two links, and the other host's /sitemap.xml: a site out of scope, whose
    // sitemaps are not fetched (they were until 2026-11-29).
    assert_eq!(stats["filtered"]["scope"], 3, "{stats}");
    assert!(
        !web.paths_of(&cdn).iter().any(|p| p.contains("sitemap")),
        "{:?}",
        web.paths_of(&cdn)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_3xx_without_a_location_gives_the_links_in_its_body() {
    let web = Web::default();
    let h = web.host("127.0.0.207").await;
    h.route(
        "/",
        Route::html("<a href=/doc>doc</a> <a href=/gone>gone</a>"),
    );
    // Apache's content negotiation, and a redirect written without its Location.
    let mut choices = Route::html(
        "<h1>Multiple Choices</h1><ul><li><a href=doc.en.html>en</a><li><a href=doc.fr.html>fr</a></ul>",
    );
    choices.status = 300;
    h.route("/doc", choices);
    let mut moved = Route::html("<p>This page has moved to <a href=/new-home>here</a>.</p>");
    moved.status = 302;
    h.route("/gone", moved);
    for path in ["/doc.en.html", "/doc.fr.html", "/new-home"] {
        h.route(path, Route::html("<p>here</p>"));
    }
    let out = tempfile::tempdir().unwrap();
    crawl(h.url("/"), out.path(), &[]).await;
    let found = pages(&read_records(&out.path().join("warcs")));
    for path in ["/doc.en.html", "/doc.fr.html", "/new-home"] {
        assert!(found.contains(&h.url(path)), "{path}: {found:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_the_servers_spelling_of_the_same_url_is_followed() {
    // Servers that want their own spelling of an escape (lower-case hex, `%7E` for `~`): the
    // same URL to the seen set, requested as the Location writes it, as wget and Chromium do.
    let web = Web::default();
    let h = web.host("127.0.0.208").await;
    h.route(
        "/",
        Route::html("<a href=/caf%C3%A9>cafe</a> <a href=/~user/>user</a>"),
    );
    h.route("/caf%C3%A9", Route::redirect(301, "/caf%c3%a9"));
    h.route("/caf%c3%a9", Route::html("<p>cafe</p>"));
    h.route("/~user/", Route::redirect(301, "/%7Euser/"));
    h.route("/%7Euser/", Route::html("<p>user</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    let found = pages(&read_records(&out.path().join("warcs")));
    for path in ["/caf%c3%a9", "/%7Euser/"] {
        assert!(found.contains(&h.url(path)), "{path}: {found:?}\n{stats}");
    }
    assert_valid(&out.path().join("warcs")).await;
}

/// A refresh moves a browser on as a redirect does, and Heritrix takes it for a redirect hop:
/// a seed whose page refreshes to another host ("we have moved") is crawled there, as a seed
/// that answers 301 is; a page's refresh out of scope brings its target, not the target's
/// links. Before, the target was a link of the seed's page only, dropped as out of scope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_moves_the_crawl_on_as_a_redirect_does() {
    let web = Web::default();
    let old = web.host("127.0.0.232").await;
    let new = web.host("127.0.0.233").await;
    let elsewhere = web.host("127.0.0.234").await;
    let moved = format!(
        "<meta http-equiv=refresh content=\"0; url={}\"><p>We have moved.",
        new.url("/")
    );
    old.route("/", Route::html(&moved));
    new.route(
        "/",
        Route::html("<a href=/about>about</a> <a href=/notice>notice</a>"),
    );
    new.route("/about", Route::html("<p>about us</p>"));
    // A Refresh field, to a host no seed names.
    let mut notice = Route::html("<p>see the notice</p>");
    notice.headers.push((
        "Refresh".into(),
        format!("5; url={}", elsewhere.url("/notice.html")),
    ));
    new.route("/notice", notice);
    elsewhere.route("/notice.html", Route::html("<a href=/more.html>more</a>"));
    elsewhere.route("/more.html", Route::html("<p>more</p>"));
    let out = tempfile::tempdir().unwrap();
    crawl(old.url("/"), out.path(), &["--allow-private"]).await;
    let found = pages(&read_records(&out.path().join("warcs")));
    for url in [
        old.url("/"),
        new.url("/"),
        new.url("/about"),
        new.url("/notice"),
        elsewhere.url("/notice.html"),
    ] {
        assert!(found.contains(&url), "{url} in {found:?}");
    }
    assert!(!found.contains(&elsewhere.url("/more.html")), "{found:?}");
}
