//! The deterministic benchmark web, shared by the bench server and the floor measurement.
//!
//! Two profiles. `standard`: `hosts` hosts on 127.1.x.y, `pages` pages each at `/p/N.html`, two
//! size classes (about 15 KB and about 60 KB), 20-100 links per page (same-host and cross-host).
//! `small`: pages of about 8 KB and 15 KB with 30-40 links, 30% of which lead to redirects, 404s
//! or robots-disallowed URLs (the real web's small pages, where the per-request cost shows).
//! Both have per host a
//! robots.txt disallowing `/private/`, redirects `/r/N` → `/p/N.html`, 404s under `/missing/`,
//! PDFs under `/files/` and an extension-less octet-stream under `/data/` (a few of each per
//! host, so that, as on the real web, most fetches are pages). Page bodies are a
//! per-page head and link block followed by a filler chosen from a shared pool, so the server
//! holds a few MB, not gigabytes, and serves with vectored writes, no copies.

#![allow(dead_code)]

use std::net::Ipv4Addr;

/// Size of the filler pool per size class.
const FILLERS: usize = 32;

/// Which kind of web.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Pages of ~15 KB and ~60 KB, 20-100 links, most of them to pages.
    Standard,
    /// Pages of ~8 KB and ~15 KB, 30-40 links, 30% to redirects, 404s and disallowed URLs.
    Small,
}

impl Profile {
    /// From `--profile standard|small`.
    pub fn parse(s: &str) -> Profile {
        match s {
            "small" => Profile::Small,
            "standard" => Profile::Standard,
            other => panic!("--profile {other}: standard or small"),
        }
    }

    /// Filler sizes of the two size classes.
    fn filler_sizes(self) -> (usize, usize) {
        match self {
            Profile::Standard => (12_000, 57_000),
            Profile::Small => (5_500, 12_500),
        }
    }
}

/// Shape of the web.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub hosts: usize,
    pub pages: usize,
    pub seed: u64,
    pub port: u16,
    pub profile: Profile,
}

/// splitmix64: a tiny deterministic generator.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The loopback address of host `i`.
pub fn host_ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 1, (i / 250) as u8, (i % 250 + 1) as u8)
}

const WORDS: &[&str] = &[
    "archive",
    "library",
    "collection",
    "the",
    "of",
    "and",
    "record",
    "history",
    "city",
    "council",
    "meeting",
    "public",
    "notice",
    "river",
    "school",
    "report",
    "annual",
    "budget",
    "community",
    "event",
    "museum",
    "open",
    "hours",
    "weekend",
    "children",
    "reading",
    "club",
    "local",
    "news",
    "update",
    "project",
    "digital",
    "access",
    "research",
    "catalog",
    "map",
];

const SYLLABLES: &[&str] = &[
    "ar", "chi", "ve", "li", "bra", "ry", "co", "lec", "tion", "his", "to", "mu", "se", "um",
    "pub", "lic", "ri", "ver", "scho", "ol", "re", "port", "an", "nu", "al", "bud", "get", "com",
    "mu", "ni", "ty", "e", "vent", "o", "pen", "hour", "week", "end", "chil", "dren", "rea",
    "ding", "club", "lo", "cal", "news", "up", "date", "pro", "ject", "di", "gi", "tal", "ac",
];

/// A word from a vocabulary of a few thousand, frequent words more often (roughly Zipf), so
/// that the text compresses and tokenizes like real prose rather than like a tiny word list.
fn word(rng: &mut Rng, out: &mut String) {
    if rng.below(2) == 0 {
        out.push_str(WORDS[rng.below(WORDS.len())]);
        return;
    }
    let rank = {
        let r = rng.below(1 << 20) as f64 / (1 << 20) as f64;
        (4000f64.powf(r) - 1.0) as usize
    };
    let mut x = rank.wrapping_mul(2_654_435_761) ^ 0x5bd1_e995;
    for _ in 0..1 + rank % 3 {
        out.push_str(SYLLABLES[x % SYLLABLES.len()]);
        x /= SYLLABLES.len();
    }
}

fn paragraph(rng: &mut Rng, out: &mut String) {
    out.push_str(
        "<div class=\"content-block col-md-8\" data-role=\"text\"><p class=\"text-body\">",
    );
    for i in 0..rng.below(60) + 40 {
        if i > 0 {
            out.push(' ');
        }
        match rng.below(40) {
            0 => {
                out.push_str("<a class=\"inline\" href=\"#");
                word(rng, out);
                out.push_str("\">");
                word(rng, out);
                out.push_str("</a>");
            }
            1 => {
                out.push_str("<strong>");
                word(rng, out);
                out.push_str("</strong>");
            }
            2 => out.push_str(&format!("{}", rng.below(10_000))),
            _ => word(rng, out),
        }
    }
    out.push_str(".</p></div>\n");
}

/// The filler pool: (small, large) bodies tails, of the profile's two sizes.
pub fn fillers(seed: u64, profile: Profile) -> (Vec<String>, Vec<String>) {
    let (small, large) = profile.filler_sizes();
    let make = |size: usize, salt: u64| -> Vec<String> {
        (0..FILLERS)
            .map(|k| {
                let mut rng = Rng::new(seed ^ salt ^ (k as u64).wrapping_mul(0x1234_5678_9abc));
                let mut s = String::with_capacity(size + 1024);
                s.push_str("<main>\n");
                while s.len() < size {
                    s.push_str("<section class=\"article\" id=\"s");
                    s.push_str(&rng.below(100_000).to_string());
                    s.push_str("\"><h2>");
                    word(&mut rng, &mut s);
                    s.push_str("</h2>\n");
                    for _ in 0..3 {
                        paragraph(&mut rng, &mut s);
                    }
                    s.push_str("<!-- layout block --></section>\n");
                }
                s.push_str("</main>\n<footer><p>&copy; 2026 bench web</p></footer>\n<script>window.analytics = {id: 42};</script>\n</body></html>\n");
                s
            })
            .collect()
    };
    (make(small, 1), make(large, 2))
}

/// The per-page part (head and links) of page `p` of host `h`, and which filler follows it.
pub fn page_head(shape: &Shape, h: usize, p: usize) -> (String, bool, usize) {
    let mut rng = Rng::new(shape.seed ^ ((h as u64) << 32) ^ p as u64);
    let large = p % 2 == 1;
    let mut s = String::with_capacity(8192);
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    s.push_str(&format!("<title>Host {h} page {p}</title>\n"));
    s.push_str("<link rel=\"stylesheet\" href=\"/static/site.css\">\n");
    s.push_str("<style>body{font-family:sans-serif;margin:0 auto;max-width:60em} nav a{margin:0 .5em}</style>\n");
    s.push_str("<script>var menu = document.querySelectorAll('nav a'); var u = \"/not-a-link.html\";</script>\n");
    s.push_str("</head><body>\n<nav><ul>\n");
    let links = match shape.profile {
        Profile::Standard => 20 + rng.below(81),
        Profile::Small => 30 + rng.below(11),
    };
    for _ in 0..links {
        let roll = link_roll(shape.profile, &mut rng);
        let link = if roll < 70 {
            format!("/p/{}.html", rng.below(shape.pages))
        } else if roll < 88 {
            let other = rng.below(shape.hosts);
            format!(
                "http://{}:{}/p/{}.html",
                host_ip(other),
                shape.port,
                rng.below(shape.pages)
            )
        } else if roll < 91 {
            format!("/r/{}", rng.below(3))
        } else if roll < 93 {
            format!("/missing/{}", rng.below(3))
        } else if roll < 95 {
            format!("/files/doc{}.pdf", rng.below(3))
        } else if roll < 97 {
            format!("/data/{}", rng.below(2))
        } else {
            format!("/private/{}.html", rng.below(3))
        };
        s.push_str(&format!("<li><a href=\"{link}\">link {roll}</a></li>\n"));
    }
    s.push_str("</ul></nav>\n");
    let filler = rng.below(FILLERS);
    (s, large, filler)
}

/// A link class on the standard scale (0-69 same-host page, 70-87 cross-host page, 88-90
/// redirect, 91-92 404, 93-94 PDF, 95-96 octet-stream, 97-99 disallowed). The small profile
/// draws 50% same-host pages, 20% cross-host pages and 10% each of redirects, 404s and
/// disallowed URLs.
fn link_roll(profile: Profile, rng: &mut Rng) -> usize {
    let roll = rng.below(100);
    match profile {
        Profile::Standard => roll,
        Profile::Small => match roll {
            0..50 => roll,
            50..70 => 70 + (roll - 50) * 18 / 20,
            70..80 => 88 + (roll - 70) % 3,
            80..90 => 91 + (roll - 80) % 2,
            _ => 97 + (roll - 90) % 3,
        },
    }
}

/// The full HTTP response for page `p` of host `h` (what the server sends).
pub fn page_response(
    shape: &Shape,
    fillers: &(Vec<String>, Vec<String>),
    h: usize,
    p: usize,
) -> Vec<u8> {
    let (head, large, f) = page_head(shape, h, p);
    let filler = if large { &fillers.1[f] } else { &fillers.0[f] };
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nServer: bench-web\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
        head.len() + filler.len()
    )
    .into_bytes();
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(filler.as_bytes());
    out
}
