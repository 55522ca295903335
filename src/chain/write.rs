//! Stage 5, write: hands a capture's finished gzip members to the single WARC writer and waits
//! until they are in the file. A job counts as done only then, which crash recovery relies on;
//! awaiting the bounded channel is also the backpressure that keeps a slow disk from growing
//! memory.

use tokio::sync::mpsc;

use crate::spool::Spooled;
use crate::warc::{Batch, Producers};

/// The writer is gone (it stopped at an output error): the crawl must stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the WARC writer has stopped")]
pub struct OutputClosed;

/// Sends `members` to the writer and waits for them to be written. `producers` wakes a
/// lingering writer once enough batches wait (`warc/intake.rs`).
pub async fn write(
    writer: &mpsc::Sender<Batch>,
    producers: &Producers,
    members: Vec<Spooled>,
) -> Result<(), OutputClosed> {
    let (batch, written) = Batch::acknowledged(members);
    writer.send(batch).await.map_err(|_| OutputClosed)?;
    producers.sent(writer);
    written.await.map_err(|_| OutputClosed)
}
