//! The server a benchmark runs against: the one the connection flags or the context name,
//! or a private one.

use rnats::ConnectOptions;
use rnats_test_server::NatsServer;

use crate::conn::{ConnArgs, Settings};
use crate::error::CliError;

/// Where the benchmark's clients connect.
#[derive(Debug)]
pub(super) enum Target {
    /// A server started for this run only; dropping it kills the process.
    Private(Box<NatsServer>),
    /// A server named by `--server`, `NATS_URL` or a context, reached with the connection
    /// flags' and the context's credentials and TLS settings.
    External(Box<Settings>),
}

impl Target {
    /// The server `conn` names (its URL, else the context's, as every other command
    /// connects); when neither a URL nor a context is in force, a private `nats-server` on
    /// a free loopback port (found on `PATH` or through `$NATS_SERVER_BIN`), with JetStream
    /// when the benchmark needs it.
    pub(super) fn resolve(conn: &ConnArgs, jetstream: bool) -> Result<Target, CliError> {
        if conn.names_a_server()? {
            return Ok(Target::External(Box::new(conn.settings()?)));
        }
        let server = NatsServer::builder().jetstream(jetstream).spawn()?;
        Ok(Target::Private(Box::new(server)))
    }

    /// The URL clients connect to.
    pub(super) fn url(&self) -> String {
        match self {
            Target::Private(server) => server.url(),
            Target::External(settings) => settings.url.clone(),
        }
    }

    /// Whether the server was started for this run.
    pub(super) fn is_private(&self) -> bool {
        matches!(self, Target::Private(_))
    }

    /// What every connection of the run needs on top of its own tuning: the flags'
    /// and the context's credentials and TLS settings (none for a private server).
    pub(super) fn access(&self) -> Access {
        match self {
            Target::Private(_) => Access(None),
            Target::External(settings) => Access(Some(settings.clone())),
        }
    }
}

/// The identity and TLS settings of a benchmark's connections.
#[derive(Debug, Clone, Default)]
pub(super) struct Access(Option<Box<Settings>>);

impl Access {
    /// `options` with the credentials and TLS settings.
    pub(super) fn apply(&self, options: ConnectOptions) -> Result<ConnectOptions, CliError> {
        match &self.0 {
            Some(settings) => settings.apply(options),
            None => Ok(options),
        }
    }
}
