//! A blocking NATS client: no async runtime, every call runs on the calling thread.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! # fn run() -> Result<(), rnats_core::Error> {
//! let client = rnats_core::blocking::connect("nats://127.0.0.1:4222")?;
//!
//! // A responder on its own thread.
//! let mut service = client.subscribe("greet")?;
//! client.flush()?;
//! let responder = client.clone();
//! std::thread::spawn(move || {
//!     for request in service.by_ref() {
//!         if let Some(reply) = request.reply {
//!             responder.publish(reply, "hello".into()).ok();
//!         }
//!     }
//! });
//!
//! let reply = client.request("greet", "who?".into())?;
//! println!("{:?}", reply.payload);
//!
//! let mut updates = client.subscribe("updates.>")?;
//! client.publish("updates.1", "one".into())?;
//! client.flush()?;
//! if let Some(message) = updates.next_timeout(Duration::from_secs(1))? {
//!     println!("{}: {:?}", message.subject, message.payload);
//! }
//! client.drain()?;
//! # Ok(()) }
//! ```
//!
//! # How it works
//!
//! There is no driver task. A thread that waits (a [`Client::request`], a
//! [`Client::flush`], a [`Subscriber`]'s `next`) reads and parses the socket itself when no
//! other thread does (it takes the *reader role*), and dispatches what it parses: messages
//! into subscription queues, replies into their requests' slots, PONGs to their flushes,
//! and PONGs for the server's PINGs. Other waiting threads sleep until their result is in
//! or the role is free; a single-threaded request loop thus costs one write and one read
//! per round trip, as a hand-written socket client. `publish` encodes into a shared write
//! buffer and writes it from the caller's thread when the socket is free; under load frames
//! batch up. A small background thread answers server PINGs and drains the socket when no
//! user thread reads, sends keepalive PINGs, detects stale connections and reconnects; a
//! flusher thread writes publishes left to batch. Both end when the client is closed or
//! its last handle dropped. See `docs/blocking.md` for the details.
//!
//! # Events
//!
//! [`Client::events`] gives the connection's events from then on as an iterator
//! ([`Events`]: blocking `next`, `next_timeout`, `try_next`) of the async client's
//! [`ConnectionEvent`](crate::ConnectionEvent)s, in the order the async client emits them:
//! `Connected` (the first link), `Disconnected`, `Reconnected`, `LameDuckMode`,
//! `ServerError`, `SlowConsumer`, `DiscoveredServers`, `Draining`, `ClientError`
//! (`MaxReconnects`, `ServerNotInPool`), and `Closed` last. Each listener has a bounded
//! queue (256 events): the client's threads never wait for a listener, so one that falls
//! behind loses its oldest events and reads [`ConnectionEvent::Lagged`](crate::ConnectionEvent::Lagged)
//! first. The options' `event_callback` gets the async-nats [`Event`](crate::Event)s on a
//! thread of its own, one at a time, from the first `Connected` on.
//!
//! ```no_run
//! use rnats_core::ConnectionEvent;
//!
//! # fn run() -> Result<(), rnats_core::Error> {
//! let client = rnats_core::blocking::connect("nats://127.0.0.1:4222")?;
//! let events = client.events();
//! std::thread::spawn(move || {
//!     for event in events {
//!         if let ConnectionEvent::Disconnected { reason } = &event {
//!             eprintln!("lost the server: {reason}");
//!         }
//!     }
//! });
//! # Ok(()) }
//! ```
//!
//! # Options
//!
//! [`ConnectOptions`] configures both clients. The blocking client applies: name, token,
//! user and password, nkey, JWT and credentials (an async auth or JWT callback is run on
//! the connecting thread, so it must not need a tokio runtime), TLS (`tls://`,
//! `require_tls`, `tls_first`, root and client certificates, a custom rustls config), no
//! echo, inbox prefix, ping interval and max pings outstanding, connection, request and
//! drain timeouts, read buffer size, subscription capacities, write buffer limit, the
//! reconnect policy (max reconnects, delay callback, reconnect buffer size, retry on initial
//! connect, retain servers order, ignore discovered servers, fail requests on disconnect,
//! and `reconnect_to_server_callback`, run on the background thread), the event callback
//! (run on a thread of its own), and skip subject validation. Async callbacks run without
//! a tokio runtime.
//!
//! Ignored: `linger`, `local_address`, `send_buffer_size` and `recv_buffer_size`. WebSocket
//! addresses (`ws://`, `wss://`) are refused with a [`ConnectError`].

mod background;
mod client;
mod conn;
mod events;
mod executor;
mod handle;
mod link;
#[cfg(feature = "opentelemetry")]
mod observe;
mod pool;
mod request_many;
#[cfg(test)]
mod stall_tests;
mod state;
mod subscriber;
mod time;
mod write_side;
mod writer;

use std::sync::Arc;

pub use client::Client;
pub use events::Events;
pub use request_many::{Replies, RequestMany};
pub use subscriber::Subscriber;
#[doc(hidden)]
pub use subscriber::Woken;
pub use time::TimedOut;

use crate::error::{ConnectCause, ConnectError};
use crate::floor::server_pool::ServerPool;
use crate::options::ConnectOptions;
use crate::server_addr::ToServerAddrs;
use state::Inner;

/// Connects to `addrs` with default options: one URL (`nats://[user:password@]host[:port]`,
/// `tls://...`), several separated by commas, or any [`ToServerAddrs`].
pub fn connect<A: ToServerAddrs>(addrs: A) -> Result<Client, ConnectError> {
    connect_with_options(addrs, ConnectOptions::new())
}

/// Connects to `addrs` with `options`; the same as `options.connect_blocking(addrs)`.
pub fn connect_with_options<A: ToServerAddrs>(
    addrs: A,
    options: ConnectOptions,
) -> Result<Client, ConnectError> {
    let pool = ServerPool::for_connect(
        addrs,
        &options.inbox_prefix,
        options.reconnect.retain_servers_order,
    )?;
    // A bad proxy URL fails here, as a bad server URL does, before any connection.
    options.proxy_to_use()?;
    let inner = Arc::new(Inner::new(options, pool));
    if let Some(callback) = inner.options.event_callback.clone() {
        // Listening before the first connect, so the callback sees the first `Connected`.
        events::spawn_callback(callback, &inner.events).map_err(|source| {
            ConnectError::from(ConnectCause::Io {
                addr: "event callback thread".to_owned(),
                source,
            })
        })?;
    }
    // With `retry_on_initial_connect` the background thread makes the first connect too,
    // from its first attempt on, as the async client does.
    let first = match inner.options.reconnect.connects_in_background() {
        true => Ok(()),
        false => inner.first_connect(),
    };
    match first {
        Ok(()) => {}
        Err(error) if !inner.options.reconnect.retry_on_initial_connect => {
            // A client that never was: no `Closed` for its callback, as in the async client.
            inner.events.end();
            inner.close();
            return Err(error);
        }
        Err(error) => {
            tracing::debug!(%error, "initial connect failed; retrying in the background");
        }
    }
    let spawn_error = |source| {
        inner.close();
        ConnectError::from(ConnectCause::Io {
            addr: "background thread".to_owned(),
            source,
        })
    };
    let background = Arc::clone(&inner);
    std::thread::Builder::new()
        .name("rnats-blocking".to_owned())
        .spawn(move || background.run_background())
        .map_err(spawn_error)?;
    let flusher = Arc::clone(&inner);
    std::thread::Builder::new()
        .name("rnats-blocking-flush".to_owned())
        .spawn(move || flusher.write.run_flusher(&*flusher))
        .map_err(spawn_error)?;
    Ok(Client::new(inner))
}

impl ConnectOptions {
    /// Connects a blocking client ([`blocking::Client`](Client)) with these options.
    pub fn connect_blocking<A: ToServerAddrs>(self, addrs: A) -> Result<Client, ConnectError> {
        connect_with_options(addrs, self)
    }
}
