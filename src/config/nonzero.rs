//! Counts, sizes and durations a crawl cannot run with at zero, or at a size that only harms
//! it, refused before it starts with the flag named: a zero there would otherwise stop, or
//! silently hollow out, a whole crawl (`--fetch-timeout 0s` cut nearly every body,
//! `--max-headers 0` gave every host up, `--max-body-size 0` archived every body empty), and a
//! `--delay` of years, or `--max-headers` of millions, would hang it or take gigabytes.

use std::time::Duration;

use crate::cli::CrawlArgs;

/// The first value in `args` that must not be zero, as the message to print.
pub fn check(args: &CrawlArgs) -> Result<(), String> {
    let unlimited = |flag: &str, what: &str| {
        format!("{flag} must be more than 0 (leave it out for no {what} limit)")
    };
    if args.concurrency == 0 {
        return Err("--concurrency must be at least 1".into());
    }
    if args.max_pages == Some(0) {
        return Err(unlimited("--max-pages", "page"));
    }
    if args.max_bytes == Some(0) {
        return Err(unlimited("--max-bytes", "byte"));
    }
    if args.time_limit == Some(Duration::ZERO) {
        return Err(unlimited("--time-limit", "time"));
    }
    if args.max_pages_per_host == Some(0) {
        return Err(unlimited("--max-pages-per-host", "per-host"));
    }
    if args.max_links_per_page == 0 {
        return Err(
            "--max-links-per-page must be more than 0 (--max-depth 0 crawls the seeds alone)"
                .into(),
        );
    }
    if args.max_decoded_size == 0 {
        return Err("--max-decoded-size must be more than 0".into());
    }
    if args.records_per_file == 0 {
        return Err("--records-per-file must be at least 1".into());
    }
    let durations = [
        ("--timeout", args.timeout),
        ("--connect-timeout", args.connect_timeout),
        ("--fetch-timeout", args.fetch_timeout),
    ];
    if let Some((flag, _)) = durations.iter().find(|(_, d)| d.is_zero()) {
        return Err(format!("{flag} must be longer than 0"));
    }
    if args.max_headers == 0 || args.max_header_size == 0 {
        return Err("--max-headers and --max-header-size must be more than 0".into());
    }
    // Every response head is given room for this many fields (tens of bytes each).
    if args.max_headers > MAX_HEADERS {
        return Err(format!(
            "--max-headers is at most {MAX_HEADERS} (--max-header-size bounds a head's bytes)"
        ));
    }
    if args.max_body_size == 0 {
        return Err("--max-body-size must be more than 0".into());
    }
    if args.max_path_repeats == 0 {
        return Err("--max-path-repeats must be at least 1 (a segment occurs once)".into());
    }
    let waits = [("--delay", args.delay), ("--max-delay", args.max_delay)];
    if let Some((flag, _)) = waits.iter().find(|(_, d)| *d > YEAR) {
        return Err(format!("{flag} is at most a year"));
    }
    Ok(())
}

/// Most header fields `--max-headers` may allow.
const MAX_HEADERS: usize = 10_000;
/// The longest wait between two requests to one host (`-w` has the same bound).
const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);
