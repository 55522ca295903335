//! Tests of `extract/document.rs`.

use super::*;

fn all() -> DocumentOptions {
    DocumentOptions {
        text: true,
        metadata: true,
        max_text: 1 << 20,
        max_links: 1000,
        xml: false,
    }
}

/// XHTML served as `application/xhtml+xml`: its self-closed `<script/>` and `<title/>` are
/// closed, so the text after them is the page's (as HTML, the same bytes hide it).
#[test]
fn xml_documents_keep_the_text_after_self_closed_elements() {
    let xhtml = r#"<html xmlns="http://www.w3.org/1999/xhtml"><head><title/>
        <script src="a.js"/></head><body><p>After <textarea/>all</p></body></html>"#;
    let doc = read_document(xhtml, DocumentOptions { xml: true, ..all() });
    assert_eq!(doc.text, "After all");
    assert_eq!(doc.title, None);
    assert_eq!(read_document(xhtml, all()).text, "");
}

#[test]
fn blocks_become_lines_and_whitespace_collapses() {
    let doc = read_document(
        "<html><head><title> A  &amp; B </title><style>p{x:y}</style>\
         <script>var a = '<p>no</p>';</script></head><body>\n<h1>Head\n line</h1>\
         <p>One <b>two</b>   three</p><ul><li>x</li><li>y &lt; z</li></ul>\
         <noscript>hidden</noscript><template><p>tpl</p></template>\
         <pre>a\n  b</pre>end<br>after</body></html>",
        all(),
    );
    assert_eq!(doc.title.as_deref(), Some("A & B"));
    assert_eq!(
        doc.text,
        "Head line\nOne two three\nx\ny < z\na\nb\nend\nafter"
    );
}

#[test]
fn metadata_and_links_with_text() {
    let doc = read_document(
        "<head><meta charset=utf-8><meta name=description content='About x'>\
         <link rel=stylesheet href=/s.css type=text/css><script src=/a.js></script>\
         <base href='http://h/'></head><body><a href='/p' rel=nofollow>Go <i>there</i></a>\
         <img src=i.png alt=Pic><form action=/f></form></body>",
        all(),
    );
    assert_eq!(doc.metas.len(), 2);
    assert_eq!(
        doc.metas[1][0],
        ("name".to_string(), "description".to_string())
    );
    assert_eq!(doc.head_links[0].path, "LINK@/href");
    assert_eq!(doc.head_links[0].url, "/s.css");
    assert!(doc.head_links[0]
        .attrs
        .contains(&("rel", "stylesheet".to_string())));
    assert_eq!(doc.scripts[0].url, "/a.js");
    assert_eq!(doc.base.as_deref(), Some("http://h/"));
    let paths: Vec<_> = doc.links.iter().map(|l| l.path).collect();
    assert_eq!(paths, ["A@/href", "IMG@/src", "FORM@/action"]);
    assert_eq!(doc.links[0].text.as_deref(), Some("Go there"));
    assert!(doc.links[1].attrs.contains(&("alt", "Pic".to_string())));
}

#[test]
fn caps_hold() {
    let page = format!(
        "<p>{}</p>{}",
        "word ".repeat(10_000),
        "<a href=x>x</a>".repeat(50)
    );
    let doc = read_document(
        &page,
        DocumentOptions {
            max_text: 100,
            max_links: 10,
            ..all()
        },
    );
    assert!(doc.text.len() <= 100 && doc.text_cut == Some(super::TextCut::Length));
    assert_eq!(doc.links.len(), 10);
    assert_eq!(doc.links_dropped, 40);
}

#[test]
fn svg_title_is_not_the_title() {
    let doc = read_document(
        "<body><svg><title>icon</title></svg><title>Real</title></body>",
        DocumentOptions::title_only(),
    );
    assert_eq!(doc.title.as_deref(), Some("Real"));
}

/// Found by an exploratory comparison with Chromium's `innerText` and Common Crawl's WAT: a
/// second `<title>` wrote its text into the body's; `<center>`, `<search>` and `<listing>`
/// glued their words to the next; a link URL past 2 KiB was listed cut, as if the page held it.
#[test]
fn later_titles_are_no_text_blocks_part_lines_and_long_links_are_whole_or_none() {
    let doc = read_document(
        "<head><title>First</title><title>Second</title></head><body><p>body text</p>\
         <title>Third</title><center>c1</center><center>c2</center><search>s1</search>\
         <listing>l1</listing>x<xmp>xmp <b>shown</b></xmp></body>",
        all(),
    );
    assert_eq!(doc.title.as_deref(), Some("First"));
    assert_eq!(doc.text, "body text\nc1\nc2\ns1\nl1\nx\nxmp <b>shown</b>");
    let long = format!("http://a.test/{}?id=42", "x".repeat(3000));
    let too_long = format!("http://a.test/{}", "x".repeat(20_000));
    let doc = read_document(
        &format!("<a href=\"{long}\">a</a><a href=\"{too_long}\">b</a>"),
        all(),
    );
    let urls: Vec<&str> = doc.links.iter().map(|l| l.url.as_str()).collect();
    assert_eq!(urls, [long.as_str()]);
    assert_eq!(doc.links_dropped, 1);
}
