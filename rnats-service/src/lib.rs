//! The NATS Service API (ADR-32) for rnats: discoverable, monitored request/reply services.
//!
//! Users reach this crate as `rnats::service`, the path async-nats gives it. It is built on the
//! public API of `rnats-core` alone.
//!
//! The module is reserved here; its contents arrive with the Service API issue.
