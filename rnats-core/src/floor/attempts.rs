//! Counting connection attempts as async-nats counts them: the attempts since the last
//! connection, and what one attempt is. The pool plans them
//! ([`ServerPool::plan_attempt`](super::server_pool::ServerPool::plan_attempt)).

use std::time::Duration;

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
/// and never between the servers of one pass. A server the callback chose with a delay of
/// its own waits that long instead.
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
    /// The wait before it.
    pub(crate) delay: Duration,
    /// Its number since the last connection, from 1.
    pub(crate) number: usize,
    /// It is the last of its try: when it fails, the try has failed.
    pub(super) ends_try: bool,
}

impl Attempt {
    /// The event for listeners when this attempt failed with `error`.
    pub(crate) fn failed(&self, error: &ConnectError) -> ConnectionEvent {
        ConnectionEvent::ReconnectFailed {
            attempt: self.number,
            server: self.addr.to_string(),
            error: error.to_string(),
        }
    }
}
