//! WARC files other tools wrote, read by `trawl index`, `derive` and `search-index`: GNU wget
//! writes WARC/1.0 with the target URI in angle brackets (`<http://...>`, the 1.0 grammar),
//! which warcio and cdxj-indexer take off; an uncompressed file is indexed as cdxj-indexer
//! indexes it, a header that is not UTF-8 is read as Latin-1, and a file gzipped as a whole
//! is refused with the way out.

use std::io::Write;
use std::path::Path;

use crate::args;
use crate::harness::{python, text, trawl};

/// One gzip member holding a WARC/1.0 record as wget writes it.
fn wget_record(out: &mut Vec<u8>, warc_type: &str, fields: &[(&str, &str)], block: &[u8]) {
    let mut head = format!("WARC/1.0\r\nWARC-Type: {warc_type}\r\n");
    for (name, value) in fields {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", block.len()));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(head.as_bytes()).unwrap();
    gz.write_all(block).unwrap();
    gz.write_all(b"\r\n\r\n").unwrap();
    out.extend(gz.finish().unwrap());
}

fn wget_warc(path: &Path) {
    let url = "<http://site.test/docs/page.html>";
    let page = "<title>A wget page</title><p>archived by another crawler</p>";
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{page}",
        page.len()
    );
    let request = "GET /docs/page.html HTTP/1.1\r\nHost: site.test\r\n\r\n";
    let mut warc = Vec::new();
    let date = ("WARC-Date", "2024-05-01T10:00:00Z");
    wget_record(
        &mut warc,
        "warcinfo",
        &[
            date,
            (
                "WARC-Record-ID",
                "<urn:uuid:00000000-0000-4000-8000-000000000001>",
            ),
            ("WARC-Filename", "site.warc.gz"),
            ("Content-Type", "application/warc-fields"),
        ],
        b"software: Wget/1.21.3 (linux-gnu)\r\nformat: WARC File Format 1.0\r\n",
    );
    wget_record(
        &mut warc,
        "request",
        &[
            ("WARC-Target-URI", url),
            date,
            (
                "WARC-Record-ID",
                "<urn:uuid:00000000-0000-4000-8000-000000000002>",
            ),
            ("Content-Type", "application/http;msgtype=request"),
        ],
        request.as_bytes(),
    );
    wget_record(
        &mut warc,
        "response",
        &[
            (
                "WARC-Record-ID",
                "<urn:uuid:00000000-0000-4000-8000-000000000003>",
            ),
            (
                "WARC-Warcinfo-ID",
                "<urn:uuid:00000000-0000-4000-8000-000000000001>",
            ),
            (
                "WARC-Concurrent-To",
                "<urn:uuid:00000000-0000-4000-8000-000000000002>",
            ),
            ("WARC-Target-URI", url),
            date,
            ("WARC-IP-Address", "127.0.0.1"),
            ("Content-Type", "application/http;msgtype=response"),
        ],
        response.as_bytes(),
    );
    wget_record(
        &mut warc,
        "metadata",
        &[
            (
                "WARC-Target-URI",
                "<metadata://gnu.org/software/wget/warc/MANIFEST.txt>",
            ),
            date,
            (
                "WARC-Record-ID",
                "<urn:uuid:00000000-0000-4000-8000-000000000004>",
            ),
            ("Content-Type", "text/plain"),
        ],
        b"<urn:uuid:00000000-0000-4000-8000-000000000001>\n",
    );
    std::fs::write(path, warc).unwrap();
}

/// `trawl index` of `warc`, asserted equal to cdxj-indexer's.
async fn index_as_cdxj_indexer_does(warc: &Path) -> String {
    index_as_cdxj_indexer_does_with(warc, Some(0)).await
}

/// [`index_as_cdxj_indexer_does`], trawl's exit code asserted to be `code`.
async fn index_as_cdxj_indexer_does_with(warc: &Path, code: Option<i32>) -> String {
    let ours = trawl(args!["index", warc.display()]).await;
    assert_eq!(ours.status.code(), code, "{}", text(&ours));
    let indexer = python().parent().unwrap().join("cdxj-indexer");
    let theirs = tokio::task::spawn_blocking({
        let warc = warc.to_path_buf();
        move || {
            std::process::Command::new(indexer)
                .arg("-s")
                .arg(warc)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(theirs.status.success(), "{}", text(&theirs));
    let ours = String::from_utf8_lossy(&ours.stdout).to_string();
    assert_eq!(
        ours,
        String::from_utf8_lossy(&theirs.stdout),
        "{}",
        warc.display()
    );
    ours
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wget_warc_is_indexed_derived_and_searched_by_its_plain_urls() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("site.warc.gz");
    wget_warc(&warc);

    let ours = index_as_cdxj_indexer_does(&warc).await;
    assert!(
        ours.lines().any(|l| {
            l.starts_with(
            "test,site)/docs/page.html 20240501100000 {\"url\": \"http://site.test/docs/page.html\""
        )
        }),
        "{ours}"
    );

    let derived = dir.path().join("derived");
    let result = trawl(args![
        "derive",
        "wet",
        warc.display(),
        "-o",
        derived.display()
    ])
    .await;
    assert!(result.status.success(), "{}", text(&result));
    let wet = warc::WarcReader::from_path_gzip(derived.join("site.warc.wet.gz")).unwrap();
    let targets: Vec<(String, String)> = wet
        .iter_records()
        .map(|r| {
            let r = r.unwrap();
            let target = r.header(warc::WarcHeader::TargetURI).unwrap_or_default();
            (r.warc_type().to_string(), target.to_string())
        })
        .collect();
    assert_eq!(
        targets[1..],
        [(
            "conversion".to_string(),
            "http://site.test/docs/page.html".to_string()
        )]
    );

    let index = dir.path().join("search");
    let result = trawl(args!["search-index", "-o", index.display(), warc.display()]).await;
    assert!(result.status.success(), "{}", text(&result));
    let found = trawl(args!["search", index.display(), "crawler", "--json"]).await;
    assert!(found.status.success(), "{}", text(&found));
    let found = String::from_utf8_lossy(&found.stdout);
    assert!(
        found.contains("\"http://site.test/docs/page.html\""),
        "{found}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uncompressed_and_whole_gzip_files() {
    let dir = tempfile::tempdir().unwrap();
    let members = dir.path().join("site.warc.gz");
    wget_warc(&members);
    let mut plain = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(&members).unwrap()),
        &mut plain,
    )
    .unwrap();
    let uncompressed = dir.path().join("site.warc");
    std::fs::write(&uncompressed, &plain).unwrap();
    index_as_cdxj_indexer_does(&uncompressed).await;

    // Cut inside its last record (a writer killed mid-record): the records before the cut
    // are indexed, and exit 2 says the file was not whole. Before, nothing was indexed.
    // cdxj-indexer indexes the cut record too, from what decodes of it; trawl does not.
    let whole = index_as_cdxj_indexer_does(&members).await;
    let gz = std::fs::read(&members).unwrap();
    for (name, bytes) in [("cut.warc.gz", &gz), ("cut.warc", &plain)] {
        let cut = dir.path().join(name);
        std::fs::write(&cut, &bytes[..bytes.len() - 20]).unwrap();
        let ours = trawl(args!["index", cut.display()]).await;
        assert_eq!(ours.status.code(), Some(2), "{}", text(&ours));
        assert!(
            text(&ours).contains("the records before it are indexed"),
            "{}",
            text(&ours)
        );
        let lines: Vec<String> = String::from_utf8_lossy(&ours.stdout)
            .lines()
            .map(|l| l.replace(&format!("\"{name}\""), "\"site.warc.gz\""))
            .collect();
        let whole: Vec<&str> = whole.lines().collect();
        assert_eq!(lines.len(), whole.len() - 1, "{name}: {lines:?}");
        if name.ends_with(".gz") {
            // Offsets and lengths of whole members are those of the uncut file.
            assert!(
                lines.iter().all(|l| whole.contains(&l.as_str())),
                "{lines:?}"
            );
        }
        // Packaged the same way, as py-wacz packages it: the index of the records before the
        // cut, the file whole, exit 2. Before, no package (exit 2).
        let wacz = dir.path().join(format!("{name}.wacz"));
        let packed = trawl(args!["wacz", wacz.display(), "--text", cut.display()]).await;
        assert_eq!(packed.status.code(), Some(2), "{}", text(&packed));
        assert!(
            text(&packed).contains("the records before it are indexed and packaged"),
            "{}",
            text(&packed)
        );
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&wacz).unwrap()).unwrap();
        let mut index = String::new();
        std::io::Read::read_to_string(&mut zip.by_name("indexes/index.cdx").unwrap(), &mut index)
            .unwrap();
        assert_eq!(index.lines().count(), lines.len(), "{index}");
        assert_eq!(
            zip.by_name(&format!("archive/{name}")).unwrap().size(),
            bytes.len() as u64 - 20
        );
    }

    // Line ends between records and after the last, and a gzip member that holds nothing, are
    // passed over as cdxj-indexer passes them over (before: exit 2, the records after them
    // not indexed).
    let padded = dir.path().join("padded.warc");
    let first = trawl::warc::reader::read_records(&uncompressed).unwrap()[0].length as usize;
    let with_ends = [&plain[..first], b"\r\n", &plain[first..], b"\r\n\r\n"].concat();
    std::fs::write(&padded, &with_ends).unwrap();
    index_as_cdxj_indexer_does(&padded).await;
    let empty_member = dir.path().join("empty-member.warc.gz");
    let first_member = trawl::warc::reader::read_records(&members).unwrap()[0].length as usize;
    let empty = trawl::record::gzip_member(b"", 6);
    std::fs::write(
        &empty_member,
        [&gz[..first_member], &empty, &gz[first_member..], b"\r\n"].concat(),
    )
    .unwrap();
    index_as_cdxj_indexer_does(&empty_member).await;

    // One gzip stream over the whole file: no record past the first can be read at an offset.
    let whole = dir.path().join("whole.warc.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain).unwrap();
    std::fs::write(&whole, gz.finish().unwrap()).unwrap();
    let result = trawl(args!["index", whole.display()]).await;
    assert_eq!(result.status.code(), Some(2), "{}", text(&result));
    let said = text(&result);
    assert!(
        said.contains("compressed as a whole") && said.contains("warcio recompress"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_that_is_not_utf8_is_read_as_latin1() {
    // A raw Latin-1 `é` in the target URI: warcio reads the header as ISO-8859-1.
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("latin.warc.gz");
    std::fs::write(&warc, response_with_target(b"http://site.test/caf\xe9")).unwrap();
    let ours = index_as_cdxj_indexer_does(&warc).await;
    assert!(ours.starts_with("test,site)/caf%c3%a9 "), "{ours}");
    // A raw space: the line's url has `%20`, as cdxj-indexer writes it (before: the space).
    let warc = dir.path().join("space.warc.gz");
    std::fs::write(&warc, response_with_target(b"http://site.test/a b.html")).unwrap();
    let ours = index_as_cdxj_indexer_does(&warc).await;
    assert!(
        ours.contains("\"url\": \"http://site.test/a%20b.html\""),
        "{ours}"
    );
}

/// A gzipped WARC file of one response record whose target URI is `uri`, as written.
fn response_with_target(uri: &[u8]) -> Vec<u8> {
    let body = "<p>caf\u{e9}</p>";
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut head = b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: ".to_vec();
    head.extend_from_slice(uri);
    head.extend_from_slice(b"\r\n");
    head.extend_from_slice(
        format!(
            "WARC-Date: 2024-05-01T10:00:00Z\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000009>\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
            response.len()
        )
        .as_bytes(),
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&head).unwrap();
    gz.write_all(response.as_bytes()).unwrap();
    gz.write_all(b"\r\n\r\n").unwrap();
    gz.finish().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_is_never_written_over_an_input_or_a_good_package() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.warc.gz");
    wget_warc(&a);
    let original = std::fs::read(&a).unwrap();
    let unchanged = |what: &str| assert_eq!(std::fs::read(&a).unwrap(), original, "{what}");
    // Before, the WACZ was written over a.warc.gz while reading it (it grew to 4 GiB), and
    // the index replaced it with its own lines (exit 0).
    let result = trawl(args!["wacz", a.display(), a.display()]).await;
    assert_eq!(result.status.code(), Some(2), "{}", text(&result));
    assert!(
        text(&result).contains("is one of the input"),
        "{}",
        text(&result)
    );
    unchanged("wacz");
    let result = trawl(args!["index", "-o", a.display(), a.display()]).await;
    assert_eq!(result.status.code(), Some(2), "{}", text(&result));
    unchanged("index -o");

    // Two inputs of one name: refused before anything is written, a package already there
    // left as it was (before, it was cut to a broken zip, exit 5).
    let wacz = dir.path().join("w.wacz");
    let result = trawl(args!["wacz", wacz.display(), a.display()]).await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let package = std::fs::read(&wacz).unwrap();
    let other = dir.path().join("b");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(&a, other.join("a.warc.gz")).unwrap();
    let b = other.join("a.warc.gz");
    let result = trawl(args!["wacz", wacz.display(), a.display(), b.display()]).await;
    assert_eq!(result.status.code(), Some(2), "{}", text(&result));
    assert!(
        text(&result).contains("share a file name"),
        "{}",
        text(&result)
    );
    assert_eq!(std::fs::read(&wacz).unwrap(), package);
    // derive names what it writes after the input's name too.
    let derived = dir.path().join("derived");
    let result = trawl(args![
        "derive",
        "-o",
        derived.display(),
        "wet",
        a.display(),
        b.display()
    ])
    .await;
    assert_eq!(result.status.code(), Some(2), "{}", text(&result));
    // search-index knows a file by its name and first record: b, a copy of a, is a indexed
    // before (two files of one name are both indexed: tests/it/search.rs).
    let index = dir.path().join("index");
    let result = trawl(args![
        "search-index",
        "-o",
        index.display(),
        a.display(),
        b.display()
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    assert!(
        text(&result).contains("(1 indexed before"),
        "{}",
        text(&result)
    );
    assert!(!dir.path().join("w.wacz.part").exists());
}
