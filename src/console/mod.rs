//! The live console (`trawl crawl --console ADDR`): a web page and a JSON API served from
//! inside the crawler, to watch a crawl and steer it.
//!
//! | part | file |
//! |---|---|
//! | what is shown: the crawl loop's snapshot, chart samples | `view.rs` |
//! | what can be changed: commands, their limits | `command.rs` |
//! | who may change it: token, Host check | `auth.rs` |
//! | where server and crawl loop meet | `hub.rs` |
//! | the HTTP server and its routes | `server.rs` |
//! | `GET /metrics` (Prometheus) | `metrics.rs` |
//! | the page, its script and style (compiled in) | `assets/` |
//!
//! The console knows nothing of the crawl's insides: the crawl loop publishes a [`view::View`]
//! about once a second and receives [`Request`]s; what each command does is the loop's
//! business (`crawl/console_link.rs`).

pub mod auth;
pub mod command;
mod connections;
pub mod hub;
pub mod metrics;
pub mod search;
pub mod server;
pub mod view;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use command::Request;
pub use hub::Hub;

/// Commands waiting for the crawl loop at most.
const COMMAND_QUEUE: usize = 16;

/// Where the console listens and with which token.
#[derive(Debug, Clone)]
pub struct ConsoleConfig {
    /// The address to bind.
    pub addr: SocketAddr,
    /// The operator's token (`--console-token`); a random one when `None`.
    pub token: Option<String>,
    /// `--search-index`: the index the search box searches.
    pub search_index: Option<std::path::PathBuf>,
}

/// Why the console could not start.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// The address could not be bound.
    #[error("cannot listen on {addr} for --console: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// No random token could be made.
    #[error("cannot make a console token: {0}")]
    Token(getrandom::Error),
}

/// A running console.
#[derive(Debug)]
pub struct Console {
    /// Where the crawl loop publishes and the server reads.
    pub hub: Arc<Hub>,
    /// The commands the server received, for the crawl loop.
    pub commands: mpsc::Receiver<Request>,
    /// The address it listens on (the port is known once bound).
    pub addr: SocketAddr,
    /// True when the token was made here (and may be printed).
    pub token_generated: bool,
    server: JoinHandle<()>,
}

impl Console {
    /// Binds the address and starts serving (on the current tokio runtime).
    pub async fn start(config: ConsoleConfig) -> Result<Self, ConsoleError> {
        let listener =
            TcpListener::bind(config.addr)
                .await
                .map_err(|source| ConsoleError::Bind {
                    addr: config.addr,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| ConsoleError::Bind {
            addr: config.addr,
            source,
        })?;
        let token_generated = config.token.is_none();
        let token = match config.token {
            Some(token) => token,
            None => auth::new_token().map_err(ConsoleError::Token)?,
        };
        let (tx, commands) = mpsc::channel(COMMAND_QUEUE);
        let search = config.search_index.map(search::SearchBox::new);
        let hub = Arc::new(Hub::new(tx, token, addr.ip(), search));
        let server = tokio::spawn(server::serve(listener, hub.clone()));
        Ok(Console {
            hub,
            commands,
            addr,
            token_generated,
            server,
        })
    }

    /// The page's address, with the token in the fragment (which browsers do not send) when
    /// it was generated here.
    pub fn url(&self) -> String {
        let base = format!("http://{}/", self.addr);
        if self.token_generated {
            format!("{base}#token={}", self.hub.token)
        } else {
            base
        }
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        self.server.abort();
    }
}
