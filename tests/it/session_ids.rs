//! A site that keeps its sessions in its URLs: every answer links every page again under a new
//! session id, as a servlet container writes `;jsessionid=` and PHP writes `PHPSESSID=` for a
//! client that sends no cookie. The seen set does not count session ids, so each page is
//! fetched once (the trap would otherwise run to `--max-pages`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::args;
use crate::harness::{read_json, read_records, text, trawl};

const PAGES: [&str; 5] = ["/", "/a", "/b", "/c", "/d"];

/// Serves the site on `addr` until the test ends; returns the port and the requests by path
/// (session ids taken out).
async fn session_site(addr: &str) -> (u16, Arc<Mutex<HashMap<String, usize>>>) {
    let listener = TcpListener::bind((addr, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let counter = Arc::new(Mutex::new(0u64));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (log, counter) = (log.clone(), counter.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    let head = String::from_utf8_lossy(&buf[..end]).to_string();
                    buf.drain(..end);
                    let target = head.split_whitespace().nth(1).unwrap_or("/");
                    let path = target.split(['?', ';']).next().unwrap().to_string();
                    *log.lock().unwrap().entry(path.clone()).or_default() += 1;
                    let response = if PAGES.contains(&path.as_str()) {
                        let mut html = String::from("<html><body>");
                        for (i, page) in PAGES.iter().enumerate() {
                            let id = {
                                let mut n = counter.lock().unwrap();
                                *n += 1;
                                format!("{:032X}", *n)
                            };
                            let href = match i % 2 {
                                0 => format!("{page};jsessionid={id}"),
                                _ => format!("{page}?lang=en&PHPSESSID={}", id.to_lowercase()),
                            };
                            html.push_str(&format!("<a href=\"{href}\">{page}</a>"));
                        }
                        html.push_str("</body></html>");
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{html}",
                            html.len()
                        )
                    } else {
                        "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n"
                            .to_string()
                    };
                    if stream.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_whose_links_carry_a_new_session_id_each_time_are_fetched_once() {
    let (port, requests) = session_site("127.0.0.123").await;
    let out = tempfile::tempdir().unwrap();
    let stats = out.path().join("stats.json");
    let result = trawl(args![
        "crawl",
        format!("http://127.0.0.123:{port}/"),
        "--out",
        out.path().join("warcs").display(),
        "--stats",
        stats.display(),
        "--delay",
        "0ms",
        "--no-cookies",
        "--max-pages",
        100,
        "-q"
    ])
    .await;
    assert_eq!(result.status.code(), Some(0), "{}", text(&result));
    let stats = read_json(&stats);
    assert_eq!(stats["stop_reason"], "frontier_exhausted", "{stats}");
    assert_eq!(stats["pages_archived"], 5, "{stats}");
    let requests = requests.lock().unwrap().clone();
    for page in PAGES {
        assert_eq!(requests.get(page), Some(&1), "{page}: {requests:?}");
    }
    // The archive keeps the URL as it was found, session id and all.
    let uris: Vec<String> = read_records(&out.path().join("warcs"))
        .iter()
        .filter(|r| r.warc_type == "response" && r.path() == "/a")
        .filter_map(|r| r.target_uri.clone())
        .collect();
    assert_eq!(uris.len(), 1, "{uris:?}");
    assert!(uris[0].contains("PHPSESSID="), "{uris:?}");
}
