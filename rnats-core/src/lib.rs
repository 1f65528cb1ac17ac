//! Core NATS for tokio: the connection engine and the client behind the `rnats` facade.
//!
//! Depend on `rnats`, not on this crate: it re-exports everything here at its root, with the
//! module paths async-nats uses (`rnats::client`, `rnats::header`, `rnats::error`, ...).
//!
//! ```no_run
//! use futures_util::StreamExt;
//!
//! # async fn run() -> Result<(), rnats_core::Error> {
//! let client = rnats_core::connect("nats://127.0.0.1:4222").await?;
//! let mut subscriber = client.subscribe("greetings.>").await?;
//! client.publish("greetings.world", "hello".into()).await?;
//! client.flush().await?;
//! if let Some(message) = subscriber.next().await {
//!     println!("{}: {:?}", message.subject, message.payload);
//! }
//! # Ok(()) }
//! ```
//!
//! The connection is driven by one background task that owns the socket; [`Client`] handles
//! queue encoded frames for it and never wait on the network to publish.
//!
//! The cargo features are async-nats' (`ring`, `aws-lc-rs`, `fips`, `websockets`, `nkeys`,
//! `nuid`, `chrono`), plus rnats' own `runtime-neutral`, `opentelemetry` (the `otel`
//! module) and `context` (the `context` module: natscli's contexts); the `rnats` facade
//! forwards its features of the same names and lists them all.
//!
//! # Map of the crate
//!
//! The crate is a tree: each layer uses only the layers under it (`tests/floor_is_pure.rs`
//! checks the rules, `scripts/import-graph` shows that no file imports another in a circle).
//!
//! - **The floor** (`floor/`, private): the connection's protocol state, pure. The session
//!   (subscriptions, pings, the link), keepalive, the handshake machine, the write queue
//!   (its frames, and the link transitions both drivers' write sides go through), the server
//!   pool and its reconnect plan, the backoff, replies and request-many's gathering,
//!   deadlines and lock helpers. Fed with bytes, events and the time, asked what to
//!   do next; no tokio, no `std::net`, no socket, no clock, and tested that way.
//! - **The vocabulary** (mostly public): what the API speaks in, used by the floor and both
//!   drivers. [`error`], [`message`], [`header`], [`subject`], [`status`], [`id`],
//!   [`connection`], the events, the server address, statistics, auth and the request
//!   builder. No runtime here either.
//! - **Support both drivers share**: [`ConnectOptions`], TLS settings, the CONNECT body,
//!   [`datetime`], and the application's own transports ([`connector`]; the async client
//!   uses them, the blocking one ignores them).
//! - **The tokio driver** (the crate root's client): [`Client`] and its clones, the engine
//!   task that owns the socket (`engine.rs`), what the callers and the engine share
//!   (`shared.rs`), the rule for who writes the socket (`writer.rs`), dialing and the
//!   transports (`dial.rs`, `transport.rs`, `websocket.rs`), reconnecting, deliveries to
//!   subscribers, requests, [`request_many`], [`trace`], [`system`] (the system
//!   account's monitoring requests, on `request_many`), the `Sink` of messages, the
//!   OpenTelemetry hooks on publish and request (`otel.rs` with the `opentelemetry`
//!   feature, the no-ops of `otel_off.rs` without it). What it
//!   asks of a runtime (spawn, timers, DNS and TCP, blocking work) goes through `rt.rs`:
//!   tokio when the client is made inside a tokio runtime, otherwise, with the
//!   `runtime-neutral` feature, async-io and a task thread of rnats' own (`rt_neutral.rs`),
//!   so the same driver runs under smol or any executor.
//! - **The blocking driver** ([`blocking`]): the same client for threads, with no runtime.
//!   It uses the floor, the vocabulary and the shared support, never the tokio driver's
//!   files, and the tokio driver never uses it.

#![cfg_attr(docsrs, feature(doc_cfg))]

// The floor: pure protocol state.
mod floor;

// The vocabulary.
mod auth;
pub mod connection;
pub mod error;
mod events;
pub mod header;
pub mod id;
pub mod message;
pub mod proxy;
mod request_builder;
mod server_addr;
mod statistics;
pub mod status;
pub mod subject;

// Support both drivers share.
mod connect_info;
pub mod connector;
#[cfg(feature = "context")]
#[cfg_attr(docsrs, doc(cfg(feature = "context")))]
pub mod context;
pub mod datetime;
mod options;
mod tls;

// The tokio driver.
mod caller_write;
pub mod client;
mod delivery;
mod dial;
mod engine;
mod reconnect;
mod request;
pub mod request_many;
mod request_table;
mod rt;
mod shared;
mod sink;
mod socket;
mod sub_queue;
mod subscriber;
pub mod system;
pub mod trace;
mod transport;
// The publish and request paths' hooks: W3C trace context and spans with the feature, no-ops
// that compile away without it.
#[cfg(feature = "opentelemetry")]
#[cfg_attr(docsrs, doc(cfg(feature = "opentelemetry")))]
pub mod otel;
#[cfg(not(feature = "opentelemetry"))]
#[path = "otel_off.rs"]
mod otel;
#[cfg(feature = "websockets")]
mod websocket;
#[cfg(feature = "websockets")]
mod websocket_headers;
mod writer;

// The blocking driver.
pub mod blocking;

// Timers and tasks on the caller's runtime, for the crates built on this one.
#[doc(hidden)]
pub mod runtime;

// Entry points for the fuzz targets in `fuzz/`.
#[doc(hidden)]
pub mod fuzzing;

// Deadlines that cannot overflow the clock, for the crates built on this one: a timeout of
// `Duration::MAX` means "never", not a panic.
#[doc(hidden)]
pub mod deadline {
    use std::time::Duration;

    pub use crate::floor::deadline::{FAR_FUTURE, saturating_add};

    /// `timeout` from now on tokio's clock, or [`FAR_FUTURE`] ahead when that overflows.
    pub fn after(timeout: Duration) -> tokio::time::Instant {
        let now = tokio::time::Instant::now();
        tokio::time::Instant::from_std(saturating_add(now.into_std(), timeout))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_timeout_past_what_the_clock_holds_waits_without_end() {
            let now = tokio::time::Instant::now();
            assert!(after(Duration::from_secs(5)) > now);
            assert!(after(Duration::MAX) > now + Duration::from_secs(86_400 * 365));
        }
    }
}

/// Any error, boxed: what `?` turns every rnats error into, as with async-nats.
pub type Error = Box<dyn std::error::Error + Send + Sync + 'static>;

pub use auth::{Auth, AuthError, SignedAuth};
pub use bytes::Bytes;
pub use client::Events;
pub use client::{
    Client, PendingReply, PublishError, PublishErrorKind, Request, RequestError, RequestErrorKind,
    ServerPoolError, ServerPoolErrorKind, SetServerPoolError, SetServerPoolErrorKind, Statistics,
    SubscribeError, SubscribeErrorKind,
};
pub use connection::State;
pub use connector::{AsyncStream, BoxedStream};
pub use error::{
    ConnectCause, ConnectError, ConnectErrorKind, DrainError, FlushCause, FlushError,
    FlushErrorKind, PublishCause, ReconnectError, RequestCause, RttCause, RttError, RttErrorKind,
    SubscribeCause, SubscriberError, UnsubscribeError,
};
pub use events::{CallbackError, ClientError, ConnectionEvent, Event, ServerError};
pub use header::{HeaderMap, HeaderName, HeaderValue};
pub use message::Message;
pub use request_many::{ManyEnd, ManyLimits, Replies, RequestMany};
/// The old name of [`message::OutboundMessage`], kept as async-nats keeps it.
#[deprecated(note = "use `rnats::message::OutboundMessage` instead")]
pub type PublishMessage = message::OutboundMessage;
pub use floor::server_pool::{ReconnectToServer, Server};
/// The `http` crate, whose header types [`ConnectOptions::websocket_headers`] takes.
#[cfg(feature = "websockets")]
#[cfg_attr(docsrs, doc(cfg(feature = "websockets")))]
pub use http;
pub use options::ConnectOptions;
/// The sans-IO protocol core rnats is built on: parser, encoder, and the server's errors in
/// full detail (`proto::ServerError`).
pub use rnats_proto as proto;
pub use rnats_proto::{ConnectInfo, Protocol, QueueGroup, ServerInfo};
/// The rustls version rnats uses, for [`ConnectOptions::tls_client_config`].
pub use rustls;
pub use server_addr::{ServerAddr, ToServerAddrs};
pub use status::StatusCode;
pub use subject::{Subject, SubjectCause, SubjectError, ToSubject};
pub use subscriber::Subscriber;

/// Connects to `addrs` with default options: one URL (`nats://[user:password@]host[:port]`,
/// `tls://...`, `ws://...`), several separated by commas, or any [`ToServerAddrs`].
pub async fn connect<A: ToServerAddrs>(addrs: A) -> Result<Client, ConnectError> {
    ConnectOptions::new().connect(addrs).await
}

/// Connects to `addrs` with `options`; the same as `options.connect(addrs)`.
pub async fn connect_with_options<A: ToServerAddrs>(
    addrs: A,
    options: ConnectOptions,
) -> Result<Client, ConnectError> {
    options.connect(addrs).await
}
