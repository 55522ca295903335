//! GNU wget's command lines: its flags with wget's meanings, the flags that change nothing in
//! a WARC file, those refused by name, and wget's CDX files as deduplication indexes.

use std::path::Path;

use crate::args;
use crate::harness::{assert_valid, read_records, text, trawl};
use crate::server::{Route, Web};

/// A wget command line runs with wget's meanings: `-r -l 2` stops two hops from the seed,
/// `-np` (rewritten before parsing) stays in the seed's directory, `-H` spans hosts,
/// `-D` keeps links and requisites to its domains, `-X` out of its directories, `-e robots=off` ignores robots.txt, `-w 0`
/// and `-t 1` set the delay and the attempts, and `-nd`/`--delete-after` change nothing. A
/// wgetrc command trawl has no flag for is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wget_command_line_crawls_as_wget_reads_it() {
    let web = Web::default();
    let host = web.host("127.0.0.145").await;
    let other = web.host("127.0.0.149").await;
    let elsewhere = web.host("127.0.0.157").await;
    host.route(
        "/robots.txt",
        Route::typed(200, "text/plain", b"User-agent: *\nDisallow: /\n"),
    );
    host.route(
        "/docs/",
        Route::html(&format!(
            r#"<a href="one">1</a> <a href="/up">parent</a> <a href="{}">other</a>
               <a href="old/a.html">-X</a> <a href="older/b.html">not -X</a>
               <a href="{}">not in -D</a> <img src="{}">"#,
            other.url("/there"),
            elsewhere.url("/page"),
            elsewhere.url("/pic.png")
        )),
    );
    host.route("/docs/one", Route::html(r#"<a href="two">2</a>"#));
    host.route("/docs/two", Route::html(r#"<a href="three">3</a>"#));
    host.route("/docs/three", Route::html("<p>three hops</p>"));
    host.route("/up", Route::html("<p>above the seed</p>"));
    host.route("/docs/older/b.html", Route::html("<p>kept</p>"));
    other.route("/there", Route::html("<p>another host</p>"));
    let dir = tempfile::tempdir().unwrap();
    let out = trawl(args![
        "crawl",
        "-r",
        "-l",
        "2",
        "-np",
        "-H",
        "-D",
        "127.0.0.145,127.0.0.149",
        "-X",
        "/docs/old",
        "-p",
        "-w",
        "0",
        "-t",
        "1",
        "-e",
        "robots=off",
        "-nd",
        "--delete-after",
        "--allow-private",
        "--out",
        dir.path().join("o").display(),
        "-q",
        host.url("/docs/")
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let paths = web.paths_of(&host);
    for fetched in ["/docs/", "/docs/one", "/docs/two", "/docs/older/b.html"] {
        assert!(paths.contains(&fetched.to_string()), "{fetched}: {paths:?}");
    }
    for left in ["/docs/three", "/up", "/robots.txt", "/docs/old/a.html"] {
        assert!(!paths.contains(&left.to_string()), "{left}: {paths:?}");
    }
    assert!(web.paths_of(&other).contains(&"/there".to_string()));
    assert_eq!(web.paths_of(&elsewhere), Vec::<String>::new());
    let refused = trawl(args!["crawl", "-e", "ftp_user=anonymous", host.url("/")]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("--ftp-user"), "{}", text(&refused));
}

/// The header `name` of the record whose WARC-Target-URI is `uri` and type `warc_type`.
fn header_of(dir: &Path, warc_type: &str, uri: &str, name: &str) -> Option<String> {
    for file in crate::harness::warc_files(dir) {
        for record in trawl::warc::reader::read_records(&file).unwrap() {
            if record.header("WARC-Type") == Some(warc_type) && record.target_uri() == Some(uri) {
                return record.header(name).map(str::to_string);
            }
        }
    }
    None
}

/// wget's `--warc-dedup FILE.cdx`: the CDX file wget writes with `--warc-cdx` (its header
/// line, base32 digests, record ids) is a deduplication index. A page and a page requisite
/// whose payloads it lists are written as revisits that refer to wget's records; a page
/// whose payload changed is archived in full, and a 404 line is not an original.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wget_cdx_file_deduplicates_pages_and_their_requisites() {
    let web = Web::default();
    let h = web.host("127.0.0.160").await;
    let page = r#"<img src="/logo.png"><a href="/b">b</a>"#;
    let logo = b"\x89PNG\r\n\x1a\n not really a png, but the same bytes as before";
    let changed = "<p>b, changed since wget's crawl</p>";
    h.route("/", Route::html(page));
    h.route("/logo.png", Route::typed(200, "image/png", logo));
    h.route("/b", Route::html(changed));
    let base32 = |body: &[u8]| trawl::record::sha1_digest(body)["sha1:".len()..].to_string();
    let line = |path: &str, status: u16, digest: String, id: &str| {
        format!(
            "{url} 20261101000000 {url} text/html {status} {digest} - - 0 w.warc.gz <urn:uuid:{id}>\n",
            url = h.url(path)
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let cdx = dir.path().join("w.cdx");
    let mut index = String::from(" CDX a b a m s k r M V g u\n");
    index += &line(
        "/",
        200,
        base32(page.as_bytes()),
        "00000000-0000-4000-8000-000000000001",
    );
    index += &line(
        "/logo.png",
        200,
        base32(logo),
        "00000000-0000-4000-8000-000000000002",
    );
    index += &line(
        "/b",
        200,
        base32(b"<p>b</p>"),
        "00000000-0000-4000-8000-000000000003",
    );
    index += &line(
        "/gone",
        404,
        base32(changed.as_bytes()),
        "00000000-0000-4000-8000-000000000004",
    );
    std::fs::write(&cdx, index).unwrap();
    let out = dir.path().join("o");
    let result = trawl(args![
        "crawl",
        "-r",
        "-p",
        "--warc-dedup",
        cdx.display(),
        "-w",
        "0",
        "--allow-private",
        "--out",
        out.display(),
        "-q",
        h.url("/")
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let records = read_records(&out);
    let of_type = |t: &str| -> Vec<String> {
        let mut paths: Vec<String> = records
            .iter()
            .filter(|r| r.warc_type == t && r.status().is_some_and(|s| s < 400))
            .map(|r| r.path())
            .collect();
        paths.sort();
        paths
    };
    assert_eq!(of_type("revisit"), ["/", "/logo.png"]);
    assert_eq!(of_type("response"), ["/b"]);
    for (path, id) in [("/", "1"), ("/logo.png", "2")] {
        let refers = header_of(&out, "revisit", &h.url(path), "WARC-Refers-To");
        assert_eq!(
            refers.as_deref(),
            Some(format!("<urn:uuid:00000000-0000-4000-8000-00000000000{id}>").as_str())
        );
        let date = header_of(&out, "revisit", &h.url(path), "WARC-Refers-To-Date");
        assert_eq!(date.as_deref(), Some("2026-11-01T00:00:00Z"));
    }
    assert_valid(&out).await;
}

/// `--https-only` (given as the wgetrc command `-e https_only=on`) follows no http:// link
/// (the seed is fetched as given), `--ignore-case`
/// makes `-X` match a directory in any case, `-4` connects to a name's IPv4 address only,
/// and wget's flags that change nothing in a WARC file run unchanged; one trawl cannot honour
/// is refused by name with what to write instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wget_flags_for_schemes_case_and_address_families() {
    let web = Web::default();
    let h = web.host("127.0.0.161").await;
    let tls = web.tls_host("127.0.0.162").await;
    h.route(
        "/",
        Route::html(&format!(
            r#"<a href="/plain">http</a> <a href="https://{}/secure">https</a>"#,
            tls.addr
        )),
    );
    h.route("/plain", Route::html("<p>http</p>"));
    tls.route(
        "/secure",
        Route::html(r#"<a href="/Private/x.html">x</a> <a href="/open/y.html">y</a>"#),
    );
    tls.route("/Private/x.html", Route::html("<p>x</p>"));
    tls.route("/open/y.html", Route::html("<p>y</p>"));
    let port = h
        .url("/")
        .split(':')
        .nth(2)
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    // The name's IPv6 address takes connections and never answers: only -4 keeps the crawl
    // off it.
    let _silent = std::net::TcpListener::bind(format!("[::1]:{port}")).expect("bind ::1");
    let dir = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        "-r",
        "-H",
        "-e",
        "https_only = on",
        "--ignore-case",
        "-X",
        "/private",
        "-4",
        "--resolve",
        format!("both.test:{port}:[::1],127.0.0.161"),
        "--insecure",
        "-nv",
        "-N",
        "-P",
        "somewhere",
        "--retry-connrefused",
        "--waitretry",
        "1",
        "-w",
        "0",
        "--allow-private",
        "--out",
        dir.path().join("o").display(),
        "-q",
        format!("http://both.test:{port}/")
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let plain = web.paths_of(&h);
    assert!(plain.contains(&"/".to_string()), "{plain:?}");
    assert!(!plain.contains(&"/plain".to_string()), "{plain:?}");
    let secure = web.paths_of(&tls);
    assert!(secure.contains(&"/open/y.html".to_string()), "{secure:?}");
    assert!(
        !secure.contains(&"/Private/x.html".to_string()),
        "{secure:?}"
    );
    let records = read_records(&dir.path().join("o"));
    let seed = records
        .iter()
        .find(|r| r.warc_type == "response" && r.path() == "/" && r.ip_address.is_some())
        .expect("the seed's response");
    assert_eq!(seed.ip_address.as_deref(), Some("127.0.0.161"));
    let refused = trawl(args!["crawl", "--spider", "-r", h.url("/")]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("wget's --spider"),
        "{}",
        text(&refused)
    );
}

/// `wget -r` stays on the seed's host without `-H`, follows what a page loads as links, and its
/// WARC holds every file it fetched: `trawl crawl -r` does the same (before, it crawled the
/// seed's other subdomains, left images to `-p` and kept only the HTML).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wget_r_stays_on_the_seeds_host_and_keeps_every_file() {
    let web = Web::default();
    let h = web.host("127.0.0.209").await;
    let port = h.addr.port();
    h.route(
        "/",
        Route::html(&format!(
            r#"<link rel=stylesheet href="/site.css">
            <a href="/guide.pdf">pdf</a> <a href="http://www.site.test:{port}/www">www</a>
            <img src="/photo.png"> <img src="http://www.site.test:{port}/cdn.png">"#
        )),
    );
    // wget -r reads a stylesheet for links too: what it imports and names.
    h.route(
        "/site.css",
        Route::typed(
            200,
            "text/css",
            b"@import url(base.css); h1 { background: url(/h1.png) }",
        ),
    );
    h.route(
        "/base.css",
        Route::typed(
            200,
            "text/css",
            b"@font-face { src: url(fonts/inter.woff) }",
        ),
    );
    h.route("/h1.png", Route::typed(200, "image/png", b"\x89PNG h1"));
    h.route(
        "/fonts/inter.woff",
        Route::typed(200, "font/woff", b"wOFF font"),
    );
    h.route(
        "/guide.pdf",
        Route::typed(200, "application/pdf", b"%PDF-1.4 guide"),
    );
    h.route(
        "/photo.png",
        Route::typed(200, "image/png", b"\x89PNG photo"),
    );
    h.route("/cdn.png", Route::typed(200, "image/png", b"\x89PNG cdn"));
    h.route("/www", Route::html("<p>another host of the domain</p>"));
    let out = tempfile::tempdir().unwrap();
    let result = trawl(args![
        "crawl",
        "-r",
        format!("http://site.test:{port}/"),
        "--resolve",
        format!("site.test:{port}:127.0.0.209"),
        "--resolve",
        format!("www.site.test:{port}:127.0.0.209"),
        "--out",
        out.path().display(),
        "--delay",
        "0ms",
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let uris: Vec<String> = read_records(out.path())
        .into_iter()
        .filter(|r| r.warc_type == "response")
        .filter_map(|r| r.target_uri)
        .collect();
    // What the page loads is followed as its links are (wget -r without -p), on its host.
    for path in [
        "/guide.pdf",
        "/photo.png",
        "/site.css",
        "/base.css",
        "/h1.png",
        "/fonts/inter.woff",
    ] {
        assert!(
            uris.contains(&format!("http://site.test:{port}{path}")),
            "{uris:?}"
        );
    }
    let paths = web.paths_of(&h);
    assert!(!paths.contains(&"/www".to_string()), "{paths:?}");
    assert!(!paths.contains(&"/cdn.png".to_string()), "{paths:?}");
}
