//! Counting connection attempts as async-nats counts them: the reconnect policy, the
//! attempts since the last connection, what one attempt is, and the plan of the next one over
//! the server pool ([`ServerPool::plan_attempt`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rnats_proto::ServerInfo;

use super::backoff::default_delay;
use super::server_pool::{ReconnectToServer, Server, ServerPool};
use crate::error::{ConnectError, ConnectErrorKind};
use crate::events::{ClientError, ConnectionEvent, Event};
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
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Attempts {
    /// Attempts since the last connection, the one under way included.
    pub(super) count: usize,
    /// Tries since the last connection, the one under way included.
    pub(super) tries: usize,
    /// Attempts left in the pass under way.
    pub(super) pass_left: usize,
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
    /// `max_reconnects` attempts were made: give up.
    GiveUp,
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

/// When and how to reconnect; see the reconnect setters on
/// [`ConnectOptions`](crate::ConnectOptions).
#[derive(Clone)]
pub(crate) struct ReconnectPolicy {
    /// Attempts after a disconnect before giving up; `None`: never give up, `Some(0)`: never
    /// reconnect.
    pub(crate) max_reconnects: Option<usize>,
    /// The user's `reconnect_delay_callback`: the wait before each attempt, by its number
    /// since the last connection. `None`: rnats' default (see `reconnect::Attempts`).
    pub(crate) delay: Option<Arc<dyn Fn(usize) -> Duration + Send + Sync>>,
    /// Bytes of publishes kept while disconnected.
    pub(crate) buffer_size: usize,
    pub(crate) retry_on_initial_connect: bool,
    pub(crate) retain_servers_order: bool,
    pub(crate) ignore_discovered_servers: bool,
    pub(crate) fail_requests_on_disconnect: bool,
    /// The user's `reconnect_to_server_callback`.
    pub(crate) choose_server: Option<Arc<ChooseServerFn>>,
}

/// A `reconnect_to_server_callback`, boxed.
pub(crate) type ChooseServerFn = dyn Fn(Vec<Server>, ServerInfo) -> Pin<Box<dyn Future<Output = Option<ReconnectToServer>> + Send>>
    + Send
    + Sync;

impl ReconnectPolicy {
    /// With `retry_on_initial_connect`, the first connect is made in the background (the
    /// client comes back at once), unless reconnecting is off altogether.
    pub(crate) fn connects_in_background(&self) -> bool {
        self.retry_on_initial_connect && self.max_reconnects != Some(0)
    }
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            max_reconnects: None,
            delay: None,
            buffer_size: 8 * 1024 * 1024,
            retry_on_initial_connect: false,
            retain_servers_order: false,
            ignore_discovered_servers: false,
            fail_requests_on_disconnect: false,
            choose_server: None,
        }
    }
}

impl ServerPool {
    /// The next attempt. `choice` is the reconnect-to-server callback's, asked if
    /// [`Attempts::starts_try`]: a server of the pool is tried alone (one outside it is
    /// reported to `emit` as `ServerNotInPool` and a pass follows instead). `limited`:
    /// whether `max_reconnects` applies (not to the first connect). `None`: the pool is
    /// empty.
    pub(crate) fn plan_attempt(
        &mut self,
        policy: &ReconnectPolicy,
        choice: Option<ReconnectToServer>,
        limited: bool,
        emit: impl FnOnce(ConnectionEvent),
    ) -> Option<Plan> {
        let starts = self.attempts.starts_try();
        let chosen = match choice {
            Some(choice) if starts && self.contains(&choice.addr) => Some(choice),
            Some(_) if starts => {
                emit(ConnectionEvent::ClientError(ClientError::ServerNotInPool));
                None
            }
            _ => None,
        };
        if self.len() == 0 {
            return None;
        }
        let attempts = &mut self.attempts;
        attempts.count += 1;
        if starts {
            attempts.tries += 1;
        }
        if limited
            && policy
                .max_reconnects
                .is_some_and(|max| attempts.count > max)
        {
            return Some(Plan::GiveUp);
        }
        let (count, tries) = (attempts.count, attempts.tries);
        let delay = |starts: bool| match &policy.delay {
            Some(delay) => delay(count),
            None if starts => default_delay(tries - 1),
            None => Duration::ZERO,
        };
        let attempt = match chosen {
            Some(choice) => {
                self.attempts.pass_left = 0;
                Attempt {
                    delay: choice.delay.unwrap_or_else(|| delay(true)),
                    tls_name: self.tls_name_of(&choice.addr),
                    addr: choice.addr,
                    number: count,
                    ends_try: true,
                }
            }
            None => {
                if starts {
                    self.attempts.pass_left = self.len();
                    self.start_pass_after_current();
                }
                self.attempts.pass_left -= 1;
                let addr = self.next_server()?;
                Attempt {
                    tls_name: self.tls_name_of(&addr),
                    addr,
                    delay: delay(starts),
                    number: count,
                    ends_try: self.attempts.pass_left == 0,
                }
            }
        };
        Some(Plan::Dial(attempt))
    }

    /// Notes that `attempt` failed with `error`. When that ends its try (a rejected login
    /// ends a pass at once, as in async-nats), returns what the event callback is told,
    /// once per try as async-nats tells it: `ClientError::Other` with the error's kind.
    pub(crate) fn note_failure(
        &mut self,
        attempt: &Attempt,
        error: &ConnectError,
    ) -> Option<Event> {
        self.record(&attempt.addr, Err(error.to_string()));
        let rejected = matches!(
            error.kind(),
            ConnectErrorKind::AuthorizationViolation | ConnectErrorKind::Authentication
        );
        if rejected {
            self.attempts.pass_left = 0;
        }
        (attempt.ends_try || rejected)
            .then(|| Event::ClientError(ClientError::Other(error.kind().to_string())))
    }
}
