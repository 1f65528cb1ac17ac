//! JetStream for rnats: streams, consumers and publish acknowledgements, with Key-Value
//! (`kv` feature) and Object Store (`object-store` feature) on top.
//!
//! Users reach this crate as `rnats::jetstream`, the path async-nats gives it. It is built on
//! the public API of `rnats-core` alone; where JetStream needs something the Core client does
//! not offer, that API grows instead of this crate reaching inside it.
//!
//! The module is reserved here; its contents arrive with the JetStream issue.

/// Key-Value buckets (ADR-8), reserved for the Key-Value issue.
#[cfg(feature = "kv")]
pub mod kv {}

/// Object Store buckets (ADR-20), reserved for the Object Store issue.
#[cfg(feature = "object-store")]
pub mod object_store {}
