//! Live progress: a bar on a terminal, a periodic status line otherwise (cron), or nothing.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A moment's view of the crawl.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    /// Pages archived.
    pub pages: u64,
    /// URLs queued.
    pub queued: usize,
    /// Fetches running.
    pub in_flight: usize,
    /// Failed attempts.
    pub errors: u64,
    /// WARC bytes written.
    pub bytes_written: u64,
}

/// Where progress goes.
pub enum Progress {
    /// A progress bar (stderr is a terminal).
    Bar(ProgressBar),
    /// A status line every `interval` (stderr is not a terminal, or `--log-file`).
    Lines {
        /// Where lines go.
        sink: Box<dyn Write + Send>,
        /// Time between lines.
        interval: Duration,
        /// When the last line was printed.
        last: Instant,
        /// Crawl start.
        start: Instant,
    },
    /// `-q`.
    Silent,
}

impl Progress {
    /// Chooses the display for this process; with a log file, status lines go there.
    pub fn new(
        quiet: bool,
        interval: Duration,
        target: Option<u64>,
        log: Option<super::log_file::LogFile>,
    ) -> Self {
        if let Some(file) = log {
            let now = Instant::now();
            return Progress::Lines {
                sink: Box::new(file),
                interval,
                last: now,
                start: now,
            };
        }
        if quiet {
            return Progress::Silent;
        }
        if std::io::stderr().is_terminal() {
            let bar = match target {
                Some(n) => ProgressBar::new(n),
                None => ProgressBar::no_length(),
            };
            bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
            let template = if target.is_some() {
                "{elapsed_precise} [{bar:30}] {pos}/{len} pages {per_sec} {msg}"
            } else {
                "{elapsed_precise} {pos} pages {per_sec} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            Progress::Bar(bar)
        } else {
            let now = Instant::now();
            Progress::Lines {
                sink: Box::new(std::io::stderr()),
                interval,
                last: now,
                start: now,
            }
        }
    }

    /// Shows the latest numbers (rate-limited).
    pub fn update(&mut self, s: &Snapshot) {
        match self {
            Progress::Bar(bar) => {
                bar.set_position(s.pages);
                bar.set_message(format!(
                    "queued {} in-flight {} errors {} written {}",
                    s.queued,
                    s.in_flight,
                    s.errors,
                    bytesize::ByteSize(s.bytes_written).display().si()
                ));
            }
            Progress::Lines {
                sink,
                interval,
                last,
                start,
            } => {
                if last.elapsed() >= *interval {
                    *last = Instant::now();
                    let secs = start.elapsed().as_secs_f64();
                    let _ = writeln!(
                        sink,
                        "trawl: {:.0}s pages={} ({:.1}/s) queued={} in_flight={} errors={} written={}",
                        secs,
                        s.pages,
                        if secs > 0.0 { s.pages as f64 / secs } else { 0.0 },
                        s.queued,
                        s.in_flight,
                        s.errors,
                        s.bytes_written
                    );
                }
            }
            Progress::Silent => {}
        }
    }

    /// Removes the bar before the final report.
    pub fn finish(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
