//! The `trawl` command: turns parsed arguments into a run and a run into an exit code.
//! Everything user-facing at the top level (messages, report, JSON stats) happens here.

use anyhow::Context;

use crate::cli::{Cli, Command, CrawlArgs, IndexArgs, StatusArgs, WaczArgs};
use crate::config::{Config, ConfigError};
use crate::crawl;
use crate::crawl::save_point::StateError;
use crate::crawl::setup::{create_output_dir, SetupError};
use crate::exit::ExitCode;
use crate::frontier::storage::StoreError;
use crate::index::index_files;
use crate::out_lock::{DirLock, LockError};
use crate::report::status_file::read_status;
use crate::report::{render_table, StopReason};
use crate::wacz::{write_wacz, WaczError};
use crate::warc::naming::list_warc_files;
use crate::warc::recovery::repair_open_files;

/// Runs the command and returns the exit code.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Crawl(args) => run_crawl(*args),
        Command::Index(args) => run_index(args),
        Command::Wacz(args) => run_wacz(args),
        Command::Status(args) => run_status(args),
    }
}

fn run_status(args: StatusArgs) -> ExitCode {
    let dir = &args.dir;
    if !dir.is_dir() {
        eprintln!("trawl: error: {} is not a directory", dir.display());
        return ExitCode::BadArguments;
    }
    let running = DirLock::is_held(dir);
    let files = list_warc_files(&[dir.to_path_buf()]).unwrap_or_default();
    let bytes: u64 = files
        .iter()
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .sum();
    let open = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".open"))
                .count()
        })
        .unwrap_or(0);
    match read_status(dir) {
        Some(s) => {
            let state = match (running, s.running) {
                (true, _) => format!("running (pid {})", s.pid),
                (false, false) => format!("stopped: {}", s.stop_reason.as_deref().unwrap_or("unknown")),
                (false, true) => "not running, and it did not stop cleanly (killed or crashed); the next run repairs and continues".to_string(),
            };
            println!("crawl in {}: {state}", dir.display());
            println!("  started {}, last update {}", s.started, s.updated);
            println!(
                "  pages {}, queued {}, in flight {}, errors {}, WARC bytes written {}",
                s.pages, s.queued, s.in_flight, s.errors, s.bytes_written
            );
        }
        None => println!(
            "no trawl crawl status in {}{}",
            dir.display(),
            if running {
                " (but it is locked by a running trawl)"
            } else {
                ""
            }
        ),
    }
    println!(
        "  {} WARC file(s), {} bytes{}",
        files.len(),
        bytes,
        if open > 0 {
            format!(", {open} open file(s)")
        } else {
            String::new()
        }
    );
    ExitCode::Success
}

fn run_index(args: IndexArgs) -> ExitCode {
    let result = list_warc_files(&args.warcs)
        .map_err(anyhow::Error::from)
        .and_then(|files| Ok(index_files(&files)?));
    let lines = match result {
        Ok(lines) => lines,
        Err(e) => {
            eprintln!("trawl: error: {e:#}");
            return ExitCode::BadArguments;
        }
    };
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let written = match &args.output {
        Some(path) => std::fs::write(path, text),
        None => std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes()),
    };
    match written {
        Ok(()) => ExitCode::Success,
        Err(e) => {
            eprintln!("trawl: error: writing the index: {e}");
            ExitCode::OutputError
        }
    }
}

fn run_wacz(args: WaczArgs) -> ExitCode {
    let files = match list_warc_files(&args.warcs) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("trawl: error: {e}");
            return ExitCode::BadArguments;
        }
    };
    match write_wacz(&args.output, &files, args.title.as_deref()) {
        Ok(s) => {
            eprintln!(
                "trawl: wrote {} ({} WARC file(s), {} index lines, {} pages)",
                args.output.display(),
                s.warcs,
                s.index_lines,
                s.pages
            );
            ExitCode::Success
        }
        Err(e @ (WaczError::Index(_) | WaczError::Empty)) => {
            eprintln!("trawl: error: {e}");
            ExitCode::BadArguments
        }
        Err(e) => {
            eprintln!("trawl: error: {e}");
            ExitCode::OutputError
        }
    }
}

fn init_logging(quiet: bool, verbose: u8, log_file: Option<&std::path::Path>) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, _) => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("TRAWL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("trawl={level}")));
    let file = log_file.and_then(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .map_err(|e| eprintln!("trawl: cannot open log file {}: {e}", p.display()))
            .ok()
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    let _ = match file {
        Some(f) => builder
            .with_writer(std::sync::Mutex::new(f))
            .with_ansi(false)
            .try_init(),
        None => builder
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init(),
    };
}

fn run_crawl(args: CrawlArgs) -> ExitCode {
    init_logging(args.quiet, args.verbose, args.log_file.as_deref());
    let config = match Config::from_args(args) {
        Ok(c) => c,
        Err(e) => return config_error(e),
    };
    for p in &config.seed_problems {
        eprintln!("trawl: skipping seed {p}");
    }
    for (addr, class) in config.unlocked.iter().filter(|_| !config.report.quiet) {
        eprintln!(
            "trawl: note: a seed is a {} IP address, so {addr} (that address and port only) is allowed for this crawl",
            class.name()
        );
    }
    if let Err(e) = create_output_dir(&config.output.out) {
        eprintln!("trawl: error: {e}");
        return ExitCode::OutputError;
    }
    let _lock = match DirLock::acquire(&config.output.out) {
        Ok(lock) => lock,
        Err(e @ LockError::Busy { .. }) => {
            eprintln!("trawl: error: {e}");
            return ExitCode::Locked;
        }
        Err(e) => {
            eprintln!("trawl: error: {e}");
            return ExitCode::OutputError;
        }
    };
    match repair_open_files(&config.output.out) {
        Ok(repairs) => {
            for r in repairs {
                match &r.final_path {
                    Some(p) => eprintln!(
                        "trawl: repaired {} after an unclean stop: kept {} records, cut {} bytes",
                        p.display(),
                        r.records,
                        r.cut_bytes
                    ),
                    None => eprintln!(
                        "trawl: removed {}: no complete capture in it",
                        r.open_path.display()
                    ),
                }
            }
        }
        Err(e) => {
            eprintln!(
                "trawl: error: repairing open WARC files in {}: {e}",
                config.output.out.display()
            );
            return ExitCode::OutputError;
        }
    }
    match crawl_and_report(config) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("trawl: error: {e:#}");
            ExitCode::Internal
        }
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

fn crawl_and_report(config: Config) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("trawl")
        .build()
        .context("starting the async runtime")?;
    let quiet = config.report.quiet;
    let stats_path = config.report.stats.clone();
    let cdxj_dir = config.output.cdxj.then(|| config.output.out.clone());
    let outcome = runtime.block_on(async move {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(forward_signals(tx));
        crawl::run(config, rx).await
    });
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            eprintln!("trawl: error: {e}");
            return Ok(match e {
                crawl::CrawlError::State(StateError::Store(StoreError::Locked { .. })) => {
                    ExitCode::Locked
                }
                crawl::CrawlError::Setup(SetupError::DedupIndex { .. }) => ExitCode::BadArguments,
                _ => ExitCode::OutputError,
            });
        }
    };
    if !quiet {
        eprint!("{}", render_table(&outcome.stats));
    }
    if let Some(path) = stats_path {
        let json = serde_json::to_vec_pretty(&outcome.stats)?;
        if let Err(e) = std::fs::write(&path, json) {
            eprintln!(
                "trawl: error: cannot write stats to {}: {e}",
                path.display()
            );
            return Ok(ExitCode::OutputError);
        }
    }
    if let Some(e) = &outcome.output_error {
        eprintln!("trawl: error: {e}");
    }
    if let Some(e) = &outcome.state_error {
        eprintln!("trawl: error: {e}");
    }
    if let Some(dir) = cdxj_dir {
        if let Err(e) = write_directory_index(&dir) {
            eprintln!("trawl: error: writing the CDXJ index: {e:#}");
            return Ok(ExitCode::OutputError);
        }
    }
    Ok(match outcome.stats.stop_reason {
        StopReason::OutputError => ExitCode::OutputError,
        StopReason::Interrupted => ExitCode::Interrupted,
        _ if outcome.stats.failed_urls > 0 || outcome.stats.filtered.robots_unavailable > 0 => {
            ExitCode::FetchErrors
        }
        _ => ExitCode::Success,
    })
}

/// Sends one message per SIGINT or SIGTERM.
async fn forward_signals(tx: tokio::sync::mpsc::UnboundedSender<()>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        loop {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
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
fn write_directory_index(dir: &std::path::Path) -> anyhow::Result<()> {
    let files = list_warc_files(&[dir.to_path_buf()])?;
    let lines = index_files(&files)?;
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let tmp = dir.join("index.cdxj.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join("index.cdxj")).context("renaming the index into place")?;
    Ok(())
}
