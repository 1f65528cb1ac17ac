//! Spawns a real `nats-server` per test on a free loopback port.
//!
//! Every server binds `127.0.0.1` only, picks its client port through `-p -1` unless told
//! otherwise, and is considered ready once its stderr log says so: nothing here waits on a
//! timer. Dropping a [`NatsServer`] kills and reaps the process and deletes its temporary
//! files (generated config, JetStream store).
//!
//! The binary is `nats-server` from `PATH`, or the path in the `NATS_SERVER_BIN`
//! environment variable, or whatever [`ServerBuilder::binary`] names.
//!
//! Fixtures for resilience and security tests sit beside the server: [`Proxy`] plays a
//! broken network (cut, stalled or refusing links), [`TestCa`] issues certificates for
//! [`ServerBuilder::tls`] and [`ServerBuilder::websocket_tls`], and [`Operator`] /
//! [`nkey_user`] make identities for operator mode (JWT) and [`ServerBuilder::nkey_users`].
//! Beyond one [`Cluster`], [`Supercluster`] joins two clusters by gateways and
//! [`HubAndLeaf`] hangs leaf nodes with their own JetStream domain off a hub cluster, each
//! link through a [`Proxy`] a test can cut; their readiness is read from the servers' HTTP
//! monitoring endpoints ([`ServerBuilder::monitoring`], [`NatsServer::wait_for_monitor`]).
//! [`ServerBuilder::websocket`] adds a `ws://` listener beside the client port, and [`nats_py`]
//! runs nats-py scripts as a second, independent client for interchange tests.
//!
//! ```no_run
//! use rnats_test_server::NatsServer;
//!
//! let server = NatsServer::builder().jetstream(true).max_payload(1024).spawn()?;
//! println!("connect to {}", server.url());
//! # Ok::<(), rnats_test_server::TestServerError>(())
//! ```

mod auth;
mod builder;
mod cluster;
mod error;
mod hub_and_leaf;
mod info;
mod log;
mod monitor;
mod node;
mod proxy;
mod python;
mod server;
mod supercluster;
mod tls;
mod websocket;

pub use auth::{Account, Operator, SYSTEM_ACCOUNT_NAME, User, nkey_user, sign_nonce};
pub use builder::ServerBuilder;
pub use cluster::Cluster;
pub use error::TestServerError;
pub use hub_and_leaf::{HUB_DOMAIN, HubAndLeaf, HubAndLeafBuilder, LEAF_DOMAIN, Role};
pub use node::{NATS_JS_VERSION, nats_js, run_nats_js};
pub use proxy::Proxy;
pub use python::{NATS_PY_VERSION, nats_py, run_nats_py};
pub use server::NatsServer;
pub use supercluster::{SUPERCLUSTER_NAMES, Supercluster, SuperclusterBuilder};
pub use tls::{CLIENT_CN, CertPair, LOOPBACK_NAMES, TestCa, TlsFiles};

use std::net::{Ipv4Addr, TcpListener};

/// Returns a loopback TCP port that was free a moment ago.
///
/// The port is found by binding `127.0.0.1:0` and dropping the listener, so another process
/// may take it before the caller does; use it for fixed-port scenarios where `-p -1` will not
/// do (for example a port that must be known before the server starts).
///
/// # Panics
///
/// Panics if the OS refuses to bind an ephemeral loopback port, which leaves no test to run.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap_or_else(|e| panic!("cannot bind an ephemeral port on 127.0.0.1: {e}"));
    listener
        .local_addr()
        .unwrap_or_else(|e| panic!("cannot read the local address of a bound listener: {e}"))
        .port()
}

/// Returns `n` distinct free loopback ports, holding every listener until all are picked so
/// the same port is never handed out twice.
pub(crate) fn free_ports(n: usize) -> std::io::Result<Vec<u16>> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .collect::<std::io::Result<Vec<_>>>()?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect()
}
