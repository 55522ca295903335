//! The shared-crawl options (`--redis`, `--crawl-id`, `--worker-id`, `--lease`): checked, with
//! the options a shared crawl refuses named with the reason, and the worker's default name.

use std::time::Duration;

use crate::cli::CrawlArgs;
use crate::redis_crawl::SharedSettings;

use super::ConfigError;

/// The shared crawl this worker joins, if `--redis` and `--crawl-id` are given.
pub(super) fn shared_settings(args: &CrawlArgs) -> Result<Option<SharedSettings>, ConfigError> {
    let bad = |m: String| ConfigError::BadArgument(m);
    let settings = match (&args.redis, &args.crawl_id) {
        (Some(url), Some(crawl_id)) => {
            // A URL that does not parse is a bad argument, not an unreachable Redis (exit 9).
            if let Err(e) = redis::Client::open(url.as_str()) {
                let url = crate::redis_crawl::connection::shown(url);
                return Err(bad(format!("--redis {url}: not a Redis URL ({e})")));
            }
            if crawl_id.is_empty() || file_name_safe(crawl_id) != *crawl_id {
                return Err(bad(
                    "--crawl-id may hold only letters, digits, '.', '_' and '-'".into(),
                ));
            }
            let worker_id = match &args.worker_id {
                Some(w) if w.is_empty() || file_name_safe(w) != *w => {
                    return Err(bad(
                        "--worker-id may hold only letters, digits, '.', '_' and '-'".into(),
                    ));
                }
                Some(w) => w.clone(),
                None => default_worker_id(&args.out),
            };
            if args.fresh || args.recrawl {
                return Err(bad("--recrawl and --fresh are for a crawl of its own; a shared crawl starts anew under a new --crawl-id".into()));
            }
            if args.politeness != crate::cli::Politeness::Host {
                return Err(bad("--politeness ip and domain are for a crawl of its own: a shared crawl leases hosts to workers one by one, so a group of hosts could be served by two workers at once".into()));
            }
            if args.lease < Duration::from_secs(1) {
                return Err(bad("--lease must be at least 1s".into()));
            }
            Some(SharedSettings {
                url: url.clone(),
                crawl_id: crawl_id.clone(),
                worker_id,
                lease: args.lease,
            })
        }
        _ => None,
    };
    Ok(settings)
}

/// This worker's default name: host name, output directory name and a hash of its absolute
/// path (stable across restarts, different for two directories of one machine).
fn default_worker_id(out: &std::path::Path) -> String {
    let host = gethostname::gethostname().to_string_lossy().to_string();
    let abs = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    let base = abs
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let hash = crate::frontier::storage::fingerprint(&abs.to_string_lossy());
    let name = format!(
        "{host}-{base}-{}",
        data_encoding::HEXLOWER.encode(&hash[..4])
    );
    file_name_safe(&name)
}

/// Keeps `[A-Za-z0-9._-]`, so a worker id can be part of a WARC file name.
pub(super) fn file_name_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}
