//! Stage 5, write: hands a capture's records to the single WARC writer, as gzip members or
//! uncompressed for the writer to compress while it keeps up (`warc/deferral.rs`), and waits
//! until they are in the file. A job counts as done only then, which crash recovery relies on;
//! awaiting the bounded channel is also the backpressure that keeps a slow disk from growing
//! memory.

use tokio::sync::mpsc;

use super::build_records::BuiltRecords;
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
    members: Vec<Vec<u8>>,
) -> Result<(), OutputClosed> {
    send(writer, producers, Batch::acknowledged(members, None)).await
}

/// Sends `built`'s records to the writer and waits for them to be written: uncompressed when
/// they are and the writer has room for them in its [`Deferral`](crate::warc::Deferral),
/// otherwise compressed here at `level` first.
pub async fn write_records(
    writer: &mpsc::Sender<Batch>,
    producers: &Producers,
    built: BuiltRecords,
    level: u32,
) -> Result<(), OutputClosed> {
    let batch = match built.raw && producers.deferral().claim(built.bytes()) {
        true => Batch::acknowledged(built.records, Some(level)),
        false => Batch::acknowledged(built.into_members(level), None),
    };
    send(writer, producers, batch).await
}

async fn send(
    writer: &mpsc::Sender<Batch>,
    producers: &Producers,
    (batch, written): (Batch, tokio::sync::oneshot::Receiver<()>),
) -> Result<(), OutputClosed> {
    writer.send(batch).await.map_err(|_| OutputClosed)?;
    producers.sent(writer);
    written.await.map_err(|_| OutputClosed)
}
