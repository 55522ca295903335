//! The robots.txt state machine of one origin (RFC 9309): the states, what a queued URL may
//! do in each, and the transition a robots.txt fetch result causes.
//!
//! 2xx: the rules apply. 4xx but 429: no rules, everything allowed. 429, 5xx or unreachable:
//! everything disallowed for now and retried later (after the server's `Retry-After` when it
//! asks for longer than the back-off), up to `--robots-attempts` times, then the origin is
//! given up. Redirects are followed up to [`MAX_ROBOTS_REDIRECTS`] hops, after which the file
//! counts as unavailable (like a 4xx). A fetch refused for a lasting reason (blocked address,
//! unknown host, bad certificate) gives the origin up at once.

use std::time::{Duration, Instant};

use url::Url;

use super::politeness::retry_backoff;
use super::robots_rules::{parsed_part, RobotsRules};

/// Redirect hops followed for robots.txt (RFC 9309 section 2.3.1.2: at least five).
pub const MAX_ROBOTS_REDIRECTS: u32 = 5;
/// How long a robots.txt is obeyed before it is fetched again (RFC 9309 section 2.4: a cached
/// copy SHOULD NOT be used for more than 24 hours; Heritrix refetches after 24 hours too).
pub const ROBOTS_MAX_AGE: Duration = Duration::from_secs(24 * 3600);
/// After a refetch that failed, how long the rules it had hold before the next try.
pub const ROBOTS_REFRESH_RETRY: Duration = Duration::from_secs(3600);

/// Fetch attempts for a robots.txt that is 429/5xx/unreachable before its origin is given up,
/// unless `--robots-attempts` says otherwise.
pub const MAX_ROBOTS_ATTEMPTS: u32 = 3;

/// What fetching robots.txt produced, as reported by the crawl loop.
#[derive(Debug)]
pub enum RobotsOutcome {
    /// A final response: the status and body.
    Fetched {
        /// HTTP status.
        status: u16,
        /// Body, de-chunked and decoded.
        body: Vec<u8>,
        /// The wait its `Retry-After` asks for (heeded on a 429 or 5xx).
        retry_after: Option<Duration>,
    },
    /// A 3xx with a usable Location.
    Redirect(url::Url),
    /// No HTTP response, for a reason that may pass (connection refused, timeout, reset).
    Unreachable,
    /// No HTTP response, for a reason that will not pass (address refused by the SSRF guard,
    /// unknown host, bad certificate, not HTTP): the origin is given up at once.
    Refused,
    /// Not attempted after all (the `--proxy` was down): fetched again after this wait, its
    /// attempts unchanged.
    Deferred(Duration),
}

impl RobotsOutcome {
    /// The outcome of an archived robots.txt response: a redirect, or the final status,
    /// body and `Retry-After` (a 3xx without a usable Location counts as missing, like a 404).
    pub fn of_response(
        status: u16,
        location: Option<url::Url>,
        body: Option<Vec<u8>>,
        retry_after: Option<Duration>,
    ) -> Self {
        match location {
            Some(to) => RobotsOutcome::Redirect(to),
            None if (300..400).contains(&status) => RobotsOutcome::Fetched {
                status: 404,
                body: Vec::new(),
                retry_after: None,
            },
            None => RobotsOutcome::Fetched {
                status,
                body: body.unwrap_or_default(),
                retry_after,
            },
        }
    }
}

/// Where an origin stands with its robots.txt.
#[derive(Debug)]
pub enum RobotsState {
    /// Not fetched yet.
    Unknown,
    /// A fetch is in flight (or waiting to follow a redirect).
    Fetching {
        /// Earlier failed attempts.
        attempts: u32,
    },
    /// Rules known.
    Known(RobotsRules),
    /// Rules known and being fetched again ([`ROBOTS_MAX_AGE`]): they hold until the new file
    /// comes, and go on holding if it does not come.
    Refreshing(RobotsRules),
    /// 5xx or unreachable: nothing may be fetched before `retry_at`.
    Unavailable {
        /// Failed attempts so far.
        attempts: u32,
        /// When to try again.
        retry_at: Instant,
    },
    /// Unavailable too many times: the origin's URLs are dropped.
    GaveUp,
}

/// What a queued URL of an origin may do now.
#[derive(Debug, PartialEq, Eq)]
pub enum Gate {
    /// The rules allow it: fetch it.
    Allowed,
    /// The rules disallow it: drop it.
    Denied,
    /// The origin was given up: drop it.
    GaveUp,
    /// Fetch the origin's robots.txt first; this is attempt number `.0` (0-based). The state is
    /// now `Fetching`.
    FetchRobots(u32),
    /// Keep it queued: robots.txt is being fetched, or may be retried at the given time.
    Wait(Option<Instant>),
}

/// When a robots.txt that failed or asked to wait is fetched again (`--robots-retry`,
/// `--robots-attempts`, and `--max-delay` for the server's `Retry-After`).
#[derive(Debug, Clone, Copy)]
pub struct RobotsRetry {
    /// The first wait; it doubles per attempt, up to 5 minutes.
    pub first: Duration,
    /// Attempts before the origin is given up.
    pub attempts: u32,
    /// The longest `Retry-After` obeyed: a longer one is cut to it.
    pub max_retry_after: Duration,
}

impl RobotsRetry {
    /// The wait after failed attempt number `attempt` (1-based): the back-off, or the
    /// server's `Retry-After` (up to `max_retry_after`) when that is longer.
    fn wait(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let asked = retry_after.unwrap_or_default().min(self.max_retry_after);
        retry_backoff(self.first, attempt).max(asked)
    }
}

/// What a robots.txt result changes.
#[derive(Debug)]
pub struct Transition {
    /// The origin's new state.
    pub state: RobotsState,
    /// Rules became known and should be saved with this text (`Some(None)`: allow everything).
    pub save: Option<Option<Vec<u8>>>,
    /// Rules were parsed from a 2xx body (their Crawl-delay applies to the host).
    pub parsed: bool,
    /// A redirect to follow next, with its hop count.
    pub follow: Option<(Url, u32)>,
}

impl RobotsState {
    /// The state of an origin not seen before.
    pub fn initial(obey_robots: bool) -> Self {
        if obey_robots {
            RobotsState::Unknown
        } else {
            RobotsState::Known(RobotsRules::allow_all())
        }
    }

    /// What `url` (of this origin) may do at `now`.
    pub fn gate(&mut self, url: &str, now: Instant) -> Gate {
        let attempts = match self {
            RobotsState::Known(rules) if rules.refresh_due(now) => {
                if let RobotsState::Known(old) = std::mem::replace(self, RobotsState::Unknown) {
                    *self = RobotsState::Refreshing(old);
                }
                return Gate::FetchRobots(0);
            }
            RobotsState::Known(rules) | RobotsState::Refreshing(rules) if rules.allows(url) => {
                return Gate::Allowed
            }
            RobotsState::Known(_) | RobotsState::Refreshing(_) => return Gate::Denied,
            RobotsState::GaveUp => return Gate::GaveUp,
            RobotsState::Fetching { .. } => return Gate::Wait(None),
            RobotsState::Unavailable { retry_at, .. } if now < *retry_at => {
                return Gate::Wait(Some(*retry_at))
            }
            RobotsState::Unavailable { attempts, .. } => *attempts,
            RobotsState::Unknown => 0,
        };
        *self = RobotsState::Fetching { attempts };
        Gate::FetchRobots(attempts)
    }

    /// Failed attempts so far of a fetch in progress.
    pub fn attempts(&self) -> u32 {
        match self {
            RobotsState::Fetching { attempts } => *attempts,
            _ => 0,
        }
    }
}

/// The transition caused by `outcome` of a robots.txt fetch that was `hops` redirects in,
/// after `attempts` earlier failed attempts. `agent` is our product token; failed fetches are
/// retried as `retry` says.
pub fn transition(
    outcome: RobotsOutcome,
    attempts: u32,
    hops: u32,
    agent: &str,
    retry: RobotsRetry,
    now: Instant,
) -> Transition {
    let settled = |state, save| Transition {
        state,
        save,
        parsed: false,
        follow: None,
    };
    match outcome {
        RobotsOutcome::Fetched { status, body, .. } if (200..300).contains(&status) => Transition {
            state: RobotsState::Known(
                RobotsRules::parse(agent, &body).refreshed_at(now + ROBOTS_MAX_AGE),
            ),
            save: Some(Some(parsed_part(&body).to_vec())),
            parsed: true,
            follow: None,
        },
        RobotsOutcome::Redirect(url) if hops < MAX_ROBOTS_REDIRECTS => Transition {
            state: RobotsState::Fetching { attempts },
            save: None,
            parsed: false,
            follow: Some((url, hops + 1)),
        },
        // Too many redirects or a 3xx without Location: "unavailable", i.e. like a 4xx.
        RobotsOutcome::Redirect(_) => settled(
            RobotsState::Known(RobotsRules::allow_all().refreshed_at(now + ROBOTS_MAX_AGE)),
            Some(None),
        ),
        // 429 asks the crawl to come back later, as a 5xx does (Google's reading): allowing
        // all would crawl what the rules, once the server answers, forbid.
        RobotsOutcome::Fetched { status, .. } if status < 500 && status != 429 => settled(
            RobotsState::Known(RobotsRules::allow_all().refreshed_at(now + ROBOTS_MAX_AGE)),
            Some(None),
        ),
        RobotsOutcome::Refused => settled(RobotsState::GaveUp, None),
        RobotsOutcome::Fetched { retry_after, .. } => {
            settled(unavailable(attempts + 1, retry, retry_after, now), None)
        }
        RobotsOutcome::Unreachable => settled(unavailable(attempts + 1, retry, None, now), None),
        RobotsOutcome::Deferred(wait) => settled(
            RobotsState::Unavailable {
                attempts,
                retry_at: now + wait,
            },
            None,
        ),
    }
}

/// The state after failed attempt number `attempts`: retried later, or given up.
fn unavailable(
    attempts: u32,
    retry: RobotsRetry,
    retry_after: Option<Duration>,
    now: Instant,
) -> RobotsState {
    if attempts >= retry.attempts {
        RobotsState::GaveUp
    } else {
        RobotsState::Unavailable {
            attempts,
            retry_at: now + retry.wait(attempts, retry_after),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);
    const RETRY: RobotsRetry = RobotsRetry {
        first: S,
        attempts: MAX_ROBOTS_ATTEMPTS,
        max_retry_after: Duration::from_secs(30),
    };

    fn fetched(status: u16, body: &[u8]) -> RobotsOutcome {
        RobotsOutcome::Fetched {
            status,
            body: body.to_vec(),
            retry_after: None,
        }
    }

    #[test]
    fn unknown_origins_fetch_robots_first_then_obey_the_rules() {
        let now = Instant::now();
        let mut state = RobotsState::initial(true);
        assert_eq!(state.gate("http://a.org/x", now), Gate::FetchRobots(0));
        assert_eq!(state.gate("http://a.org/y", now), Gate::Wait(None));
        let t = transition(
            fetched(200, b"User-agent: *\nDisallow: /x\n"),
            0,
            0,
            "trawl",
            RETRY,
            now,
        );
        assert!(t.parsed && t.save.is_some());
        let mut state = t.state;
        assert_eq!(state.gate("http://a.org/x", now), Gate::Denied);
        assert_eq!(state.gate("http://a.org/y", now), Gate::Allowed);
        assert_eq!(
            RobotsState::initial(false).gate("http://a.org/x", now),
            Gate::Allowed
        );
    }

    #[test]
    fn rules_are_fetched_again_after_a_day_and_hold_meanwhile() {
        let now = Instant::now();
        let t = transition(
            fetched(200, b"User-agent: *\nDisallow: /x\n"),
            0,
            0,
            "trawl",
            RETRY,
            now,
        );
        let mut state = t.state;
        let day = now + ROBOTS_MAX_AGE;
        assert_eq!(state.gate("http://a.org/y", day - S), Gate::Allowed);
        // Due: one URL waits for the fetch, the others go by the old rules meanwhile.
        assert_eq!(state.gate("http://a.org/y", day), Gate::FetchRobots(0));
        assert!(matches!(state, RobotsState::Refreshing(_)));
        assert_eq!(state.gate("http://a.org/x", day), Gate::Denied);
        assert_eq!(state.gate("http://a.org/y", day), Gate::Allowed);
        // A 4xx on the refetch allows all, and is itself fetched again a day later.
        let mut t = transition(fetched(404, b""), 0, 0, "trawl", RETRY, day);
        assert_eq!(t.state.gate("http://a.org/x", day), Gate::Allowed);
        assert_eq!(
            t.state.gate("http://a.org/x", day + ROBOTS_MAX_AGE),
            Gate::FetchRobots(0)
        );
        // Robots ignored: never fetched.
        let mut ignored = RobotsState::initial(false);
        assert_eq!(
            ignored.gate("http://a.org/x", day + ROBOTS_MAX_AGE),
            Gate::Allowed
        );
    }

    #[test]
    fn failures_back_off_then_give_up_and_4xx_allows_all() {
        let now = Instant::now();
        let t = transition(fetched(503, b""), 0, 0, "trawl", RETRY, now);
        let mut state = t.state;
        assert_eq!(state.gate("http://a.org/", now), Gate::Wait(Some(now + S)));
        assert_eq!(state.gate("http://a.org/", now + S), Gate::FetchRobots(1));
        let t = transition(fetched(429, b""), 0, 0, "trawl", RETRY, now);
        assert!(matches!(
            t.state,
            RobotsState::Unavailable { attempts: 1, .. }
        ));
        let t = transition(RobotsOutcome::Unreachable, 2, 0, "trawl", RETRY, now);
        assert!(matches!(t.state, RobotsState::GaveUp));
        let t = transition(RobotsOutcome::Refused, 0, 0, "trawl", RETRY, now);
        assert!(matches!(t.state, RobotsState::GaveUp));
        let mut t = transition(fetched(404, b""), 0, 0, "trawl", RETRY, now);
        assert_eq!(t.save, Some(None));
        assert_eq!(t.state.gate("http://a.org/x", now), Gate::Allowed);
    }

    #[test]
    fn a_retry_after_longer_than_the_back_off_is_waited_up_to_the_ceiling() {
        let now = Instant::now();
        let asked = |status, secs| RobotsOutcome::Fetched {
            status,
            body: Vec::new(),
            retry_after: Some(Duration::from_secs(secs)),
        };
        let retry_at =
            |outcome, attempts| match transition(outcome, attempts, 0, "t", RETRY, now).state {
                RobotsState::Unavailable { retry_at, .. } => retry_at - now,
                other => panic!("{other:?}"),
            };
        assert_eq!(retry_at(asked(503, 20), 0), Duration::from_secs(20));
        assert_eq!(retry_at(asked(429, 3600), 0), Duration::from_secs(30));
        // A shorter one than the back-off does not hurry the retry.
        assert_eq!(retry_at(asked(503, 0), 1), 2 * S);
        assert!(matches!(
            transition(asked(503, 20), 2, 0, "t", RETRY, now).state,
            RobotsState::GaveUp
        ));
    }

    #[test]
    fn redirects_are_followed_up_to_the_limit() {
        let now = Instant::now();
        let to = Url::parse("http://b.org/robots.txt").unwrap();
        let t = transition(
            RobotsOutcome::Redirect(to.clone()),
            1,
            0,
            "trawl",
            RETRY,
            now,
        );
        assert_eq!(t.follow, Some((to.clone(), 1)));
        assert!(matches!(t.state, RobotsState::Fetching { attempts: 1 }));
        let mut t = transition(
            RobotsOutcome::Redirect(to),
            0,
            MAX_ROBOTS_REDIRECTS,
            "trawl",
            RETRY,
            now,
        );
        assert!(t.follow.is_none());
        assert_eq!(t.state.gate("http://a.org/x", now), Gate::Allowed);
    }
}
