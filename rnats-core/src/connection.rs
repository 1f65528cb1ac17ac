//! The state of a client's connection, as [`Client::connection_state`](crate::Client) reports it.

use std::fmt;

/// The state of a client's connection (async-nats' three states).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum State {
    /// Not connected yet: the first connect is retried in the background
    /// (`retry_on_initial_connect`).
    Pending,
    /// Connected and working.
    Connected,
    /// The connection was lost and is being re-established, or the client is closed
    /// ([`Client::is_closed`](crate::Client::is_closed) tells which).
    Disconnected,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Pending => "pending",
            State::Connected => "connected",
            State::Disconnected => "disconnected",
        })
    }
}

/// The engine's view of the link, finer than [`State`]: it tells a closed client from one
/// that is reconnecting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum LinkState {
    Connected = 0,
    Disconnected = 1,
    Closed = 2,
    Pending = 3,
}

impl LinkState {
    pub(crate) fn from_u8(n: u8) -> LinkState {
        match n {
            0 => LinkState::Connected,
            1 => LinkState::Disconnected,
            3 => LinkState::Pending,
            _ => LinkState::Closed,
        }
    }

    pub(crate) fn public(self) -> State {
        match self {
            LinkState::Connected => State::Connected,
            LinkState::Pending => State::Pending,
            LinkState::Disconnected | LinkState::Closed => State::Disconnected,
        }
    }
}
