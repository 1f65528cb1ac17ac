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
//!
//! # Cargo features
//!
//! The features are async-nats 0.51's, with the same names, meanings and defaults, so a
//! `Cargo.toml` that trims them for async-nats (`default-features = false` and a list) works
//! unchanged.
//!
//! | Feature | Default | What it does |
//! |---|---|---|
//! | `jetstream` | yes | [`jetstream`]: streams, consumers, publish acks |
//! | `kv` | yes | [`jetstream::kv`], Key-Value stores (turns on `jetstream`) |
//! | `object-store` | yes | [`jetstream::object_store`] (turns on `jetstream` and `crypto`) |
//! | `service` | yes | [`service`], the Service API (ADR-32) |
//! | `ring` | yes | rustls' crypto provider is ring |
//! | `aws-lc-rs` | no | rustls' crypto provider is aws-lc-rs (it wins if `ring` is on too) |
//! | `fips` | no | aws-lc-rs in its FIPS mode, also for the WebSocket handshake's SHA-1; building it needs cmake and a Go toolchain |
//! | `websockets` | yes | `ws://` and `wss://` servers; without it they fail to connect |
//! | `nkeys` | yes | nkey, JWT and `.creds` authentication ([`ConnectOptions::nkey`], [`ConnectOptions::credentials_file`], [`ConnectOptions::with_jwt`], ...) and signatures from an auth callback |
//! | `nuid` | yes | NUIDs for inbox subjects and other unique names; without it, 22 random letters and digits from the standard library's OS-seeded hasher ([`id::next`]) |
//! | `crypto` | yes | accepted; async-nats' SHA-256 for Object Store, which rnats computes with the `sha2` crate whatever the features |
//! | `chrono` | no | [`datetime::DateTime`], and every timestamp field, becomes `chrono::DateTime<chrono::Utc>` instead of `time::OffsetDateTime` |
//! | `server_2_10`, `server_2_11`, `server_2_12`, `server_2_14` | yes | accepted, gating nothing: async-nats hides newer servers' fields and calls behind them, rnats always offers them (an older server ignores a field it does not know or refuses the call, and [`jetstream::Context::supports`] tells beforehand) |
//! | `experimental` | no | accepted; nothing is behind it |
//! | `runtime-neutral` | no | not async-nats': a client connected outside any tokio runtime runs on async-io and a thread of its own instead, so it works under smol or any executor, JetStream, Key-Value, Object Store and services included (see the README's "Any executor, any transport") |
//! | `opentelemetry` | no | not async-nats': W3C trace context (`traceparent`, `tracestate`) in what the async client publishes and requests, `tracing` spans for OpenTelemetry, `otel::MessageExt` to continue a trace from a received message, and `otel::metrics` for the client's counters, connection state and request durations as OpenTelemetry metrics ([`guides::opentelemetry`]) |
//! | `context` | no | not async-nats': `context`, natscli's contexts (`~/.config/nats/context/NAME.json`, the selected one in `context.txt`) loaded and made connect options, as jsm.go's `natscontext` does for nats.go programs; turns on `nkeys` |
//! | `auth-callout` | no | not async-nats': `auth_callout`, a service that answers the server's authorization callouts (ADR-26) with user JWTs it signs, requests sealed with xkeys included ([`guides::auth_callout`]); turns on `service` |
//!
//! With `default-features = false` the crate is the Core client alone: no JetStream, Service,
//! WebSocket or nkeys code, and no TLS crypto provider, so a `tls://` connect fails with a
//! [`ConnectErrorKind::Tls`] error unless the program installed one
//! (`rustls::crypto::CryptoProvider::install_default`); add `ring` or `aws-lc-rs` for TLS.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub use rnats_core::*;

/// The blocking client: no async runtime inside (see `docs/blocking.md`).
pub use rnats_core::blocking;

/// JetStream, Key-Value and Object Store (the `jetstream`, `kv` and `object-store` features).
#[cfg(feature = "jetstream")]
#[cfg_attr(docsrs, doc(cfg(feature = "jetstream")))]
pub use rnats_jetstream as jetstream;

/// The Service API (the `service` feature).
#[cfg(feature = "service")]
#[cfg_attr(docsrs, doc(cfg(feature = "service")))]
pub use rnats_service as service;

/// Authorization callouts (the `auth-callout` feature): your own authentication service for
/// nats-server (ADR-26). The same module as `service::auth_callout`.
#[cfg(feature = "auth-callout")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth-callout")))]
pub use rnats_service::auth_callout;

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

#[cfg(all(doctest, feature = "auth-callout"))]
#[doc = include_str!("../../docs/auth-callout.md")]
struct AuthCalloutGuide;

#[cfg(all(doctest, feature = "opentelemetry", feature = "jetstream"))]
#[doc = include_str!("../../docs/opentelemetry.md")]
struct OpenTelemetryGuide;

#[cfg(all(doctest, feature = "context", feature = "jetstream"))]
#[doc = include_str!("../../docs/contexts.md")]
struct ContextsGuide;
