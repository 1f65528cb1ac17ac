//! The floor: the connection's protocol state, pure. Everything here is a state machine fed
//! with bytes, events and the time (`handle_*`), asked what to do next (`poll_*`) and when
//! to be called again (`poll_timeout`); none of it opens a socket, spawns a task, sleeps or
//! reads a clock. Both drivers (the tokio client at the crate root and
//! [`blocking`](crate::blocking)) build on these types, and the tests drive them on a virtual
//! clock with no socket and no runtime.
//!
//! This module tree imports neither tokio nor `std::net`, and outside itself only the
//! crate's vocabulary (errors, events, messages, addresses): `tests/floor_is_pure.rs` checks
//! that on every build of the tests.

pub(crate) mod attempts;
pub(crate) mod backoff;
pub(crate) mod deadline;
pub(crate) mod frames;
pub(crate) mod handshake;
pub(crate) mod keepalive;
pub(crate) mod link;
pub(crate) mod plan;
pub(crate) mod read_buffers;
pub(crate) mod replies;
pub(crate) mod server_pool;
pub(crate) mod session;
pub(crate) mod sync;
pub(crate) mod tunnel;
pub(crate) mod write_queue;
