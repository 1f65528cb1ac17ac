//! rnats: a fast, complete NATS client.
//!
//! ```no_run
//! use futures_util::StreamExt;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
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

mod auth;
mod client;
mod delivery;
mod engine;
mod error;
mod events;
mod handshake;
mod message;
mod options;
mod reconnect;
mod request;
mod server_addr;
mod shared;
mod statistics;
mod sub_queue;
mod subject;
mod subscriber;
mod tls;
mod write_queue;

pub use auth::{AuthError, SignedAuth};
pub use bytes::Bytes;
pub use client::Client;
pub use error::{
    ConnectError, FlushError, PublishError, RequestError, SubscribeError, SubscriberError,
    UnsubscribeError,
};
pub use events::{Event, Events};
pub use message::Message;
pub use options::ConnectOptions;
pub use rnats_proto::{
    HeaderMap, HeaderName, HeaderValue, QueueGroup, ServerError, ServerInfo, StatusCode, Subject,
    SubjectError,
};
/// The rustls version rnats uses, for [`ConnectOptions::tls_client_config`].
pub use rustls;
pub use statistics::Statistics;
pub use subject::ToSubject;
pub use subscriber::Subscriber;

/// Connects to a server with default options.
///
/// `url` is `nats://[user:password@]host[:port]` (or `token@host`); the port defaults to 4222.
pub async fn connect(url: impl AsRef<str>) -> Result<Client, ConnectError> {
    ConnectOptions::new().connect(url).await
}

/// The state of a client's connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    /// Connected and working.
    Connected = 0,
    /// The connection was lost.
    Disconnected = 1,
    /// Closed for good: by `close()`, `drain()`, or a failure with no reconnect.
    Closed = 2,
}

impl State {
    fn from_u8(n: u8) -> State {
        match n {
            0 => State::Connected,
            1 => State::Disconnected,
            _ => State::Closed,
        }
    }
}
