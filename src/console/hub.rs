//! The console's meeting point between the HTTP server and the crawl loop: the latest view
//! the loop published, the samples kept for the chart, and the channel commands go through.
//! The server only reads what the loop published; it never reaches into the crawl.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::sync::{mpsc, oneshot};

use super::command::{Command, Request};
use super::metrics;
use super::search::SearchBox;
use super::view::{Sample, View};

/// Samples kept for the chart (15 minutes at one a second).
pub const HISTORY: usize = 900;
/// How long the server waits for the crawl loop to answer a command.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// Shared by the server's connections and the crawl loop.
#[derive(Debug)]
pub struct Hub {
    view: Mutex<Arc<View>>,
    history: Mutex<VecDeque<Sample>>,
    commands: mpsc::Sender<Request>,
    /// The operator's token.
    pub(super) token: String,
    /// The address the console listens on.
    pub(super) bound: IpAddr,
    /// The crawl's `--search-index`, for the search box.
    pub(super) search: Option<Arc<SearchBox>>,
}

/// Why a command got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The crawl loop refused it (the message says why).
    Invalid(String),
    /// The crawl loop is gone or did not answer in time.
    Unavailable,
}

impl Hub {
    /// A hub whose commands go to `commands`.
    pub fn new(
        commands: mpsc::Sender<Request>,
        token: String,
        bound: IpAddr,
        search: Option<SearchBox>,
    ) -> Self {
        Hub {
            view: Mutex::new(Arc::new(View {
                state: "starting".into(),
                ..View::default()
            })),
            history: Mutex::new(VecDeque::with_capacity(HISTORY)),
            commands,
            token,
            bound,
            search: search.map(Arc::new),
        }
    }

    /// Publishes the crawl's state (the crawl loop, about once a second).
    pub fn publish(&self, view: View) {
        let t_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        if let Ok(mut history) = self.history.lock() {
            if history.len() == HISTORY {
                history.pop_front();
            }
            history.push_back(Sample {
                t_ms,
                pages: view.pages,
                bytes: view.bytes_downloaded,
            });
        }
        if let Ok(mut slot) = self.view.lock() {
            *slot = Arc::new(view);
        }
    }

    /// The latest view.
    pub fn view(&self) -> Arc<View> {
        self.view
            .lock()
            .map(|v| v.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    /// `GET /api/status`: the view with the samples for the chart, as JSON.
    pub fn status_json(&self) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Status<'a> {
            #[serde(flatten)]
            view: &'a View,
            history: Vec<Sample>,
            /// The crawl indexes for search (the page shows its search box).
            search: bool,
        }
        let view = self.view();
        let history = self
            .history
            .lock()
            .map(|h| h.iter().copied().collect())
            .unwrap_or_default();
        serde_json::to_vec(&Status {
            view: &view,
            history,
            search: self.search.is_some(),
        })
        .unwrap_or_default()
    }

    /// `GET /metrics`.
    pub fn metrics(&self) -> String {
        metrics::render(&self.view())
    }

    /// Sends a command to the crawl loop and waits for its answer.
    pub async fn command(&self, command: Command) -> Result<String, Refusal> {
        let (reply, answer) = oneshot::channel();
        let request = Request { command, reply };
        let sent = tokio::time::timeout(ANSWER_WITHIN, self.commands.send(request)).await;
        if !matches!(sent, Ok(Ok(()))) {
            return Err(Refusal::Unavailable);
        }
        match tokio::time::timeout(ANSWER_WITHIN, answer).await {
            Ok(Ok(Ok(message))) => Ok(message),
            Ok(Ok(Err(why))) => Err(Refusal::Invalid(why)),
            _ => Err(Refusal::Unavailable),
        }
    }
}
