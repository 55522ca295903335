//! What the benchmark examples share about being run: reading their flags, and reading the CPU
//! time they used from /proc.
// Each example includes this file by path and uses what it needs of it.
#![allow(dead_code)]

use std::time::Duration;

/// The value after flag `name`, or `default`.
pub fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_string())
}

/// User plus system CPU time from a /proc stat file: `/proc/thread-self/stat` for this
/// thread, `/proc/self/stat` for the process (clock ticks of 10 ms).
pub fn cpu_time(stat_file: &str) -> Duration {
    let stat = std::fs::read_to_string(stat_file).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields.get(11).and_then(|u| u.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|s| s.parse().ok()).unwrap_or(0);
    Duration::from_secs_f64(ticks as f64 / 100.0)
}
