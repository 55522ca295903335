//! Measures link extraction: trawl's html5ever tokenizer pass against a full tree build with
//! markup5ever_rcdom followed by a DOM walk, on the same deterministic pages. Both must find
//! the same links; the throughput of each is printed (median of several runs).
//!
//! Run with `scripts/bench extract` (release build).

use std::time::Instant;

use html5ever::tendril::TendrilSink;
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use url::Url;

/// A deterministic page of roughly `target` bytes with `links` anchors, scripts, styles and
/// comments in the proportions of ordinary CMS output.
fn page(seed: u64, target: usize, links: usize) -> String {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut s = String::with_capacity(target + 4096);
    s.push_str("<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>Page</title>");
    s.push_str("<link rel=stylesheet href=/static/site.css><style>body{font:14px sans-serif} .nav a{color:#333}</style>");
    s.push_str("<script>window.dataLayer=[];function t(u){return '<a href=\"'+u+'\">'}</script></head><body>");
    s.push_str("<nav class=nav><ul>");
    for i in 0..links / 3 {
        s.push_str(&format!(
            "<li><a href=\"/section/{i}/\" class=\"nav-link\">Section {i}</a></li>"
        ));
    }
    s.push_str("</ul></nav><main>");
    let mut emitted = links / 3;
    while s.len() < target {
        s.push_str("<div class=\"article\"><h2>Heading</h2><p>");
        for _ in 0..rng.usize(20..80) {
            s.push_str(
                [
                    "lorem ",
                    "ipsum ",
                    "dolor ",
                    "sit ",
                    "amet ",
                    "&amp; ",
                    "caf&eacute; ",
                ][rng.usize(0..7)],
            );
        }
        if emitted < links {
            let n = rng.u32(0..100_000);
            s.push_str(&format!(
                "<a href=\"../articles/{n}.html?ref=home&amp;x=1\">more</a>"
            ));
            emitted += 1;
        }
        s.push_str(
            "</p><!-- <a href=/commented-out> --><img src=/i.png srcset=\"/i2.png 2x\"></div>",
        );
    }
    s.push_str(
        "</main><footer><a href=\"https://other.example/\">elsewhere</a></footer></body></html>",
    );
    s
}

fn rcdom_links(html: &str, page_url: &Url) -> Vec<String> {
    let dom = html5ever::parse_document(RcDom::default(), Default::default()).one(html);
    let mut hrefs = Vec::new();
    let mut base = None;
    walk(&dom.document, &mut hrefs, &mut base);
    let base = base
        .and_then(|b: String| page_url.join(&b).ok())
        .unwrap_or_else(|| page_url.clone());
    let mut seen = std::collections::HashSet::new();
    hrefs
        .iter()
        .filter_map(|h| trawl::url_rules::resolve_link(&base, h))
        .map(String::from)
        .filter(|u| seen.insert(u.clone()))
        .collect()
}

fn walk(node: &Handle, hrefs: &mut Vec<String>, base: &mut Option<String>) {
    if let NodeData::Element { name, attrs, .. } = &node.data {
        let attr = |n: &str| {
            attrs
                .borrow()
                .iter()
                .find(|a| &*a.name.local == n)
                .map(|a| a.value.to_string())
        };
        match &*name.local {
            "a" | "area" | "link" => hrefs.extend(attr("href")),
            "frame" | "iframe" => hrefs.extend(attr("src")),
            "base" if base.is_none() => *base = attr("href"),
            _ => {}
        }
    }
    for child in node.children.borrow().iter() {
        walk(child, hrefs, base);
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let url = Url::parse("http://bench.example/dir/index.html").unwrap();
    let pages: Vec<String> = (0..200)
        .map(|i| {
            if i % 2 == 0 {
                page(i, 15_000, 40)
            } else {
                page(i, 60_000, 100)
            }
        })
        .collect();
    let bytes: usize = pages.iter().map(String::len).sum();

    for p in &pages {
        let a: Vec<String> = trawl::extract::extract_links(p, &url, 100_000)
            .urls
            .into_iter()
            .map(String::from)
            .collect();
        let b = rcdom_links(p, &url);
        assert_eq!(a, b, "the two extractors disagree");
    }
    let runs = 7;
    let mut tok = Vec::new();
    let mut dom = Vec::new();
    let mut links = 0;
    for _ in 0..runs {
        let t = Instant::now();
        for p in &pages {
            links += trawl::extract::extract_links(p, &url, 100_000).urls.len();
        }
        tok.push(bytes as f64 / t.elapsed().as_secs_f64() / 1e6);
        let t = Instant::now();
        for p in &pages {
            links += rcdom_links(p, &url).len();
        }
        dom.push(bytes as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
    let mut noop = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        for p in &pages {
            noop_tokenize(p);
        }
        noop.push(bytes as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
    println!("no-op tokenizer:     {:7.1} MB/s", median(noop));
    let (tok, dom) = (median(tok), median(dom));
    println!(
        "pages: {} ({:.1} MB), links found per run: {}",
        pages.len(),
        bytes as f64 / 1e6,
        links / (2 * runs)
    );
    println!("tokenizer (trawl):   {tok:7.1} MB/s  (median of {runs})");
    println!("rcdom tree + walk:   {dom:7.1} MB/s  (median of {runs})");
    println!(
        "ratio tokenizer/rcdom: {:.2}x; both found identical links",
        tok / dom
    );
}

struct Noop;
impl html5ever::tokenizer::TokenSink for Noop {
    type Handle = ();
    fn process_token(
        &self,
        _t: html5ever::tokenizer::Token,
        _l: u64,
    ) -> html5ever::tokenizer::TokenSinkResult<()> {
        html5ever::tokenizer::TokenSinkResult::Continue
    }
}

fn noop_tokenize(html: &str) {
    let tok = html5ever::tokenizer::Tokenizer::new(Noop, Default::default());
    let input = html5ever::tokenizer::BufferQueue::default();
    input.push_back(html5ever::tendril::StrTendril::from_slice(html));
    let _ = tok.feed(&input);
    tok.end();
}
