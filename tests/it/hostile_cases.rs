//! Hostile and unusual servers, one case each, beyond the fault sweep of `hostile.rs`: 1xx
//! interim responses before the final one, links too long to handle, folded header lines, heads
//! as some servers send them (bare LF, a space before a colon, a line that is no field), a
//! transfer coding that frames nothing, chunk lines ending in a bare LF, and a crawled page
//! that points at other local services, and an API index whose thousands of links the default
//! cap must not cut. Encodings are in `encodings.rs`, Content-Types as
//! servers send them in `content_types.rs`.

use std::path::Path;

use crate::args;
use crate::harness::{
    assert_replays, assert_replays_as, crawl_with_report, python, read_records, run_script, text,
    trawl, Rec,
};
use crate::server::{Behavior, Route, Web};

pub(crate) fn raw(bytes: &[u8]) -> Behavior {
    Behavior::Raw {
        bytes: bytes.to_vec(),
        reset: false,
    }
}

pub(crate) fn responses<'a>(records: &'a [Rec], path: &str) -> Vec<&'a Rec> {
    records
        .iter()
        .filter(|r| r.warc_type == "response" && r.path() == path)
        .collect()
}

fn body(rec: &Rec) -> &[u8] {
    let end = rec.block.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    &rec.block[end + 4..]
}

async fn run(cmd: std::path::PathBuf, args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(cmd).args(args).output().unwrap()
    })
    .await
    .unwrap()
}

pub(crate) async fn crawl(seed: String, out: &Path, extra: &[&str]) -> serde_json::Value {
    let flags = [&["--delay", "10ms", "-q"], extra].concat();
    let (result, report) = crawl_with_report(seed, out, &flags).await;
    assert!(
        matches!(result.status.code(), Some(0 | 4)),
        "{}",
        text(&result)
    );
    report.expect("the report")
}

const FINAL_PAGE: &str = "<p>the final response</p><a href=/after-interim>next</a>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interim_1xx_responses_leave_the_final_response_in_the_record() {
    let web = Web::default();
    let h = web.host("127.0.0.40").await;
    h.route(
        "/",
        Route::html("<a href=/interim>i</a><a href=/flood>f</a>"),
    );
    let interim = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";
    h.behave(
        "/interim",
        raw(format!(
            "{interim}HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{FINAL_PAGE}",
            FINAL_PAGE.len()
        )
        .as_bytes()),
    );
    h.route("/after-interim", Route::html("<p>reached</p>"));
    // An endless stream of interim responses: refused once over the head limit.
    h.behave(
        "/flood",
        raw(&b"HTTP/1.1 100 Continue\r\n\r\n".repeat(200_000)),
    );
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &["--max-header-size", "16KiB"]).await;
    let dir = out.path().join("warcs");
    let records = read_records(&dir);

    let pages = responses(&records, "/interim");
    assert_eq!(pages.len(), 1);
    let page = pages[0];
    assert_eq!(page.status(), Some(200));
    assert!(page.block.starts_with(b"HTTP/1.1 200 OK\r\n"));
    assert_eq!(body(page), FINAL_PAGE.as_bytes());
    // The interim heads are kept in a metadata record tied to the response.
    let meta: Vec<&Rec> = records
        .iter()
        .filter(|r| r.warc_type == "metadata" && r.concurrent_to.as_deref() == Some(&page.id))
        .collect();
    assert_eq!(meta.len(), 1);
    let fields = String::from_utf8_lossy(&meta[0].block);
    assert!(
        fields.contains("interimResponse: HTTP/1.1 100 Continue\r\n"),
        "{fields}"
    );
    assert!(fields.contains("interimResponse: HTTP/1.1 103 Early Hints\r\n"));
    assert!(fields.contains("interimHeader: Link: </style.css>; rel=preload\r\n"));
    // Links and status come from the final response.
    assert_eq!(responses(&records, "/after-interim").len(), 1);
    assert_eq!(stats["status_codes"]["200"], 3, "{stats}");
    assert!(stats["status_codes"].get("100").is_none(), "{stats}");
    assert_eq!(stats["errors"]["header_too_large"], 1, "{stats}");
    assert!(responses(&records, "/flood").is_empty());

    // Valid for strict readers (warcio and independent digests).
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));

    // Readers agree: trawl index equals cdxj-indexer, pywb replays the final response.
    let index = trawl(args!["index", dir.display()]).await;
    assert!(index.status.success(), "{}", text(&index));
    let mut indexer_args = vec!["-s".to_string()];
    indexer_args.extend(
        crate::harness::warc_files(&dir)
            .iter()
            .map(|p| p.display().to_string()),
    );
    let indexer = python().parent().unwrap().join("cdxj-indexer");
    let theirs = run(indexer, indexer_args).await;
    assert!(theirs.status.success(), "{}", text(&theirs));
    assert_eq!(
        String::from_utf8_lossy(&index.stdout),
        String::from_utf8_lossy(&theirs.stdout)
    );
    assert!(String::from_utf8_lossy(&index.stdout).contains("\"status\": \"200\""));
    assert_replays_as(&dir, &h.url("/interim"), 200, FINAL_PAGE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_declined_link_is_counted_and_seeds_obey_the_url_limits() {
    let web = Web::default();
    let h = web.host("127.0.0.41").await;
    let huge = format!("/{}", "h".repeat(17 * 1024));
    let long = format!("/{}", "l".repeat(3 * 1024));
    h.route(
        "/",
        Route::html(&format!(
            "<a href={huge}>16 KiB+</a><a href={long}>3 KiB</a><a href='mailto:x@example.org'>m</a><a href=/ok>ok</a><a href=/ok2>ok</a>"
        )),
    );
    h.route("/ok", Route::html("<p>ok</p>"));
    h.route("/ok2", Route::html("<p>ok</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &["--max-links-per-page", "2"]).await;
    let filtered = &stats["filtered"];
    assert_eq!(filtered["url_length"], 2, "{filtered}");
    assert_eq!(filtered["not_http"], 1, "{filtered}");
    assert_eq!(filtered["link_cap"], 1, "{filtered}");
    assert!(web.paths_of(&h).iter().all(|p| p.len() < 1000));

    // A seed longer than --max-url-length is refused with its line number, and never fetched.
    let seeds = out.path().join("seeds.txt");
    let long_seed = h.url(&format!("/{}", "s".repeat(5000)));
    std::fs::write(&seeds, format!("{}\n{long_seed}\n", h.url("/ok"))).unwrap();
    let result = trawl(args![
        "crawl",
        "--seeds",
        seeds.display(),
        "--out",
        out.path().join("second").display(),
        "--delay",
        "10ms",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(
        err.contains("line 2") && err.contains("--max-url-length"),
        "{err}"
    );
    assert!(web.paths_of(&h).iter().all(|p| p.len() < 1000));
    // Only seed, and too long: no usable seed.
    let alone = trawl(args![
        "crawl",
        long_seed,
        "--out",
        out.path().join("third").display(),
        "-q"
    ])
    .await;
    assert_eq!(alone.status.code(), Some(3), "{}", text(&alone));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folded_header_lines_are_archived_as_received_and_read_unfolded() {
    let web = Web::default();
    let h = web.host("127.0.0.42").await;
    let page = "<a href=/after-fold>next</a>";
    let folded = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html;\r\n charset=utf-8\r\nX-A: 1\r\n  continued\r\nContent-Length: {}\r\n\r\n{page}",
        page.len()
    );
    h.route("/", Route::html("<a href=/folded>f</a>"));
    h.behave("/folded", raw(folded.as_bytes()));
    h.route("/after-fold", Route::html("<p>reached</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert!(stats["errors"].get("invalid_header").is_none(), "{stats}");
    let records = read_records(&out.path().join("warcs"));
    let rec = responses(&records, "/folded");
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0].block, folded.as_bytes(), "bytes as received");
    assert_eq!(responses(&records, "/after-fold").len(), 1);
}

/// A response with `head` (status line and fields, without the empty line) and an HTML body
/// linking to `/after{path}`, its lines ended by `eol`; chunked when the head says so
/// (`chunked` in it), else with a Content-Length.
fn odd_response(path: &str, head: &str, eol: &str) -> (String, String) {
    let page = format!("<a href=/after{path}>next</a>");
    let response = match head.contains("chunked") {
        true => format!("{head}{eol}{eol}{:x}\r\n{page}\r\n0\r\n\r\n", page.len()),
        false => format!("{head}{eol}Content-Length: {}{eol}{eol}{page}", page.len()),
    };
    (response, page)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heads_as_some_servers_send_them_are_archived_and_followed() {
    // GNU wget and warcio read these; a crawler that refuses them loses the page.
    let web = Web::default();
    let h = web.host("127.0.0.43").await;
    // (path, head, line end, replayed by pywb)
    let cases = [
        ("/lf", "HTTP/1.1 200 OK\nContent-Type: text/html", "\n", true),
        (
            "/spaced",
            "HTTP/1.1 200 OK\r\nContent-Type : text/html\r\nX-Tab\t: 1",
            "\r\n",
            true,
        ),
        (
            "/odd-line",
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nThis line is no field\r\nTransfer-Encoding: chunked",
            "\r\n",
            true,
        ),
        // Framed by a Transfer-Encoding with a space before its colon, past a field name with a
        // space in it, which is left out. Past such a name pywb replays the chunks as they are
        // (warcio reads the fields as trawl does), so this one is not replayed.
        (
            "/spaced-chunked",
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nBad Name: x\r\nTransfer-Encoding : chunked",
            "\r\n",
            false,
        ),
        // Status lines that httparse refuses; Chromium, curl, wget, warcio and pywb read them.
        ("/lower", "http/1.1 200 OK\r\nContent-Type: text/html", "\r\n", true),
        ("/spaces", "HTTP/1.1  200  OK\r\nContent-Type: text/html", "\r\n", true),
        // A CR that ends no line (RFC 9110 5.5 lets it be read as a space; Chromium and wget
        // show both pages), inside a value and before a line's CRLF.
        (
            "/bare-cr",
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-A: a\rb",
            "\r\n",
            false,
        ),
        (
            "/cr-crlf",
            "HTTP/1.1 200 OK\r\nX-A: ab\r\r\nContent-Type: text/html\r",
            "\r\n",
            true,
        ),
    ];
    let mut links = String::new();
    let mut responses_sent = Vec::new();
    for (path, head, eol, _) in cases {
        let (response, page) = odd_response(path, head, eol);
        h.behave(path, raw(response.as_bytes()));
        // The same response a byte at a time: where a server's writes split a head decides
        // nothing.
        h.behave(
            &format!("{path}-dripped"),
            Behavior::Drip {
                head: Vec::new(),
                body: response.as_bytes().to_vec(),
                every: std::time::Duration::from_millis(1),
            },
        );
        h.route(&format!("/after{path}"), Route::html("<p>reached</p>"));
        links.push_str(&format!("<a href={path}>x</a><a href={path}-dripped>x</a>"));
        responses_sent.push((response, page));
    }
    h.route("/", Route::html(&links));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(stats["errors"], serde_json::json!({}), "{stats}");
    assert_eq!(stats["status_codes"]["200"], 3 * cases.len() + 1, "{stats}");
    let dir = out.path().join("warcs");
    let records = read_records(&dir);
    for ((path, _, _, _), (response, _)) in cases.iter().zip(&responses_sent) {
        for path in [path.to_string(), format!("{path}-dripped")] {
            let rec = responses(&records, &path);
            assert_eq!(rec.len(), 1, "{path}");
            assert_eq!(
                rec[0].block,
                response.as_bytes(),
                "{path}: bytes as received"
            );
        }
        let after = format!("/after{path}");
        assert_eq!(responses(&records, &after).len(), 1, "{after} followed");
    }
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
    for ((path, _, _, replayed), (_, page)) in cases.iter().zip(&responses_sent) {
        if *replayed {
            assert_replays(&dir, &h.url(path), page).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_lines_before_the_status_line_are_left_out_of_the_record() {
    // Chromium shows the page; the record starts at the status line, so readers see a response.
    let web = Web::default();
    let h = web.host("127.0.0.199").await;
    let page = "<a href=/next>next</a>";
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{page}",
        page.len()
    );
    h.route("/", Route::html("<a href=/blank>b</a>"));
    h.behave("/blank", raw(format!("\r\n\r\n{head}").as_bytes()));
    h.route("/next", Route::html("<p>reached</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(stats["errors"], serde_json::json!({}), "{stats}");
    let dir = out.path().join("warcs");
    let records = read_records(&dir);
    let rec = responses(&records, "/blank");
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0].block, head.as_bytes());
    assert_eq!(responses(&records, "/next").len(), 1, "{stats}");
    // No metadata record of interim responses: there were none.
    assert!(records.iter().all(|r| r.warc_type != "metadata"), "{stats}");
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
    assert_replays(&dir, &h.url("/blank"), page).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_coding_that_frames_nothing_leaves_the_body_to_its_content_length() {
    // `Transfer-Encoding: identity` (RFC 2616's, since removed) beside a Content-Length, on a
    // connection the server keeps open: hyper would read to the close and wait out the read
    // timeout; Chromium and wget read the declared length, and so does trawl.
    let web = Web::default();
    let h = web.host("127.0.0.44").await;
    let page = "<a href=/next>next</a>";
    let identity = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: identity\r\nContent-Length: {}\r\n\r\n{page}",
        page.len()
    );
    let cut = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: identity\r\nContent-Length: 100\r\n\r\n<p>only this</p>";
    h.route(
        "/",
        Route::html("<a href=/identity>i</a><a href=/cut>c</a>"),
    );
    h.behave(
        "/identity",
        Behavior::RawKeepAlive(identity.clone().into_bytes()),
    );
    h.behave("/cut", raw(cut.as_bytes()));
    h.route("/next", Route::html("<p>reached</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &["--timeout", "3s"]).await;
    // Only the body that stopped short of its length is cut, as any such body.
    only_cut_is_cut(out.path(), &stats, ("/identity", identity.as_bytes())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_content_length_that_is_no_number_leaves_the_page_to_the_close() {
    // `Content-Length: -1` (some Java servers), `ten`, or empty: hyper refuses the head, as
    // RFC 9112 says a user agent must; Chromium, wget and Heritrix read the body to the close
    // and keep the page, and so does trawl. Numbers that differ are still refused.
    let web = Web::default();
    let h = web.host("127.0.0.198").await;
    let page = "<p>negative</p><a href=/next>next</a>";
    let minus =
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: -1\r\n\r\n{page}");
    let empty = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: \r\n\r\n<a href=/other>o</a>";
    let both = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd";
    h.route(
        "/",
        Route::html("<a href=/minus>m</a><a href=/empty>e</a><a href=/both>b</a>"),
    );
    h.behave("/minus", raw(minus.as_bytes()));
    h.behave("/empty", raw(empty.as_bytes()));
    h.behave("/both", raw(both.as_bytes()));
    h.route("/next", Route::html("<p>reached</p>"));
    h.route("/other", Route::html("<p>reached too</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    assert_eq!(stats["pages_archived"], 5, "{stats}");
    assert_eq!(
        stats["errors"],
        serde_json::json!({"invalid_content_length": 1}),
        "{stats}"
    );
    assert_eq!(stats["truncated"], serde_json::json!({}), "{stats}");
    let dir = out.path().join("warcs");
    let records = read_records(&dir);
    for (path, sent) in [("/minus", &minus[..]), ("/empty", empty)] {
        let rec = responses(&records, path);
        assert_eq!(rec.len(), 1, "{path}");
        assert_eq!(rec[0].block, sent.as_bytes(), "{path}: bytes as received");
        assert_eq!(rec[0].truncated, None);
    }
    assert!(responses(&records, "/both").is_empty());
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
    assert_replays(&dir, &h.url("/minus"), page).await;
}

/// Asserts that of a crawl into `out` (its `stats`), only `/cut` was cut (by a close before its
/// Content-Length), that the response for `whole.0` holds `whole.1` uncut, that `/next` was
/// archived, and that the WARCs pass warc_check.
pub(crate) async fn only_cut_is_cut(out: &Path, stats: &serde_json::Value, whole: (&str, &[u8])) {
    let (cut, errors) = (stats["truncated"].clone(), stats["errors"].clone());
    assert_eq!(cut, serde_json::json!({"disconnect": 1}), "{stats}");
    assert_eq!(errors, serde_json::json!({"body_incomplete": 1}), "{stats}");
    let dir = out.join("warcs");
    let records = read_records(&dir);
    let rec = responses(&records, whole.0);
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0].block, whole.1);
    assert_eq!(rec[0].truncated, None);
    assert_eq!(responses(&records, "/next").len(), 1, "{stats}");
    let cut_rec = responses(&records, "/cut");
    assert_eq!(cut_rec[0].truncated.as_deref(), Some("disconnect"));
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ip_literal_seed_unlocks_only_its_own_address_and_port() {
    let web = Web::default();
    let seed = web.host("127.0.0.1").await;
    let other = web.host("127.0.0.1").await;
    let port = other.addr.port();
    seed.route(
        "/",
        Route::html(&format!(
            "<a href=http://127.0.0.1:{port}/other-port>p</a><a href=http://localhost:{port}/by-name>n</a><a href=/same>s</a>"
        )),
    );
    seed.route("/same", Route::html("<p>same address and port</p>"));
    other.route("/other-port", Route::html("<p>must not be fetched</p>"));
    other.route("/by-name", Route::html("<p>must not be fetched</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(seed.url("/"), out.path(), &["--scope", "any"]).await;
    // The server side saw nothing on the other port.
    assert!(
        web.paths_of(&other).is_empty(),
        "{:?}",
        web.paths_of(&other)
    );
    assert!(web.paths_of(&seed).contains(&"/same".to_string()));
    // The other port is refused as it is met (the crawl's own policy, filtered); the name
    // that resolves to loopback when it is fetched.
    assert_eq!(stats["filtered"]["blocked_address"], 1, "{stats}");
    assert_eq!(stats["errors"]["blocked_address"], 1, "{stats}");
}

/// A seed on a private address whose robots.txt and page move to another port of it (http to
/// https) is followed there, as the seed itself is; a link to a third port stays refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ip_literal_seed_that_moves_to_another_port_of_its_address_is_followed() {
    let web = Web::default();
    let seed = web.host("127.0.0.1").await;
    let tls = web.tls_host("127.0.0.1").await;
    let third = web.host("127.0.0.1").await;
    let moved = format!("https://{}", tls.addr);
    seed.route(
        "/robots.txt",
        Route::redirect(301, &format!("{moved}/robots.txt")),
    );
    seed.route("/", Route::redirect(301, &format!("{moved}/")));
    let links = format!("<a href=/page>p</a><a href={}>t</a>", third.url("/third"));
    tls.route("/", Route::html(&links));
    tls.route("/page", Route::html("<p>moved</p>"));
    third.route("/third", Route::html("<p>must not be fetched</p>"));
    let out = tempfile::tempdir().unwrap();
    let extra = ["--scope", "any", "--insecure"];
    let stats = crawl(seed.url("/"), out.path(), &extra).await;
    let fetched = web.paths_of(&tls);
    assert!(
        fetched.contains(&"/page".to_string()),
        "{fetched:?} {stats}"
    );
    assert!(
        web.paths_of(&third).is_empty(),
        "{:?}",
        web.paths_of(&third)
    );
    assert_eq!(stats["pages_archived"], 2, "{stats}");
    assert_eq!(stats["filtered"]["blocked_address"], 1, "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunk_lines_ending_in_a_bare_lf_still_give_the_pages_links() {
    let web = Web::default();
    let h = web.host("127.0.0.51").await;
    let page = "<p>bare LF chunks</p><a href=/past>next</a>";
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\n{page}\n0\n\n",
        page.len()
    );
    h.behave("/", raw(response.as_bytes()));
    h.route("/past", Route::html("<p>reached</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &[]).await;
    // hyper refuses the framing at the first such line; the fetch reads on as trawl frames
    // chunks (as Chromium, curl, wget and warcio read them), to the last chunk, so the record is
    // whole and not marked cut, however the server's writes split the body.
    assert_eq!(stats["errors"], serde_json::json!({}), "{stats}");
    let dir = out.path().join("warcs");
    let records = read_records(&dir);
    let rec = responses(&records, "/");
    assert_eq!(rec[0].block, response.as_bytes());
    assert_eq!(rec[0].truncated, None);
    assert_eq!(responses(&records, "/past").len(), 1, "{stats}");
    // pywb replays such a body with its chunk lines in it (it de-chunks CRLF lines only), as
    // it did when the record was marked cut.
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_host_with_a_port_is_plain_http() {
    // As wget and curl read `host:8080`: no TLS handshake sent to a plain port first.
    let web = Web::default();
    let h = web.host("127.0.0.57").await;
    h.route("/", Route::html("<a href=/next>n</a>"));
    h.route("/next", Route::html("<p>reached</p>"));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.addr.to_string(), out.path(), &[]).await;
    assert_eq!(stats["errors"], serde_json::json!({}), "{stats}");
    assert_eq!(stats["pages_archived"], 2, "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_index_of_thousands_of_pages_loses_none_to_the_default_cap() {
    // rustdoc's `core::arch::x86_64` index links 6,660 pages, each by its name and anchors.
    let web = Web::default();
    let h = web.host("127.0.0.110").await;
    let index: String = (0..6000)
        .map(|i| format!("<a href=fn.f{i}.html>f{i}</a><a href=\"fn.f{i}.html#args\">#</a>"))
        .collect();
    h.route("/", Route::html(&index));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &["--max-pages", "1"]).await;
    assert_eq!(stats["pages_archived"], 1, "{stats}");
    assert_eq!(stats["queued_at_end"], 6000, "{stats}");
    assert_eq!(stats["filtered"]["link_cap"], 0, "{stats}");
}
