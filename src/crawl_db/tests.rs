//! Tests of the database's rows: commits, the queue read across memory and disk, leaf fill.

use super::*;

use layout::queue_key as key;

#[test]
fn committed_changes_survive_and_uncommitted_ones_do_not() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut s = CrawlDb::open(dir.path()).unwrap();
        s.queue_insert(&key(1, 0, 1), b"kept").unwrap();
        s.meta_write("m", b"1").unwrap();
        s.commit().unwrap();
        s.queue_insert(&key(1, 0, 2), b"lost").unwrap();
        s.meta_write("m", b"2").unwrap();
        // Dropped without a commit: as after a crash.
    }
    let s = CrawlDb::open(dir.path()).unwrap();
    assert_eq!(s.meta_read("m").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(
        s.queue_get(&key(1, 0, 1)).unwrap().as_deref(),
        Some(&b"kept"[..])
    );
    assert_eq!(s.queue_get(&key(1, 0, 2)).unwrap(), None);
}

#[test]
fn creation_is_whole_even_after_a_kill_mid_creation() {
    let dir = tempfile::tempdir().unwrap();
    // What a kill during an earlier creation leaves: a partial file beside the store.
    std::fs::write(dir.path().join("state.redb.new"), b"half a header").unwrap();
    drop(CrawlDb::open(dir.path()).unwrap());
    assert!(!dir.path().join("state.redb.new").exists());
    drop(CrawlDb::open(dir.path()).unwrap());
}

#[test]
fn a_second_open_is_refused_while_the_first_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let _first = CrawlDb::open(dir.path()).unwrap();
    assert!(matches!(
        CrawlDb::open(dir.path()),
        Err(StoreError::Locked { .. })
    ));
}

#[test]
fn pops_per_host_in_key_order_and_drops_selectively() {
    let mut s = CrawlDb::in_memory();
    s.queue_insert(&key(2, 1, 5), b"2-1-5").unwrap();
    s.queue_insert(&key(2, 0, 9), b"2-0-9").unwrap();
    s.queue_insert(&key(1, 0, 1), b"1-0-1").unwrap();
    s.queue_insert(&key(3, 0, 1), b"3-0-1").unwrap();
    let (k, v) = s.queue_pop_first(2).unwrap().unwrap();
    assert_eq!((k, v.as_slice()), (key(2, 0, 9), &b"2-0-9"[..]));
    assert_eq!(s.queue_drop_where(2, |v| v.ends_with(b"5")).unwrap(), 1);
    assert!(s.queue_pop_first(2).unwrap().is_none());
    assert_eq!(s.queue_pop_first(3).unwrap().unwrap().1, b"3-0-1");
    assert_eq!(s.queue_pop_first(1).unwrap().unwrap().1, b"1-0-1");
}

#[test]
fn rows_in_memory_and_on_disk_read_as_one_queue() {
    let mut s = CrawlDb::in_memory();
    for seq in [1, 3, 5] {
        s.queue_insert(&key(1, 0, seq), &[seq as u8]).unwrap();
    }
    s.flush().unwrap();
    // Pending rows that sort before, between and after the written ones, and one put back
    // over a written key.
    for seq in [0, 2, 6] {
        s.queue_insert(&key(1, 0, seq), &[seq as u8]).unwrap();
    }
    s.queue_insert(&key(1, 0, 3), b"3 again").unwrap();
    assert_eq!(
        s.queue_get(&key(1, 0, 2)).unwrap().as_deref(),
        Some(&[2u8][..])
    );
    let mut order = Vec::new();
    for round in 0..3 {
        order.push(s.queue_pop_first(1).unwrap().unwrap().0);
        if round == 1 {
            s.flush().unwrap();
        }
    }
    assert_eq!(order, vec![key(1, 0, 0), key(1, 0, 1), key(1, 0, 2)]);
    assert_eq!(s.queue_pop_first(1).unwrap().unwrap().1, b"3 again");
    assert_eq!(s.queue_drop_where(1, |v| v == [6]).unwrap(), 1);
    assert_eq!(
        s.queue_remove(&key(1, 0, 5)).unwrap().as_deref(),
        Some(&[5u8][..])
    );
    assert_eq!(s.queue_pop_first(1).unwrap(), None);
    // A seen row of the batch answers at once; one on disk, when the batch is written.
    let seen = layout::seen_key(1, &[7; 12]);
    assert!(s.queue_unseen(&seen, &key(1, 0, 9), &[9]).unwrap());
    assert!(!s.queue_unseen(&seen, &key(1, 0, 10), &[10]).unwrap());
    s.flush().unwrap();
    assert!(s.take_late_duplicates().is_empty());
    assert!(s.queue_unseen(&seen, &key(1, 0, 11), &[11]).unwrap());
    s.flush().unwrap();
    assert_eq!(s.take_late_duplicates(), vec![(1, 1)]);
    assert_eq!(s.seen_get(&seen).unwrap(), Some(key(1, 0, 9)));
    assert_eq!(s.queue_get(&key(1, 0, 11)).unwrap(), None);
}

#[test]
fn a_url_seen_on_disk_and_admitted_again_is_never_served_twice() {
    use crate::frontier::storage::{fingerprint, Admit, FrontierStorage, QueuedUrl};
    let mut s = CrawlDb::in_memory();
    s.host_named(3, "a.org");
    let entry = |path: &str| QueuedUrl {
        url: format!("http://a.org/{path}"),
        ..QueuedUrl::default()
    };
    let admit = |s: &mut CrawlDb, path: &str| {
        let e = entry(path);
        s.admit_link(3, &fingerprint(&e.url), &e).unwrap()
    };
    // Fetched in an earlier batch: its seen row is on disk, its queue entry gone.
    assert_eq!(admit(&mut s, "old"), Admit::Queued);
    assert_eq!(s.pop(3).unwrap().unwrap().url, "http://a.org/old");
    s.finish(3);
    s.checkpoint().unwrap();
    // Linked again (and no longer in the frontier's cache of recent links): admitted without
    // a read of the disk, then found out when taken from the queue, before it is served.
    assert_eq!(admit(&mut s, "old"), Admit::Queued);
    assert_eq!(admit(&mut s, "new"), Admit::Queued);
    assert_eq!(s.pop(3).unwrap().unwrap().url, "http://a.org/new");
    assert_eq!(s.late_duplicates(), vec![(3, 1)]);
    s.finish(3);
    assert_eq!(s.pop(3).unwrap(), None);
    // Or when its batch is written: its queue entry is dropped, the old seen row kept.
    assert_eq!(admit(&mut s, "old"), Admit::Queued);
    assert_eq!(admit(&mut s, "new"), Admit::Seen);
    s.checkpoint().unwrap();
    assert_eq!(s.late_duplicates(), vec![(3, 1)]);
    assert_eq!(s.pop(3).unwrap(), None);
    // A new URL admitted twice in one batch is caught at once, and queued once.
    assert_eq!(admit(&mut s, "newer"), Admit::Queued);
    assert_eq!(admit(&mut s, "newer"), Admit::Seen);
    s.checkpoint().unwrap();
    assert!(s.late_duplicates().is_empty());
    assert_eq!(s.pop(3).unwrap().unwrap().url, "http://a.org/newer");
    s.finish(3);
    assert_eq!(s.pop(3).unwrap(), None);
    // Crash replay takes the URL's committed entry, not the late duplicate of it.
    assert_eq!(admit(&mut s, "kept"), Admit::Queued);
    s.checkpoint().unwrap();
    assert_eq!(admit(&mut s, "kept"), Admit::Queued);
    assert!(s.take(3, "http://a.org/kept").unwrap().is_some());
    assert_eq!(s.late_duplicates(), vec![(3, 1)]);
    assert_eq!(s.pop(3).unwrap(), None);
    // An entry dropped by an exclude before its batch is written is not counted again as a
    // late duplicate (the frontier took it off its count when it dropped it).
    assert_eq!(admit(&mut s, "kept"), Admit::Queued);
    assert_eq!(
        s.drop_where(3, &mut |url| url.ends_with("/kept")).unwrap(),
        1
    );
    s.checkpoint().unwrap();
    assert!(s.late_duplicates().is_empty());
    // Other admissions (seeds, redirects, requisites) read the seen set at once.
    let e = entry("kept");
    assert_eq!(s.admit(3, &fingerprint(&e.url), &e).unwrap(), Admit::Seen);
}

#[test]
fn a_row_put_back_over_a_written_one_is_served_once() {
    let mut s = CrawlDb::in_memory();
    s.queue_insert(&key(1, 0, 1), b"first").unwrap();
    s.flush().unwrap();
    s.queue_insert(&key(1, 0, 1), b"again").unwrap();
    assert_eq!(s.queue_pop_first(1).unwrap().unwrap().1, b"again");
    assert_eq!(s.queue_pop_first(1).unwrap(), None);
    s.flush().unwrap();
    assert_eq!(s.queue_pop_first(1).unwrap(), None);
}

#[test]
fn a_host_found_empty_on_disk_still_gets_the_rows_written_later() {
    let mut s = CrawlDb::in_memory();
    // Found empty on disk (the first pop), served from memory, then empty.
    assert_eq!(s.queue_pop_first(1).unwrap(), None);
    s.queue_insert(&key(1, 0, 1), b"pending").unwrap();
    assert_eq!(s.queue_pop_first(1).unwrap().unwrap().1, b"pending");
    assert_eq!(s.queue_pop_first(1).unwrap(), None);
    // Rows written to disk by a batch, and by a save point (the row in flight written back).
    s.queue_insert(&key(1, 0, 2), b"written").unwrap();
    s.queue_insert(&key(2, 0, 1), b"other host").unwrap();
    s.flush().unwrap();
    assert_eq!(s.queue_pop_first(1).unwrap().unwrap().1, b"written");
    assert_eq!(s.queue_pop_first(1).unwrap(), None);
    assert_eq!(s.queue_pop_first(2).unwrap().unwrap().1, b"other host");
    s.queue_insert(&key(1, 0, 3), b"at the save point").unwrap();
    s.checkpoint().unwrap();
    assert_eq!(
        s.queue_pop_first(1).unwrap().unwrap().1,
        b"at the save point"
    );
    assert_eq!(s.queue_pop_first(1).unwrap(), None);
    assert_eq!(s.queue_pop_first(2).unwrap(), None);
}

#[test]
fn a_host_queue_written_in_batches_fills_its_leaves() {
    // 100 hosts' URLs arrive interleaved, as links do; written in batches (here 20,000
    // rows between save points), each host's entries pack whole leaves. (Written one by
    // one, as before, appends split leaves in half: 49% full.)
    let mut s = CrawlDb::in_memory();
    let value = [b'x'; 40];
    for round in 0..5u64 {
        for i in 0..20_000u64 {
            let seq = round * 20_000 + i;
            s.queue_insert(&key((seq % 100) as u32, 1, seq), &value)
                .unwrap();
        }
        s.flush().unwrap();
    }
    use redb::ReadableTableMetadata;
    let txn = s.txn().unwrap();
    let stats = txn.open_table(QUEUE).unwrap().stats().unwrap();
    let fill = stats.stored_bytes() as f64 / (stats.leaf_pages() * 4096) as f64;
    assert!(fill > 0.85, "leaves {:.0}% full", fill * 100.0);
}

/// Admits `http://a.org/{n}` for each n as a new link of host 3; true for each one queued.
fn admit_paths(s: &mut CrawlDb, ns: impl IntoIterator<Item = u64>) -> Vec<bool> {
    use crate::frontier::storage::{fingerprint, Admit, FrontierStorage, QueuedUrl};
    s.host_named(3, "a.org");
    ns.into_iter()
        .map(|n| {
            let e = QueuedUrl {
                url: format!("http://a.org/{n}"),
                ..QueuedUrl::default()
            };
            s.admit_link(3, &fingerprint(&e.url), &e).unwrap() == Admit::Queued
        })
        .collect()
}

/// Queued entries of host 3, taken from the queue.
fn drain(s: &mut CrawlDb) -> usize {
    use crate::frontier::storage::FrontierStorage;
    let mut n = 0;
    while s.pop(3).unwrap().is_some() {
        s.finish(3);
        n += 1;
    }
    n
}

#[test]
fn a_kill_after_a_batch_is_written_but_before_its_save_point_loses_its_seen_rows_with_its_queue() {
    use crate::frontier::storage::FrontierStorage;
    let dir = tempfile::tempdir().unwrap();
    {
        let mut s = CrawlDb::open(dir.path()).unwrap();
        admit_paths(&mut s, 0..100);
        s.checkpoint().unwrap();
        // Written to a run and into the transaction, but never committed.
        admit_paths(&mut s, 100..200);
        s.flush().unwrap();
    }
    let mut s = CrawlDb::open(dir.path()).unwrap();
    let runs = std::fs::read_dir(dir.path().join("seen")).unwrap().count();
    assert_eq!(runs, 1, "the uncommitted batch's run is removed at open");
    // The saved URLs are still seen; the lost ones are new again, and each is queued once.
    s.checkpoint().unwrap();
    assert!(admit_paths(&mut s, 0..100).iter().all(|q| *q));
    s.checkpoint().unwrap();
    assert_eq!(s.take_late_duplicates(), vec![(3, 100)]);
    assert!(admit_paths(&mut s, 100..200).iter().all(|q| *q));
    s.checkpoint().unwrap();
    assert!(s.take_late_duplicates().is_empty());
    assert_eq!(drain(&mut s), 200);
}

#[test]
fn many_save_points_merge_their_runs_and_a_reopened_state_still_knows_every_url() {
    use crate::frontier::storage::FrontierStorage;
    let dir = tempfile::tempdir().unwrap();
    {
        let mut s = CrawlDb::open(dir.path()).unwrap();
        for batch in 0..40u64 {
            admit_paths(&mut s, batch * 50..batch * 50 + 50);
            s.checkpoint().unwrap();
        }
        s.seen_runs.settle().unwrap();
        s.checkpoint().unwrap();
        assert!(s.seen_runs.run_sizes().len() < 10);
        assert_eq!(s.seen_runs.size().0, 2000);
    }
    let mut s = CrawlDb::open(dir.path()).unwrap();
    let files = std::fs::read_dir(dir.path().join("seen")).unwrap().count();
    assert_eq!(
        files,
        s.seen_runs.run_sizes().len(),
        "merged-away runs are removed"
    );
    assert!(admit_paths(&mut s, 0..2000).iter().all(|q| *q));
    s.checkpoint().unwrap();
    assert_eq!(s.take_late_duplicates(), vec![(3, 2000)]);
    assert_eq!(drain(&mut s), 2000);
}

#[test]
fn a_state_whose_seen_set_is_a_table_is_still_read() {
    use crate::frontier::storage::{fingerprint, Admit, FrontierStorage, QueuedUrl};
    let dir = tempfile::tempdir().unwrap();
    let url = "http://a.org/old";
    {
        // What an earlier version saved: the seen row in the `seen` table.
        let s = CrawlDb::open(dir.path()).unwrap();
        let mut t = s.txn().unwrap().open_table(SEEN).unwrap();
        let seen = layout::seen_key(3, &fingerprint(url));
        t.insert(&seen, &key(3, 0, 1)).unwrap();
        drop(t);
        let mut s = s;
        s.commit().unwrap();
    }
    let mut s = CrawlDb::open(dir.path()).unwrap();
    assert!(s.legacy_seen);
    let e = QueuedUrl {
        url: url.into(),
        ..QueuedUrl::default()
    };
    assert_eq!(s.admit(3, &fingerprint(url), &e).unwrap(), Admit::Seen);
    assert!(admit_paths(&mut s, [7]).iter().all(|q| *q));
    s.host_named(3, "a.org");
    assert_eq!(
        s.admit_link(3, &fingerprint(url), &e).unwrap(),
        Admit::Queued
    );
    s.checkpoint().unwrap();
    assert_eq!(s.take_late_duplicates(), vec![(3, 1)]);
    assert_eq!(drain(&mut s), 1);
}
