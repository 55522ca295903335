//! What an operator can ask of a running crawl through the console, read from the request's
//! path and JSON body, with every size and count capped. The crawl loop applies a command
//! and answers with what it did.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

/// Most seeds one request may add.
pub const MAX_SEEDS_PER_REQUEST: usize = 1000;
/// Longest seed, pattern or host name accepted.
pub const MAX_TEXT: usize = 2048;
/// Longest delay that can be set.
pub const MAX_DELAY: Duration = Duration::from_secs(3600);

/// A change to the running crawl. Serialized (JSON) for the other workers of a shared crawl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    /// Start no new fetch until resumed (fetches running finish).
    Pause,
    /// Start fetching again.
    Resume,
    /// End the crawl as a stop signal does (resumable).
    Stop,
    /// Queue these seeds (and widen the scope to them).
    AddSeeds(Vec<String>),
    /// Stop URLs matching this regex, queued ones included.
    AddExclude(String),
    /// Lift an exclude pattern.
    RemoveExclude(String),
    /// Set the per-host delay.
    SetDelay(Duration),
    /// Drop a host's queue and keep it out (an exclude pattern for the host).
    DropHost(String),
}

/// What the crawl loop answers: a message for the operator, or why the command was refused.
pub type Reply = Result<String, String>;

/// A command on its way to the crawl loop, with the way back.
#[derive(Debug)]
pub struct Request {
    /// What to do.
    pub command: Command,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Reply>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Seeds {
    urls: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pattern {
    pattern: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Delay {
    ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostName {
    host: String,
}

/// The command a POST to `path` with `body` asks for; `Err` says what is wrong with it.
/// `None` when `path` is not a command.
pub fn parse(path: &str, body: &[u8]) -> Option<Result<Command, String>> {
    fn json<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, String> {
        serde_json::from_slice(body).map_err(|e| format!("bad JSON body: {e}"))
    }
    fn text(s: String, what: &str) -> Result<String, String> {
        if s.is_empty() || s.len() > MAX_TEXT {
            return Err(format!("{what} must be 1 to {MAX_TEXT} bytes"));
        }
        Ok(s)
    }
    let command = match path {
        "/api/pause" => Ok(Command::Pause),
        "/api/resume" => Ok(Command::Resume),
        "/api/stop" => Ok(Command::Stop),
        "/api/seeds" => json::<Seeds>(body).and_then(|s| {
            if s.urls.is_empty() || s.urls.len() > MAX_SEEDS_PER_REQUEST {
                return Err(format!("give 1 to {MAX_SEEDS_PER_REQUEST} urls"));
            }
            let urls: Result<Vec<String>, String> =
                s.urls.into_iter().map(|u| text(u, "a seed")).collect();
            urls.map(Command::AddSeeds)
        }),
        "/api/excludes/add" => json::<Pattern>(body)
            .and_then(|p| text(p.pattern, "the pattern").map(Command::AddExclude)),
        "/api/excludes/remove" => json::<Pattern>(body)
            .and_then(|p| text(p.pattern, "the pattern").map(Command::RemoveExclude)),
        "/api/delay" => json::<Delay>(body).and_then(|d| {
            let delay = Duration::from_millis(d.ms);
            if delay > MAX_DELAY {
                return Err(format!("the delay is at most {}s", MAX_DELAY.as_secs()));
            }
            Ok(Command::SetDelay(delay))
        }),
        "/api/hosts/drop" => {
            json::<HostName>(body).and_then(|h| text(h.host, "the host").map(Command::DropHost))
        }
        _ => return None,
    };
    Some(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_their_refusals() {
        assert_eq!(parse("/api/pause", b""), Some(Ok(Command::Pause)));
        assert_eq!(
            parse("/api/delay", br#"{"ms":250}"#),
            Some(Ok(Command::SetDelay(Duration::from_millis(250))))
        );
        assert_eq!(
            parse("/api/excludes/add", br#"{"pattern":"/calendar/"}"#),
            Some(Ok(Command::AddExclude("/calendar/".into())))
        );
        assert_eq!(
            parse("/api/seeds", br#"{"urls":["http://a.org/"]}"#),
            Some(Ok(Command::AddSeeds(vec!["http://a.org/".into()])))
        );
        assert_eq!(parse("/api/nothing", b""), None);
        for (path, body) in [
            ("/api/delay", &br#"{"ms":99999999}"#[..]),
            ("/api/delay", b"{}"),
            ("/api/seeds", br#"{"urls":[]}"#),
            ("/api/excludes/add", br#"{"pattern":""}"#),
            ("/api/hosts/drop", br#"{"host":"a","extra":1}"#),
            ("/api/excludes/remove", b"not json"),
        ] {
            assert!(matches!(parse(path, body), Some(Err(_))), "{path} {body:?}");
        }
        let many = serde_json::json!({ "urls": vec!["http://a.org/"; 1001] }).to_string();
        assert!(matches!(parse("/api/seeds", many.as_bytes()), Some(Err(_))));
    }
}
