//! Client-agnostic parts of the rnats vs async-nats vs raw benchmark: scenarios and their
//! targets, the shared workload, statistics, the command line, memory probes and the result
//! table; the raw blocking-socket client ([`raw`]) with its scenarios, the practical limit
//! every client is measured against, and the same wire handling on tokio
//! ([`raw::on_tokio`]), the floor of the async clients' shape; and the Core scenarios of
//! rnats's blocking client ([`blocking`]).
//!
//! The async clients' scenarios live in `benches/compare.rs`, because async-nats may only be a
//! dev-dependency. Run them with
//! `cargo bench -p rnats-bench --bench compare -- [--quick] [--rounds R]
//! [--runtime current-thread|multi-thread] [--clients NAME,...] [SCENARIO...]`.
//!
//! The crate is published because the `rnats` command line (`rnats-cli`) is built on it
//! (`rnats bench`, its scale curves and charts) and must install with `cargo install`. Its API
//! serves that command line and this repository's benchmarks; it makes no stability promise of
//! its own.

// The scale probes are compiled for each client and name this crate as the async-nats side
// does, `rnats_bench::...`.
extern crate self as rnats_bench;

pub mod args;
pub mod blocking;
pub mod cost;
pub mod memory;
pub mod plot;
pub mod raw;
pub mod report;
pub mod scale;
pub mod scenario;
pub mod small_bench;
pub mod stats;
pub mod workload;

pub use args::{Args, ArgsError, MemChild, MemProbe};
pub use report::Report;
pub use scenario::{
    COST, ClientKind, JS_FETCH_BATCH, JS_IN_FLIGHT, PayloadSize, Plan, RawTarget, Runtime,
    SERVER_COST, Scenario, Shape,
};
pub use stats::{Latency, Throughput};
