//! The values of wget's flags as wget reads them (`cli/wget_args.rs`): bare seconds with
//! `m`/`h`/`d`, `inf` and `0` as no limit, sizes in units of 1024, and `--prefer-family`'s
//! names.

use std::time::Duration;

use super::values::{parse_duration, parse_size};
use crate::fetch::Families;

/// `--level`: `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level(pub Option<u32>);

/// `--quota`: `None` is no quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota(pub Option<u64>);

fn is_inf(s: &str) -> bool {
    s.eq_ignore_ascii_case("inf") || s.eq_ignore_ascii_case("infinity")
}

pub(super) fn parse_level(s: &str) -> Result<Level, String> {
    let s = s.trim();
    if is_inf(s) {
        return Ok(Level(None));
    }
    match s.parse::<u32>() {
        Ok(0) => Ok(Level(None)),
        Ok(n) => Ok(Level(Some(n))),
        Err(_) => Err(format!(
            "{s:?} is not a depth: a number, or inf (0 and inf: no limit)"
        )),
    }
}

/// `s` cut into a number and the one letter after it, if any (`2m`, `10k`).
fn number_and_unit(s: &str) -> (&str, Option<char>) {
    match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&s[..i], Some(c.to_ascii_lowercase())),
        _ => (s, None),
    }
}

/// wget's `--wait`: seconds, with an optional `m`, `h` or `d`; trawl's durations (`250ms`) too.
pub(super) fn parse_wait(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, unit) = number_and_unit(s);
    let scale = match unit {
        None | Some('s') => 1.0,
        Some('m') => 60.0,
        Some('h') => 3600.0,
        Some('d') => 86_400.0,
        Some(_) => return parse_duration(s),
    };
    match number.parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 && n * scale <= 86_400.0 * 365.0 => {
            Ok(Duration::from_secs_f64(n * scale))
        }
        Ok(_) => Err(format!("{s:?} is not a wait of 0 seconds to a year")),
        Err(_) => parse_duration(s),
    }
}

pub(super) fn parse_tries(s: &str) -> Result<u32, String> {
    let s = s.trim();
    match s.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ if is_inf(s) || s == "0" => Err(
            "trawl retries a bounded number of times: give a number of tries (wget's default is 20)"
                .into(),
        ),
        _ => Err(format!("{s:?} is not a number of tries")),
    }
}

/// wget's `--quota`: bytes, or `k`/`m`/`g`/`t` in units of 1024 (as every size); `0` and
/// `inf` are no quota.
pub(super) fn parse_quota(s: &str) -> Result<Quota, String> {
    let s = s.trim();
    if is_inf(s) {
        return Ok(Quota(None));
    }
    parse_size(s).map(|n| Quota((n > 0).then_some(n)))
}

/// wget's `--prefer-family` (`IPv4`, `IPv6` or `none`, in any case).
pub(super) fn parse_family(s: &str) -> Result<Families, String> {
    match s.to_ascii_lowercase().as_str() {
        "ipv4" => Ok(Families::PreferIpv4),
        "ipv6" => Ok(Families::PreferIpv6),
        "none" => Ok(Families::Any),
        _ => Err(format!("{s:?}: IPv4, IPv6 or none")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wget_values_parse_with_wget_units_and_clear_errors() {
        assert_eq!(parse_wait("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_wait("0.25").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_wait("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_wait("1d").unwrap(), Duration::from_secs(86_400));
        assert_eq!(parse_wait("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_wait("-1").is_err());
        assert!(parse_wait("soon").is_err());
        assert_eq!(parse_quota("10k").unwrap(), Quota(Some(10 << 10)));
        assert_eq!(parse_quota("2G").unwrap(), Quota(Some(2 << 30)));
        assert_eq!(parse_quota("1t").unwrap(), Quota(Some(1 << 40)));
        assert_eq!(parse_quota("12345").unwrap(), Quota(Some(12345)));
        assert_eq!(parse_quota("10GB").unwrap(), Quota(Some(10_000_000_000)));
        assert_eq!(parse_quota("0").unwrap(), Quota(None));
        assert_eq!(parse_quota("inf").unwrap(), Quota(None));
        assert!(parse_quota("lots").is_err());
        assert!(parse_tries("inf").unwrap_err().contains("bounded"));
        assert!(parse_tries("0").is_err());
        assert_eq!(parse_tries("1").unwrap(), 1);
        assert!(parse_level("deep").is_err());
        assert_eq!(parse_family("IPv4").unwrap(), Families::PreferIpv4);
        assert_eq!(parse_family("ipv6").unwrap(), Families::PreferIpv6);
        assert_eq!(parse_family("none").unwrap(), Families::Any);
    }
}
