//! rnats: a fast, complete NATS client for Rust.
//!
//! This is the crate to depend on. It holds no logic of its own: the Core NATS client
//! (`rnats-core`) is re-exported at the root, JetStream with Key-Value and Object Store as
//! [`jetstream`], and the Service API as [`service`], each behind the default feature that
//! async-nats names the same way (`jetstream`, `kv`, `object-store`, `service`). The module
//! paths are async-nats' own, so a program written for async-nats compiles against rnats with
//! only the crate name changed:
//!
//! ```toml
//! [dependencies]
//! async-nats = { package = "rnats", version = "0.1" }
//! ```
//!
//! or `use rnats as async_nats;` in the code.
//!
//! ```no_run
//! use futures_util::StreamExt;
//!
//! # async fn run() -> Result<(), rnats::Error> {
//! let client = rnats::connect("nats://127.0.0.1:4222").await?;
//! let mut subscriber = client.subscribe("greetings.>").await?;
//! client.publish("greetings.world", "hello".into()).await?;
//! client.flush().await?;
//! if let Some(message) = subscriber.next().await {
//!     println!("{}: {:?}", message.subject, message.payload);
//! }
//! # Ok(()) }
//! ```
//!
//! JetStream, with the same paths as in async-nats:
//!
//! ```no_run
//! use futures_util::StreamExt;
//! use rnats::jetstream::{self, consumer, stream};
//!
//! # async fn run() -> Result<(), rnats::Error> {
//! let client = rnats::connect("nats://127.0.0.1:4222").await?;
//! let js = jetstream::new(client);
//! let orders = js
//!     .get_or_create_stream(stream::Config {
//!         name: "ORDERS".to_string(),
//!         subjects: vec!["orders.>".to_string()],
//!         ..Default::default()
//!     })
//!     .await?;
//! // `publish` returns once the message is queued; awaiting its future waits for the ack.
//! let ack = js.publish("orders.new", "order 1".into()).await?.await?;
//! println!("stored as {} in {}", ack.sequence, ack.stream);
//! println!("{} messages", orders.cached_info().state.messages);
//!
//! let consumer = orders
//!     .get_or_create_consumer(
//!         "billing",
//!         consumer::pull::Config {
//!             durable_name: Some("billing".to_string()),
//!             ..Default::default()
//!         },
//!     )
//!     .await?;
//! let mut messages = consumer.messages().await?.take(1);
//! while let Some(message) = messages.next().await {
//!     let message = message?;
//!     println!("{:?}", message.payload);
//!     message.ack().await?;
//! }
//! # Ok(()) }
//! ```

pub use rnats_core::*;

/// The blocking client: no async runtime inside (see `docs/blocking.md`).
pub use rnats_core::blocking;

/// JetStream, Key-Value and Object Store (the `jetstream`, `kv` and `object-store` features).
#[cfg(feature = "jetstream")]
pub use rnats_jetstream as jetstream;

/// The time type of the JetStream API and helpers to make one (the `jetstream` feature).
#[cfg(feature = "jetstream")]
pub use rnats_jetstream::datetime;

/// The Service API (the `service` feature).
#[cfg(feature = "service")]
pub use rnats_service as service;

pub mod guides;

// The README and the user guides in docs/ are compiled as doc tests, so their examples stay
// true to the API.
#[cfg(all(doctest, feature = "jetstream", feature = "service"))]
#[doc = include_str!("../../README.md")]
struct ReadmeExamples;

#[cfg(all(doctest, feature = "object-store"))]
#[doc = include_str!("../../docs/object-store.md")]
struct ObjectStoreGuide;

#[cfg(all(doctest, feature = "service"))]
#[doc = include_str!("../../docs/service.md")]
struct ServiceGuide;

#[cfg(doctest)]
#[doc = include_str!("../../docs/blocking.md")]
struct BlockingGuide;

#[cfg(all(doctest, feature = "kv"))]
#[doc = include_str!("../../docs/kv.md")]
struct KeyValueGuide;

#[cfg(all(doctest, feature = "jetstream"))]
#[doc = include_str!("../../docs/batch.md")]
struct AtomicBatchGuide;

#[cfg(all(doctest, feature = "jetstream"))]
#[doc = include_str!("../../docs/fast-ingest.md")]
struct FastIngestGuide;

#[cfg(all(doctest, feature = "jetstream"))]
#[doc = include_str!("../../docs/counters.md")]
struct CountersGuide;

#[cfg(all(doctest, feature = "jetstream"))]
#[doc = include_str!("../../docs/schedules.md")]
struct SchedulesGuide;
