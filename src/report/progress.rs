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
        /// Pages at the first update: a resumed crawl's earlier runs', which this run's
        /// rate leaves out (it showed 198,527/s for 2,500).
        base: Option<u64>,
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
                base: None,
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
                base: None,
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
                base,
            } => {
                let base = *base.get_or_insert(s.pages);
                if last.elapsed() >= *interval {
                    *last = Instant::now();
                    let secs = start.elapsed().as_secs_f64();
                    let _ = writeln!(
                        sink,
                        "trawl: {:.0}s pages={} ({:.1}/s) queued={} in_flight={} errors={} written={}",
                        secs,
                        s.pages,
                        match secs > 0.0 {
                            true => s.pages.saturating_sub(base) as f64 / secs,
                            false => 0.0,
                        },
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_resumed_crawls_rate_counts_this_runs_pages() {
        let out = Shared::default();
        let start = Instant::now() - Duration::from_secs(10);
        let mut progress = Progress::Lines {
            sink: Box::new(out.clone()),
            interval: Duration::ZERO,
            last: start,
            start,
            base: None,
        };
        let at = |pages| Snapshot {
            pages,
            queued: 0,
            in_flight: 0,
            errors: 0,
            bytes_written: 0,
        };
        progress.update(&at(1_000_000));
        progress.update(&at(1_000_100));
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let last = text.lines().last().unwrap();
        assert!(last.contains("pages=1000100 (10.0/s)"), "{text}");
    }
}
