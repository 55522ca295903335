//! The operator's side of the loop: a command from this worker's console (applied to the
//! ledger or the loop, answered once a save point has made it durable, and, in a shared
//! crawl, sent to the other workers), a change another worker's console made, and the
//! console's view published after each.

use std::time::Instant;

use tokio::sync::oneshot;

use super::Dispatcher;
use crate::console::command::{Command, Reply};
use crate::crawl::console_link::{self, ConsoleLink, Effect, LoopState};
use crate::report::StopReason;
use crate::warc::WriterHandle;

/// Said of a shared crawl's change that Redis has not got yet.
const HELD_BACK: &str = "(on this worker only for now: Redis cannot be reached; the other \
workers get it once Redis answers, and it is lost if this worker stops before then)";

/// A console change's answer, held until a save point has made the change durable.
pub(super) type HeldReply = (oneshot::Sender<Reply>, Reply);

impl Dispatcher {
    /// Applies a console change another worker of the shared crawl made.
    pub(super) fn apply_shared_change(&mut self, json: &str) {
        let command = match serde_json::from_str::<Command>(json) {
            Ok(c) if console_link::crawl_wide(&c) => c,
            _ => {
                tracing::warn!(
                    "ignoring a shared console change this version does not know: {json}"
                );
                return;
            }
        };
        let (reply, effect) = console_link::apply(command, &mut self.ledger, Instant::now());
        match effect {
            Effect::Pause | Effect::Resume => {
                self.paused = effect == Effect::Pause;
                tracing::warn!(
                    "console of another worker: {}",
                    if self.paused { "paused" } else { "resumed" }
                );
            }
            _ => {
                if let Err(why) = reply {
                    tracing::debug!("a shared console change changed nothing here: {why}");
                }
            }
        }
    }

    /// Applies an operator's command from the console and answers it; returns the shutdown
    /// deadline when it began a stop.
    pub(super) fn command(
        &mut self,
        request: crate::console::Request,
        writer: &WriterHandle,
    ) -> Option<tokio::time::Instant> {
        // A change to what the crawl fetches is crawl state: answered once saved.
        let durable = !matches!(
            request.command,
            Command::Pause | Command::Resume | Command::Stop
        );
        let shared_change = self.shared.is_some() && console_link::crawl_wide(&request.command);
        let change = shared_change.then(|| request.command.clone());
        let (reply, effect) =
            console_link::apply(request.command, &mut self.ledger, Instant::now());
        if let (Some(change), Ok(_), Some(shared)) = (change, &reply, &mut self.shared) {
            if let Ok(json) = serde_json::to_string(&change) {
                shared.coordinator.share_change(json);
            }
        }
        let mut deadline = None;
        let reply = match effect {
            Effect::None => reply,
            Effect::Pause | Effect::Resume => {
                self.paused = effect == Effect::Pause;
                tracing::warn!(
                    "console: {}",
                    if self.paused { "paused" } else { "resumed" }
                );
                reply
            }
            Effect::Stop if matches!(self.stopping, None | Some(StopReason::TargetReached)) => {
                tracing::warn!(
                    "console: stop requested: finishing {} fetch(es) within {:?}",
                    self.in_flight,
                    self.rules.shutdown_timeout
                );
                deadline = Some(self.begin_stop(StopReason::Stopped));
                reply
            }
            Effect::Stop => Err("the crawl is stopping already".into()),
        };
        if durable && reply.is_ok() && self.stopping.is_none() {
            self.unsaved_changes.push((request.reply, reply));
        } else {
            // (While stopping, the final save point keeps the change.)
            let _ = request.reply.send(reply);
        }
        self.publish_console(writer);
        deadline
    }

    /// Makes the console changes applied since the last call durable with a save point, then
    /// answers them; so a change the operator saw accepted survives a crash (before, one made
    /// less than 5 s before a kill -9 was lost, a seed with it). Returns true when it saved.
    pub(super) async fn save_changes(&mut self, writer: &WriterHandle) -> bool {
        if self.unsaved_changes.is_empty() {
            return false;
        }
        self.save_point(writer).await;
        let failed = self.state_error.as_ref().map(ToString::to_string);
        // In a shared crawl a change is saved once Redis has it.
        let held_back = self
            .shared
            .as_ref()
            .is_some_and(|s| s.coordinator.changes_held_back());
        for (to, reply) in self.unsaved_changes.drain(..) {
            let reply = match &failed {
                Some(e) => Err(format!(
                    "applied, but the crawl state could not be saved: {e}"
                )),
                None if held_back => reply.map(|done| format!("{done} {HELD_BACK}")),
                None => reply,
            };
            let _ = to.send(reply);
        }
        true
    }

    /// Publishes the console's view now.
    pub(super) fn publish_console(&mut self, writer: &WriterHandle) {
        let state = if self.stopping.is_some() {
            "stopping"
        } else if self.paused {
            "paused"
        } else if self.disk.is_low() {
            "disk-low"
        } else {
            "running"
        };
        if let Some(console) = &mut self.console {
            console.publish(
                &self.ledger,
                writer,
                LoopState {
                    crawl_id: &self.rules.session.crawl_id,
                    started: &self.started_at,
                    state,
                    in_flight: self.in_flight,
                },
            );
        }
    }
}

/// The console's next command; never, without a console.
pub(super) async fn next_command(
    console: &mut Option<ConsoleLink>,
) -> Option<crate::console::Request> {
    match console {
        Some(c) => c.next_command().await,
        None => std::future::pending().await,
    }
}
