//! Tests of the WARC writer: rotation, renaming of open files, grouped writes.

use super::*;
use flate2::read::MultiGzDecoder;
use std::io::Read;

fn config(dir: &std::path::Path, records_per_file: u64) -> WriterConfig {
    WriterConfig {
        dir: dir.to_path_buf(),
        serials_also_in: None,
        prefix: "t".into(),
        rotation: Rotation {
            records_per_file,
            max_file_size: u64::MAX,
        },
        gzip_level: 6,
        info: vec![("software".into(), "trawl-test".into())],
        queue: 4,
        closed_files: None,
        producers: Producers::default(),
    }
}

fn read_all(path: &std::path::Path) -> String {
    let mut s = String::new();
    MultiGzDecoder::new(File::open(path).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    s
}

#[test]
fn rotates_by_record_count_and_renames_open_files() {
    let dir = tempfile::tempdir().unwrap();
    let handle = spawn_writer(config(dir.path(), 4)).unwrap();
    for i in 0..5 {
        let members = vec![
            gzip_member(format!("req{i}").as_bytes(), 6).into(),
            gzip_member(format!("resp{i}").as_bytes(), 6).into(),
        ];
        handle
            .sender
            .blocking_send(Batch {
                members,
                ack: None,
                sync: false,
            })
            .unwrap();
    }
    let (report, error) = handle.finish();
    assert!(error.is_none(), "{error:?}");
    assert_eq!(report.files.len(), 3);
    assert_eq!(report.records, 10 + 3);
    let first = read_all(&report.files[0]);
    assert!(first.starts_with("WARC/1.1\r\nWARC-Type: warcinfo"));
    assert!(first.ends_with("req0resp0req1resp1"), "{first}");
    assert!(read_all(&report.files[2]).ends_with("req4resp4"));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".open")
        })
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn a_group_of_batches_is_written_in_order_rotating_between_batches() {
    let dir = tempfile::tempdir().unwrap();
    let naming = WarcNaming::new(dir.path(), "t").unwrap();
    let mut writer = Writer::new(
        config(dir.path(), 5),
        naming,
        Arc::default(),
        Arc::default(),
    );
    let batch = |i: usize, n: usize| Batch {
        members: (0..n)
            .map(|m| gzip_member(format!("<{i}.{m}>").as_bytes(), 6).into())
            .collect(),
        ack: None,
        sync: false,
    };
    // 2 + 2 records fill a file of 5 but for one; the next pair starts a new file; a sync
    // request in the middle writes nothing.
    let mut group = vec![batch(0, 2), batch(1, 2), batch(2, 2)];
    group.push(Batch::sync_request().0);
    group.extend([batch(3, 1), batch(4, 3), batch(5, 2)]);
    writer.write_group(&group).unwrap();
    writer.close_current().unwrap();
    let files = &writer.report.files;
    assert_eq!(files.len(), 3, "{files:?}");
    // Each file: its warcinfo record, then the members in the order sent.
    let contents: Vec<String> = files
        .iter()
        .map(|f| {
            let text = read_all(f);
            assert!(text.starts_with("WARC/1.1\r\nWARC-Type: warcinfo"));
            text.rsplit("\r\n\r\n").next().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        contents,
        [
            "<0.0><0.1><1.0><1.1>",
            "<2.0><2.1><3.0>",
            "<4.0><4.1><4.2><5.0><5.1>"
        ]
    );
    assert_eq!(writer.report.records, 12 + 3);
    let on_disk: u64 = files.iter().map(|f| f.metadata().unwrap().len()).sum();
    assert_eq!(writer.report.bytes, on_disk);
}

#[test]
fn no_records_means_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let (report, error) = spawn_writer(config(dir.path(), 4)).unwrap().finish();
    assert!(error.is_none(), "{error:?}");
    assert!(report.files.is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
