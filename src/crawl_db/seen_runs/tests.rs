//! Tests of the seen set's runs: lookups, the newest run winning, merges, reopening after a
//! crash, damaged files.

use super::*;

fn key(host: u32, n: u64) -> SeenKey {
    let mut k = [0u8; 16];
    k[..4].copy_from_slice(&host.to_be_bytes());
    // Spread the keys like fingerprints do.
    k[4..12].copy_from_slice(&n.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes());
    k[12..].copy_from_slice(&(n as u32).to_be_bytes());
    k
}

fn queued(host: u32, seq: u64) -> QueueKey {
    crate::crawl_db::layout::queue_key(host, 1, seq)
}

/// Rows for keys `from..to` of `host`, their queue keys numbered `seq_base + n`, in key order.
fn rows(host: u32, from: u64, to: u64, seq_base: u64) -> Vec<(SeenKey, QueueKey)> {
    let mut r: Vec<_> = (from..to)
        .map(|n| (key(host, n), queued(host, seq_base + n)))
        .collect();
    r.sort_unstable_by_key(|(k, _)| *k);
    r
}

#[test]
fn a_run_answers_for_every_key_it_holds_and_no_other() {
    let mut runs = SeenRuns::in_memory();
    // More than a block, and a last block that is not full.
    runs.add(&rows(7, 0, 1000, 0)).unwrap();
    for n in 0..1000 {
        assert_eq!(runs.get(&key(7, n)).unwrap(), Some(queued(7, n)), "key {n}");
    }
    for n in 1000..1100 {
        assert_eq!(runs.get(&key(7, n)).unwrap(), None);
        assert_eq!(runs.get(&key(8, n - 1000)).unwrap(), None);
    }
    let mut probe: Vec<SeenKey> = (990..1010).map(|n| key(7, n)).collect();
    probe.sort_unstable();
    let found = runs.contains_sorted(&probe).unwrap();
    let expected: Vec<bool> = probe
        .iter()
        .map(|k| (0..1000).any(|n| key(7, n) == *k))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn a_newer_run_overrides_an_older_one_and_merges_keep_the_newest() {
    let mut runs = SeenRuns::in_memory();
    runs.add(&rows(1, 0, 500, 0)).unwrap();
    // Keys 100..200 queued again (a requeue or a promotion moves a URL's queue key).
    runs.add(&rows(1, 100, 200, 10_000)).unwrap();
    assert_eq!(runs.get(&key(1, 150)).unwrap(), Some(queued(1, 10_150)));
    assert_eq!(runs.get(&key(1, 50)).unwrap(), Some(queued(1, 50)));
    for batch in 0..6 {
        runs.add(&rows(2, batch * 10, batch * 10 + 10, 0)).unwrap();
        runs.settle().unwrap();
    }
    assert!(runs.run_sizes().len() < 8, "{:?}", runs.run_sizes());
    // Merge everything that is left into one run.
    while runs.runs.len() > 1 {
        let all = runs.runs.clone();
        let out = runs.writer().unwrap();
        runs.merge = Some(Merge::start(all, out).unwrap());
        runs.settle().unwrap();
    }
    assert_eq!(runs.run_sizes(), vec![560]);
    assert_eq!(runs.get(&key(1, 150)).unwrap(), Some(queued(1, 10_150)));
    assert_eq!(runs.get(&key(1, 250)).unwrap(), Some(queued(1, 250)));
    assert_eq!(runs.get(&key(2, 55)).unwrap(), Some(queued(2, 55)));
}

#[test]
fn runs_of_a_size_are_merged_so_their_number_stays_small() {
    let mut runs = SeenRuns::in_memory();
    let mut total = 0;
    for batch in 0..200u64 {
        // Batches of varied sizes, like save points and full batches.
        let n = if batch % 10 == 0 {
            5000
        } else {
            40 + batch % 7
        };
        runs.add(&rows(3, total, total + n, 0)).unwrap();
        total += n;
        runs.settle().unwrap();
        assert!(runs.runs.len() <= MAX_RUNS, "{:?}", runs.run_sizes());
    }
    assert!(runs.runs.len() <= 8, "{:?}", runs.run_sizes());
    assert_eq!(runs.size().0, total, "merges keep every key once");
    let mut all: Vec<SeenKey> = (0..total).map(|n| key(3, n)).collect();
    all.sort_unstable();
    assert!(runs.contains_sorted(&all).unwrap().iter().all(|f| *f));
}

#[test]
fn reopening_keeps_the_saved_runs_and_removes_files_no_commit_named() {
    let state = tempfile::tempdir().unwrap();
    let manifest = {
        let mut runs = SeenRuns::open(state.path(), None).unwrap();
        runs.add(&rows(1, 0, 300, 0)).unwrap();
        runs.add(&rows(1, 300, 600, 0)).unwrap();
        let manifest = runs.take_manifest().unwrap();
        runs.sync().unwrap();
        // Written after the save point: not in the manifest.
        runs.add(&rows(1, 600, 900, 0)).unwrap();
        manifest
    };
    let dir = state.path().join(DIR);
    std::fs::write(dir.join(format!("{:016x}.tmp", 99)), b"half a merge").unwrap();
    std::fs::write(dir.join("notes.txt"), b"not ours").unwrap();
    let runs = SeenRuns::open(state.path(), Some(&manifest)).unwrap();
    assert_eq!(runs.run_sizes(), vec![300, 300]);
    assert_eq!(runs.get(&key(1, 599)).unwrap(), Some(queued(1, 599)));
    assert_eq!(runs.get(&key(1, 700)).unwrap(), None);
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(
        left,
        vec![file_name(0), file_name(1), "notes.txt".to_string()]
    );
}

#[test]
fn a_damaged_or_missing_run_is_an_error_at_open() {
    let state = tempfile::tempdir().unwrap();
    let manifest = {
        let mut runs = SeenRuns::open(state.path(), None).unwrap();
        runs.add(&rows(1, 0, 300, 0)).unwrap();
        runs.sync().unwrap();
        runs.take_manifest().unwrap()
    };
    let path = state.path().join(DIR).join(file_name(0));
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 40;
    bytes[at] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let e = SeenRuns::open(state.path(), Some(&manifest)).unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
    std::fs::remove_file(&path).unwrap();
    assert!(SeenRuns::open(state.path(), Some(&manifest)).is_err());
    assert!(SeenRuns::open(state.path(), Some(b"short")).is_err());
}

#[test]
fn keys_far_from_their_estimated_place_in_a_block_are_found() {
    // Cubes crowd the start of each block's key range: a lookup that reads only the entries
    // around a key's estimated place misses them there and must read the whole block.
    let cube = |n: u64| {
        let mut k = [0u8; 16];
        k[..4].copy_from_slice(&5u32.to_be_bytes());
        k[4..12].copy_from_slice(&(n * n * n).to_be_bytes());
        k
    };
    let rows: Vec<_> = (0..3000).map(|n| (cube(n), queued(5, n))).collect();
    let mut runs = SeenRuns::in_memory();
    runs.add(&rows).unwrap();
    for n in 0..3000 {
        assert_eq!(runs.get(&cube(n)).unwrap(), Some(queued(5, n)), "key {n}");
        let mut absent = cube(n);
        absent[15] = 1;
        assert_eq!(runs.get(&absent).unwrap(), None);
    }
    let keys: Vec<SeenKey> = (0..3000).step_by(7).map(cube).collect();
    assert!(runs.contains_sorted(&keys).unwrap().iter().all(|f| *f));
}
