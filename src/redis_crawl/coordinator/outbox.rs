//! Discovered URLs on their way to Redis. The outbox goes out in the background
//! (`background.rs`), one `admit` call per shard, all at once, while the crawl loop goes on:
//! awaited in the loop, these calls held it for 20-90 ms per step on a loaded machine. The replies
//! are applied at the next step (held hosts with new work are refilled, duplicates counted); a
//! save point waits for a send under way and sends the rest itself, since a page is
//! acknowledged only once what it found is in Redis.

use std::collections::HashMap;
use std::time::Instant;

use redis::{RedisError, RedisResult};

use super::background::{spawn, take_finished, Pending};
use super::{Coordinator, SyncReport, CLAIM_EVERY};
use crate::redis_crawl::lease_book::{Outgoing, OutgoingKind};

/// One send: each shard's URLs with Redis's answer for them (1 queued, 0 seen before).
type Replies = Vec<(Vec<Outgoing>, RedisResult<Vec<i64>>)>;

/// A send under way.
pub(super) type Sending = Pending<Replies>;

impl Coordinator {
    /// True when no URL waits to be sent and no send is under way.
    pub(super) fn all_sent(&self) -> bool {
        self.sending.is_none() && !self.book().has_outbox()
    }

    /// Starts sending the outbox unless a send is under way or it is empty.
    pub(super) fn start_send(&mut self) {
        if self.sending.is_some() {
            return;
        }
        let outbox = self.book().take_outbox();
        if outbox.is_empty() {
            return;
        }
        let mut by_shard: HashMap<u32, Vec<Outgoing>> = HashMap::new();
        for o in outbox {
            by_shard
                .entry(self.keys.shard_of(&o.host))
                .or_default()
                .push(o);
        }
        let (redis, scripts, keys) = (self.redis.clone(), self.scripts.clone(), self.keys.clone());
        let finished = self.finished.clone();
        let ranked = self.ranked_arg();
        self.sending = Some(spawn(Some(finished), async move {
            let by_shard: Vec<(u32, Vec<Outgoing>)> = by_shard.into_iter().collect();
            let calls: Vec<_> = by_shard
                .iter()
                .map(|(k, links)| {
                    let mut call = scripts.admit.key(keys.ready(*k));
                    call.arg(keys.shard(*k)).arg(ranked);
                    for o in links {
                        call.arg(&o.host);
                        match o.kind {
                            OutgoingKind::Admit => call.arg(&o.fp[..]),
                            OutgoingKind::Backlinks => call.arg("u"),
                            OutgoingKind::HostBacklinks => call.arg("h"),
                        };
                        call.arg(&o.entry).arg(o.rank);
                    }
                    call
                })
                .collect();
            let replies = redis.invoke_all::<Vec<i64>>(&calls).await;
            drop(calls);
            by_shard
                .into_iter()
                .map(|(_, links)| links)
                .zip(replies)
                .collect()
        }));
    }

    /// Applies the replies of a send that has finished (with `wait`, of one under way). URLs
    /// whose call failed go back to the outbox (admitting again is harmless: the seen set
    /// answers "duplicate"), and the failure is returned.
    pub(super) async fn collect_sent(
        &mut self,
        report: &mut SyncReport,
        wait: bool,
    ) -> Result<(), RedisError> {
        let Some(replies) =
            take_finished(&mut self.sending, wait, "sending discovered URLs to Redis").await
        else {
            return Ok(());
        };
        let mut unsent = Vec::new();
        let mut failure = None;
        for (links, reply) in replies {
            match reply {
                Ok(added) => {
                    for (o, added) in links.iter().zip(added) {
                        if added < 0 {
                            // A backlink count, not a URL.
                        } else if added == 0 {
                            report.duplicates += 1;
                        } else if self.held.contains_key(&o.host) {
                            self.dirty.insert(o.host.clone());
                        } else if self.claim_every > CLAIM_EVERY {
                            // A host nobody may hold has work now: look again soon.
                            self.claim_every = CLAIM_EVERY;
                            self.next_claim = self.next_claim.min(Instant::now() + CLAIM_EVERY);
                        }
                    }
                }
                Err(e) => {
                    unsent.extend(links);
                    failure.get_or_insert(e);
                }
            }
        }
        match failure {
            None => Ok(()),
            Some(e) => {
                self.book().restore_outbox(unsent);
                Err(e)
            }
        }
    }

    /// Sends every discovered URL now and applies the replies (save points, leaving).
    pub(super) async fn send_outbox(&mut self, report: &mut SyncReport) -> Result<(), RedisError> {
        self.collect_sent(report, true).await?;
        self.start_send();
        self.collect_sent(report, true).await
    }
}
