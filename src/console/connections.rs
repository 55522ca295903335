//! The console's open connections, at most [`MAX_CONNECTIONS`]. When all are taken, a new
//! connection takes the place of the oldest one that is not answering a request (waiting for
//! a request head, or kept alive between requests), rather than being dropped: a client
//! without the token that holds every connection with heads it never finishes (10 s each,
//! reconnecting at once) shut the operator out, Pause and Stop included (found by an
//! exploratory run: 0 of 59 of the operator's requests answered in 30 s).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::task::AbortHandle;

/// Most connections served at once.
pub const MAX_CONNECTIONS: usize = 32;

/// One connection's task, and whether it is answering a request now.
struct Open {
    task: AbortHandle,
    answering: Arc<AtomicBool>,
}

/// The open connections, oldest first.
#[derive(Default)]
pub struct Connections {
    open: Vec<Open>,
}

impl Connections {
    /// Makes room for one more connection: forgets those that ended, and when all are taken
    /// ends the oldest one not answering a request. False when every one is answering.
    pub fn make_room(&mut self) -> bool {
        self.open.retain(|c| !c.task.is_finished());
        if self.open.len() < MAX_CONNECTIONS {
            return true;
        }
        let Some(at) = self
            .open
            .iter()
            .position(|c| !c.answering.load(Ordering::Relaxed))
        else {
            return false;
        };
        self.open.remove(at).task.abort();
        true
    }

    /// Notes a connection's task; `answering` is set while it answers a request.
    pub fn add(&mut self, task: AbortHandle, answering: Arc<AtomicBool>) {
        self.open.push(Open { task, answering });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_set_ends_its_oldest_idle_connection() {
        let mut set = Connections::default();
        let mut flags = Vec::new();
        let mut tasks = Vec::new();
        for i in 0..MAX_CONNECTIONS {
            assert!(set.make_room());
            let task = tokio::spawn(std::future::pending::<()>());
            let answering = Arc::new(AtomicBool::new(i == 0));
            set.add(task.abort_handle(), answering.clone());
            flags.push(answering);
            tasks.push(task);
        }
        // The first is answering: the second, the oldest idle one, makes room.
        assert!(set.make_room());
        assert!(tasks.remove(1).await.unwrap_err().is_cancelled());
        assert!(!tasks[0].is_finished());
        // All answering: no room, nothing ended.
        set.add(
            tokio::spawn(std::future::pending::<()>()).abort_handle(),
            Arc::new(AtomicBool::new(true)),
        );
        for f in &flags {
            f.store(true, Ordering::Relaxed);
        }
        assert!(!set.make_room());
    }
}
