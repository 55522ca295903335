//! `--order`: what a crawl fetches first (breadth-first, path depth, backlinks, random).

use std::time::Duration;

use crate::args;
use crate::harness::{read_records, text, trawl};
use crate::server::{Host, Route, Web};

/// `--order`: under `path-depth` a host's URLs are fetched fewest path segments first; under
/// `bfs` (default) in link order; under `random` in an order of their own. A small
/// `--max-pages` shows which pages each order archives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_order_changes_what_is_fetched_first() {
    async fn crawl(ip: &str, order: &str, max_pages: u32) -> Vec<String> {
        let web = Web::default();
        let h = web.host(ip).await;
        // Deep paths first in the document, shallow ones last.
        let mut links = String::new();
        for i in 0..30 {
            let depth = 6 - (i / 5);
            let path: String =
                (0..depth).map(|d| format!("/s{d}")).collect::<String>() + &format!("/p{i}");
            links.push_str(&format!(r#"<a href="{path}">{i}</a>"#));
            h.route(&path, Route::html("<p>leaf</p>"));
        }
        h.route("/", Route::html(&links));
        let out = tempfile::tempdir().unwrap();
        crawl_in_order(&h, out.path(), order, Duration::ZERO, max_pages).await;
        web.paths_of(&h)
            .into_iter()
            .filter(|p| p != "/" && p != "/robots.txt")
            .collect()
    }
    let segments = |p: &String| p.split('/').filter(|s| !s.is_empty()).count();

    let by_path = crawl("127.0.0.68", "path-depth", 11).await;
    assert_eq!(by_path.len(), 10, "{by_path:?}");
    let counts: Vec<usize> = by_path.iter().map(segments).collect();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    assert!(
        counts.iter().all(|&c| c <= 3),
        "the shallowest pages come first: {counts:?}"
    );

    let by_link = crawl("127.0.0.69", "bfs", 11).await;
    let counts: Vec<usize> = by_link.iter().map(segments).collect();
    assert!(
        counts.iter().all(|&c| c >= 6),
        "bfs follows link order: {counts:?}"
    );

    let sampled = crawl("127.0.0.70", "random", 31).await;
    assert_eq!(sampled.len(), 30);
    let in_link_order: Vec<String> = by_link_order_all();
    assert_ne!(sampled, in_link_order, "random order equals link order");

    fn by_link_order_all() -> Vec<String> {
        (0..30)
            .map(|i| {
                let depth = 6 - (i / 5);
                (0..depth).map(|d| format!("/s{d}")).collect::<String>() + &format!("/p{i}")
            })
            .collect()
    }
}

/// `--order backlinks` on a site whose link graph has known in-degrees: the root links to 60
/// hubs (in-degree 1), every hub links to the same 10 popular pages (in-degree 60) and to two
/// leaves of its own (in-degree 1). With a small `--max-pages`, bfs archives hubs only; under
/// backlinks the popular pages move up once the re-rank pass counts their links, so the mean
/// in-degree of what is archived is far higher. Politeness and robots.txt still hold.
/// A site whose link graph has known in-degrees: the root links to `hubs` hubs (in-degree 1),
/// every hub to the same `popular` pages `/t*` (in-degree `hubs`) and to two leaves of its own
/// (in-degree 1).
pub(crate) fn hub_site(h: &Host, hubs: usize, popular: usize) {
    let home: String = (0..hubs)
        .map(|i| format!(r#"<a href="/h{i}">h</a>"#))
        .collect();
    h.route("/", Route::html(&home));
    for i in 0..hubs {
        let mut links: String = (0..popular)
            .map(|t| format!(r#"<a href="/t{t}">t</a>"#))
            .collect();
        links.push_str(&format!(r#"<a href="/l{i}a">a</a><a href="/l{i}b">b</a>"#));
        h.route(&format!("/h{i}"), Route::html(&links));
        h.route(&format!("/l{i}a"), Route::html("<p>leaf</p>"));
        h.route(&format!("/l{i}b"), Route::html("<p>leaf</p>"));
    }
    for t in 0..popular {
        h.route(&format!("/t{t}"), Route::html("<p>popular</p>"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backlinks_order_archives_the_most_linked_pages_first() {
    const HUBS: usize = 60;
    const POPULAR: usize = 10;
    let delay = Duration::from_millis(40);
    async fn crawl(ip: &str, order: &str, delay: Duration) -> (Vec<String>, Vec<Duration>) {
        let web = Web::default();
        let h = web.host(ip).await;
        h.route(
            "/robots.txt",
            Route::typed(200, "text/plain", b"User-agent: *\nDisallow: /t9\n"),
        );
        hub_site(&h, HUBS, POPULAR);
        let out = tempfile::tempdir().unwrap();
        crawl_in_order(&h, out.path(), order, delay, 45).await;
        let label = h.addr.to_string();
        let times: Vec<_> = web
            .hits()
            .iter()
            .filter(|x| x.host == label)
            .map(|x| x.at)
            .collect();
        let gaps = times
            .windows(2)
            .map(|p| p[1].duration_since(p[0]))
            .collect();
        let archived = read_records(out.path())
            .into_iter()
            .filter(|r| r.warc_type == "response")
            .filter_map(|r| r.target_uri)
            .filter(|u| !u.ends_with("/robots.txt"))
            .collect();
        (archived, gaps)
    }
    let in_degree = |url: &String| -> usize {
        let path = url.rsplit('/').next().unwrap_or("");
        match path.chars().next() {
            Some('t') => HUBS,
            Some('h' | 'l') => 1,
            _ => 0,
        }
    };
    let mean =
        |pages: &[String]| pages.iter().map(in_degree).sum::<usize>() as f64 / pages.len() as f64;

    let (bfs, _) = crawl("127.0.0.75", "bfs", delay).await;
    let (ranked, gaps) = crawl("127.0.0.76", "backlinks", delay).await;
    assert_eq!(bfs.len(), 45);
    assert_eq!(ranked.len(), 45);
    let (m_bfs, m_ranked) = (mean(&bfs), mean(&ranked));
    eprintln!("mean in-degree of the archived pages: bfs {m_bfs:.2}, backlinks {m_ranked:.2}");
    assert!(
        m_ranked > 5.0 * m_bfs.max(1.0),
        "mean in-degree {m_ranked:.1} under backlinks, {m_bfs:.1} under bfs: {ranked:?}"
    );
    let popular = ranked.iter().filter(|u| in_degree(u) == HUBS).count();
    assert_eq!(
        popular,
        POPULAR - 1,
        "every allowed popular page: {ranked:?}"
    );
    assert!(
        !ranked.iter().any(|u| u.ends_with("/t9")),
        "robots.txt still applies"
    );
    assert!(
        gaps.iter().all(|&g| g >= delay),
        "politeness still applies: {gaps:?}"
    );
}

/// Crawls `h` from `/` in `order`, without sitemaps, up to `max_pages`; asserts success.
async fn crawl_in_order(
    h: &Host,
    out: &std::path::Path,
    order: &str,
    delay: Duration,
    max_pages: u32,
) {
    let res = trawl(args![
        "crawl",
        h.url("/"),
        "--out",
        out.display(),
        "--delay",
        format!("{}ms", delay.as_millis()),
        "-q",
        "--order",
        order,
        "--max-pages",
        max_pages,
        "--no-sitemaps"
    ])
    .await;
    assert!(res.status.success(), "{}", text(&res));
}
