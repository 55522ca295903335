//! Seed lines and the seeds stream, tested.

use super::*;

/// Asserts the URL seed line `text` becomes and whether it may fall back to http.
fn assert_seed(text: &str, url: &str, fallback: bool) {
    let s = parse_seed(text).unwrap();
    assert_eq!((s.url.as_str(), s.http_fallback), (url, fallback), "{text}");
}

#[test]
fn bare_hosts_become_https_with_fallback() {
    let s = parse_seed("ufmg.br").unwrap();
    assert_eq!(s.url.as_str(), "https://ufmg.br/");
    assert!(s.http_fallback && !s.credentials);
    let s = parse_seed("http://bob:pw@ufmg.br/").unwrap();
    assert_eq!((s.url.as_str(), s.credentials), ("http://ufmg.br/", true));
    let s = parse_seed("www.ufmg.br/pt/").unwrap();
    assert_eq!(s.url.as_str(), "https://www.ufmg.br/pt/");
    assert_seed("ufmg.br:443/x", "https://ufmg.br/x", true);
    assert_seed("127.0.0.1:8443", "https://127.0.0.1:8443/", true);
    // A bracketed IPv6 address, with or without a port or a path.
    assert_seed("[::1]", "https://[::1]/", true);
    assert_seed("[::1]/docs/", "https://[::1]/docs/", true);
    assert_seed("[::1]:9610", "http://[::1]:9610/", false);
    assert!(parse_seed("[::1").is_err());
}

#[test]
fn a_bare_host_on_another_port_is_plain_http() {
    assert_seed("127.0.0.1:8080", "http://127.0.0.1:8080/", false);
    let s = parse_seed("intranet.example:3000/wiki/").unwrap();
    assert_eq!(s.url.as_str(), "http://intranet.example:3000/wiki/");
    // `:80` is http's default: the URL has no port left.
    assert_seed("example.org:80", "http://example.org/", false);
}

#[test]
fn full_urls_are_kept_without_fallback() {
    let s = parse_seed("HTTP://Example.org/a#x").unwrap();
    assert_eq!(s.url.as_str(), "http://example.org/a");
    assert!(!s.http_fallback);
}

#[test]
fn a_bare_address_unlocks_port_80_only_when_it_has_no_port() {
    let addrs = |text: &str| {
        let seed = parse_seed(text).unwrap();
        seed.socket_addrs()
            .iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(addrs("127.0.0.9"), ["127.0.0.9:443", "127.0.0.9:80"]);
    assert_eq!(addrs("127.0.0.9:8099/x"), ["127.0.0.9:8099"]);
    assert_eq!(addrs("http://127.0.0.9:8099/"), ["127.0.0.9:8099"]);
    assert!(addrs("example.org").is_empty());
}

#[test]
fn file_parsing_reports_line_numbers_and_skips_comments() {
    let content =
        "# seeds\n\nhttp://a.org/\nftp://b.org/\n  c.org  \nnot a url\nhttp://\nhttp://d.org/x y\n";
    let (seeds, problems) = parse_seed_lines(content, &Ok);
    let urls: Vec<&str> = seeds.iter().map(|s| s.url.as_str()).collect();
    // A space in a path is part of the URL, as wget reads it.
    assert_eq!(
        urls,
        ["http://a.org/", "https://c.org/", "http://d.org/x%20y"]
    );
    let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [4, 6, 7]);
    assert!(problems[0].reason.contains("scheme"));
}

#[test]
fn a_stream_reads_batches_with_line_numbers_and_resumes_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seeds.txt");
    let content = "# seeds\nhttp://a.org/\nftp://b.org/\nc.org\n\nhttp://d.org/\ne.org";
    std::fs::write(&path, content).unwrap();
    let source = SeedSource::File(path.clone());
    let mut r = SeedReader::open(&source, SeedPosition::default()).unwrap();
    let first = r.next_batch(3, &Ok).unwrap();
    let urls: Vec<&str> = first.seeds.iter().map(|s| s.url.as_str()).collect();
    assert_eq!(urls, ["http://a.org/"]);
    assert_eq!(first.problems[0].line, 3);
    let at = r.position();
    assert_eq!((at.line, at.done), (3, false));
    // A second reader from the saved position reads the rest, the last line too.
    let mut again = SeedReader::open(&source, at).unwrap();
    let rest = again.next_batch(100, &Ok).unwrap();
    let urls: Vec<&str> = rest.seeds.iter().map(|s| s.url.as_str()).collect();
    assert_eq!(urls, ["https://c.org/", "http://d.org/", "https://e.org/"]);
    let end = again.position();
    assert_eq!(
        (end.line, end.offset, end.done),
        (7, content.len() as u64, true)
    );
    // The same lines as the whole-file parser.
    let (all, problems) = parse_seed_lines(content, &Ok);
    assert_eq!(all.len(), 4);
    assert_eq!(problems.len(), 1);
    // A shorter file than the saved position is read from its start.
    std::fs::write(&path, "http://z.org/\n").unwrap();
    let mut other = SeedReader::open(&source, end).unwrap();
    assert_eq!(other.next_batch(10, &Ok).unwrap().seeds.len(), 1);
}

#[test]
fn a_huge_line_is_kept_only_up_to_the_cap_and_the_next_line_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seeds.txt");
    let long = format!("http://a.org/{}\nhttp://b.org/\n", "x".repeat(3 * MAX_LINE));
    std::fs::write(&path, &long).unwrap();
    let source = SeedSource::File(path);
    let mut r = SeedReader::open(&source, SeedPosition::default())
        .unwrap()
        .recording();
    let batch = r.next_batch(10, &Ok).unwrap();
    assert_eq!(batch.problems[0].line, 1);
    let urls: Vec<&str> = batch.seeds.iter().map(|s| s.url.as_str()).collect();
    assert_eq!(urls, ["http://b.org/"]);
    assert_eq!(r.position().offset, long.len() as u64);
    // What is recorded (standard input's head) is the capped lines, line ends kept.
    let recorded = r.into_read_bytes();
    assert_eq!(recorded.len(), MAX_LINE + 1 + "http://b.org/\n".len());
    assert!(recorded.ends_with(b"\nhttp://b.org/\n"));
}

#[test]
fn dotless_bare_word_is_rejected() {
    assert!(parse_seed("intranet").is_err());
    assert_eq!(
        parse_seed("wiki:8080").map(|s| s.url.to_string()),
        Ok("http://wiki:8080/".to_string())
    );
    assert!(parse_seed("localhost").is_ok());
}

#[test]
fn a_utf16_file_is_named_as_such() {
    let content: Vec<u8> = "http://a.org/\r\nb.org\r\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let text = String::from_utf8_lossy(&[&[0xFF, 0xFE][..], &content].concat()).into_owned();
    let (seeds, problems) = parse_seed_lines(&text, &Ok);
    assert!(seeds.is_empty());
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(problems[0].text, "http://a.org/");
    assert_eq!(problems[1].text, "b.org");
    assert!(problems.iter().all(|p| p.reason == UTF16));
}

#[test]
fn a_line_that_is_not_utf8_keeps_its_bytes_as_escapes() {
    assert_eq!(
        line_text(b"http://a.org/caf\xe9?q=\xe9"),
        "http://a.org/caf%E9?q=%E9"
    );
    assert_eq!(
        line_text("http://a.org/café".as_bytes()),
        "http://a.org/café"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seeds.txt");
    std::fs::write(
        &path,
        b"http://a.org/caf\xe9\r\nhttp://a.org/\xc3\xa9t\xc3\xa9\n",
    )
    .unwrap();
    let mut r = SeedReader::open(&SeedSource::File(path), SeedPosition::default()).unwrap();
    let batch = r.next_batch(10, &Ok).unwrap();
    let urls: Vec<&str> = batch.seeds.iter().map(|s| s.url.as_str()).collect();
    assert_eq!(urls, ["http://a.org/caf%E9", "http://a.org/%C3%A9t%C3%A9"]);
    // A UTF-16 file is still named as such.
    assert!(line_text(b"\xff\xfeh\0t\0").contains('\0'));
}

#[test]
fn whitespace_in_a_path_is_part_of_the_url_and_in_a_host_refused() {
    let url = |text: &str| parse_seed(text).map(|s| s.url.to_string());
    assert_eq!(
        url("http://a.org/sp ace?q=a b"),
        Ok("http://a.org/sp%20ace?q=a%20b".into())
    );
    assert_eq!(url("a.org/x y"), Ok("https://a.org/x%20y".into()));
    for refused in [
        "not a url at all",
        "http://a .org/",
        "http ://a.org/",
        "a .org",
    ] {
        assert_eq!(url(refused), Err("contains whitespace".into()), "{refused}");
    }
}
