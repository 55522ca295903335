//! What `--max-body-size` holds against a body's framing: the bytes a body takes on the wire,
//! chunk-size lines included, are capped as well as the body they carry, so a server that
//! sends its body in 1-byte chunks (six bytes on the wire for each) cannot make the recording
//! five times the cap; a body chunked as servers chunk it is kept whole up to the cap.

use crate::args;
use crate::harness::{read_records, run_script, text};
use crate::hostile_cases::{crawl, raw, responses};
use crate::server::Web;

/// A 200 response of `content_type` whose `body` is sent in chunks of `chunk` bytes.
pub(crate) fn chunked_as(content_type: &str, body: &[u8], chunk: usize) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for piece in body.chunks(chunk) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

fn chunked(body: &[u8], chunk: usize) -> Vec<u8> {
    chunked_as("text/html", body, chunk)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_in_tiny_chunks_is_cut_at_the_cap_on_the_wire() {
    let web = Web::default();
    let h = web.host("127.0.0.29").await;
    let cap = 64 * 1024;
    let mut page = b"<a href=/tiny>t</a><a href=/usual>u</a>".to_vec();
    page.resize(200, b' ');
    h.behave("/", raw(&chunked(&page, 4096)));
    // 30,000 bytes of body, under the cap; 180,000 on the wire.
    h.behave("/tiny", raw(&chunked(&[b'a'; 30_000], 1)));
    // 60,000 bytes in 4 KiB chunks: framing under 1%, kept whole.
    h.behave("/usual", raw(&chunked(&[b'b'; 60_000], 4096)));
    let out = tempfile::tempdir().unwrap();
    let stats = crawl(h.url("/"), out.path(), &["--max-body-size", "64KiB"]).await;
    let dir = out.path().join("warcs");
    let records = read_records(&dir);

    let tiny = responses(&records, "/tiny");
    assert_eq!(tiny.len(), 1, "{stats}");
    assert_eq!(tiny[0].truncated.as_deref(), Some("length"));
    let head = tiny[0]
        .block
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap()
        + 4;
    assert_eq!(tiny[0].block.len(), head + cap);

    let usual = responses(&records, "/usual");
    assert_eq!(usual.len(), 1, "{stats}");
    assert_eq!(usual[0].truncated, None);
    assert_eq!(usual[0].block, chunked(&[b'b'; 60_000], 4096));
    let check = run_script("warc_check.py", args![dir.display()]).await;
    assert!(check.status.success(), "{}", text(&check));
}
