//! Politeness arithmetic: per-host delays and retry backoff. Pure functions of their inputs.

use std::time::Duration;

/// The delay between two requests to one host: the configured delay, raised by the site's
/// robots.txt Crawl-delay, but never above `max`.
pub fn host_delay(base: Duration, crawl_delay: Option<f32>, max: Duration) -> Duration {
    let requested = crawl_delay
        .filter(|d| d.is_finite() && *d > 0.0)
        .map(|d| Duration::from_secs_f64(f64::from(d).min(86_400.0)))
        .unwrap_or_default();
    base.max(requested).min(max.max(base))
}

/// The rest a host takes in proportion to how long its last fetch took (`--delay-factor`,
/// Heritrix's `delayFactor`): `factor` times `took`, at most `max`. A factor of 0 asks for none.
pub fn in_proportion(took: Duration, factor: f64, max: Duration) -> Duration {
    match factor > 0.0 {
        true => took.mul_f64(factor.min(1000.0)).min(max),
        false => Duration::ZERO,
    }
}

/// wget's `--random-wait`: `delay` times 0.5 + `unit` (`unit` in [0, 1)), when `delay` is the
/// crawl's own `base` delay; a delay a site's Crawl-delay or the operator raised is kept.
pub fn random_wait(delay: Duration, base: Duration, unit: f64) -> Duration {
    match delay == base {
        true => delay.mul_f64(0.5 + unit.clamp(0.0, 1.0)),
        false => delay,
    }
}

/// How long to wait before retry number `attempt` (1-based) of a failed fetch: doubling from
/// `base`, capped at five minutes.
pub fn retry_backoff(base: Duration, attempt: u32) -> Duration {
    let factor = 1u32 << attempt.saturating_sub(1).min(10);
    base.saturating_mul(factor).min(Duration::from_secs(300))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_slow_fetch_rests_in_proportion_up_to_the_ceiling() {
        let max = Duration::from_secs(30);
        assert_eq!(in_proportion(MS(400), 0.0, max), Duration::ZERO);
        assert_eq!(in_proportion(MS(400), 5.0, max), MS(2000));
        assert_eq!(in_proportion(MS(400), 0.5, max), MS(200));
        assert_eq!(in_proportion(Duration::from_secs(20), 5.0, max), max);
    }

    #[test]
    fn a_random_wait_spans_half_to_one_and_a_half_of_the_crawls_delay_only() {
        assert_eq!(random_wait(MS(1000), MS(1000), 0.0), MS(500));
        assert_eq!(random_wait(MS(1000), MS(1000), 0.5), MS(1000));
        assert_eq!(random_wait(MS(1000), MS(1000), 0.999), MS(1499));
        // A robots.txt Crawl-delay (or the operator) set this host's delay: kept exact.
        assert_eq!(random_wait(MS(2500), MS(1000), 0.0), MS(2500));
    }

    #[test]
    fn crawl_delay_raises_but_never_lowers_or_exceeds_max() {
        let max = Duration::from_secs(30);
        assert_eq!(host_delay(MS(100), None, max), MS(100));
        assert_eq!(host_delay(MS(100), Some(2.5), max), MS(2500));
        assert_eq!(host_delay(MS(100), Some(0.01), max), MS(100));
        assert_eq!(host_delay(MS(100), Some(3600.0), max), max);
        assert_eq!(host_delay(MS(100), Some(f32::NAN), max), MS(100));
        assert_eq!(host_delay(MS(100), Some(-5.0), max), MS(100));
        // A configured delay above --max-delay is the user's explicit choice and wins.
        assert_eq!(
            host_delay(Duration::from_secs(60), Some(1.0), max),
            Duration::from_secs(60)
        );
    }

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(retry_backoff(MS(500), 1), MS(500));
        assert_eq!(retry_backoff(MS(500), 2), MS(1000));
        assert_eq!(retry_backoff(MS(500), 3), MS(2000));
        assert_eq!(
            retry_backoff(Duration::from_secs(10), 40),
            Duration::from_secs(300)
        );
    }
}
