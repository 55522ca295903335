//! One derivative file being written: gzip member per record, written as `NAME.part` and
//! renamed when complete, so a reader (or a resumed crawl) never takes a half-written file for
//! a finished one.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::record::builder::WarcRecord;
use crate::record::gzip_member;
use crate::whole_file::part_path;

/// A derivative file in progress.
pub struct DerivedFile {
    final_path: PathBuf,
    part_path: PathBuf,
    out: Option<BufWriter<File>>,
    gzip_level: u32,
    /// Records appended.
    pub records: u64,
}

impl DerivedFile {
    /// Starts `final_path` (as `final_path.part`) with its warcinfo record; records are
    /// compressed at `gzip_level`.
    pub fn create(final_path: PathBuf, warcinfo: &WarcRecord, gzip_level: u32) -> io::Result<Self> {
        let part_path = part_path(&final_path);
        let file = File::create(&part_path)?;
        let mut derived = DerivedFile {
            final_path,
            part_path,
            out: Some(BufWriter::with_capacity(1 << 16, file)),
            gzip_level,
            records: 0,
        };
        derived.append(warcinfo)?;
        derived.records = 0;
        Ok(derived)
    }

    /// The name the file will have.
    pub fn path(&self) -> &Path {
        &self.final_path
    }

    /// Appends one record.
    pub fn append(&mut self, record: &WarcRecord) -> io::Result<()> {
        let out = self.out.as_mut().expect("open until finished");
        out.write_all(&gzip_member(&record.bytes, self.gzip_level))?;
        self.records += 1;
        Ok(())
    }

    /// Flushes, syncs and renames the file to its final name.
    pub fn finish(mut self) -> io::Result<PathBuf> {
        let out = self.out.take().expect("open until finished");
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.part_path, &self.final_path)?;
        Ok(self.final_path.clone())
    }
}

impl Drop for DerivedFile {
    fn drop(&mut self) {
        // Not finished: the partial file is removed, never left to look complete.
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.part_path);
        }
    }
}
