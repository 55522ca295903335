//! The links of a web feed: RSS 0.9x and 2.0 (`<link>`, `<comments>`, a `<guid>` that is a
//! permalink, `<enclosure url>`, `<source url>`), RSS 1.0 (`rdf:about` of `<channel>` and
//! `<item>`, `<link>`) and Atom (`<link href>`, `<content src>`, each against its `xml:base`),
//! the posts a blog's feed lists, which Heritrix's XML extractor follows too.
//!
//! Read with quick-xml, which expands no entities but the five predefined ones and character
//! references. Pure: bytes and the feed's URL in, canonical URLs out; an XML document that is
//! no feed (a sitemap, an XHTML page) gives none.

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use url::Url;

use super::lossy_utf8::LossyUtf8;
use super::xml_refs::reference_char;
use crate::url_rules::resolve_link;

/// Longest URL text kept from an element (longer ones are dropped, as `--max-url-length`
/// would drop them).
const MAX_TEXT: usize = 2048;

/// The links a feed names, in document order, each once.
#[derive(Debug, Default)]
pub struct FeedLinks {
    pub urls: Vec<Url>,
    /// Links past the cap, not kept.
    pub dropped: usize,
}

/// True for a media type whose body may be a feed: the feed types, and XML in general (the
/// root element then decides: RSS is often served as `text/xml`).
pub fn may_be_feed(media_type: &str) -> bool {
    matches!(
        media_type,
        "application/rss+xml"
            | "application/atom+xml"
            | "application/rdf+xml"
            | "application/xml"
            | "text/xml"
    )
}

/// The links of the feed `body` (content coding removed) fetched from `url`, at most `max`.
pub fn feed_links(body: &[u8], url: &Url, max: usize) -> FeedLinks {
    let start = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let text = std::io::BufReader::new(LossyUtf8::new(start));
    let mut reader = Reader::from_reader(text);
    let mut read = Read {
        out: FeedLinks::default(),
        seen: std::collections::HashSet::new(),
        max,
    };
    // The base of each open element (`xml:base` changes it for the element and what is in it).
    let mut bases: Vec<Url> = Vec::new();
    let mut text_of: Option<(usize, String)> = None;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(_) => break,
        };
        match event {
            Event::Start(e) | Event::Empty(e) if bases.is_empty() && !is_feed_root(&e) => break,
            Event::Start(e) => {
                let base = element_base(&e, bases.last().unwrap_or(url));
                read.attributes(&e, &base);
                if text_of.is_none() && takes_text(&e) {
                    text_of = Some((bases.len(), String::new()));
                }
                bases.push(base);
            }
            Event::Empty(e) => {
                let base = element_base(&e, bases.last().unwrap_or(url));
                read.attributes(&e, &base);
            }
            Event::End(_) => {
                let base = bases.pop();
                if let (Some((depth, text)), Some(base)) = (&text_of, &base) {
                    if *depth == bases.len() {
                        read.push(base, text);
                        text_of = None;
                    }
                }
                if bases.is_empty() {
                    break;
                }
            }
            Event::Text(t) => {
                if let Some((_, text)) = &mut text_of {
                    if text.len() <= MAX_TEXT {
                        text.push_str(&t.xml10_content());
                    }
                }
            }
            Event::CData(c) => {
                if let Some((_, text)) = &mut text_of {
                    if text.len() <= MAX_TEXT {
                        text.push_str(&c.into_inner());
                    }
                }
            }
            Event::GeneralRef(r) => {
                if let Some((_, text)) = &mut text_of {
                    match reference_char(&r) {
                        Some(c) if text.len() <= MAX_TEXT => text.push(c),
                        _ => {}
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    read.out
}

/// The links found so far.
struct Read {
    out: FeedLinks,
    seen: std::collections::HashSet<Url>,
    max: usize,
}

impl Read {
    fn push(&mut self, base: &Url, text: &str) {
        if text.len() > MAX_TEXT {
            return;
        }
        let Some(url) = resolve_link(base, text) else {
            return;
        };
        if self.seen.contains(&url) {
            return;
        }
        if self.out.urls.len() >= self.max {
            self.out.dropped += 1;
            return;
        }
        self.seen.insert(url.clone());
        self.out.urls.push(url);
    }

    /// The URLs an element names in its attributes.
    fn attributes(&mut self, e: &BytesStart<'_>, base: &Url) {
        let element = e.local_name();
        let wanted: &[&str] = match element.as_ref() {
            "link" => &["href"],
            "content" => &["src"],
            "enclosure" | "source" => &["url"],
            "channel" | "item" => &["rdf:about"],
            _ => return,
        };
        for attr in e.attributes().flatten() {
            if wanted.contains(&attr.key.as_ref()) {
                if let Ok(value) = attr.normalized_value(XmlVersion::Implicit1_0) {
                    self.push(base, &value);
                }
            }
        }
    }
}

/// True for the root element of a feed: `<rss>`, RSS 1.0's `<rdf:RDF>`, Atom's `<feed>`.
fn is_feed_root(e: &BytesStart<'_>) -> bool {
    matches!(e.local_name().as_ref(), "rss" | "RDF" | "feed")
}

/// True for an element whose text is a URL: RSS's `<link>` (Atom's names its URL in `href`),
/// `<comments>`, and a `<guid>` that is a permalink.
fn takes_text(e: &BytesStart<'_>) -> bool {
    match e.local_name().as_ref() {
        "link" => e.attributes().flatten().all(|a| a.key.as_ref() != "href"),
        "comments" => true,
        "guid" => is_permalink(e),
        _ => false,
    }
}

/// False for a `<guid isPermaLink="false">`, an identifier that need not be a URL.
fn is_permalink(e: &BytesStart<'_>) -> bool {
    e.local_name().as_ref() != "guid"
        || e.attributes()
            .flatten()
            .all(|a| a.key.as_ref() != "isPermaLink" || a.value.trim() != "false")
}

/// The base URL of element `e` inside an element whose base is `parent`: its `xml:base`
/// resolved against `parent`, else `parent`.
fn element_base(e: &BytesStart<'_>, parent: &Url) -> Url {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == "xml:base")
        .and_then(|a| {
            let value = a.normalized_value(XmlVersion::Implicit1_0).ok()?;
            parent.join(value.trim()).ok()
        })
        .filter(|base| matches!(base.scheme(), "http" | "https"))
        .unwrap_or_else(|| parent.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(feed: &str) -> Vec<String> {
        let url = Url::parse("http://a.org/feed/").unwrap();
        feed_links(feed.as_bytes(), &url, 100)
            .urls
            .into_iter()
            .map(String::from)
            .collect()
    }

    #[test]
    fn rss_items_and_their_enclosures() {
        let rss = r#"<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>
<title>t</title><link>http://a.org/</link><atom:link href="http://a.org/feed/" rel="self"/>
<item><title>old</title><link>http://a.org/2009/old-post.html?a=1&amp;b=2</link>
<guid>http://a.org/?p=17</guid><comments><![CDATA[/2009/old-post.html#comments]]></comments>
<enclosure url="http://a.org/podcast-17.mp3" type="audio/mpeg" length="1"/></item>
<item><link>relative.html</link><guid isPermaLink="false">tag:a.org,2009:18</guid></item>
</channel></rss>"#;
        assert_eq!(
            links(rss),
            [
                "http://a.org/",
                "http://a.org/feed/",
                "http://a.org/2009/old-post.html?a=1&b=2",
                "http://a.org/?p=17",
                "http://a.org/2009/old-post.html",
                "http://a.org/podcast-17.mp3",
                "http://a.org/feed/relative.html"
            ]
        );
    }

    #[test]
    fn atom_links_against_their_xml_base() {
        let atom = r#"<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://a.org/blog/">
<title>t</title><link href="/"/><entry xml:base="2009/"><title>a</title><link href="entry.html"/>
<id>tag:x,2009:1</id><content type="html" src="body.html"/></entry></feed>"#;
        assert_eq!(
            links(atom),
            [
                "http://a.org/",
                "http://a.org/blog/2009/entry.html",
                "http://a.org/blog/2009/body.html"
            ]
        );
    }

    #[test]
    fn rss_1_0_items_are_named_by_rdf_about() {
        let rdf = r#"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
<channel rdf:about="http://a.org/"><link>http://a.org/</link></channel>
<item rdf:about="http://a.org/one"><link>http://a.org/one</link></item></rdf:RDF>"#;
        assert_eq!(links(rdf), ["http://a.org/", "http://a.org/one"]);
    }

    #[test]
    fn xml_that_is_no_feed_names_nothing_and_the_cap_holds() {
        let sitemap = r#"<urlset><url><loc>http://a.org/x</loc></url></urlset>"#;
        assert!(links(sitemap).is_empty());
        assert!(links("<html><a href='/x'>x</a></html>").is_empty());
        assert!(links("not xml at all").is_empty());
        let mut rss = String::from("<rss><channel>");
        for i in 0..50 {
            rss.push_str(&format!("<item><link>/p{i}</link></item>"));
        }
        rss.push_str("</channel></rss>");
        let url = Url::parse("http://a.org/").unwrap();
        let found = feed_links(rss.as_bytes(), &url, 10);
        assert_eq!((found.urls.len(), found.dropped), (10, 40));
    }
}
