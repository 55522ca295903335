//! The human-readable final report.

use std::fmt::Write;

use super::stats::CrawlStats;

fn human_bytes(b: u64) -> String {
    bytesize::ByteSize(b).display().si().to_string()
}

/// Renders the report as an aligned table, for a crawl that exits with `exit_code`: failures are
/// given as its cause only when it is 4 (a time limit or a stop that also saw failures exits
/// 8 or 130, and the failures are listed as what they are).
pub fn render_table(s: &CrawlStats, exit_code: u8) -> String {
    let mut out = String::new();
    let mut row = |k: &str, v: String| {
        let _ = writeln!(out, "  {k:<22} {v}");
    };
    row("stop reason", s.stop_reason.describe().to_string());
    row(
        "pages archived",
        format!("{} (2xx responses of an accepted type)", s.pages_archived),
    );
    // A resumed crawl's counters are the whole crawl's, but for these, which are this run's.
    let run = if s.resumed { " (this run)" } else { "" };
    row("elapsed", format!("{:.1} s{run}", s.elapsed_secs));
    row("pages/s", format!("{:.2}{run}", s.pages_per_sec));
    row("requests", s.requests.to_string());
    row("mean request time", format!("{:.1} ms", s.mean_request_ms));
    row("downloaded", human_bytes(s.bytes_downloaded));
    row(
        "written (WARC)",
        format!(
            "{} in {} file(s), {} records{run}",
            human_bytes(s.bytes_written),
            s.warc_files.len(),
            s.records_written
        ),
    );
    row(
        "hosts seen/crawled",
        format!("{}/{}", s.hosts_seen, s.hosts_crawled),
    );
    row("queued at end", s.queued_at_end.to_string());
    let codes: Vec<String> = s
        .status_codes
        .iter()
        .map(|(k, v)| format!("{k}:{v}"))
        .collect();
    if !codes.is_empty() {
        row("status codes", codes.join(" "));
    }
    let f = &s.filtered;
    row(
        "filtered",
        format!(
            "content-type:{} robots:{} robots-unavailable:{} host-down:{} nofollow:{} scope:{} extension:{} declared-type:{} depth:{} pattern:{} redirects:{} url-length:{} link-cap:{} not-http:{} path-trap:{} port:{} blocked-address:{} host-quota:{} site-hosts:{} target-reached:{} duplicate:{}",
            f.content_type, f.robots, f.robots_unavailable, f.host_down, f.nofollow, f.scope, f.extension, f.declared_type, f.depth, f.pattern, f.redirects, f.url_length, f.link_cap, f.not_http, f.path_trap, f.port, f.blocked_address, f.host_quota, f.site_hosts, f.target_reached, f.duplicate
        ),
    );
    let errors: Vec<String> = s.errors.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    row(
        "errors",
        if errors.is_empty() {
            "none".into()
        } else {
            format!(
                "{} (failed URLs {}, retries {})",
                errors.join(" "),
                s.failed_urls,
                s.retries
            )
        },
    );
    if s.seed_lines_skipped > 0 {
        // The first hundred are named as they are read; this is all of them.
        row(
            "seed lines skipped",
            format!(
                "{} (not URLs trawl can crawl; the first ones are named above or in the log)",
                s.seed_lines_skipped
            ),
        );
    }
    if s.slowed_down > 0 {
        row(
            "slowed down",
            format!(
                "{} answer(s) asked the crawl to slow down (429/503): their hosts waited longer, and URLs with tries left were retried",
                s.slowed_down
            ),
        );
    }
    if !s.truncated.is_empty() {
        let t: Vec<String> = s
            .truncated
            .iter()
            .map(|(k, v)| format!("{k}:{v}"))
            .collect();
        row("truncated", t.join(" "));
    }
    if s.revisits > 0 {
        row(
            "revisits (dedup)",
            // Pages and requisites alike: a revisit record stands for any payload seen before.
            format!(
                "{} records, {} saved",
                s.revisits,
                human_bytes(s.bytes_saved)
            ),
        );
    }
    if s.requisites.queued > 0 {
        row(
            "page requisites",
            format!(
                "{} archived of {} queued (not counted as pages)",
                s.requisites.archived, s.requisites.queued
            ),
        );
    }
    let m = &s.sitemaps;
    if m.fetched > 0 || m.invalid > 0 {
        row(
            "sitemaps",
            format!(
                "{} fetched, {} URLs and {} sitemaps listed, {} over the limits, {} invalid",
                m.fetched, m.urls, m.nested, m.over_limits, m.invalid
            ),
        );
    }
    let (types, total) = s.content_types.top(6);
    if !types.is_empty() {
        let mut listed: Vec<String> = types
            .iter()
            .map(|(t, c)| format!("{t} {} ({})", c.responses, human_bytes(c.bytes)))
            .collect();
        if total > types.len() {
            listed.push(format!("{} more types", total - types.len()));
        }
        row("content types", listed.join(", "));
    }
    if let Some(rss) = s.peak_rss_bytes {
        row("peak memory (RSS)", human_bytes(rss));
    }
    let top: Vec<String> = s
        .top_hosts
        .iter()
        .take(5)
        .map(|h| format!("{} ({})", h.host, h.pages))
        .collect();
    if !top.is_empty() {
        row("top hosts", top.join(", "));
    }
    if s.failed_urls > 0 || f.robots_unavailable > 0 || f.host_down > 0 {
        let mut why = Vec::new();
        if s.failed_urls > 0 {
            why.push(format!(
                "{} URL(s) failed after their retries",
                s.failed_urls
            ));
        }
        if f.robots_unavailable > 0 {
            why.push(format!(
                "{} URL(s) dropped because their host or its robots.txt could not be reached ({} host(s) given up; the log says why)",
                f.robots_unavailable, s.origins_given_up
            ));
        }
        if f.host_down > 0 {
            why.push(format!(
                "{} URL(s) dropped because their host could not be connected to ({} host(s) given up; the log says which and for how long)",
                f.host_down, s.hosts_down
            ));
        }
        let label = match exit_code {
            4 => "exit code 4 because",
            _ => "failures",
        };
        row(label, why.join("; "));
    }
    if s.files_not_derived > 0 {
        row(
            "not derived",
            format!(
                "{} WARC file(s) not derived or not added to the search index (the log says why; the next run, `trawl derive` or `trawl search-index` adds them){}",
                s.files_not_derived,
                match exit_code {
                    5 => ": exit code 5",
                    _ => "",
                }
            ),
        );
    }
    format!("trawl crawl report\n{out}")
}
