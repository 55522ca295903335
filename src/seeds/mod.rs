//! Seed parsing: one URL or bare host per line, with line-numbered problems; and the seeds
//! file read as a stream, a batch of lines at a time, from where an earlier run stopped.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use url::Url;

use crate::url_rules::canonicalize;

/// A usable seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// The canonical seed URL.
    pub url: Url,
    /// True for bare hosts: tried as `https://HOST/` first, then `http://HOST/` if TLS cannot be
    /// established. A bare host with a port other than 443 and 8443 (`intranet:8080`) is
    /// `http://` alone, as wget and curl read a URL without a scheme: such ports serve plain
    /// HTTP, and a TLS handshake sent to one can wait out `--connect-timeout`.
    pub http_fallback: bool,
    /// The seed as given held a user name or password, which its canonical URL does not
    /// (`--http-user` gives credentials).
    pub credentials: bool,
}

impl Seed {
    /// The socket addresses an IP-literal seed is fetched from (the SSRF guard allows them):
    /// its own, and port 80 too for a bare address without a port, which may fall back from
    /// https (443) to http (80); one with a port is fetched (or falls back, on 8443) on it.
    pub fn socket_addrs(&self) -> Vec<std::net::SocketAddr> {
        let ip: std::net::IpAddr = match self.url.host() {
            Some(url::Host::Ipv4(ip)) => ip.into(),
            Some(url::Host::Ipv6(ip)) => ip.into(),
            _ => return Vec::new(),
        };
        let mut ports = vec![self.url.port_or_known_default().unwrap_or(80)];
        if self.http_fallback && self.url.port().is_none() {
            ports.push(80);
        }
        ports
            .into_iter()
            .map(|p| std::net::SocketAddr::new(ip, p))
            .collect()
    }
}

/// A seed line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedProblem {
    /// 1-based line number (0 for command-line seeds).
    pub line: usize,
    /// The offending text.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl std::fmt::Display for SeedProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {:?}: {}", self.line, self.text, self.reason)
        } else {
            write!(f, "{:?}: {}", self.text, self.reason)
        }
    }
}

/// Ports a bare `host:port` seed is tried on with https first (443 is the default, so it reads
/// as no port); on any other port it is plain http.
const TLS_PORTS: [u16; 1] = [8443];

/// Parses one seed: a full http(s) URL, or a bare host (optionally with a path).
/// Whitespace inside the path or query is part of the URL (sent as `%20`), as GNU wget reads
/// the lines of a `-i` list; before the path (in a scheme or host) no URL can hold it.
pub fn parse_seed(text: &str) -> Result<Seed, String> {
    let text = text.trim();
    let authority = text.find("://").map_or(0, |i| i + 3);
    let path = text[authority..]
        .find(['/', '?', '#'])
        .map_or(text.len(), |i| authority + i);
    if text[..path].chars().any(char::is_whitespace) {
        return Err("contains whitespace".into());
    }
    let (candidate, http_fallback) = match text.split_once("://") {
        Some((scheme, _)) => {
            if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
                return Err(format!(
                    "unsupported scheme {scheme:?} (only http and https)"
                ));
            }
            (text.to_string(), false)
        }
        None => {
            // A bracketed IPv6 address (`[::1]`, `[::1]/p`) is a host; the URL parser checks it.
            if text.contains(':')
                && !text.starts_with('[')
                && text.parse::<std::net::SocketAddr>().is_err()
            {
                let (host, port) = text.split_once(':').unwrap_or((text, ""));
                let port_digits = port.split('/').next().unwrap_or("");
                if host.is_empty() || port_digits.parse::<u16>().is_err() {
                    return Err("not a URL or host name".into());
                }
            }
            (format!("https://{text}"), true)
        }
    };
    let mut url = Url::parse(&candidate).map_err(|e| format!("invalid URL: {e}"))?;
    let http_fallback = match url.port() {
        Some(port) if http_fallback && !TLS_PORTS.contains(&port) => {
            let _ = url.set_scheme("http");
            false
        }
        _ => http_fallback,
    };
    let host = url.host_str().unwrap_or("");
    if host.is_empty() {
        return Err("no host".into());
    }
    if http_fallback && url.domain().is_some() && !host.contains('.') && host != "localhost" {
        return Err("bare host has no dot; write a full URL if this is intended".into());
    }
    let credentials = !url.username().is_empty() || url.password().is_some();
    let url = canonicalize(&url).ok_or_else(|| "not a crawlable http(s) URL".to_string())?;
    Ok(Seed {
        url,
        http_fallback,
        credentials,
    })
}

/// A seed line's bytes as text. A line that is not UTF-8 (a list saved as Latin-1, say) has
/// each byte above 0x7F percent-encoded as it is, the URL GNU wget requests for it, where a
/// lossy reading would ask for U+FFFD instead (`/caf\xE9` is `/caf%E9`, not `/caf%EF%BF%BD`);
/// a line with NUL bytes is read lossily, to be named UTF-16 ([`parse_line`]).
fn line_text(line: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(line) {
        Ok(text) => text.into(),
        Err(_) if line.contains(&0) => String::from_utf8_lossy(line),
        Err(_) => crate::http_message::url_text(line).into(),
    }
}

/// Why a line with NUL bytes is refused.
const UTF16: &str = "holds NUL bytes: the file looks like UTF-16, and seeds are read as UTF-8 \
                     (convert it, e.g. iconv -f UTF-16 -t UTF-8)";

/// A seed line's verdict: `None` for a blank line or a `#` comment.
fn parse_line(
    number: usize,
    raw: &str,
    check: &dyn Fn(Seed) -> Result<Seed, String>,
) -> Option<Result<Seed, SeedProblem>> {
    if raw.contains('\0') {
        // A file saved as UTF-16 (spreadsheets' "Unicode text"): every other byte is NUL.
        let text: String = raw
            .chars()
            .filter(|c| !matches!(c, '\0' | '\u{fffd}'))
            .collect();
        let text = text.trim();
        return (!text.is_empty()).then(|| {
            Err(SeedProblem {
                line: number,
                text: text.chars().take(200).collect(),
                reason: UTF16.to_string(),
            })
        });
    }
    let line = raw.trim().trim_start_matches('\u{feff}');
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    Some(
        parse_seed(line)
            .and_then(check)
            .map_err(|reason| SeedProblem {
                line: number,
                text: line.chars().take(200).collect(),
                reason,
            }),
    )
}

/// Parses a whole seeds text: blank lines and `#` comments are skipped, bad lines reported
/// (the tests' reference for [`SeedReader`]). Each usable seed is passed through `check`.
#[cfg(test)]
pub fn parse_seed_lines(
    content: &str,
    check: &dyn Fn(Seed) -> Result<Seed, String>,
) -> (Vec<Seed>, Vec<SeedProblem>) {
    let mut seeds = Vec::new();
    let mut problems = Vec::new();
    for (index, raw) in content.lines().enumerate() {
        match parse_line(index + 1, raw, check) {
            Some(Ok(seed)) => seeds.push(seed),
            Some(Err(problem)) => problems.push(problem),
            None => {}
        }
    }
    (seeds, problems)
}

/// Where seeds come from with `--seeds`: a file, or standard input (`-`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeedSource {
    /// A file, read from the position an earlier run of the crawl reached.
    File(PathBuf),
    /// Standard input (`--seeds -`), after `head` (what was read of it already); a resumed
    /// crawl skips the lines it had read.
    Stdin {
        /// Bytes read before the crawl started (to know the input holds a usable seed).
        head: Vec<u8>,
    },
}

impl SeedSource {
    /// The source `--seeds ARG` names.
    pub fn from_arg(arg: &Path) -> Self {
        // wget's `-i /dev/stdin` too: a pipe there cannot be opened twice or sought.
        if arg == Path::new("-") || arg == Path::new("/dev/stdin") || arg == Path::new("/dev/fd/0")
        {
            SeedSource::Stdin { head: Vec::new() }
        } else {
            SeedSource::File(arg.to_path_buf())
        }
    }
}

impl std::fmt::Display for SeedSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SeedSource::File(p) => write!(f, "{}", p.display()),
            SeedSource::Stdin { .. } => f.write_str("standard input"),
        }
    }
}

/// How far the seeds file has been read: saved with the crawl state, so a resumed crawl goes
/// on from there (the frontier's seen set makes a seed read twice a no-op).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedPosition {
    /// Lines read.
    pub line: u64,
    /// Bytes read (where the next line starts, in a file).
    pub offset: u64,
    /// The whole source has been read.
    pub done: bool,
}

/// How far a seeds source was read (`--seeds`), and which: crawl state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSeeds {
    /// The source as named (a path, or standard input): another one is read from its start.
    pub source: String,
    /// Where reading stopped.
    pub position: SeedPosition,
    /// Socket addresses of the IP-literal seeds read, which the SSRF guard allows (their URLs
    /// may still be queued when the crawl resumes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed: Vec<std::net::SocketAddr>,
}

impl SavedSeeds {
    /// A file that grew since it was read to its end (a seed appended before the resume) is
    /// read on from there: it was not looked at again (found by an exploratory run).
    pub fn read_on_if_grown(&mut self, source: &SeedSource) {
        let grown = match source {
            SeedSource::File(path) => {
                std::fs::metadata(path).is_ok_and(|m| m.len() > self.position.offset)
            }
            SeedSource::Stdin { .. } => false,
        };
        self.position.done &= !grown;
    }
}

/// One batch of a seeds stream.
#[derive(Debug, Default)]
pub struct SeedBatch {
    /// Usable seeds, in file order.
    pub seeds: Vec<Seed>,
    /// Lines that could not be used.
    pub problems: Vec<SeedProblem>,
}

/// Longest seed line kept: the rest of a longer line is read and dropped (it is refused).
const MAX_LINE: usize = 64 * 1024;

/// A seeds file (or standard input) read a batch of lines at a time; memory does not grow with
/// its length.
pub struct SeedReader {
    input: Box<dyn BufRead + Send>,
    position: SeedPosition,
    line: Vec<u8>,
    /// Every byte read, when recording (see [`SeedReader::recording`]).
    record: Option<Vec<u8>>,
    /// Bytes in the input's buffer after the last line: read from the source, not used yet.
    unconsumed: usize,
}

impl SeedReader {
    /// Opens `source` at `from` (a file seeks to its offset; standard input skips its lines).
    pub fn open(source: &SeedSource, from: SeedPosition) -> io::Result<Self> {
        let mut reader = match source {
            SeedSource::File(path) => {
                // Looked at before it is opened: opening a FIFO waits for a writer, forever.
                if !std::fs::metadata(path)?.is_file() {
                    return Err(io::Error::other(
                        "not a regular file; give a pipe on standard input (--seeds -)",
                    ));
                }
                let mut file = File::open(path)?;
                let meta = file.metadata()?;
                if !meta.is_file() {
                    // A pipe (`<(cmd)`, a FIFO) is read once: the check at start would take
                    // what the crawl reads, and a resume could not find its place.
                    return Err(io::Error::other(
                        "not a regular file; give a pipe on standard input (--seeds -)",
                    ));
                }
                let len = meta.len();
                // A file shorter than what was read is another file: read it from the start.
                let from = if from.offset <= len {
                    from
                } else {
                    SeedPosition::default()
                };
                file.seek(SeekFrom::Start(from.offset))?;
                SeedReader {
                    input: Box::new(BufReader::with_capacity(256 * 1024, file)),
                    position: from,
                    line: Vec::new(),
                    record: None,
                    unconsumed: 0,
                }
            }
            SeedSource::Stdin { head } => SeedReader {
                input: Box::new(BufReader::with_capacity(
                    256 * 1024,
                    io::Cursor::new(head.clone()).chain(io::stdin()),
                )),
                position: SeedPosition {
                    done: from.done,
                    ..SeedPosition::default()
                },
                line: Vec::new(),
                record: None,
                unconsumed: 0,
            },
        };
        if let SeedSource::Stdin { .. } = source {
            while reader.position.line < from.line && reader.read_line()? {}
        }
        Ok(reader)
    }

    /// Keeps every byte read from now on (for [`SeedReader::into_read_bytes`]).
    pub fn recording(mut self) -> Self {
        self.record = Some(Vec::new());
        self
    }

    /// The bytes read while recording, and those read into the input's buffer after them
    /// (standard input cannot give them again: a pipe of 20,000 seeds lost its first 256 KiB
    /// but one line when only the recorded lines were kept).
    pub fn into_read_bytes(mut self) -> Vec<u8> {
        let mut bytes = self.record.take().unwrap_or_default();
        // A buffer that holds bytes gives them without reading the source again.
        if self.unconsumed > 0 {
            if let Ok(buffered) = self.input.fill_buf() {
                bytes.extend_from_slice(buffered);
            }
        }
        bytes
    }

    /// How far it has read.
    pub fn position(&self) -> SeedPosition {
        self.position
    }

    /// Reads one line into `self.line` (capped); false at the end.
    fn read_line(&mut self) -> io::Result<bool> {
        self.line.clear();
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                self.unconsumed = 0;
                return Ok(!self.line.is_empty());
            }
            let (take, end) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let room = MAX_LINE.saturating_sub(self.line.len());
            self.line.extend_from_slice(&buf[..take.min(room)]);
            if let Some(record) = &mut self.record {
                // Capped as the line is (what is past the cap is never read), line end kept.
                record.extend_from_slice(&buf[..take.min(room)]);
                if end && take > room {
                    record.push(b'\n');
                }
            }
            self.unconsumed = buf.len() - take;
            self.input.consume(take);
            self.position.offset += take as u64;
            if end {
                self.position.line += 1;
                return Ok(true);
            }
        }
    }

    /// Reads up to `lines` lines; each usable seed passes through `check`. Marks the position
    /// done at the end of the source.
    pub fn next_batch(
        &mut self,
        lines: usize,
        check: &dyn Fn(Seed) -> Result<Seed, String>,
    ) -> io::Result<SeedBatch> {
        let mut batch = SeedBatch::default();
        for _ in 0..lines {
            let before = self.position.line;
            if !self.read_line()? {
                self.position.done = true;
                break;
            }
            if self.position.line == before {
                // The last line had no newline.
                self.position.line += 1;
            }
            let text = line_text(&self.line);
            match parse_line(self.position.line as usize, &text, check) {
                Some(Ok(seed)) => batch.seeds.push(seed),
                Some(Err(problem)) => batch.problems.push(problem),
                None => {}
            }
        }
        Ok(batch)
    }
}

#[cfg(test)]
mod tests;
