//! Counting connection attempts as async-nats counts them: the attempts since the last
//! connection, what one attempt is, and the backoff across links that end soon after they
//! come up. The pool plans them ([`plan`](super::plan)).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::ConnectError;
use crate::events::ConnectionEvent;
use crate::server_addr::ServerAddr;

/// How the attempts since the last connection stand, in async-nats' terms, which both
/// clients and their first connect share. Attempts come in *tries*: one attempt on the
/// server the `reconnect_to_server_callback` chooses (it is asked at the start of every try),
/// or else a pass over the pool. Attempts are numbered from 1 after every successful connect
/// and every `set_server_pool`; `max_reconnects` bounds that number.
///
/// The wait before an attempt is what the `reconnect_delay_callback` says for its number,
/// when one is set (as in async-nats, the first attempt included). rnats' default waits
/// only before a try, none before the first, then [`default_delay`] by the try's number,
/// and never between the servers of one pass; after a link that ended soon after it came
/// up, the tries go on counting from the one that made it ([`LastLink`]). A server the
/// callback chose with a delay of its own waits that long instead.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Attempts {
    /// Attempts since the last connection, the one under way included.
    pub(super) count: usize,
    /// Tries since the last connection, the one under way included.
    pub(super) tries: usize,
    /// Attempts left in the pass under way.
    pub(super) pass_left: usize,
    /// The servers that refused the login on their last attempt since the last connection,
    /// with what they said.
    pub(super) refusals: Vec<(ServerAddr, String)>,
    /// A server refused the login on two attempts in a row with the same error: what to
    /// report (see [`ReconnectPolicy::close_on_repeated_auth_error`](super::plan::ReconnectPolicy)).
    pub(super) refused_twice: Option<String>,
}

impl Attempts {
    /// Whether the next attempt starts a try (and so asks the reconnect-to-server callback).
    pub(crate) fn starts_try(&self) -> bool {
        self.pass_left == 0
    }
}

/// How long a link must have been up for the default backoff to start afresh when it ends:
/// the wait nats.go and nats.js keep between two attempts on one server (their default
/// `ReconnectWait`, 2 s).
pub(crate) const SETTLED: Duration = Duration::from_secs(2);

/// The last link's start, for the default backoff after it ends. A server that takes the
/// handshake and then closes the connection (its account over a limit, say, or a proxy in
/// front of a dead one) would otherwise be dialled again at once, every time, as fast as
/// the handshake goes; nats.go and nats.js wait between attempts on one server instead. A
/// link lost within [`SETTLED`] of its start does not reset the tries: the next one waits as
/// a try after the one that made the link would, so such a server is dialled after 100 ms,
/// then 200 ms, up to the backoff's 5 s. A link that lasted, or one the client left on
/// purpose (a planned move: `force_reconnect`, lame duck mode), is followed by a try at
/// once. The `reconnect_delay_callback`, when set, still gets its attempts numbered from 1
/// after every connect, as in async-nats.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct LastLink {
    /// When the link came up, and the try that made it.
    made: Option<(Instant, usize)>,
}

impl LastLink {
    /// The link the try `tries` dialled came up at `now`.
    pub(super) fn connected(&mut self, now: Instant, tries: usize) {
        self.made = Some((now, tries));
    }

    /// The link ended at `now` (`planned`: the client left it). Returns the tries to count
    /// from: the number of the try that made it if it was lost within [`SETTLED`], else 0.
    pub(super) fn ended(&mut self, now: Instant, planned: bool) -> usize {
        match self.made.take() {
            Some((at, tries)) if !planned && now.saturating_duration_since(at) < SETTLED => tries,
            _ => 0,
        }
    }
}

/// What [`ServerPool::plan_attempt`] decided.
#[derive(Debug)]
pub(crate) enum Plan {
    /// Make this attempt.
    Dial(Attempt),
    /// Give up, reporting this to the event callback: `max_reconnects` attempts were made,
    /// or a server refused the same login twice in a row.
    GiveUp(crate::events::ClientError),
}

/// One connection attempt.
#[derive(Debug)]
pub(crate) struct Attempt {
    pub(crate) addr: ServerAddr,
    /// The name its TLS certificate is checked against when that is not its host: the
    /// host name of the server the client was on when the cluster announced this one by
    /// IP address ([`ServerPool::add_discovered`](super::server_pool::ServerPool::add_discovered)).
    pub(super) tls_name: Option<Arc<str>>,
    /// The wait before it.
    pub(crate) delay: Duration,
    /// Its number since the last connection, from 1.
    pub(crate) number: usize,
    /// It is the last of its try: when it fails, the try has failed.
    pub(super) ends_try: bool,
}

impl Attempt {
    /// The name the server's TLS certificate must carry.
    pub(crate) fn tls_name(&self) -> &str {
        self.tls_name.as_deref().unwrap_or(self.addr.host())
    }

    /// The event for listeners when this attempt failed with `error`.
    pub(crate) fn failed(&self, error: &ConnectError) -> ConnectionEvent {
        ConnectionEvent::ReconnectFailed {
            attempt: self.number,
            server: self.addr.to_string(),
            error: error.to_string(),
        }
    }
}
