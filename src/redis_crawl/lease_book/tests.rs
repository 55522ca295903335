//! Tests of the worker's local share: entries through Redis and back, acknowledgements after a
//! checkpoint, the outbox of discovered URLs and backlink counts.

use super::*;

fn entry(url: &str) -> QueuedUrl {
    QueuedUrl {
        url: url.into(),
        depth: 2,
        rank: 2,
        requisite: 0,
        redirects: 1,
        attempt: 0,
        sitemap: 0,
        referer: None,
    }
}

#[test]
fn entries_round_trip() {
    let e = entry("http://a.org/x?y=1");
    assert_eq!(decode_entry(&encode_entry(&e)), Some(e.clone()));
    assert_eq!(decode_entry("http://a.org/\tx"), None);
    // Counts that are 0 at the end are not written.
    assert_eq!(
        encode_entry(&QueuedUrl {
            redirects: 0,
            ..e.clone()
        }),
        "http://a.org/x?y=1\t2\t0"
    );
    let retried = QueuedUrl {
        redirects: 0,
        attempt: 2,
        ..e.clone()
    };
    assert_eq!(encode_entry(&retried), "http://a.org/x?y=1\t2\t0\t2");
    assert_eq!(decode_entry(&encode_entry(&retried)), Some(retried));
    // Page requisites and sitemap files keep their kind through Redis.
    for (requisite, sitemap) in [(2, 0), (0, 3)] {
        let e = QueuedUrl {
            requisite,
            sitemap,
            ..entry("http://a.org/s.xml")
        };
        assert_eq!(decode_entry(&encode_entry(&e)), Some(e));
    }
    // The Referer goes with a plain entry as with a requisite.
    for requisite in [0, 1] {
        let e = QueuedUrl {
            requisite,
            referer: Some("http://a.org/page?q=1".into()),
            ..entry("http://b.org/i.png")
        };
        let encoded = encode_entry(&e);
        assert!(encoded.ends_with("\t7>a.org/page?q=1"), "{encoded}");
        assert_eq!(decode_entry(&encoded), Some(e));
    }
    // On the URL's own site it is mostly what it shares with the URL.
    let e = QueuedUrl {
        referer: Some("http://b.org/img/".into()),
        ..entry("http://b.org/img/i.png")
    };
    let encoded = encode_entry(&e);
    assert_eq!(encoded, "http://b.org/img/i.png\t2\t1\t17>");
    // What an earlier version reads of it: URL, depth and redirects (its `?`), the attempt
    // as 0 when the field does not parse.
    let fields: Vec<&str> = encoded.split('\t').collect();
    assert!(fields[1].parse::<u32>().is_ok() && fields[2].parse::<u32>().is_ok());
    assert_eq!(fields[3].parse::<u32>().unwrap_or(0), 0);
    assert_eq!(decode_entry(&encoded), Some(e));
    // An operator's --referer may hold a `>`.
    let e = QueuedUrl {
        referer: Some("http://portal.example/?a>b".into()),
        ..entry("http://b.org/x")
    };
    assert_eq!(decode_entry(&encode_entry(&e)), Some(e));
    // A Referer field that cannot be read is dropped, not the URL.
    let odd = decode_entry("http://b.org/x\t1\t0\t0\t99>y").unwrap();
    assert_eq!((odd.url.as_str(), odd.referer), ("http://b.org/x", None));
    // An entry an earlier version queued (four fields) is a page.
    let old = decode_entry("http://a.org/\t1\t0\t2").unwrap();
    assert_eq!((old.requisite, old.sitemap, old.attempt), (0, 0, 2));
}

#[test]
fn finished_entries_are_acknowledged_only_after_a_checkpoint_and_retries_never() {
    let book = LeaseBook::new(HashMap::new());
    let mut store = LeaseStore::new(book.clone());
    store.host_named(0, "a.org");
    book.lock()
        .unwrap()
        .hold(0, vec![entry("http://a.org/1"), entry("http://a.org/2")]);
    let first = store.pop(0).unwrap().unwrap();
    store.finish(0);
    let mut second = store.pop(0).unwrap().unwrap();
    store.finish(0);
    second.attempt += 1;
    store.requeue(0, &second).unwrap();
    assert!(book
        .lock()
        .unwrap()
        .held_mut(0)
        .unwrap()
        .staged_done
        .is_empty());
    store.checkpoint().unwrap();
    let mut b = book.lock().unwrap();
    let held = b.held_mut(0).unwrap();
    assert_eq!(held.staged_done, vec![first.url]);
    assert_eq!(held.buffer.front().map(|e| e.attempt), Some(1));
}

#[test]
fn a_resynced_batch_adds_only_the_entries_the_worker_lacks() {
    let book = LeaseBook::new(HashMap::new());
    let mut store = LeaseStore::new(book.clone());
    store.host_named(0, "a.org");
    let urls: Vec<String> = (1..=6).map(|i| format!("http://a.org/{i}")).collect();
    book.lock()
        .unwrap()
        .hold(0, urls[..4].iter().map(|u| entry(u)).collect());
    // 1 finished before the checkpoint, 2 after it, 3 being fetched, 4 buffered.
    store.pop(0).unwrap();
    store.finish(0);
    store.checkpoint().unwrap();
    store.pop(0).unwrap();
    store.finish(0);
    store.pop(0).unwrap();
    // Redis's flight (1 to 4) and the lost batch (5, 6) come back together.
    let resent: Vec<QueuedUrl> = urls.iter().map(|u| entry(u)).collect();
    let mut b = book.lock().unwrap();
    assert_eq!(b.outstanding(0), 4, "every entry not acknowledged");
    // 0 was acknowledged after Redis ran the refill: it comes back, and is not taken either.
    b.acknowledged(0, vec!["http://a.org/0".into()]);
    let mut resent = resent;
    resent.insert(0, entry("http://a.org/0"));
    assert_eq!(b.extend_missing(0, resent), 2);
    assert_eq!(b.outstanding(0), 6);
    let buffered: Vec<&str> = b
        .held_mut(0)
        .unwrap()
        .buffer
        .iter()
        .map(|e| e.url.as_str())
        .collect();
    assert_eq!(
        buffered,
        ["http://a.org/4", "http://a.org/5", "http://a.org/6"]
    );
    assert_eq!(
        b.extend_missing(7, vec![entry("http://b.org/")]),
        0,
        "a host not held"
    );
}

#[test]
fn backlinks_go_to_redis_unless_the_url_is_in_the_workers_batch() {
    let book = LeaseBook::new(HashMap::new());
    let mut store = LeaseStore::new(book.clone());
    store.host_named(0, "a.org");
    store.host_named(1, "b.org");
    book.lock().unwrap().hold(0, vec![entry("http://a.org/1")]);
    let fp = Fingerprint::default();
    assert!(store.ranks_by_url());
    assert!(!store.promote(0, &fp, Some("http://a.org/1"), 3).unwrap());
    assert!(!store.promote(0, &fp, Some("http://a.org/2"), 2).unwrap());
    store.host_backlinks(1, 1);
    store.host_backlinks(1, 1);
    let out = book.lock().unwrap().take_outbox();
    let got: Vec<_> = out
        .iter()
        .map(|o| (o.kind, o.host.as_str(), o.entry.as_str(), o.rank))
        .collect();
    assert_eq!(
        got,
        vec![
            (OutgoingKind::Backlinks, "a.org", "http://a.org/2", 2),
            (OutgoingKind::HostBacklinks, "b.org", "", 2),
        ]
    );
    assert!(!book.lock().unwrap().has_outbox());
}

#[test]
fn discovered_urls_wait_in_the_outbox() {
    let book = LeaseBook::new(HashMap::new());
    let mut store = LeaseStore::new(book.clone());
    store.host_named(3, "b.org");
    let e = entry("http://b.org/");
    let fp = crate::frontier::storage::fingerprint(&e.url);
    assert_eq!(store.admit(3, &fp, &e).unwrap(), Admit::Deferred);
    let out = book.lock().unwrap().take_outbox();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].host, "b.org");
    assert_eq!(decode_entry(&out[0].entry), Some(e));
}
