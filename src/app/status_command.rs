//! `trawl status DIR`: the progress of a running or stopped crawl, from its status file;
//! `trawl status --redis URL --crawl-id ID`: a shared crawl as a whole, from Redis; and
//! `trawl stop --redis URL --crawl-id ID`.

use crate::cli::{StatusArgs, StopArgs};
use crate::exit::ExitCode;
use crate::out_lock::DirLock;
use crate::report::status_file::read_status;
use crate::report::StopReason;
use crate::warc::naming::list_warc_files;

pub(super) fn run_status(args: StatusArgs) -> ExitCode {
    if let (Some(url), Some(id)) = (&args.redis, &args.crawl_id) {
        return shared_status(url, id, args.json);
    }
    let Some(dir) = &args.dir else {
        eprintln!("trawl: error: give the crawl's output directory, or --redis and --crawl-id");
        return ExitCode::BadArguments;
    };
    if args.json {
        return match read_status(dir) {
            Some(mut s) => {
                // The file says what the crawl last wrote: a killed one wrote "running". The
                // lock says whether it runs (the text form said so; the JSON did not).
                s.running = s.running && DirLock::is_held(dir);
                println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
                ExitCode::Success
            }
            None => {
                eprintln!("trawl: error: no trawl crawl in {}", dir.display());
                ExitCode::BadArguments
            }
        };
    }
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
    let mut finished_dir = None;
    match read_status(dir) {
        Some(s) => {
            let state = match (running, s.running) {
                (true, _) => match &s.waiting {
                    Some(why) => format!("running (pid {}), no new fetch starts: {why}", s.pid),
                    None => format!("running (pid {})", s.pid),
                },
                (false, false) => format!("stopped: {}", stop_words(s.stop_reason.as_deref())),
                (false, true) => "not running, and it did not stop cleanly (killed or crashed); the next run repairs and continues".to_string(),
            };
            // A resumed crawl's counters are the whole crawl's; its start and bytes this run's.
            let run = if s.resumed { " this run" } else { "" };
            println!("crawl in {}: {state}", dir.display());
            println!("  started{run} {}, last update {}", s.started, s.updated);
            println!(
                "  pages {}, queued {}, in flight {}, errors {}, WARC bytes written{run} {}",
                s.pages, s.queued, s.in_flight, s.errors, s.bytes_written
            );
            finished_dir = s.finished_dir;
        }
        None if running => println!(
            "crawl in {}: running (it has not written its status yet)",
            dir.display()
        ),
        None => {
            eprintln!(
                "trawl: error: no trawl crawl in {} (no {} file); give the crawl's --out",
                dir.display(),
                crate::report::status_file::STATUS_FILE
            );
            return ExitCode::BadArguments;
        }
    }
    println!(
        "  {} WARC file(s), {} bytes{}{}",
        files.len(),
        bytes,
        if open > 0 {
            format!(", {open} open file(s)")
        } else {
            String::new()
        },
        match finished_dir {
            Some(d) => format!(" here; closed files are moved to {}", d.display()),
            None => String::new(),
        }
    );
    ExitCode::Success
}

/// A `--redis` URL that does not parse: a bad argument (exit 2), not an unreachable Redis.
fn bad_redis_url(url: &str) -> Option<ExitCode> {
    let e = redis::Client::open(url).err()?;
    let url = crate::redis_crawl::connection::shown(url);
    eprintln!("trawl: error: --redis {url}: not a Redis URL ({e})");
    Some(ExitCode::BadArguments)
}

/// Runs `f` on a small runtime of its own (the control commands make a few Redis calls).
fn with_runtime<T>(f: impl std::future::Future<Output = T>) -> Option<T> {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt.block_on(f)),
        Err(e) => {
            eprintln!("trawl: error: starting the async runtime: {e}");
            None
        }
    }
}

fn shared_status(url: &str, crawl_id: &str, json: bool) -> ExitCode {
    if let Some(code) = bad_redis_url(url) {
        return code;
    }
    let Some(result) = with_runtime(crate::redis_crawl::control::status(url, crawl_id)) else {
        return ExitCode::Internal;
    };
    match result {
        Ok(s) if json => {
            println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
            ExitCode::Success
        }
        Ok(s) => {
            print!("{}", s.describe());
            ExitCode::Success
        }
        Err(e) => control_error(e),
    }
}

fn control_error(e: crate::redis_crawl::control::ControlError) -> ExitCode {
    eprintln!("trawl: error: {e}");
    match e {
        crate::redis_crawl::control::ControlError::NoCrawl(_) => ExitCode::BadArguments,
        crate::redis_crawl::control::ControlError::Redis { .. } => ExitCode::SharedStore,
    }
}

pub(super) fn run_stop(args: StopArgs) -> ExitCode {
    if let Some(code) = bad_redis_url(&args.redis) {
        return code;
    }
    let Some(result) = with_runtime(crate::redis_crawl::control::stop(
        &args.redis,
        &args.crawl_id,
    )) else {
        return ExitCode::Internal;
    };
    match result {
        Ok(()) => {
            println!(
                "trawl: asked every worker of crawl {} to stop; they finish their fetches, save and exit",
                args.crawl_id
            );
            ExitCode::Success
        }
        Err(e) => control_error(e),
    }
}

/// The stop reason of a status file (its snake_case name) in words.
fn stop_words(name: Option<&str>) -> String {
    let Some(name) = name else {
        return "unknown".to_string();
    };
    serde_json::from_value::<StopReason>(serde_json::Value::String(name.to_string()))
        .map(|r| r.describe().to_string())
        .unwrap_or_else(|_| name.to_string())
}
