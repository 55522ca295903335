//! Tests of link extraction (`links.rs`).

use super::*;

fn links(html: &str) -> Vec<String> {
    let page = Url::parse("http://a.org/dir/page.html").unwrap();
    extract_links(html, &page, 1000)
        .urls
        .into_iter()
        .map(String::from)
        .collect()
}

#[test]
fn requisites_when_asked() {
    let page = Url::parse("http://a.org/d/p.html").unwrap();
    let html = r#"<head><link rel=stylesheet href=s.css><link rel="shortcut icon" href=/f.ico>
        <link rel=next href=n.html><style>@import "i.css"; b{background:url(bg.png)}</style>
        <script src=/app.js></script></head><body style="background:url('/body.jpg')">
        <img src=a.png srcset="a-2x.png 2x, /a-3x.png 3x"><video src=v.mp4 poster=p.jpg>
        <source src=v.webm></video><a href=x.html>x</a></body>"#;
    let found = extract_links_and_requisites(html, &page, 100, true, encoding_rs::UTF_8);
    let links: Vec<&str> = found.urls.iter().map(Url::as_str).collect();
    assert_eq!(links, ["http://a.org/d/n.html", "http://a.org/d/x.html"]);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(
        req,
        [
            "http://a.org/d/s.css",
            "http://a.org/f.ico",
            "http://a.org/d/i.css",
            "http://a.org/d/bg.png",
            "http://a.org/app.js",
            "http://a.org/body.jpg",
            "http://a.org/d/a.png",
            "http://a.org/d/a-2x.png",
            "http://a.org/a-3x.png",
            "http://a.org/d/v.mp4",
            "http://a.org/d/p.jpg",
            "http://a.org/d/v.webm",
        ]
    );
    // Without --page-requisites: stylesheets stay links, nothing else is collected.
    let plain = extract_links(html, &page, 100);
    assert!(plain.requisites.is_empty());
    assert!(plain.urls.iter().any(|u| u.as_str().ends_with("s.css")));
}

/// An SVG document, as a frame shows it (Doxygen's interactive call graphs): its self-closed
/// `<script xlink:href/>` is a requisite and does not hide the rest, whose images are
/// requisites and whose `xlink:href` anchors are links. Outside SVG a script's `href` is
/// nothing, and an HTML `<script/>` still runs to its end tag, as a browser reads it.
#[test]
fn svg_documents_scripts_images_and_links() {
    let page = Url::parse("http://a.org/d/graph.svg").unwrap();
    let svg = r#"<?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
        <script type="text/javascript" xlink:href="svgpan.js"/><title/><style/>
        <g><title>adler32.c</title><a xlink:href="adler32_8c.html" target="_top">
        <image xlink:href="node.png"/></a></g></svg>"#;
    let found = extract_links_and_requisites(svg, &page, 100, true, encoding_rs::UTF_8);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(req, ["http://a.org/d/svgpan.js", "http://a.org/d/node.png"]);
    let links: Vec<&str> = found.urls.iter().map(Url::as_str).collect();
    assert_eq!(links, ["http://a.org/d/adler32_8c.html"]);

    let html = r#"<script href=no.js></script><script src=a.js /><img src=in-script.png>"#;
    let found = extract_links_and_requisites(html, &page, 100, true, encoding_rs::UTF_8);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(req, ["http://a.org/d/a.js"]);
}

/// An `iframe srcdoc` is a document the page writes inline: what it links to and needs is
/// the page's (resolved against the page's base); a `link rel=manifest` is a requisite, as
/// Chromium asks for it loading the page.
#[test]
fn srcdoc_documents_and_manifests() {
    let page = Url::parse("http://a.org/d/p.html").unwrap();
    let html = r#"<base href="/b/"><link rel=manifest href=site.webmanifest>
        <iframe srcdoc="<img src=inner.png><a href=/in-frame>x</a>
        <iframe srcdoc='<img src=deeper.png>'></iframe>"></iframe><a href=after>y</a>"#;
    let found = extract_links_and_requisites(html, &page, 100, true, encoding_rs::UTF_8);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(
        req,
        [
            "http://a.org/b/site.webmanifest",
            "http://a.org/b/inner.png",
            "http://a.org/b/deeper.png"
        ]
    );
    let links: Vec<&str> = found.urls.iter().map(Url::as_str).collect();
    assert_eq!(links, ["http://a.org/in-frame", "http://a.org/b/after"]);
}

/// XHTML served as `application/xhtml+xml` is XML to a browser: a self-closed `<title/>` or
/// `<script/>` is closed and what follows is markup. Served as HTML, the same bytes run to
/// the end tag that never comes, as an HTML parser reads them.
#[test]
fn xml_documents_close_self_closed_elements() {
    let page = Url::parse("http://a.org/d/p.xhtml").unwrap();
    let xhtml = r#"<?xml version="1.0" encoding="UTF-8"?>
        <html xmlns="http://www.w3.org/1999/xhtml"><head><title/><script src="a.js"/></head>
        <body><img src="after.png"/><textarea/><a href="next.xhtml">n</a></body></html>"#;
    let utf8 = encoding_rs::UTF_8;
    let found = extract_document(xhtml, &page, 100, true, utf8, true);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(req, ["http://a.org/d/a.js", "http://a.org/d/after.png"]);
    let links: Vec<&str> = found.urls.iter().map(Url::as_str).collect();
    assert_eq!(links, ["http://a.org/d/next.xhtml"]);
    let as_html = extract_document(xhtml, &page, 100, true, utf8, false);
    assert!(as_html.requisites.is_empty() && as_html.urls.is_empty());
    // Its `<?xml-stylesheet?>` (Chromium loads it), in either quotes; not one of HTML's.
    let styled = r#"<?xml version="1.0"?><?xml-stylesheet type="text/css" href="s.css"?>
        <?xml-stylesheet href='t.css'?><svg xmlns="http://www.w3.org/2000/svg"/>"#;
    let found = extract_document(styled, &page, 100, true, utf8, true);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(req, ["http://a.org/d/s.css", "http://a.org/d/t.css"]);
    let as_html = extract_document(styled, &page, 100, true, utf8, false);
    assert!(as_html.requisites.is_empty());
}

/// A `<base>` that comes after some requisites: Chromium fetched those against the page's
/// URL as it met them, and the rest against the base; links are resolved against the base
/// wherever it stands, as a browser resolves them when they are followed.
#[test]
fn requisites_before_a_late_base_are_the_pages_own() {
    let page = Url::parse("http://a.org/d/p.html").unwrap();
    let html = r#"<link rel=stylesheet href=main.css><a href=early.html>e</a>
        <base href="/sub/"><img src=after.png><a href=late.html>l</a>"#;
    let found = extract_links_and_requisites(html, &page, 100, true, encoding_rs::UTF_8);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(
        req,
        ["http://a.org/d/main.css", "http://a.org/sub/after.png"]
    );
    let links: Vec<&str> = found.urls.iter().map(Url::as_str).collect();
    assert_eq!(
        links,
        ["http://a.org/sub/early.html", "http://a.org/sub/late.html"]
    );
}

/// Lazy-loading attributes, which a replaying browser's script turns into requests, are
/// requisites; other `data-` attributes are not.
#[test]
fn lazy_loading_attributes_are_requisites() {
    let page = Url::parse("http://a.org/d/p.html").unwrap();
    let html = r#"<img src="data:image/gif;base64,R0lGOD=" data-src=lazy.jpg
        data-srcset="lazy-1x.jpg 1x, /lazy-2x.jpg 2x" data-id=7>
        <div data-lazy-src=/bg.jpg data-toggle=modal></div><img data-original=o.png>"#;
    let found = extract_links_and_requisites(html, &page, 100, true, encoding_rs::UTF_8);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(
        req,
        [
            "http://a.org/d/lazy.jpg",
            "http://a.org/d/lazy-1x.jpg",
            "http://a.org/lazy-2x.jpg",
            "http://a.org/bg.jpg",
            "http://a.org/d/o.png",
        ]
    );
    assert!(extract_links(html, &page, 100).urls.is_empty());
}

/// A frame's document is part of the page: a requisite with the flag (whatever its type,
/// Doxygen's call graphs are SVG in iframes), a link without it.
#[test]
fn frames_are_requisites_when_asked() {
    let page = Url::parse("http://a.org/d/p.html").unwrap();
    let html = r#"<iframe src="graph.svg">fallback <img src=no.png></iframe>
        <frameset><frame src="/nav.html"></frameset><a href=x.html>x</a>"#;
    let found = extract_links_and_requisites(html, &page, 100, true, encoding_rs::UTF_8);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(req, ["http://a.org/d/graph.svg", "http://a.org/nav.html"]);
    let links: Vec<&str> = found.urls.iter().map(Url::as_str).collect();
    assert_eq!(links, ["http://a.org/d/x.html"]);
    let plain = extract_links(html, &page, 100);
    let links: Vec<&str> = plain.urls.iter().map(Url::as_str).collect();
    assert_eq!(
        links,
        [
            "http://a.org/d/graph.svg",
            "http://a.org/nav.html",
            "http://a.org/d/x.html"
        ]
    );
}

#[test]
fn requisites_of_responsive_images_backgrounds_and_svg() {
    let page = Url::parse("http://a.org/d/p.html").unwrap();
    let html = r#"<link rel=preload as=image imagesrcset="pre-1x.png 1x, pre-2x.png 2x">
        <body background=body.gif><table background=/t.gif><tr><td background=td.gif>
        <img src=a.png srcset="/img/a,1.png 100w, data:image/gif;base64,R0lGOD= 2x">
        <picture><source srcset="pic.webp 1x, pic2.webp 2x" type=image/webp></picture>
        <svg><use xlink:href="/sprite.svg#icon"></use><image href=svg.png></image>
        <a xlink:href="/svg-page">s</a></svg>"#;
    let found = extract_links_and_requisites(html, &page, 100, true, encoding_rs::UTF_8);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(
        req,
        [
            "http://a.org/d/pre-1x.png",
            "http://a.org/d/pre-2x.png",
            "http://a.org/d/body.gif",
            "http://a.org/t.gif",
            "http://a.org/d/td.gif",
            "http://a.org/d/a.png",
            "http://a.org/img/a,1.png",
            "http://a.org/d/pic.webp",
            "http://a.org/d/pic2.webp",
            "http://a.org/sprite.svg",
            "http://a.org/d/svg.png",
        ]
    );
    let links: Vec<&str> = found.urls.iter().map(Url::as_str).collect();
    assert_eq!(links, ["http://a.org/svg-page"]);
}

#[test]
fn anchors_areas_links_frames_and_relative_resolution() {
    let got = links(
        r#"<a href="x.html">x</a><area href="/y"><link rel=next href="../z">
           <frame src="f.html"><iframe src="//b.org/i">fallback <a href=no></iframe>"#,
    );
    assert_eq!(
        got,
        [
            "http://a.org/dir/x.html",
            "http://a.org/y",
            "http://a.org/z",
            "http://a.org/dir/f.html",
            "http://b.org/i",
        ]
    );
}

#[test]
fn base_href_applies_to_all_links_even_earlier_ones() {
    let got = links(
        r#"<a href="early">e</a><base href="http://c.org/root/"><a href="late">l</a><base href="/ignored/">"#,
    );
    assert_eq!(got, ["http://c.org/root/early", "http://c.org/root/late"]);
}

#[test]
fn relative_base_resolves_against_page() {
    assert_eq!(
        links(r#"<base href="sub/"><a href="p">"#),
        ["http://a.org/dir/sub/p"]
    );
}

#[test]
fn a_base_in_a_legacy_charset_writes_its_query_in_it() {
    let page = Url::parse("http://a.org/dir/page.html").unwrap();
    let got = extract_links_and_requisites(
        "<base href=\"/base/?q=\u{e9}\"><a href=\"#top\">t</a><a href=\"x?q=\u{e9}\">x</a>",
        &page,
        10,
        false,
        encoding_rs::WINDOWS_1252,
    );
    let got: Vec<&str> = got.urls.iter().map(Url::as_str).collect();
    assert_eq!(
        got,
        ["http://a.org/base/?q=%E9", "http://a.org/base/x?q=%E9"]
    );
}

#[test]
fn a_base_of_megabytes_is_not_copied_into_every_relative_link() {
    // Relative links against it would be over the URL cap and are counted as too long; links
    // that take only its scheme and host resolve as a browser resolves them.
    let base = format!("http://b.org/{}/", "x".repeat(1 << 20));
    let mut html = format!("<base href=\"{base}\">");
    for i in 0..2_000 {
        html.push_str(&format!("<a href=\"p{i}\">p</a><a href=\"?q={i}\">q</a>"));
    }
    html.push_str(
        "<a href=\"/abs\">a</a><a href=\"//c.org/s\">s</a><a href=\"https://d.org/\">d</a>",
    );
    let page = Url::parse("http://a.org/dir/page.html").unwrap();
    let got = extract_links(&html, &page, 10_000);
    let urls: Vec<&str> = got.urls.iter().take(5).map(Url::as_str).collect();
    assert_eq!(
        urls,
        ["http://b.org/abs", "http://c.org/s", "https://d.org/"]
    );
    assert_eq!(got.too_long, 4_000);
}

#[test]
fn unicode_white_space_around_an_href_is_part_of_it() {
    // The URL parser strips C0 controls and spaces only: a no-break space or an ideographic
    // space is escaped, as a browser requests it.
    assert_eq!(
        links("<a href=\"/t1.html\u{a0}\">1</a><a href=\"/t2.html\u{3000}\">2</a><a href=\"\u{a0}t3.html\">3</a><a href=\" \t/t4.html\n\">4</a>"),
        [
            "http://a.org/t1.html%C2%A0",
            "http://a.org/t2.html%E3%80%80",
            "http://a.org/dir/%C2%A0t3.html",
            "http://a.org/t4.html"
        ]
    );
}

#[test]
fn connection_hints_name_no_document() {
    assert_eq!(
        links("<link rel=preconnect href=\"https://fonts.example/\"><link rel=\"dns-prefetch\" href=\"//s.example\"><link rel=next href=\"p2\">"),
        ["http://a.org/dir/p2"]
    );
}

#[test]
fn no_links_from_script_style_comments_or_textarea() {
    let got = links(
        r#"<script>document.write('<a href="/s1">'); var u = "<a href='/s2'>";</script>
           <style>a[href="/s3"] {}</style><!-- <a href="/c1"> -->
           <textarea><a href="/t1"></textarea><title><a href="/t2"></title>
           <a href="/real">real</a>"#,
    );
    assert_eq!(got, ["http://a.org/real"]);
}

#[test]
fn links_for_clients_without_frames_plugins_or_scripts_are_taken() {
    let got = links(
        r#"<frameset><frame src="menu.html"><noframes><a href="/no-frames/">site</a></noframes></frameset>
           <noscript><a href="/no-js">no js</a></noscript><noembed><a href="/no-embed">x</a></noembed>
           <xmp><a href="/xmp"></xmp>"#,
    );
    assert_eq!(
        got,
        [
            "http://a.org/dir/menu.html",
            "http://a.org/no-frames/",
            "http://a.org/no-js",
            "http://a.org/no-embed"
        ]
    );
}

#[test]
fn srcset_and_img_are_not_pages() {
    let got = links(
        r#"<img src="a.jpg" srcset="b.jpg 2x, c.jpg 3x"><picture><source srcset="d.webp"></picture><a href="p.html" srcset="e.jpg">"#,
    );
    assert_eq!(got, ["http://a.org/dir/p.html"]);
}

#[test]
fn entities_are_decoded_in_attributes() {
    assert_eq!(
        links(r#"<a href="q?a=1&amp;b=2&#x26;c=3">"#),
        ["http://a.org/dir/q?a=1&b=2&c=3"]
    );
}

#[test]
fn meta_refresh_variants() {
    assert_eq!(
        links(r#"<meta http-equiv="Refresh" content="0; URL='/next'">"#),
        ["http://a.org/next"]
    );
    assert_eq!(
        links(r#"<meta http-equiv=refresh content="5;url=n2.html">"#),
        ["http://a.org/dir/n2.html"]
    );
    assert!(links(r#"<meta http-equiv=refresh content="5">"#).is_empty());
    assert!(links(r#"<meta name=refresh content="0; url=/x">"#).is_empty());
    // The first refresh is where the page moves a browser on, against the document's base.
    let page = Url::parse("http://a.org/dir/page.html").unwrap();
    let refresh = |html: &str| extract_links(html, &page, 100).refresh.map(String::from);
    assert_eq!(
        refresh(
            r#"<base href="/b/"><meta http-equiv=refresh content="0;url=x"><meta http-equiv=refresh content="0;url=/y">"#
        ),
        Some("http://a.org/b/x".to_string())
    );
    assert_eq!(refresh(r#"<meta http-equiv=refresh content="30">"#), None);
}

#[test]
fn only_http_links_deduplicated_fragments_dropped() {
    let got = links(
        r##"<a href="mailto:a@b"><a href="javascript:x()"><a href="#top"><a href="p#1"><a href="p#2"><a href="ftp://f/">"##,
    );
    assert_eq!(got, ["http://a.org/dir/page.html", "http://a.org/dir/p"]);
}

#[test]
fn broken_markup_does_not_stop_extraction() {
    let got = links("<div><a href='one'>1<p><a href=two>2</div></span><a href=\"three\"<a href=four><a href='unterminated");
    assert!(
        got.starts_with(&[
            "http://a.org/dir/one".to_string(),
            "http://a.org/dir/two".to_string()
        ]),
        "{got:?}"
    );
}

#[test]
fn cap_on_links_per_page() {
    let html: String = (0..50).map(|i| format!("<a href=/p{i}>")).collect();
    let page = Url::parse("http://a.org/").unwrap();
    let l = extract_links(&html, &page, 10);
    assert_eq!(l.urls.len(), 10);
    assert_eq!(l.dropped, 40);
}

#[test]
fn an_api_pages_thousands_of_fragments_do_not_crowd_out_its_links() {
    // An API page: every method anchored (`#method.x`, in two forms), its links to other
    // pages after them. Each fragment is the page itself: one href, not thousands.
    let mut html: String = (0..3000)
        .map(|i| format!("<a href=#method.m{i}>m</a><a href=\"#method.m{i}\">s</a>"))
        .collect();
    html.extend((0..10).map(|i| format!("<a href=struct.S{i}.html#impl>S</a>")));
    let page = Url::parse("http://a.org/core/").unwrap();
    let l = extract_links(&html, &page, 11);
    assert_eq!(l.urls.len(), 11, "{:?}", l.urls);
    assert_eq!(l.urls[0].as_str(), "http://a.org/core/");
    assert_eq!(l.urls[10].as_str(), "http://a.org/core/struct.S9.html");
    assert_eq!(l.dropped, 0);
}

#[test]
fn nul_bytes_and_a_10_mb_attribute_do_not_panic() {
    let html = format!("<a href=\"{}\">\0<a href=ok>\0</a>", "x".repeat(10_000_000));
    let got = links(&html);
    assert_eq!(got, ["http://a.org/dir/ok"]);
}

#[test]
fn a_robots_meta_nofollow_is_reported_not_obeyed_here() {
    let page = Url::parse("http://a.org/").unwrap();
    let nofollow = |html: &str| extract_links(html, &page, 100).nofollow;
    assert!(nofollow(
        r#"<meta name="robots" content="noindex,nofollow"><a href=x>"#
    ));
    assert!(nofollow(r#"<META NAME=ROBOTS CONTENT="None">"#));
    assert!(nofollow(
        r#"<a href=x></a><meta name=robots content="index, NoFollow">"#
    ));
    assert!(!nofollow(r#"<meta name="robots" content="noindex">"#));
    assert!(!nofollow(r#"<meta name="googlebot" content="nofollow">"#));
    assert!(!nofollow(r#"<a href=x rel=nofollow>"#));
    // The links are still extracted: whether to obey is the crawl's choice.
    let found = extract_links(
        r#"<meta name=robots content=nofollow><a href=/x>"#,
        &page,
        100,
    );
    assert_eq!(found.urls.len(), 1);
}

#[test]
fn scripts_the_page_runs_name_requisites_and_data_blocks_do_not() {
    let page = Url::parse("http://a.org/d/p.html").unwrap();
    let html = r#"<script type="importmap">{"imports": {"vue": "/vendor/vue.esm.js", "lib/": "/lib/"}}</script>
        <script type=module>import {createApp} from "vue"; import "./boot.mjs";
        const pic = new URL("img/hero.webp", import.meta.url);</script>
        <script>if (a < b) { var logo = "/static/logo.svg"; }
        // "/static/commented.png"
        </script><script type="text/javascript; charset=utf-8">x = '/static/typed.png'</script>
        <script type="application/ld+json">{"logo": "https://a.org/ld.png"}</script>
        <script type="text/x-template"><img src="/static/template.png"></script>
        <style>b { background: url(
          "multi-line.png") }</style>
        <script>var open = "/static/next.js"</script><script>var s = "/static/at-eof.png""#;
    let found = extract_links_and_requisites(html, &page, 100, true, encoding_rs::UTF_8);
    let req: Vec<&str> = found.requisites.iter().map(Url::as_str).collect();
    assert_eq!(
        req,
        [
            "http://a.org/vendor/vue.esm.js",
            "http://a.org/d/boot.mjs",
            "http://a.org/d/img/hero.webp",
            "http://a.org/static/logo.svg",
            "http://a.org/static/typed.png",
            "http://a.org/d/multi-line.png",
            "http://a.org/static/next.js",
            "http://a.org/static/at-eof.png",
        ]
    );
    // Without requisites asked for, a script's text names nothing.
    let plain = extract_links_and_requisites(html, &page, 100, false, encoding_rs::UTF_8);
    assert!(plain.requisites.is_empty() && plain.urls.is_empty());
}
