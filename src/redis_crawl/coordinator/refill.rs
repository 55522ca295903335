//! Refilling held hosts that ran dry, in the background. At each step the held hosts with news
//! (URLs admitted for them, or pages acknowledged) that have nothing left here are asked for
//! more in one batch of `refill` calls sent at once, while the crawl loop goes on; the answers
//! are applied at the next step: more URLs, "busy" (the rest is not acknowledged yet: an early
//! save point frees it), released (nothing left anywhere), or lost to another worker. Awaited
//! in the loop, the batch held it up to ~50 ms per step on a loaded machine (`background.rs`).
//! A call may have been run by Redis with its answer lost on the way (and a cluster connection
//! sends a call again by itself after a dropped connection): each refill says how many of the
//! host's entries the worker knows to be in flight, Redis answers with all of them when it has
//! more, and the worker keeps those it lacks.

use std::time::Instant;

use redis::{RedisError, RedisResult, Value};

use super::background::{spawn, take_finished, Pending};
use super::{Coordinator, SyncReport, WorkerStats, BATCH};
use crate::frontier::Frontier;
use crate::redis_crawl::replies::{array, int, parse_entries, text};

/// A batch under way: each host asked, with Redis's answer.
pub(super) type Refilling = Pending<Vec<(String, RedisResult<Value>)>>;

impl Coordinator {
    /// Starts refilling the held hosts with news that ran dry, unless a batch is under way.
    pub(super) fn start_refill(&mut self, frontier: &Frontier, stats: &WorkerStats<'_>) {
        if self.refilling.is_some() {
            return;
        }
        let now = Instant::now();
        let candidates: Vec<String> = self
            .dirty
            .iter()
            .filter(|h| frontier.is_idle(h))
            .cloned()
            .collect();
        let mut asked = Vec::with_capacity(candidates.len());
        for host in candidates {
            self.dirty.remove(&host);
            if let Some(&k) = self.held.get(&host) {
                asked.push((host, k));
            }
        }
        if asked.is_empty() {
            return;
        }
        // Held above the share: that many hosts that ran dry are given back, not refilled.
        let give_back = self.over_share();
        let args: Vec<_> = asked
            .into_iter()
            .enumerate()
            .map(|(i, (host, k))| {
                let wait = frontier.wait_of(&host, now).as_millis() as u64;
                let pages = self.pages_counted(&host, stats);
                let known = {
                    let book = self.book();
                    book.id_of(&host).map_or(0, |id| book.outstanding(id))
                };
                (host, k, wait, pages, i < give_back, known)
            })
            .collect();
        let (redis, scripts, keys) = (self.redis.clone(), self.scripts.clone(), self.keys.clone());
        let (token, cap, ranked) = (self.token.clone(), self.cap_arg(), self.ranked_arg());
        let finished = self.finished.clone();
        self.refilling = Some(spawn(Some(finished), async move {
            let calls: Vec<_> = args
                .iter()
                .map(|(host, k, wait, pages, give, known)| {
                    let mut call = scripts.refill.key(keys.ready(*k));
                    call.arg(keys.shard(*k))
                        .arg(&token)
                        .arg(host)
                        .arg(BATCH)
                        .arg(*wait)
                        .arg(cap)
                        .arg(*pages)
                        .arg(ranked)
                        .arg(i64::from(*give))
                        .arg(*known);
                    call
                })
                .collect();
            let replies = redis.invoke_all::<Value>(&calls).await;
            drop(calls);
            args.into_iter()
                .map(|(host, ..)| host)
                .zip(replies)
                .collect()
        }));
    }

    /// Applies the answers of a batch that has finished (with `wait`, of one under way). A
    /// host whose call failed is asked again at a later step, and the failure is returned.
    pub(super) async fn collect_refills(
        &mut self,
        frontier: &mut Frontier,
        report: &mut SyncReport,
        wait: bool,
    ) -> Result<(), RedisError> {
        let Some(answers) =
            take_finished(&mut self.refilling, wait, "refilling hosts from Redis").await
        else {
            return Ok(());
        };
        let mut failure = None;
        let mut lost = Vec::new();
        for (host, answer) in answers {
            let answer = match answer {
                Ok(answer) => answer,
                Err(e) => {
                    self.dirty.insert(host);
                    failure.get_or_insert(e);
                    continue;
                }
            };
            if !self.held.contains_key(&host) {
                // Let go meanwhile (the lease was lost, or the worker is leaving).
                continue;
            }
            let mut parts = array(answer).into_iter();
            match parts.next().and_then(text).as_deref() {
                Some("more") => {
                    let entries = parse_entries(parts.next());
                    report.host_quota += parts.next().and_then(int).unwrap_or(0);
                    let mut book = self.book();
                    // Entries in flight may come too: only those this worker lacks are new.
                    let n = book
                        .id_of(&host)
                        .map_or(0, |id| book.extend_missing(id, entries));
                    drop(book);
                    frontier.add_queued(&host, n as u64);
                    // Asked again once these have run: a full batch may leave more in Redis
                    // with no new URL to say so, and after a short one (the host's last,
                    // unless its pages find more) the "busy" answer calls for the early
                    // save point that lets the host go, rather than holding it to the next
                    // regular one (up to 5 s for nothing, at the end of every host).
                    self.dirty.insert(host);
                }
                Some("busy") => {
                    self.awaiting_ack.insert(host);
                }
                Some("released") => {
                    report.host_quota += parts.next().and_then(int).unwrap_or(0);
                    self.held.remove(&host);
                    self.forget(&host, frontier);
                }
                _ => lost.push(host),
            }
        }
        self.leases_lost(lost, frontier).await;
        failure.map_or(Ok(()), Err)
    }
}
