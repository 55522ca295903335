//! `trawl crawl`: validate, check every output and input before the first fetch, lock the
//! output directory, repair what a crash left, crawl, report, and pick the exit code.

use std::path::Path;

use anyhow::Context;

use super::messages::Messages;
use crate::cli::CrawlArgs;
use crate::config::{Config, ConfigError};
use crate::crawl;
use crate::crawl::save_point::StateError;
use crate::crawl::setup::{create_output_dir, SetupError};
use crate::exit::ExitCode;
use crate::frontier::storage::StoreError;
use crate::index::index_files;
use crate::out_lock::{DirLock, LockError};
use crate::redis_crawl::JoinError;
use crate::report::log_file::{self, LogFile};
use crate::report::{render_table, CrawlStats, StopReason};
use crate::search::SearchError;
use crate::warc::naming::list_warc_files;
use crate::warc::recovery::repair_open_files;
use crate::whole_file::{part_path, write_whole};

pub(super) fn run_crawl(args: CrawlArgs) -> ExitCode {
    let (quiet, verbose) = (args.report.quiet, args.report.verbose);
    let config = match Config::from_args(args) {
        Ok(c) => c,
        Err(e) => return config_error(e),
    };
    let log_file = config.report.log_file.as_deref();
    let messages = match Messages::open(log_file, quiet) {
        Ok(m) => m,
        Err(e) => {
            eprintln!(
                "trawl: error: cannot open --log-file {}: {e}",
                log_file
                    .map(Path::display)
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            );
            return ExitCode::OutputError;
        }
    };
    init_logging(quiet, verbose, log_file);
    for p in &config.seed_problems {
        messages.warn(&format!("trawl: skipping seed {p}\n"));
    }
    for (addr, class) in &config.unlocked {
        messages.say(&format!(
            "trawl: note: a seed is a {} IP address, so {addr} (that address and port only) is allowed for this crawl\n",
            class.name()
        ));
    }
    if let Err((code, e)) = preflight(&config) {
        messages.error(&format!("trawl: error: {e}\n"));
        return code;
    }
    let _lock = match DirLock::acquire(&config.output.out) {
        Ok(lock) => lock,
        Err(e @ LockError::Busy { .. }) => {
            messages.error(&format!("trawl: error: {e}\n"));
            return ExitCode::Locked;
        }
        Err(e) => {
            messages.error(&format!("trawl: error: {e}\n"));
            return ExitCode::OutputError;
        }
    };
    match repair_open_files(&config.output.out) {
        Ok(repairs) => {
            for r in repairs {
                messages.warn(&match (&r.final_path, &r.damaged) {
                    (Some(p), _) => format!(
                        "trawl: repaired {} after an unclean stop: kept {} records, cut {} bytes\n",
                        p.display(),
                        r.records,
                        r.cut_bytes
                    ),
                    (None, Some(aside)) => format!(
                        "trawl: {} is damaged after its first {} records, with complete records after the damage: kept whole as {} (nothing removed)\n",
                        r.open_path.display(),
                        r.records,
                        aside.display()
                    ),
                    (None, None) => format!(
                        "trawl: removed {}: no complete capture in it\n",
                        r.open_path.display()
                    ),
                });
            }
        }
        Err(e) => {
            messages.error(&format!(
                "trawl: error: repairing open WARC files in {}: {e}\n",
                config.output.out.display()
            ));
            return ExitCode::OutputError;
        }
    }
    match crawl_and_report(config, &messages) {
        Ok(code) => code,
        Err(e) => {
            messages.error(&format!("trawl: error: {e:#}\n"));
            ExitCode::Internal
        }
    }
}

/// Checks, before anything is fetched, every path the crawl will write or read: the output
/// directory, the `--stats` and `--save-cookies` files and the `--dedup-index` files. (The
/// seeds file is read by `Config::from_args`, the log file opened by the caller.)
fn preflight(config: &Config) -> Result<(), (ExitCode, String)> {
    let out = &config.output.out;
    create_output_dir(out).map_err(|e| (ExitCode::OutputError, e.to_string()))?;
    if let Some(finished) = &config.output.handoff.finished_dir {
        create_output_dir(finished).map_err(|e| (ExitCode::OutputError, e.to_string()))?;
    }
    // Named for this process: two crawls started at once into one directory must not remove
    // each other's probe (the loser exited 5, "No such file", instead of 6 at the lock).
    let probe = out.join(format!(".trawl-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| {
            (
                ExitCode::OutputError,
                format!("cannot write to output directory {}: {e}", out.display()),
            )
        })?;
    if let Some(stats) = &config.report.stats {
        let existed = stats.exists();
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(stats)
            .map_err(|e| {
                (
                    ExitCode::OutputError,
                    format!("cannot write --stats {}: {e}", stats.display()),
                )
            })?;
        if !existed {
            let _ = std::fs::remove_file(stats);
        }
    }
    if let Some(cookies) = &config.cookies.save {
        // Written at the end as FILE.part, then renamed: the directory must take a new file.
        let part = part_path(cookies);
        let is_dir = || match cookies.is_dir() {
            true => Err(std::io::Error::other("it is a directory")),
            false => Ok(()),
        };
        is_dir()
            .and_then(|()| std::fs::write(&part, b""))
            .and_then(|()| std::fs::remove_file(&part))
            .map_err(|e| {
                (
                    ExitCode::OutputError,
                    format!("cannot write --save-cookies {}: {e}", cookies.display()),
                )
            })?;
    }
    for index in config.chain.dedup.iter().flatten() {
        std::fs::File::open(index).map_err(|e| {
            (
                ExitCode::BadArguments,
                format!("cannot read --dedup-index {}: {e}", index.display()),
            )
        })?;
    }
    Ok(())
}

fn init_logging(quiet: bool, verbose: u8, log_file: Option<&Path>) {
    // -q quiets stderr: a --log-file still gets the warnings (a resume, the time limit).
    let quiet = quiet && log_file.is_none();
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, _) => "debug",
    };
    // Skipped seed lines (the first hundred) are shown even with -q: they are the user's input.
    let seeds = if quiet {
        ",trawl::crawl::seed_feed=warn"
    } else {
        ""
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("TRAWL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("trawl={level}{seeds}")));
    // The caller opened the file already (and stops when it cannot).
    let file = log_file.and_then(|p| LogFile::open(p).ok());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    let _ = match file {
        Some(f) => builder
            .with_writer(move || Unwritten(f.clone()))
            .with_ansi(false)
            .try_init(),
        None => builder
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init(),
    };
}

/// The log file, its write errors dropped: on a full disk, tracing would print one complaint
/// per event to stderr (a cron mail of thousands of lines), and the crawl goes on either way.
struct Unwritten(LogFile);

impl std::io::Write for Unwritten {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = self.0.flush();
        Ok(())
    }
}

fn config_error(e: ConfigError) -> ExitCode {
    match &e {
        ConfigError::NoSeeds(problems) => {
            for p in problems {
                eprintln!("trawl: bad seed {p}");
            }
            eprintln!("trawl: error: {e}");
            ExitCode::NoSeeds
        }
        _ => {
            eprintln!("trawl: error: {e}");
            ExitCode::BadArguments
        }
    }
}

fn crawl_and_report(config: Config, messages: &Messages) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("trawl")
        .build()
        .context("starting the async runtime")?;
    let stats_path = config.report.stats.clone();
    // With --finished-dir each WARC file has its own index, moved with it.
    let cdxj_dir = (config.output.cdxj && config.output.handoff.finished_dir.is_none())
        .then(|| config.output.out.clone());
    let outcome = runtime.block_on(async move {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(forward_signals(tx));
        // The crawl loop runs as a task on the runtime's workers, not on this thread: every
        // job result wakes it, and a wake within the runtime costs no system call, where one
        // to a thread blocked here is a futex call and a context switch (docs/PERFORMANCE.md,
        // cut 17).
        match tokio::spawn(crawl::run(config, rx)).await {
            Ok(outcome) => outcome,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    });
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            messages.error(&format!("trawl: error: {e}\n"));
            return Ok(match e {
                crawl::CrawlError::State(StateError::Store(StoreError::Locked { .. })) => {
                    ExitCode::Locked
                }
                crawl::CrawlError::Setup(SetupError::DedupIndex { .. }) => ExitCode::BadArguments,
                crawl::CrawlError::Console(_) => ExitCode::BadArguments,
                crawl::CrawlError::Setup(SetupError::SearchIndex(e)) => match e {
                    SearchError::Locked { .. } => ExitCode::Locked,
                    SearchError::NotAnIndex { .. } => ExitCode::BadArguments,
                    _ => ExitCode::OutputError,
                },
                crawl::CrawlError::Setup(
                    SetupError::Finished { .. } | SetupError::StateMissing { .. },
                ) => ExitCode::AlreadyFinished,
                crawl::CrawlError::Setup(SetupError::Interrupted) => ExitCode::Interrupted,
                crawl::CrawlError::Setup(SetupError::Join(j)) => match j {
                    JoinError::OptionsDiffer { .. } => ExitCode::BadArguments,
                    JoinError::Finished { .. } => ExitCode::AlreadyFinished,
                    _ => ExitCode::SharedStore,
                },
                _ => ExitCode::OutputError,
            });
        }
    };
    let mut code = exit_code(&outcome.stats);
    // A WET/WAT file or the search index's share of a WARC file not written is output lost
    // (the WARC files are whole): exit 5, as `trawl search-index` on a full disk.
    if outcome.stats.files_not_derived > 0
        && matches!(code, ExitCode::Success | ExitCode::FetchErrors)
    {
        code = ExitCode::OutputError;
    }
    // Before the report, whose last line is the exit code: a stop during the index is 130.
    if let Some(failed) = cdxj_dir.and_then(|dir| directory_index(&dir, messages)) {
        code = failed;
    }
    messages.say(&render_table(&outcome.stats, code as u8));
    messages.say(&format!("  {:<22} {}\n", "exit code", code as u8));
    if let Some(path) = stats_path {
        let json = serde_json::to_vec_pretty(&outcome.stats)?;
        if let Err(e) = std::fs::write(&path, json) {
            messages.error(&format!(
                "trawl: error: cannot write stats to {}: {e}\n",
                path.display()
            ));
            return Ok(ExitCode::OutputError);
        }
    }
    if let Some(e) = &outcome.output_error {
        messages.error(&format!("trawl: error: {e}\n"));
    }
    if let Some(e) = &outcome.state_error {
        messages.error(&format!("trawl: error: {e}\n"));
    }
    Ok(code)
}

/// `--cdxj`: writes `dir/index.cdxj`; the exit code when it could not. A stop request during
/// the index (or a second one before it) leaves it to `trawl index`: a cron timeout or
/// systemd must not wait for a large directory.
fn directory_index(dir: &Path, messages: &Messages) -> Option<ExitCode> {
    let signals = crawl::stop_signals::received();
    let written = match signals > 1 {
        true => Err(anyhow::anyhow!("stopped by a second signal")),
        false => write_directory_index(dir, signals),
    };
    let e = written.err()?;
    let stopped = signals > 1 || crawl::stop_signals::received() > signals;
    messages.error(&format!(
        "trawl: error: writing the CDXJ index: {e:#}{}\n",
        match stopped {
            true => "; `trawl index -o OUT/index.cdxj OUT` writes it",
            false => "",
        }
    ));
    Some(match stopped {
        true => ExitCode::Interrupted,
        false => ExitCode::OutputError,
    })
}

/// The exit code a finished crawl's report stands for (the report names its causes).
fn exit_code(stats: &CrawlStats) -> ExitCode {
    match stats.stop_reason {
        StopReason::OutputError => ExitCode::OutputError,
        StopReason::Interrupted | StopReason::Stopped => ExitCode::Interrupted,
        StopReason::TimeLimit => ExitCode::TimeLimit,
        StopReason::SharedStateLost => ExitCode::SharedStore,
        _ if stats.failed_urls > 0
            || stats.filtered.robots_unavailable > 0
            || stats.filtered.host_down > 0 =>
        {
            ExitCode::FetchErrors
        }
        _ => ExitCode::Success,
    }
}

/// Sends one message per SIGINT or SIGTERM. SIGHUP opens the `--log-file` again (logrotate's
/// `postrotate kill -HUP`) and the crawl goes on (wget's manual says wget goes on too).
async fn forward_signals(tx: tokio::sync::mpsc::UnboundedSender<()>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        loop {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
                _ = hup.recv() => {
                    for (path, e) in log_file::reopen_all() {
                        tracing::warn!("SIGHUP: could not open the log file {} again: {e}", path.display());
                    }
                    continue;
                }
            }
            crawl::stop_signals::received_one();
            if tx.send(()).is_err() {
                return;
            }
        }
    }
    #[cfg(not(unix))]
    while tokio::signal::ctrl_c().await.is_ok() {
        if tx.send(()).is_err() {
            return;
        }
    }
}

/// Indexes every finished WARC file in `dir` into `dir/index.cdxj` (written aside, then
/// renamed, so a reader never sees half an index).
/// Gives up when a stop request comes (more than `signals`, those the crawl had).
fn write_directory_index(dir: &Path, signals: u32) -> anyhow::Result<()> {
    let files = list_warc_files(&[dir.to_path_buf()])?;
    // A file at a time, so that a stop request (SIGTERM from a cron timeout, systemd) is heard.
    let mut lines = Vec::new();
    for file in &files {
        if crawl::stop_signals::received() > signals {
            anyhow::bail!("stopped by a signal before the index was complete");
        }
        lines.extend(index_files(std::slice::from_ref(file))?);
    }
    lines.sort();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let index = dir.join("index.cdxj");
    write_whole(&index, text.as_bytes()).with_context(|| format!("writing {}", index.display()))
}
