//! Query latency of a search index (for `scripts/bench search`): opens INDEX once, builds
//! queries from words of its own pages (one word, two words, a two-word phrase, a title
//! field query), runs each with a limit of 10 hits and their snippets, and prints the
//! latency percentiles as JSON. In-process: what a server or the console pays per query;
//! `trawl search` adds its process start.
//!
//! Usage: bench_search INDEX [QUERIES]

use std::time::Instant;

use trawl::search::SearchReader;

fn main() {
    let mut args = std::env::args().skip(1);
    let index = args.next().expect("usage: bench_search INDEX [QUERIES]");
    let wanted: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(400);
    let reader = SearchReader::open(std::path::Path::new(&index)).expect("open the index");
    // Words of the pages' first lines: sample pages with the match-all query.
    let sample = reader.search("*", 1000).expect("sample pages");
    let mut words: Vec<Vec<String>> = sample
        .hits
        .iter()
        .map(|h| {
            h.snippet
                .split(|c: char| !c.is_alphabetic())
                .filter(|w| w.chars().count() >= 4)
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        })
        .filter(|w| w.len() >= 4)
        .collect();
    assert!(!words.is_empty(), "no pages with text in {index}");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let mut queries = Vec::with_capacity(wanted);
    while queries.len() < wanted {
        let page = next(words.len());
        let w = &mut words[page];
        let i = next(w.len() - 1);
        let q = match queries.len() % 4 {
            0 => w[i].clone(),
            1 => format!("{} {}", w[i], w[next(w.len())]),
            2 => format!("\"{} {}\"", w[i], w[i + 1]),
            _ => format!("title:{}", w[i]),
        };
        queries.push(q);
    }
    // One untimed pass warms the page cache and the reader, as a long-running server is.
    for q in queries.iter().take(20) {
        let _ = reader.search(q, 10);
    }
    let mut ms = Vec::with_capacity(queries.len());
    let mut hits = 0usize;
    for q in &queries {
        let t = Instant::now();
        let r = reader.search(q, 10).expect("search");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        hits += usize::from(r.total > 0);
    }
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "{{\"pages\": {}, \"queries\": {}, \"with_hits\": {hits}, \"p50_ms\": {:.3}, \"p90_ms\": {:.3}, \"p99_ms\": {:.3}, \"max_ms\": {:.3}}}",
        reader.pages(),
        ms.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        ms[ms.len() - 1]
    );
}
