//! JetStream for rnats: streams, consumers and publish acknowledgements, with Key-Value
//! (`kv` feature) and Object Store (`object-store` feature) on top.
//!
//! Users reach this crate as `rnats::jetstream`, the path async-nats gives it, with the same
//! API: a program written for async-nats' JetStream compiles against it unchanged. It is built
//! on the public API of `rnats-core` alone; where JetStream needs something the Core client
//! did not offer (a request whose reply is awaited later, for pipelined publish acks), that
//! API grew instead of this crate reaching inside it.
//!
//! ```no_run
//! # async fn run() -> Result<(), rnats_core::Error> {
//! let client = rnats_core::connect("nats://127.0.0.1:4222").await?;
//! let jetstream = rnats_jetstream::new(client);
//! // Publish, then wait for the stream's acknowledgement.
//! let ack = jetstream.publish("orders.new", "order 1".into()).await?.await?;
//! println!("stored as {} in {}", ack.sequence, ack.stream);
//! # Ok(()) }
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod account;
pub mod advisory;
pub mod batch;
pub mod blocking;
pub mod capability;
pub mod consumer;
mod consumer_errors;
pub mod context;
pub mod counter;
pub mod errors;
pub mod fast_ingest;
pub mod features;
#[doc(hidden)]
pub mod fuzzing;
pub mod message;
mod nanos;
pub mod paging;
pub mod publish;
mod publish_timing;
pub mod response;
pub mod schedule;
pub mod stream;
mod stream_errors;
#[cfg(test)]
mod test_support;

#[cfg(feature = "kv")]
#[cfg_attr(docsrs, doc(cfg(feature = "kv")))]
pub mod kv;
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub mod object_store;
// Partitioned consumer groups keep their configuration in a KV bucket.
#[cfg(feature = "kv")]
#[cfg_attr(docsrs, doc(cfg(feature = "kv")))]
pub mod pcgroups;

use rnats_core::Client;

pub use context::{Context, ContextBuilder};
pub use errors::{Error, ErrorCode};
pub use features::{Feature, ServerVersion, Unsupported};
pub use message::{AckKind, Message};
/// The date and time type of the API (`time`'s, or chrono's with the `chrono` feature), and
/// helpers to make one; it lives in the core so that the Service API shares it.
pub use rnats_core::datetime;

/// A JetStream context on `client`, with the default API prefix `$JS.API`.
pub fn new(client: Client) -> Context {
    Context::new(client)
}

/// A JetStream context for the JetStream domain `domain` (`$JS.<domain>.API`).
pub fn with_domain<T: AsRef<str>>(client: Client, domain: T) -> Context {
    ContextBuilder::new().domain(domain.as_ref()).build(client)
}

/// A JetStream context whose API requests go under `prefix` (for JetStream imported from
/// another account).
pub fn with_prefix(client: Client, prefix: &str) -> Context {
    ContextBuilder::new().api_prefix(prefix).build(client)
}

/// Whether `name` can name a stream or consumer: not empty, and none of ` `, `.`, `*`, `>`,
/// path separators or control characters (ADR-6).
pub(crate) fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name
            .bytes()
            .any(|b| matches!(b, b' ' | b'.' | b'*' | b'>' | b'/' | b'\\') || b.is_ascii_control())
}
