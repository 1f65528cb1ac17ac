//! User guides: longer walks through each part of the client than the API pages give.
//!
//! Each module below holds no code; its page is one guide. The same files are the Markdown
//! guides of the repository (`rnats/guides/*.md`, also reachable as `docs/*.md`), so a guide
//! reads the same on docs.rs and in a checkout.
//!
//! - [`blocking`]: the client for programs without an async runtime.
//! - [`kv`]: the Key-Value store (ADR-8, ADR-48).
//! - [`object_store`]: the Object Store (ADR-20).
//! - [`service`]: discoverable request/reply services (ADR-32).
//! - [`batch`]: atomic batch publishing (ADR-50).
//! - [`fast_ingest`]: fast-ingest batches, acked every N messages (ADR-50).
//! - [`counters`]: distributed counters (ADR-49).
//! - [`schedules`]: messages a stream publishes later (ADR-51).
//! - [`topologies`]: superclusters, leaf nodes and JetStream domains.
//! - [`opentelemetry`]: traces across publish, request and JetStream, and the client's
//!   metrics (the `opentelemetry` feature).
//! - [`auth_callout`]: an authentication service of your own for nats-server (ADR-26, the
//!   `auth-callout` feature).
//! - [`contexts`]: connecting with the settings of the `nats` command line's contexts (the
//!   `context` feature).
//!
//! Three documents stay with the repository rather than the crate, since they describe the
//! workspace more than the library: the [performance figures and tuning guide], the
//! [connection engine's design], and the [`rnats` command line].
//!
//! [performance figures and tuning guide]: https://github.com/rnats-io/rnats/blob/main/docs/performance.md
//! [connection engine's design]: https://github.com/rnats-io/rnats/blob/main/docs/engine.md
//! [`rnats` command line]: https://github.com/rnats-io/rnats/blob/main/docs/cli.md

// Every guide's examples already run as doc tests through the `#[cfg(doctest)]` items at the
// end of lib.rs, which include the same files; `not(doctest)` keeps them from running twice.
// They are not gated on cargo features: a guide is prose, and a reader may want the one for a
// feature before turning it on.

#[cfg(not(doctest))]
#[doc = include_str!("../guides/blocking.md")]
pub mod blocking {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/kv.md")]
pub mod kv {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/object-store.md")]
pub mod object_store {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/service.md")]
pub mod service {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/batch.md")]
pub mod batch {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/fast-ingest.md")]
pub mod fast_ingest {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/counters.md")]
pub mod counters {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/schedules.md")]
pub mod schedules {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/topologies.md")]
pub mod topologies {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/opentelemetry.md")]
pub mod opentelemetry {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/auth-callout.md")]
pub mod auth_callout {}

#[cfg(not(doctest))]
#[doc = include_str!("../guides/contexts.md")]
pub mod contexts {}
