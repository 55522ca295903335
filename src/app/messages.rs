//! Where the crawl command's own words go: notes, warnings and the final report to the log file
//! when `--log-file` is given (so a cron job's file holds everything), else to stderr; errors
//! to stderr always, and to the log file too.

use std::path::Path;

use crate::report::log_file::LogFile;

/// The crawl command's message sink.
pub(super) struct Messages {
    /// The `--log-file`, opened for appending (shared with the logger and progress, which
    /// append through their own handles; each message is one write).
    log: Option<LogFile>,
    quiet: bool,
}

impl Messages {
    /// Messages to stderr, or appended to `log_file`.
    pub(super) fn open(log_file: Option<&Path>, quiet: bool) -> std::io::Result<Self> {
        let log = log_file.map(LogFile::open).transpose()?;
        Ok(Messages { log, quiet })
    }

    fn to_log(&self, text: &str) -> bool {
        match &self.log {
            Some(file) => {
                let _ = file.append(text.as_bytes());
                true
            }
            None => false,
        }
    }

    /// A note or the report: not shown on stderr with `-q`.
    pub(super) fn say(&self, text: &str) {
        if !self.to_log(text) && !self.quiet {
            eprint!("{text}");
        }
    }

    /// A warning about the user's input (a skipped seed): shown even with `-q`.
    pub(super) fn warn(&self, text: &str) {
        if !self.to_log(text) {
            eprint!("{text}");
        }
    }

    /// An error: on stderr always, and in the log file.
    pub(super) fn error(&self, text: &str) {
        self.to_log(text);
        eprint!("{text}");
    }
}
