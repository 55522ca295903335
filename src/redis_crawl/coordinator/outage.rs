//! Redis outages, from the worker's side. While Redis cannot be reached the worker backs off
//! and says so; once its leases may have run out it starts nothing more on the hosts it held,
//! but keeps what they finished. When Redis answers again it first acknowledges that (as a
//! worker restarted with its id does from its WARC tail), keeps the hosts whose lease is still
//! its own, and for a while takes over no host whose lease ran out during the outage: its owner
//! is doing the same. So a Redis restart or failover within `--lease` refetches only what was
//! in flight, not every page archived since the last acknowledgement.

use std::time::{Duration, Instant};

use super::{Coordinator, WorkerStats};
use crate::frontier::Frontier;
use crate::redis_crawl::patience::is_transient;

/// Longest wait between retries while Redis is unreachable: a worker finds Redis back within
/// a second, whether it holds hosts (their owner must be back soon after Redis) or not (it
/// waited up to 10 s until 2026-11-28). A try costs a `PING` or two, and the log says so
/// only every [`REMINDER_EVERY`].
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// After an outage, how long no host is taken over from another worker: the owner needs up to
/// [`MAX_BACKOFF`] and a tick of the loop to see Redis again and acknowledge.
const TAKEOVER_GRACE: Duration = Duration::from_secs(3);
/// While an outage lasts, how often the log says so again (each retry in between is a debug
/// line): a Redis down for a night leaves some hundred lines, not one per second.
const REMINDER_EVERY: Duration = Duration::from_secs(30);

/// How long a probe waits for a reconnect its first call started.
const PROBE_AGAIN: Duration = Duration::from_millis(50);
/// How long a probe's `PING` may take.
const PROBE_TIMEOUT: Duration = Duration::from_millis(250);

/// An outage under way: since when, when to try again and the current backoff, and when the
/// log last said so.
#[derive(Debug, Clone, Copy)]
pub(super) struct Outage {
    pub(super) since: Instant,
    pub(super) retry_at: Instant,
    backoff: Duration,
    said: Instant,
}

impl Coordinator {
    /// A Redis call failed: retry later, and suspend the held hosts once their leases may have
    /// run out.
    pub(super) fn unreachable(&mut self, e: redis::RedisError, frontier: &mut Frontier) {
        let now = Instant::now();
        let hint = if e.code() == Some("OOM") {
            " (Redis is at its maxmemory: raise it or free memory; the crawl goes on once Redis \
             accepts writes)"
        } else {
            ""
        };
        match &mut self.outage {
            None => {
                let backoff = Duration::from_millis(250);
                self.outage = Some(Outage {
                    since: now,
                    retry_at: now + backoff,
                    backoff,
                    said: now,
                });
                tracing::warn!(
                    "Redis unreachable or failing ({e}){hint}: pausing the shared crawl, retrying \
                     in {:.1}s",
                    backoff.as_secs_f64()
                );
            }
            Some(outage) => {
                outage.backoff = (outage.backoff * 2).min(MAX_BACKOFF);
                outage.retry_at = now + outage.backoff;
                if now >= outage.said + REMINDER_EVERY {
                    outage.said = now;
                    tracing::warn!(
                        "Redis unreachable or failing for {:.0}s ({e}){hint}: the shared crawl \
                         stays paused, retrying",
                        (now - outage.since).as_secs_f64()
                    );
                } else {
                    tracing::debug!(
                        "Redis still failing ({e}): retrying in {:?}",
                        outage.backoff
                    );
                }
            }
        }
        self.expire_leases(frontier, now);
    }

    /// Whether Redis answers, tried at each retry of an outage before the step. The connection
    /// reconnects by itself, but once a reconnect has failed (Redis still down) the next call
    /// only fails and starts another: asked again a moment later, the call gets the new
    /// connection. Without it a worker found Redis back one retry late (2.5 and 4.5 s after a
    /// restart, measured). A `PING` waits [`PROBE_TIMEOUT`] at most, not the calls' 5 s: a
    /// retry against a Redis that has stopped answering (stalled, or behind a network that
    /// drops packets) costs the crawl loop a quarter of a second.
    pub(super) async fn probe(&mut self) -> Result<(), redis::RedisError> {
        match self.ping().await {
            Err(e) if is_transient(&e) => {
                tokio::time::sleep(PROBE_AGAIN).await;
                self.ping().await
            }
            other => other,
        }
    }

    async fn ping(&mut self) -> Result<(), redis::RedisError> {
        let cmd = redis::cmd("PING");
        tokio::time::timeout(PROBE_TIMEOUT, cmd.query_async::<()>(&mut self.redis))
            .await
            .unwrap_or_else(|_| {
                Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer to PING").into())
            })
    }

    /// Starts nothing more on the held hosts once their leases may have run out (no renewal got
    /// through): another worker may take them. What they finished stays, to be acknowledged.
    pub(super) fn expire_leases(&mut self, frontier: &mut Frontier, now: Instant) {
        let margin = self.lease / 5;
        if self.suspended || self.held.is_empty() || now < self.last_renew + self.lease - margin {
            return;
        }
        tracing::warn!(
            "leases of {} host(s) may have expired: no new fetch on them until Redis answers",
            self.held.len()
        );
        for host in self.held.keys() {
            frontier.suspend(host);
        }
        self.suspended = true;
    }

    /// The first step after an outage: no takeovers for a while; the held hosts' finished
    /// pages acknowledged (which renews their leases), and the hosts still ours resumed.
    pub(super) async fn recover(
        &mut self,
        frontier: &mut Frontier,
        stats: &WorkerStats<'_>,
    ) -> Result<(), redis::RedisError> {
        // A Redis that came back without the crawl's state gets nothing written to it.
        self.check_record().await?;
        if self.state_lost() {
            return Ok(());
        }
        self.no_takeover_until = Some(Instant::now() + TAKEOVER_GRACE);
        if !self.suspended {
            return Ok(());
        }
        let before = self.held.len();
        self.try_save(frontier, stats, None).await?;
        for host in self.held.keys() {
            let id = self.book().id_of(host);
            let buffered = id.map_or(0, |id| self.book().buffered(id));
            frontier.resume(host, buffered as u64);
        }
        self.suspended = false;
        tracing::warn!(
            "acknowledged the pages archived during the outage: {} of {before} host(s) still held",
            self.held.len()
        );
        Ok(())
    }

    /// True when hosts whose lease ran out may be taken over (not right after an outage).
    pub(super) fn may_take_over(&self, now: Instant) -> bool {
        self.no_takeover_until.is_none_or(|until| now >= until)
    }
}
