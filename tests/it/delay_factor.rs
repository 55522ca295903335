//! `--delay-factor` (Heritrix's delayFactor): a host rests in proportion to how long its last
//! answer took, so a server that slows down is asked less often.

use std::time::Duration;

use crate::hostile_cases::crawl;
use crate::server::{Behavior, Route, Web};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_server_rests_in_proportion_to_its_answers() {
    let web = Web::default();
    let h = web.host("127.0.0.103").await;
    h.route(
        "/",
        Route::html("<a href=/s1>1</a><a href=/s2>2</a><a href=/s3>3</a>"),
    );
    let body = b"<p>slow</p>";
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let slow = Duration::from_millis(200);
    for path in ["/s1", "/s2", "/s3"] {
        let parts = vec![(slow, body.to_vec())];
        let head = head.clone().into_bytes();
        h.behave(path, Behavior::Parts { head, parts });
    }
    let out = tempfile::tempdir().unwrap();
    let flags = ["--delay-factor", "3"];
    let stats = crawl(h.url("/"), out.path(), &flags).await;
    assert_eq!(stats["pages_archived"], 4, "{stats}");
    // After each slow answer (200 ms), 3 x its time (not the 10 ms delay of `crawl`) before
    // the next request: 800 ms apart.
    let hits = web.hits();
    let slow_ones: Vec<_> = hits
        .iter()
        .filter(|x| matches!(x.path.as_str(), "/s1" | "/s2" | "/s3"))
        .collect();
    assert_eq!(slow_ones.len(), 3);
    for pair in slow_ones.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(gap >= Duration::from_millis(790), "{gap:?}");
    }
}
