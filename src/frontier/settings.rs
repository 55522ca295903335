//! The frontier's settings ([`FrontierConfig`]) and the URLs it drops, counted for the report
//! ([`FrontierCounters`]).

use std::time::Duration;

use super::{CrawlOrder, PolitenessKey};

/// Settings of the frontier.
#[derive(Debug, Clone)]
pub struct FrontierConfig {
    /// Configured per-host delay.
    pub delay: Duration,
    /// wget's `--random-wait`: each wait of `delay` is drawn from 0.5 to 1.5 times it (a
    /// host whose robots.txt or operator set a longer delay keeps it exact).
    pub random_wait: bool,
    /// A host waits at least this many times as long as its last fetch took (`--delay-factor`,
    /// Heritrix's `delayFactor`; 0: off), up to `max_delay`.
    pub delay_factor: f64,
    /// Ceiling for Crawl-delay.
    pub max_delay: Duration,
    /// Product token matched against robots.txt groups.
    pub robots_agent: String,
    /// False to ignore robots.txt.
    pub obey_robots: bool,
    /// First wait after a robots.txt could not be fetched; doubles per attempt.
    pub robots_retry: Duration,
    /// Fetches of a robots.txt that failed or asked to wait before its origin is given up.
    pub robots_attempts: u32,
    /// What politeness is keyed by (`--politeness`).
    pub politeness: PolitenessKey,
    /// Fetch the sitemaps robots.txt lists, else /sitemap.xml (`--sitemaps`).
    pub sitemaps: bool,
    /// The order of each host's queue (`--order`).
    pub order: CrawlOrder,
}

/// URLs dropped inside the frontier, for the report.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct FrontierCounters {
    /// Disallowed by robots.txt.
    pub robots_denied: u64,
    /// Dropped because robots.txt stayed unavailable.
    pub robots_unavailable: u64,
    /// Origins given up because their robots.txt stayed unreachable or was refused.
    #[serde(default)]
    pub origins_given_up: u64,
    /// Dropped because their host stopped answering for `--host-down-limit`.
    #[serde(default)]
    pub host_down: u64,
    /// Hosts given up for that.
    #[serde(default)]
    pub hosts_down: u64,
    /// Sitemap files not fetched: past a host's share, or the run's
    /// ([`super::sitemaps::MAX_SITEMAPS_PER_HOST`], [`super::sitemaps::MAX_SITEMAPS`]).
    #[serde(default)]
    pub sitemaps_over_budget: u64,
}
