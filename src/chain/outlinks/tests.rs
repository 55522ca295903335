//! Tests of link extraction from captures: pages, redirects, robots.txt, header links,
//! requisites and declared types.

use super::*;
use crate::exchange::Exchange;
use crate::http_message::parse_response_head;

fn capture(response: &str) -> Capture {
    let exchange = Exchange {
        target_uri: "http://a.org/d/".into(),
        ip: None,
        tls: None,
        date: std::time::SystemTime::UNIX_EPOCH,
        request: Vec::new(),
        response: response.as_bytes().to_vec().into(),
        truncated: None,
        interim: Vec::new(),
    };
    let head = parse_response_head(&exchange.response).unwrap();
    Capture::new(exchange, head)
}

fn rules(max_links: usize) -> LinkRules {
    LinkRules {
        max_links_per_page: max_links,
        max_decoded_size: 1 << 20,
        robots_max_decoded: 1 << 20,
        max_sitemap_decoded: 1 << 20,
        page_requisites: false,
        inline_links: false,
        obey_meta_robots: true,
        robots_agent: "trawl".into(),
        accept: vec!["text/html".into(), "application/xhtml+xml".into()],
    }
}

#[test]
fn links_that_declare_a_type_not_archived_are_left() {
    let url = Url::parse("http://a.org/").unwrap();
    let page = capture(concat!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n",
        "Link: </wp-json/wp/v2/posts/5>; rel=\"alternate\"; type=\"application/json\", ",
        "</wp-json/>; rel=\"https://api.w.org/\"\r\n\r\n",
        "<link rel=alternate type=application/rss+xml href=/feed/>",
        "<link rel=alternate type='Application/JSON+oembed; charset=utf-8' href='/oembed?u=1'>",
        "<link rel=alternate type=text/html hreflang=de href=/de/>",
        "<link rel=alternate type=application/atom+xml href=/atom>",
        "<link rel=alternate type=bogus href=/bogus>",
        "<link rel=next href=/page/2>",
        "<a href=/atom>Atom</a>",
    ));
    let out = outlinks(&rules(99), &page, &url, true, false);
    let got: Vec<&str> = out.links.iter().map(Url::path).collect();
    // An anchor makes /atom a link like any other; a type that is not one says nothing.
    assert_eq!(got, ["/de/", "/atom", "/bogus", "/page/2", "/wp-json/"]);
    assert_eq!(out.declined.declared_type, 3);
    let everything = LinkRules {
        accept: vec!["*/*".into()],
        ..rules(99)
    };
    let out = outlinks(&everything, &page, &url, true, false);
    assert_eq!((out.links.len(), out.declined.declared_type), (8, 0));
}

#[test]
fn a_tag_of_countless_attributes_cuts_the_page_keeping_the_links_before_it() {
    // html5ever tests each attribute against the ones before it: n² for n distinct ones.
    let url = Url::parse("http://a.org/").unwrap();
    let attrs: Vec<String> = (0..150_000).map(|i| format!("a{i}")).collect();
    let page = capture(&format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<a href=/before>b</a><b {}>x</b><a href=/after>a</a>",
        attrs.join(" ")
    ));
    let rules = LinkRules {
        max_decoded_size: 4 << 20,
        ..rules(99)
    };
    let out = outlinks(&rules, &page, &url, true, false);
    let got: Vec<&str> = out.links.iter().map(Url::path).collect();
    assert_eq!(got, ["/before"]);
    assert_eq!(out.faults, [FaultKind::ExtractionTimeCapped]);
}

#[test]
fn pages_redirects_and_robots() {
    let url = Url::parse("http://a.org/d/").unwrap();
    let page = capture(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<a href=x>1</a><a href=/y>2</a>",
    );
    let out = outlinks(&rules(1), &page, &url, true, false);
    assert_eq!(out.links, [Url::parse("http://a.org/d/x").unwrap()]);
    assert_eq!(out.faults, [FaultKind::LinksCapped]);
    // Not a page (e.g. a 404 or over budget): no links.
    assert!(outlinks(&rules(9), &page, &url, false, false)
        .links
        .is_empty());
    let moved = capture("HTTP/1.1 301 Moved\r\nLocation: ../z\r\n\r\n");
    let out = outlinks(&rules(9), &moved, &url, false, false);
    assert_eq!(out.location, Some(Url::parse("http://a.org/z").unwrap()));
    // A Location on a 304 or 305 sends no one there; an unknown 3xx is a 300.
    for (status, followed) in [
        (304, false),
        (305, false),
        (306, false),
        (300, true),
        (399, true),
    ] {
        let head = format!("HTTP/1.1 {status} X\r\nLocation: /t\r\n\r\n");
        let out = outlinks(&rules(9), &capture(&head), &url, false, false);
        assert_eq!(out.location.is_some(), followed, "{status}");
    }
    let away = capture("HTTP/1.1 302 Found\r\nLocation: mailto:x@a.org\r\n\r\n");
    let out = outlinks(&rules(9), &away, &url, false, false);
    assert_eq!((out.location, out.declined.not_http), (None, 1));
    let headed = capture(
        "HTTP/1.1 201 Created\r\nContent-Type: text/html\r\nLocation: /new\r\nContent-Location: alt\r\nLink: <x>; rel=next, <//cdn.a.org/>; rel=preconnect\r\nLink: <mailto:a@a.org>\r\nRefresh: 3; URL='/refreshed'\r\n\r\n<a href=x>1</a>",
    );
    let out = outlinks(&rules(9), &headed, &url, true, false);
    let got: Vec<&str> = out.links.iter().map(Url::as_str).collect();
    assert_eq!(
        got,
        [
            "http://a.org/d/x",
            "http://a.org/new",
            "http://a.org/d/alt",
            "http://a.org/refreshed"
        ]
    );
    assert_eq!(out.declined.not_http, 1);
    // A robots.txt labelled gzip but sent plain is read as it came: its rules count.
    let robots =
        capture("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\nUser-agent: *\nDisallow: /s");
    let out = outlinks(&rules(9), &robots, &url, false, true);
    assert_eq!(
        out.robots_body.as_deref(),
        Some(&b"User-agent: *\nDisallow: /s"[..])
    );
    assert_eq!(out.faults, [FaultKind::InvalidContentEncoding]);
    // A broken gzip stream is not read as rules.
    let robots = capture("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n\x1f\u{8b}\x08junk");
    let out = outlinks(&rules(9), &robots, &url, false, true);
    assert_eq!(out.robots_body.as_deref(), Some(&b""[..]));
}

#[test]
fn a_preload_link_header_is_a_requisite_when_they_are_asked_for() {
    let url = Url::parse("http://a.org/d/").unwrap();
    let page = capture(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nLink: </app.css>; rel=preload; as=style, <n>; rel=next\r\n\r\n<p>x</p>",
    );
    let plain = outlinks(&rules(9), &page, &url, true, false);
    assert_eq!(plain.links.len(), 2);
    assert!(plain.requisites.is_empty());
    let asked = LinkRules {
        page_requisites: true,
        inline_links: false,
        ..rules(9)
    };
    let out = outlinks(&asked, &page, &url, true, false);
    assert_eq!(out.links, [Url::parse("http://a.org/d/n").unwrap()]);
    assert_eq!(
        out.requisites,
        [Url::parse("http://a.org/app.css").unwrap()]
    );
}
