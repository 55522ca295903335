//! Where a response body's bytes come from: hyper, which frames the body by its
//! Content-Length, its chunks or the close, or the socket itself, read to its close, for a
//! response whose Content-Length is no number.
//!
//! hyper refuses a head with a Content-Length such as `-1`, `ten` or an empty value, as RFC
//! 9112 section 6.3 tells a user agent to; headless Chromium shows such a page, reading its
//! body to the close (GNU wget does so for `-1`, and reads `ten` or an empty value as 0 bytes;
//! checked on a loopback server, docs/DESIGN.md). trawl reads as Chromium does: the fetch takes the socket back
//! from hyper and reads on (through the recorder, so the tape keeps every byte as received),
//! and the response is archived as it came. Values that are numbers and differ still refuse
//! the head (Chromium and curl refuse it too: which length is right cannot be known).
//!
//! A chunked body whose framing hyper refuses part way (chunk lines that end in a bare LF) is
//! read on the same way, to its last chunk as trawl frames chunks.

use http::StatusCode;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::io::AsyncReadExt;

use super::connection::{Connection, RecordedIo};
use super::error::{self, FetchError};
use super::tape::SharedTape;
use crate::fault::FaultKind;
use crate::http_message::{chunked, parse_final_head};

/// The most bytes one read of a body taken back from hyper asks for (the tape keeps them; this
/// buffer only receives its copy).
const READ_PIECE: usize = 64 << 10;

/// The source of one response's body.
pub(super) enum BodySource {
    /// hyper's body of a head it accepted.
    Framed {
        /// The body.
        body: Incoming,
        /// The head's status, as hyper read it.
        status: StatusCode,
    },
    /// The socket of a head hyper refused for its Content-Length, read to its close, or of a
    /// chunked body whose framing hyper refused part way, read to its end as trawl frames it.
    ToClose {
        /// The socket, with its recorder.
        io: RecordedIo,
        /// The exchange's tape.
        tape: SharedTape,
        /// Where the body starts on the tape.
        body_start: usize,
        /// Body bytes already reported.
        counted: usize,
        /// What a read copies into.
        piece: Vec<u8>,
        /// The head's status, as trawl read it.
        status: StatusCode,
        /// For a chunked body: where the search for its end goes on (`chunked::progress`);
        /// `None` reads to the close.
        chunks: Option<usize>,
    },
}

/// What the next wait for a body brought.
pub(super) enum Step {
    /// This many more bytes of the body (decoded from its chunks, if chunked).
    Data(usize),
    /// The body ended (its framing says so, or the connection closed).
    End,
    /// Reading failed; the body is cut here.
    Failed(FaultKind),
}

impl BodySource {
    /// The body of a response hyper accepted.
    pub(super) fn framed(response: hyper::Response<Incoming>) -> Self {
        BodySource::Framed {
            status: response.status(),
            body: response.into_body(),
        }
    }

    /// The rest of a response whose head hyper refused with `error`, read from the socket to
    /// its close, when its only fault is a Content-Length that is no number; `None` otherwise.
    pub(super) fn to_close(
        error: &FetchError,
        conn: &mut Connection,
        max_headers: usize,
        max_interim: usize,
    ) -> Option<Self> {
        if error.kind() != FaultKind::InvalidContentLength {
            return None;
        }
        let (interim, head) = conn
            .tape
            .with_received(|r| parse_final_head(r, max_headers, max_interim))?;
        if !head.length_is_unreadable() {
            return None;
        }
        let status = StatusCode::from_u16(head.status).ok()?;
        Some(BodySource::ToClose {
            io: conn.take_refused()?,
            tape: conn.tape.clone(),
            body_start: interim + head.len,
            counted: 0,
            piece: Vec::new(),
            status,
            chunks: None,
        })
    }

    /// The rest of a chunked body whose framing hyper refused part way (`fault`), read from
    /// the socket as trawl frames chunks (lines may end in a bare LF, as Chromium, curl, wget and
    /// warcio read them) until its last chunk, or the close; `None` for any other fault. hyper
    /// stops at the first such line, so what was archived of the page hung on how much had
    /// arrived by then: all of it when the server wrote the page at once, its first chunk
    /// when it wrote piece by piece.
    pub(super) fn after_bad_chunks(
        &self,
        fault: FaultKind,
        conn: &mut Connection,
        body_start: usize,
    ) -> Option<Self> {
        let BodySource::Framed { status, .. } = self else {
            return None;
        };
        if fault != FaultKind::BadChunked {
            return None;
        }
        let counted = conn.tape.received_len().saturating_sub(body_start);
        Some(BodySource::ToClose {
            io: conn.take_refused()?,
            tape: conn.tape.clone(),
            body_start,
            counted,
            piece: Vec::new(),
            status: *status,
            chunks: Some(0),
        })
    }

    /// The error of a response whose head could not be read back from the tape.
    pub(super) fn unreadable_head(&self) -> FetchError {
        match self {
            BodySource::Framed { status, .. } | BodySource::ToClose { status, .. } => {
                FetchError::unreadable_head(*status)
            }
        }
    }

    /// Waits for more of the body (hyper's, while driving its connection `conn`).
    pub(super) async fn next(&mut self, conn: &mut Connection) -> Step {
        match self {
            BodySource::Framed { body, .. } => loop {
                match conn.drive(body.frame()).await {
                    None => return Step::End,
                    Some(Err(e)) => return Step::Failed(error::body_fault(&e)),
                    Some(Ok(frame)) => {
                        if let Some(data) = frame.data_ref() {
                            return Step::Data(data.len());
                        }
                    }
                }
            },
            BodySource::ToClose {
                io,
                tape,
                body_start,
                counted,
                piece,
                chunks,
                ..
            } => loop {
                // What hyper read past the head before refusing it is on the tape already.
                let on_tape = tape.received_len().saturating_sub(*body_start);
                if on_tape > *counted {
                    let more = on_tape - *counted;
                    *counted = on_tape;
                    return Step::Data(more);
                }
                if let Some(from) = *chunks {
                    // Bytes moved to a spool file are not looked at again: such a body is
                    // read to the close.
                    let progress = tape.with_received(|r| {
                        r.get(*body_start..)
                            .map(|body| chunked::progress(body, from))
                    });
                    *chunks = match progress {
                        Some(chunked::Progress::Ended(_)) => return Step::End,
                        Some(chunked::Progress::Arriving(at)) => Some(at),
                        Some(chunked::Progress::Broken) => {
                            return Step::Failed(FaultKind::BadChunked)
                        }
                        None => None,
                    };
                }
                piece.resize(READ_PIECE, 0);
                match io.inner_mut().read(piece).await {
                    // Closed before the last chunk: cut short, as hyper reads it.
                    Ok(0) if chunks.is_some() => return Step::Failed(FaultKind::BodyIncomplete),
                    Ok(0) => return Step::End,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                        return Step::Failed(FaultKind::BodyReset)
                    }
                    Err(_) => return Step::Failed(FaultKind::BodyError),
                }
            },
        }
    }
}
