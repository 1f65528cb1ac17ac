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
//! `nuid`, `chrono`); the `rnats` facade forwards its features of the same names and lists
//! them all.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod auth;
pub mod blocking;
pub mod client;
mod connect_info;
pub mod connection;
pub mod datetime;
mod delivery;
mod dial;
mod engine;
pub mod error;
mod events;
mod floor;
#[doc(hidden)]
pub mod fuzzing;
pub mod header;
pub mod id;
pub mod message;
mod options;
mod reconnect;
mod request;
pub mod request_many;
mod server_addr;
mod shared;
mod sink;
mod statistics;
pub mod status;
mod sub_queue;
pub mod subject;
mod subscriber;
mod tls;
pub mod trace;
mod transport;
#[cfg(feature = "websockets")]
mod websocket;
mod writer;

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
pub use error::{
    ConnectCause, ConnectError, ConnectErrorKind, DrainError, FlushCause, FlushError,
    FlushErrorKind, PublishCause, ReconnectError, RequestCause, SubscribeCause, SubscriberError,
    UnsubscribeError,
};
pub use events::{CallbackError, ClientError, ConnectionEvent, Event, ServerError};
pub use header::{HeaderMap, HeaderName, HeaderValue};
pub use message::Message;
pub use request_many::{ManyEnd, ManyLimits, Replies, RequestMany};
/// The old name of [`message::OutboundMessage`], kept as async-nats keeps it.
#[deprecated(note = "use `rnats::message::OutboundMessage` instead")]
pub type PublishMessage = message::OutboundMessage;
pub use floor::server_pool::{ReconnectToServer, Server};
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
