//! JetStream, Key-Value and Object Store for the blocking client ([`rnats_core::blocking::Client`]): the
//! same calls as the async API, without `async`, on threads and no runtime. For programs
//! leaving the sync `nats` crate (`nats::jetstream`, `nats::kv`).
//!
//! ```no_run
//! use std::time::Duration;
//! use rnats_jetstream::{consumer, stream};
//!
//! # fn run() -> Result<(), rnats_core::Error> {
//! let client = rnats_core::blocking::connect("nats://127.0.0.1:4222")?;
//! let jetstream = rnats_jetstream::blocking::new(client);
//! let stream = jetstream.get_or_create_stream(stream::Config {
//!     name: "ORDERS".to_string(),
//!     subjects: vec!["orders.>".to_string()],
//!     ..Default::default()
//! })?;
//! // Waits for the stream's acknowledgement.
//! let ack = jetstream.publish("orders.new", "order 1".into())?;
//! println!("stored as {} in {}", ack.sequence, ack.stream);
//!
//! let consumer = stream.create_consumer(consumer::pull::Config {
//!     durable_name: Some("worker".to_string()),
//!     ..Default::default()
//! })?;
//! for message in consumer.fetch(10, Duration::from_secs(1))? {
//!     let message = message?;
//!     println!("{:?}", message.payload);
//!     message.ack()?;
//! }
//! # Ok(()) }
//! ```
//!
//! The types of the async API serve here too: stream and consumer configs and infos,
//! [`PublishAck`](crate::publish::PublishAck), [`StreamMessage`](crate::message::StreamMessage),
//! the error types and their kinds, the Key-Value [`Entry`](crate::kv::Entry), the Object
//! Store's `Config` and `ObjectInfo`. What differs: a publish waits for its ack (there is
//! no ack future), message streams are iterators, an object is a [`std::io::Read`], and
//! every wait is bounded by the context's timeout, except a Key-Value or Object Store
//! watch, which waits for the next change as long as it takes.
//!
//! Left out for now: of the Object Store, fast-ingest puts, progress callbacks, `update_object_store` and
//! `object_stores`.

mod consumer;
mod context;
#[cfg(feature = "kv")]
mod kv;
mod list;
mod message;
mod messages;
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub mod object_store;
mod ordered;
mod ordered_pull;
mod push;
mod stream;
#[cfg(feature = "kv")]
mod watch;

pub use self::consumer::{Batch, Consumer, PullConsumer};
pub use self::context::Context;
#[cfg(feature = "kv")]
#[cfg_attr(docsrs, doc(cfg(feature = "kv")))]
pub use self::kv::{KeyValueNames, Store};
pub use self::list::{ConsumerNames, Consumers, StreamNames, Streams};
pub use self::message::Message;
pub use self::messages::Messages;
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub use self::object_store::{Object, ObjectStore};
pub use self::ordered::Ordered;
pub use self::ordered_pull::OrderedPull;
pub use self::push::PushMessages;
pub use self::stream::Stream;
#[cfg(feature = "kv")]
#[cfg_attr(docsrs, doc(cfg(feature = "kv")))]
pub use self::watch::{History, Keys, Watch};

use rnats_core::blocking::Client;

/// A blocking JetStream context on `client`, with the default API prefix `$JS.API`.
pub fn new(client: Client) -> Context {
    Context::new(client, "$JS.API".to_owned())
}

/// A blocking JetStream context for the JetStream domain `domain` (`$JS.<domain>.API`).
pub fn with_domain<T: AsRef<str>>(client: Client, domain: T) -> Context {
    Context::new(client, format!("$JS.{}.API", domain.as_ref()))
}

/// A blocking JetStream context whose API requests go under `prefix` (for JetStream
/// imported from another account).
pub fn with_prefix(client: Client, prefix: &str) -> Context {
    Context::new(client, prefix.trim_end_matches('.').to_owned())
}
