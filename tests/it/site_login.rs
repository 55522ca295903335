//! `--http-user` and `--http-password` (wget's names): a host in the crawl's scope that
//! answers 401 with a Basic challenge gets the credentials, the refused URL is fetched again
//! with them, and every later request to that host carries them; hosts out of scope and hosts
//! that never asked see nothing; wrong credentials cost one more request, not a loop. A host
//! that asks by Digest gets Digest answers, and a nonce it calls stale is answered again.

use crate::harness::{read_records, text, Rec};
use crate::referer::crawl;
use std::sync::Arc;

use crate::digest_login::Nonces;
use crate::server::{Behavior, Host, Route, Web};

/// `Basic` and the base64 of `staff:s3cret`.
const STAFF: &str = "Basic c3RhZmY6czNjcmV0";

fn statuses(records: &[Rec], url: &str) -> Vec<u16> {
    records
        .iter()
        .filter(|r| r.warc_type == "response" && r.target_uri.as_deref() == Some(url))
        .filter_map(Rec::status)
        .collect()
}

/// A site whose `/private/` part asks for `staff:s3cret`, with an image on `cdn`, another
/// site (out of the default scope), that asks for credentials too.
fn site(a: &Host, cdn: &Host) {
    a.route(
        "/",
        Route::html(&format!(
            r#"<a href="/private/">members</a><img src="{}">"#,
            cdn.url("/logo.png")
        )),
    );
    let login = |with: Route| Behavior::Login {
        authorization: STAFF.into(),
        with,
    };
    a.behave(
        "/private/",
        login(Route::html(r#"<a href="/private/doc.html">doc</a>"#)),
    );
    a.behave("/private/doc.html", login(Route::html("<p>the doc</p>")));
    cdn.behave(
        "/logo.png",
        login(Route::typed(200, "image/png", b"\x89PNG\r\n\x1a\n")),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_in_scope_that_ask_get_the_credentials_and_no_other_host_does() {
    let web = Web::default();
    let a = web.host("127.0.0.87").await;
    let cdn = web.host("127.0.0.88").await;
    site(&a, &cdn);
    let out = tempfile::tempdir().unwrap();
    let flags = [
        "--page-requisites",
        "--http-user",
        "staff",
        "--http-password",
        "s3cret",
    ];
    let result = crawl(&a.url("/"), out.path(), &flags).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));

    // Asked first without, then again with the credentials; afterwards sent at once.
    assert_eq!(web.field_of_requests(&a, "/", "authorization"), [None]);
    assert_eq!(
        web.field_of_requests(&a, "/private/", "authorization"),
        [None, Some(STAFF.to_string())]
    );
    assert_eq!(
        web.field_of_requests(&a, "/private/doc.html", "authorization"),
        [Some(STAFF.to_string())]
    );
    // The image's host is not in the crawl's scope: it asked, and got nothing.
    assert_eq!(
        web.field_of_requests(&cdn, "/logo.png", "authorization"),
        [None]
    );
    assert!(web
        .hits()
        .iter()
        .filter(|h| h.host == cdn.addr.to_string() || h.path == "/robots.txt")
        .all(|h| !h.head.to_ascii_lowercase().contains("authorization")));

    let records = read_records(out.path());
    assert_eq!(statuses(&records, &a.url("/private/")), [401, 200]);
    assert_eq!(statuses(&records, &a.url("/private/doc.html")), [200]);
    assert_eq!(statuses(&records, &cdn.url("/logo.png")), [401]);
    // pywb replays the page the credentials opened, not the 401 before it.
    let page = r#"<a href="/private/doc.html">doc</a>"#;
    crate::harness::assert_replays(out.path(), &a.url("/private/"), page).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_or_no_credentials_leave_the_401_after_one_more_request_at_most() {
    let web = Web::default();
    let a = web.host("127.0.0.87").await;
    let cdn = web.host("127.0.0.88").await;
    site(&a, &cdn);
    let out = tempfile::tempdir().unwrap();
    let wrong = [
        "--page-requisites",
        "--http-user",
        "staff",
        "--http-password",
        "guess",
    ];
    let result = crawl(&a.url("/"), &out.path().join("wrong"), &wrong).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    assert_eq!(
        web.field_of_requests(&a, "/private/", "authorization"),
        [None, Some("Basic c3RhZmY6Z3Vlc3M=".to_string())]
    );
    let records = read_records(&out.path().join("wrong"));
    assert_eq!(statuses(&records, &a.url("/private/")), [401, 401]);

    web.log.lock().unwrap().clear();
    let result = crawl(&a.url("/"), &out.path().join("none"), &[]).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    assert_eq!(
        web.field_of_requests(&a, "/private/", "authorization"),
        [None]
    );

    // A password without a user is refused before anything is fetched.
    let refused = crawl(
        &a.url("/"),
        &out.path().join("bad"),
        &["--http-password", "x"],
    )
    .await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_digest_host_gets_digest_answers_and_a_stale_nonce_is_answered_again() {
    let web = Web::default();
    let a = web.host("127.0.0.104").await;
    // Each nonce takes two answers, then the server calls it stale.
    let nonces = Arc::new(Nonces::new(2));
    let login = |with: Route| Behavior::DigestLogin {
        account: ("staff".into(), "s3cret".into()),
        with,
        nonces: nonces.clone(),
    };
    a.route("/", Route::html(r#"<a href="/private/">members</a>"#));
    let links: String = (1..=3)
        .map(|i| format!(r#"<a href="/private/doc{i}.html">{i}</a>"#))
        .collect();
    a.behave("/private/", login(Route::html(&links)));
    for i in 1..=3 {
        let page = format!("/private/doc{i}.html");
        a.behave(&page, login(Route::html(&format!("<p>doc {i}</p>"))));
    }
    let out = tempfile::tempdir().unwrap();
    let flags = ["--http-user", "staff", "--http-password", "s3cret"];
    let result = crawl(&a.url("/"), &out.path().join("right"), &flags).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let sent = web.field_of_requests(&a, "/private/", "authorization");
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent[0].is_none());
    assert!(
        sent[1].as_deref().is_some_and(|v| v.starts_with("Digest ")),
        "{sent:?}"
    );

    let records = read_records(&out.path().join("right"));
    assert_eq!(statuses(&records, &a.url("/private/")), [401, 200]);
    // Four answers to nonces of two answers each: one page met a stale nonce, was archived as
    // that 401, and fetched again with the fresh nonce.
    let mut pages: Vec<Vec<u16>> = (1..=3)
        .map(|i| statuses(&records, &a.url(&format!("/private/doc{i}.html"))))
        .collect();
    pages.sort();
    assert_eq!(pages, [vec![200], vec![200], vec![401, 200]]);

    // Wrong credentials: one more request, not a loop.
    web.log.lock().unwrap().clear();
    let wrong = ["--http-user", "staff", "--http-password", "guess"];
    let result = crawl(&a.url("/"), &out.path().join("wrong"), &wrong).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(&out.path().join("wrong"));
    assert_eq!(statuses(&records, &a.url("/private/")), [401, 401]);
}

/// wget's `--auth-no-challenge`: the seed's host gets the credentials from its first request
/// (robots.txt included), for sites that answer a request without them with something other
/// than a 401; a host in scope that is no seed's, and hosts out of scope, still only once
/// they ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_no_challenge_sends_the_credentials_to_the_seeds_hosts_at_once() {
    let web = Web::default();
    let a = web.host("127.0.0.165").await;
    let cdn = web.host("127.0.0.166").await;
    site(&a, &cdn);
    let out = tempfile::tempdir().unwrap();
    let flags = [
        "--page-requisites",
        "--http-user",
        "staff",
        "--http-password",
        "s3cret",
        "--auth-no-challenge",
    ];
    let result = crawl(&a.url("/"), out.path(), &flags).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let staff = [Some(STAFF.to_string())];
    assert_eq!(web.field_of_requests(&a, "/", "authorization"), staff);
    assert_eq!(
        web.field_of_requests(&a, "/private/", "authorization"),
        staff
    );
    assert_eq!(
        web.field_of_requests(&cdn, "/logo.png", "authorization"),
        [None]
    );
    let records = read_records(out.path());
    assert_eq!(statuses(&records, &a.url("/private/")), [200]);
}
