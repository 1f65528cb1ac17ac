//! The server a benchmark runs against: one given with `--server`, or a private one.

use rnats_test_server::NatsServer;

use crate::error::CliError;

/// Where the benchmark's clients connect.
#[derive(Debug)]
pub(super) enum Target {
    /// A server started for this run only; dropping it kills the process.
    Private(Box<NatsServer>),
    /// A server named with `--server`.
    External(String),
}

impl Target {
    /// Uses `server` when given, otherwise starts a private `nats-server` on a free
    /// loopback port (found on `PATH` or through `$NATS_SERVER_BIN`), with JetStream when
    /// the benchmark needs it.
    pub(super) fn resolve(server: Option<&str>, jetstream: bool) -> Result<Target, CliError> {
        match server {
            Some(url) => Ok(Target::External(url.to_owned())),
            None => {
                let server = NatsServer::builder().jetstream(jetstream).spawn()?;
                Ok(Target::Private(Box::new(server)))
            }
        }
    }

    /// The URL clients connect to.
    pub(super) fn url(&self) -> String {
        match self {
            Target::Private(server) => server.url(),
            Target::External(url) => url.clone(),
        }
    }

    /// Whether the server was started for this run.
    pub(super) fn is_private(&self) -> bool {
        matches!(self, Target::Private(_))
    }
}
