//! `--finished-dir` and `--on-close`: the hand-off of each closed WARC file to what comes
//! after the crawl (grab-site's `--finished-warc-dir`, Browsertrix's upload hooks). Runs on
//! the thread that derives closed files, after their WET/WAT are written: the file's
//! companions (WET, WAT, its CDXJ with `--cdxj`) move first and the WARC last, so a watcher
//! that sees a `.warc.gz` appear finds everything it goes with. A move within one file
//! system is a rename; across file systems a copy to a hidden `.part` name, fsync, rename,
//! then the original is removed. The command runs after the move, with the file's final path.
//! Nothing here ever deletes a WARC that is not safely in its new place: a failed move leaves
//! it where it was, a failed command only says so in the log. A command that succeeded is
//! noted in `OUT/.trawl-on-close.done`; at start, the files whose command has not succeeded
//! yet (a kill between move and command, a failed upload) get it again. After a stop request
//! (SIGINT, SIGTERM) no command starts, and a second one stops those running: each is left
//! to the next start, so a cron timeout or a systemd stop does not wait on uploads.

use std::collections::{HashSet, VecDeque};
use std::io;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::stop_signals;
use crate::config::HandoffConfig;
use crate::derive::derivative_path;
use crate::index::index_files;
use crate::warc::naming::list_warc_files;

/// The names of the WARC files whose `--on-close` command succeeded, one per line.
const JOURNAL: &str = ".trawl-on-close.done";

/// Commands running at once; the next closed file waits for the oldest.
const MAX_COMMANDS: usize = 2;

/// Longest a command may run before it is killed.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(3600);

/// Hands off closed WARC files of one output directory.
pub(super) struct Handoff {
    out: PathBuf,
    rules: HandoffConfig,
    running: VecDeque<JoinHandle<()>>,
    /// Files moved, from where to where.
    moved: Vec<(PathBuf, PathBuf)>,
    /// Names of the files whose command succeeded in an earlier run.
    done: HashSet<String>,
}

impl Handoff {
    /// A hand-off of the files closed in `out`.
    pub(super) fn new(out: &Path, rules: HandoffConfig) -> Self {
        let done = std::fs::read_to_string(out.join(JOURNAL))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        Handoff {
            out: out.to_path_buf(),
            rules,
            running: VecDeque::new(),
            moved: Vec::new(),
            done,
        }
    }

    /// The finished files an earlier run left to hand off: those still in `--out` when they
    /// move, and those whose command has not succeeded.
    pub(super) fn left_over(&self) -> io::Result<Vec<PathBuf>> {
        Ok(list_warc_files(&self.dirs())?
            .into_iter()
            .filter(|warc| {
                let moves = self.rules.finished_dir.is_some() && self.is_in_out(warc);
                moves || (self.rules.on_close.is_some() && !self.done.contains(&name_of(warc)))
            })
            .collect())
    }

    /// Where finished files are: `--out`, and `--finished-dir` when they move.
    pub(super) fn dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.out.clone()];
        dirs.extend(self.rules.finished_dir.clone());
        dirs
    }

    fn is_in_out(&self, warc: &Path) -> bool {
        warc.parent() == Some(self.out.as_path())
    }

    /// Moves `warc` (closed, derived) and its companions, then runs the command on it.
    pub(super) fn take(&mut self, warc: &Path) {
        let mut path = warc.to_path_buf();
        let moves = self.is_in_out(warc);
        if let (Some(dir), true) = (self.rules.finished_dir.clone(), moves) {
            for companion in self.companions(warc) {
                match move_into(&companion, &dir) {
                    Ok(moved) => self.moved.push((companion, moved)),
                    Err(e) => tracing::warn!(
                        "cannot move {} to {}: {e}; it stays where it is",
                        companion.display(),
                        dir.display()
                    ),
                }
            }
            match move_into(warc, &dir) {
                Ok(moved) => {
                    self.moved.push((warc.to_path_buf(), moved.clone()));
                    path = moved;
                }
                Err(e) => tracing::error!(
                    "cannot move {} to {}: {e}; it stays in {}",
                    warc.display(),
                    dir.display(),
                    self.out.display()
                ),
            }
        }
        if let Some(command) = self.rules.on_close.clone() {
            if self.done.contains(&name_of(warc)) {
                return;
            }
            if stop_signals::received() > 0 {
                tracing::info!(
                    "stop requested: --on-close for {} is left to the next start",
                    path.display()
                );
                return;
            }
            if self.running.len() >= MAX_COMMANDS {
                if let Some(oldest) = self.running.pop_front() {
                    let _ = oldest.join();
                }
            }
            let journal = self.out.join(JOURNAL);
            let spawned = std::thread::Builder::new()
                .name("on-close".into())
                .spawn(move || {
                    if run_command(&command, &path) {
                        note_done(&journal, &name_of(&path));
                    }
                });
            match spawned {
                Ok(handle) => self.running.push_back(handle),
                Err(e) => tracing::error!("--on-close: cannot start a thread: {e}"),
            }
        }
    }

    /// Waits for the commands still running; returns the files moved (from, to).
    pub(super) fn finish(mut self) -> Vec<(PathBuf, PathBuf)> {
        let running = self.running.iter().filter(|h| !h.is_finished()).count();
        if running > 0 && stop_signals::received() == 1 {
            // Visible without -v: the stop waits on them.
            tracing::warn!(
                "stop requested: waiting for {running} --on-close command(s) still running; signal again to stop them (they run again at the next start)"
            );
        }
        for handle in self.running.drain(..) {
            let _ = handle.join();
        }
        self.moved
    }

    /// The files that go with `warc`: its WET and WAT, and its CDXJ (written now) with
    /// `--cdxj`.
    fn companions(&self, warc: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = ["wet", "wat"]
            .iter()
            .map(|kind| derivative_path(warc, &self.out, kind))
            .filter(|p| p.exists())
            .collect();
        if self.rules.cdxj {
            match write_file_index(warc) {
                Ok(index) => files.push(index),
                Err(e) => tracing::warn!("indexing {}: {e}", warc.display()),
            }
        }
        files
    }
}

/// A file's name, as the journal holds it.
fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Notes in the journal that the command on `name` succeeded (one short append).
fn note_done(journal: &Path, name: &str) {
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(journal)
        .and_then(|mut f| f.write_all(format!("{name}\n").as_bytes()));
    if let Err(e) = written {
        tracing::warn!(
            "--on-close: cannot note {name} in {}: {e}",
            journal.display()
        );
    }
}

/// `NAME.warc.gz`'s own index, `NAME.cdxj` beside it (written aside, then renamed).
fn write_file_index(warc: &Path) -> io::Result<PathBuf> {
    let name = warc
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".warc.gz").unwrap_or(&name);
    let index = warc.with_file_name(format!("{stem}.cdxj"));
    let lines = index_files(&[warc.to_path_buf()]).map_err(io::Error::other)?;
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let part = warc.with_file_name(format!(".{stem}.cdxj.part"));
    std::fs::write(&part, text)?;
    std::fs::rename(&part, &index)?;
    Ok(index)
}

/// Moves `file` into `dir` under its own name, never over an existing file: a rename, or
/// across file systems a copy to `.NAME.part`, fsync, rename, and removal of the original.
pub(super) fn move_into(file: &Path, dir: &Path) -> io::Result<PathBuf> {
    let name = file
        .file_name()
        .ok_or_else(|| io::Error::other("not a file"))?;
    let target = dir.join(name);
    if target.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} already exists", target.display()),
        ));
    }
    match std::fs::rename(file, &target) {
        Ok(()) => {
            sync_dir(dir)?;
            return Ok(target);
        }
        Err(e) if e.kind() == io::ErrorKind::CrossesDevices => {}
        Err(e) => return Err(e),
    }
    let part = dir.join(format!(".{}.part", name.to_string_lossy()));
    let copied = std::fs::copy(file, &part)
        .and_then(|_| std::fs::File::open(&part)?.sync_all())
        .and_then(|()| std::fs::rename(&part, &target))
        .and_then(|()| sync_dir(dir));
    if let Err(e) = copied {
        let _ = std::fs::remove_file(&part);
        return Err(e);
    }
    std::fs::remove_file(file)?;
    Ok(target)
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// `command` with `path` in place of each `{}`, or after it when it has none (shell-quoted).
fn command_line(command: &str, path: &Path) -> String {
    let quoted = format!("'{}'", path.to_string_lossy().replace('\'', r"'\''"));
    if command.contains("{}") {
        command.replace("{}", &quoted)
    } else {
        format!("{command} {quoted}")
    }
}

/// Runs an `--on-close` command through `sh -c`, logs how it ended, and kills it after
/// [`COMMAND_TIMEOUT`]. True when it succeeded.
fn run_command(command: &str, path: &Path) -> bool {
    let line = command_line(command, path);
    let child = Command::new("sh")
        .arg("-c")
        .arg(&line)
        .env("TRAWL_FILE", path)
        .stdin(std::process::Stdio::null())
        // A group of its own, so that stopping it stops what its shell started too.
        .process_group(0)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("--on-close: cannot run `{line}`: {e}");
            return false;
        }
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > COMMAND_TIMEOUT || stop_signals::received() > 1 => {
                let group = rustix::process::Pid::from_child(&child);
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                tracing::error!("--on-close: waiting for `{line}`: {e}");
                return false;
            }
        }
    };
    match status {
        Some(s) if s.success() => {
            tracing::info!("--on-close: `{line}` succeeded");
            return true;
        }
        Some(s) => tracing::warn!(
            "--on-close: `{line}` failed ({s}); {} is kept, and the command runs again at the next start",
            path.display()
        ),
        None => tracing::warn!(
            "--on-close: `{line}` was stopped (it ran over {COMMAND_TIMEOUT:?}, or a second stop request came); {} is kept, and the command runs again at the next start",
            path.display()
        ),
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_quoted_in_place_or_appended() {
        let p = Path::new("/w/it's here.warc.gz");
        assert_eq!(
            command_line("upload", p),
            r"upload '/w/it'\''s here.warc.gz'"
        );
        assert_eq!(
            command_line("cp {} /b/ && echo {}", Path::new("/w/a.warc.gz")),
            "cp '/w/a.warc.gz' /b/ && echo '/w/a.warc.gz'"
        );
    }

    #[test]
    fn left_over_files_are_those_not_moved_or_whose_command_has_not_succeeded() {
        let out = tempfile::tempdir().unwrap();
        let fin = tempfile::tempdir().unwrap();
        for (dir, name) in [
            (out.path(), "t-1-00000.warc.gz"),
            (fin.path(), "t-1-00001.warc.gz"),
        ] {
            std::fs::write(dir.join(name), b"x").unwrap();
        }
        let names = |h: &Handoff| -> Vec<String> {
            h.left_over().unwrap().iter().map(|p| name_of(p)).collect()
        };
        let moving = HandoffConfig {
            finished_dir: Some(fin.path().into()),
            ..Default::default()
        };
        assert_eq!(
            names(&Handoff::new(out.path(), moving.clone())),
            ["t-1-00000.warc.gz"]
        );
        let commanding = HandoffConfig {
            on_close: Some("true".into()),
            ..moving
        };
        let both = ["t-1-00000.warc.gz", "t-1-00001.warc.gz"];
        assert_eq!(names(&Handoff::new(out.path(), commanding.clone())), both);
        note_done(&out.path().join(JOURNAL), "t-1-00001.warc.gz");
        note_done(&out.path().join(JOURNAL), "t-1-00000.warc.gz");
        // Still in --out: it moves, but its command does not run again.
        let mut h = Handoff::new(out.path(), commanding);
        assert_eq!(names(&h), ["t-1-00000.warc.gz"]);
        h.take(&out.path().join("t-1-00000.warc.gz"));
        assert!(h.finish().len() == 1 && fin.path().join("t-1-00000.warc.gz").exists());
    }

    #[test]
    fn a_move_never_overwrites() {
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        let file = from.path().join("a.warc.gz");
        std::fs::write(&file, b"x").unwrap();
        std::fs::write(to.path().join("a.warc.gz"), b"other").unwrap();
        assert!(move_into(&file, to.path()).is_err());
        assert!(file.exists());
        std::fs::remove_file(to.path().join("a.warc.gz")).unwrap();
        let moved = move_into(&file, to.path()).unwrap();
        assert_eq!(std::fs::read(moved).unwrap(), b"x");
        assert!(!file.exists());
    }
}
