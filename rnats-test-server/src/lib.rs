//! Spawns a real `nats-server` per test on a free loopback port.
//!
//! Every server binds `127.0.0.1` only, picks its client port through `-p -1` unless told
//! otherwise, and is considered ready once its stderr log says so: nothing here waits on a
//! timer. Dropping a [`NatsServer`] kills and reaps the process and deletes its temporary
//! files (generated config, JetStream store).
//!
//! The binary is `nats-server` from `PATH` (else from the virtual environment
//! `scripts/ensure-nats-server` installs into, `$RNATS_VENV` or `~/.cache/rnats/venv`), or the
//! path in the `NATS_SERVER_BIN` environment variable, or whatever [`ServerBuilder::binary`]
//! names.
//!
//! Fixtures for resilience and security tests sit beside the server: [`Proxy`] plays a
//! broken network (cut, stalled or refusing links), [`TestCa`] issues certificates for
//! [`ServerBuilder::tls`] and [`ServerBuilder::websocket_tls`], and [`Operator`] /
//! [`nkey_user`] make identities for operator mode (JWT) and [`ServerBuilder::nkey_users`].
//! Beyond one [`Cluster`], [`Supercluster`] joins two clusters by gateways and
//! [`HubAndLeaf`] hangs leaf nodes with their own JetStream domain off a hub cluster, each
//! link through a [`Proxy`] a test can cut, and [`Cluster::builder`] can run a cluster's own
//! routes through proxies, to partition its servers from each other; their readiness is read from the servers' HTTP
//! monitoring endpoints ([`ServerBuilder::monitoring`], [`NatsServer::wait_for_monitor`]).
//! [`ServerBuilder::websocket`] adds a `ws://` listener beside the client port, and [`nats_py`]
//! runs nats-py scripts as a second, independent client for interchange tests.
//!
//! The rnats crates' integration tests run on it, and the `rnats` command line starts its
//! private server for `rnats bench` with it; it is published so that the command line installs
//! with `cargo install`, and any project may use it for tests against a real server. It is a
//! test fixture: loopback only, temporary files, nothing meant for running a real deployment.
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
pub mod heap;
mod hub_and_leaf;
mod info;
mod log;
mod monitor;
mod node;
mod poll;
mod proxy;
mod python;
mod route_links;
mod server;
mod supercluster;
mod tls;
mod venv;
mod websocket;

pub use auth::{Account, Operator, SYSTEM_ACCOUNT_NAME, User, nkey_user, sign_nonce};
pub use builder::{FEATURE_FLAGS_ENV, ServerBuilder};
pub use cluster::{Cluster, ClusterBuilder};
pub use error::TestServerError;
pub use hub_and_leaf::{HUB_DOMAIN, HubAndLeaf, HubAndLeafBuilder, LEAF_DOMAIN, Role};
pub use node::{NATS_JS_VERSION, nats_js, run_nats_js};
pub use poll::wait_until;
pub use proxy::Proxy;
pub use python::{NATS_PY_VERSION, nats_py, run_nats_py};
pub use server::NatsServer;
pub use supercluster::{SUPERCLUSTER_NAMES, Supercluster, SuperclusterBuilder};
pub use tls::{CLIENT_CN, CertPair, LOOPBACK_NAMES, TestCa, TlsFiles};

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, TcpListener};

/// Returns a loopback TCP port that was free a moment ago.
///
/// The port is found by binding it on `127.0.0.1` and dropping the listener, so another
/// process may take it before the caller does (this process never hands it out again, here
/// or as a cluster's port); use it for fixed-port scenarios where `-p -1`
/// will not do (for example a port that must be known before the server starts). It is
/// drawn below the kernel's ephemeral range where there is room, so that the ports the
/// kernel hands out meanwhile (to `-p -1` listeners and to every outgoing connection) do not
/// take it. With `RNATS_TEST_PORT_SLICE=i/n` in the environment the draw keeps to the `i`-th
/// of `n` slices of that range, so that `n` test processes started side by side with
/// `0/n` to `n-1/n` (as `scripts/run-tests` starts them) never draw the same port.
///
/// # Panics
///
/// Panics if the OS refuses to bind any loopback port, which leaves no test to run.
pub fn free_port() -> u16 {
    free_ports(1)
        .ok()
        .and_then(|ports| ports.first().copied())
        .unwrap_or_else(|| panic!("cannot bind a free port on 127.0.0.1"))
}

/// Lowest port [`free_ports`] draws from: below are the well-known and the most used
/// registered ports.
const PICK_FLOOR: u16 = 10_000;
/// Random draws before [`free_ports`] falls back to ports the kernel picks.
const PICK_TRIES: usize = 200;

/// Ports this process has handed out, never handed out again. A port is free when drawn
/// but released before its server binds it (a cluster's route ports are all drawn before its
/// first node starts, a node's monitoring port when the node starts), so without this a later
/// draw could return it again: a node once got its own route port as its monitoring port
/// and failed to start.
static HANDED_OUT: std::sync::Mutex<BTreeSet<u16>> = std::sync::Mutex::new(BTreeSet::new());

/// Returns `n` distinct free loopback ports that this process has not handed out before,
/// holding every listener until all are picked. They are drawn at random between
/// [`PICK_FLOOR`] and the start of the kernel's ephemeral range.
pub(crate) fn free_ports(n: usize) -> std::io::Result<Vec<u16>> {
    // A test that panicked while holding the lock left the set whole.
    let mut handed_out = HANDED_OUT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (floor, ceiling) = pick_range(
        ephemeral_floor(),
        std::env::var("RNATS_TEST_PORT_SLICE").ok().as_deref(),
    );
    let mut listeners = Vec::with_capacity(n);
    if ceiling > floor {
        let span = u64::from(ceiling - floor);
        for draw in 0..PICK_TRIES {
            if listeners.len() == n {
                break;
            }
            let port = floor + u16::try_from(random(draw) % span).unwrap_or(0);
            if handed_out.contains(&port) {
                continue;
            }
            // Taken (or still in TIME_WAIT without SO_REUSEADDR): draw another.
            if let Ok(listener) = TcpListener::bind((Ipv4Addr::LOCALHOST, port)) {
                listeners.push(listener);
            }
        }
    }
    // The kernel never gives a port that one of `listeners` holds, but may give one this
    // process handed out and released: those are kept bound until the end, then let go.
    let mut refused = Vec::new();
    while listeners.len() < n {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        if handed_out.contains(&listener.local_addr()?.port()) {
            refused.push(listener);
        } else {
            listeners.push(listener);
        }
    }
    let ports = listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<std::io::Result<Vec<u16>>>()?;
    handed_out.extend(&ports);
    Ok(ports)
}

/// The ports [`free_ports`] draws from: [`PICK_FLOOR`] up to the kernel's ephemeral range, or
/// the `i`-th of `n` equal slices of it when `RNATS_TEST_PORT_SLICE` is `i/n`.
///
/// `HANDED_OUT` keeps one process from drawing a port twice, but two test processes running
/// at once (scripts/run-tests runs two binaries at a time) could each draw a port the other
/// has drawn and not yet bound; it gives each of its lanes a slice of its own. A slice it
/// cannot read is ignored: the whole range is correct, only less safe beside another run.
fn pick_range(ephemeral_floor: u16, slice: Option<&str>) -> (u16, u16) {
    let whole = (PICK_FLOOR, ephemeral_floor);
    let Some((index, count)) = slice.and_then(|s| s.split_once('/')) else {
        return whole;
    };
    let (Ok(index), Ok(count)) = (index.trim().parse::<u32>(), count.trim().parse::<u32>()) else {
        return whole;
    };
    if count == 0 || index >= count || ephemeral_floor <= PICK_FLOOR {
        return whole;
    }
    let span = u32::from(ephemeral_floor - PICK_FLOOR);
    let width = span / count;
    if width == 0 {
        return whole;
    }
    let start = u32::from(PICK_FLOOR) + index * width;
    // Every bound is at most `ephemeral_floor`, a u16.
    let bound = |port: u32| u16::try_from(port).unwrap_or(ephemeral_floor);
    (bound(start), bound(start + width))
}

/// The first port of the kernel's ephemeral range (Linux), 32768 where it cannot be read.
fn ephemeral_floor() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// A random number, fresh per call: `RandomState` is seeded randomly per instance.
fn random(salt: usize) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_usize(salt);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::{PICK_FLOOR, free_port, free_ports, pick_range};

    #[test]
    fn no_port_is_handed_out_twice() {
        // One at a time, each released at once (as a node's monitoring port is before the
        // node binds it), then a group: over a thousand draws from some twenty thousand
        // ports, where draws that forgot what they gave would repeat themselves dozens of
        // times.
        let mut seen = HashSet::new();
        for _ in 0..1_000 {
            let port = free_port();
            assert!(seen.insert(port), "port {port} handed out twice");
        }
        for port in free_ports(100).expect("loopback ports") {
            assert!(seen.insert(port), "port {port} handed out twice");
        }
    }

    #[test]
    fn lanes_draw_from_slices_that_do_not_meet() {
        let ceiling = 32_768;
        let slices: Vec<(u16, u16)> = (0..3)
            .map(|i| pick_range(ceiling, Some(&format!("{i}/3"))))
            .collect();
        assert_eq!(slices[0].0, PICK_FLOOR);
        for pair in slices.windows(2) {
            assert!(pair[0].0 < pair[0].1, "{slices:?}");
            assert_eq!(pair[0].1, pair[1].0, "{slices:?}");
        }
        assert!(
            slices[2].1 <= ceiling && slices[2].1 > ceiling - 3,
            "{slices:?}"
        );
        // What cannot be read, or cannot be cut, leaves the whole range.
        for slice in [
            None,
            Some("1"),
            Some("3/3"),
            Some("0/0"),
            Some("a/2"),
            Some("1/99999"),
        ] {
            assert_eq!(
                pick_range(ceiling, slice),
                (PICK_FLOOR, ceiling),
                "{slice:?}"
            );
        }
        assert_eq!(
            pick_range(PICK_FLOOR, Some("0/2")),
            (PICK_FLOOR, PICK_FLOOR)
        );
    }
}
