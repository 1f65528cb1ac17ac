//! Getting a connection back: the server pool, the backoff between passes over it, and the
//! attempt loop (ADR-40). The engine calls [`reconnect`] when a connection ends and resumes
//! with whatever connection it returns.

use std::collections::hash_map::RandomState;
use std::future::{Future, poll_fn};
use std::hash::{BuildHasher, Hasher};
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::Duration;

use rnats_proto::ServerInfo;

use crate::events::ConnectionEvent;
use crate::handshake::{self, Established};
use crate::server_addr::ServerAddr;
use crate::shared::Shared;

/// The default delay before pass `pass` over the pool: 100 ms doubling to 5 s, plus up to 50%
/// random jitter.
pub(crate) fn default_delay(pass: usize) -> Duration {
    if pass == 0 {
        return Duration::ZERO;
    }
    let exponent = u32::try_from(pass - 1).unwrap_or(u32::MAX).min(6);
    let base = Duration::from_millis(100 * (1 << exponent)).min(Duration::from_secs(5));
    base + base.mul_f64(random_unit() / 2.0)
}

/// A random number in [0, 1). `RandomState` is seeded randomly per instance, which is all the
/// randomness jitter and shuffling need; no RNG crate for that.
pub(crate) fn random_unit() -> f64 {
    let bits = RandomState::new().build_hasher().finish() >> 11;
    bits as f64 / (1u64 << 53) as f64
}

/// Shuffles in place (Fisher-Yates).
pub(crate) fn shuffle<T>(items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = (random_unit() * (i + 1) as f64) as usize;
        items.swap(i, j.min(i));
    }
}

/// The servers to try: those given at connect plus those the cluster advertised.
#[derive(Debug)]
pub(crate) struct ServerPool {
    servers: Vec<ServerAddr>,
    next: usize,
}

impl ServerPool {
    /// A pool of `servers`, shuffled unless `retain_order`.
    pub(crate) fn new(mut servers: Vec<ServerAddr>, retain_order: bool) -> ServerPool {
        if !retain_order {
            shuffle(&mut servers);
        }
        ServerPool { servers, next: 0 }
    }

    /// Number of servers.
    pub(crate) fn len(&self) -> usize {
        self.servers.len()
    }

    /// The next server to try, round robin.
    pub(crate) fn next_server(&mut self) -> Option<ServerAddr> {
        let server = self
            .servers
            .get(self.next % self.servers.len().max(1))?
            .clone();
        self.next = (self.next + 1) % self.servers.len();
        Some(server)
    }

    /// Adds the servers `info` advertises that the pool does not know yet; returns them
    /// as advertised.
    ///
    /// A pool of WebSocket servers learns WebSocket addresses: `ws_connect_urls` when the
    /// INFO has them, else `connect_urls`, which is where nats-server puts its cluster's
    /// WebSocket addresses for a WebSocket client (it leaves `ws_connect_urls` out then).
    /// Advertised addresses are bare `host:port`, so they get the pool's scheme (`ws` or
    /// `wss`); parsed on their own they would mean `nats://`.
    pub(crate) fn add_discovered(&mut self, info: &ServerInfo) -> Vec<String> {
        let websocket_scheme = self
            .servers
            .first()
            .filter(|s| s.is_websocket())
            .map(|s| s.scheme().to_owned());
        let urls = match websocket_scheme {
            Some(_) if !info.ws_connect_urls.is_empty() => &info.ws_connect_urls,
            _ => &info.connect_urls,
        };
        let mut added = Vec::new();
        for url in urls {
            let parsed = match &websocket_scheme {
                Some(scheme) if !url.contains("://") => format!("{scheme}://{url}").parse(),
                _ => url.parse::<ServerAddr>(),
            };
            let Ok(addr) = parsed else {
                continue;
            };
            if websocket_scheme.is_some() != addr.is_websocket() {
                continue;
            }
            let known = self.servers.iter().any(|s| s.same_server(&addr));
            if !known {
                added.push(url.clone());
                self.servers.push(addr);
            }
        }
        added
    }
}

/// Tries servers until one accepts, waiting between passes over the pool as the policy says.
/// Returns `None` when the client is closed meanwhile or the attempts run out.
pub(crate) async fn reconnect(shared: &Shared, pool: &mut ServerPool) -> Option<Established> {
    let policy = &shared.options.reconnect;
    let mut attempts = 0usize;
    loop {
        if policy.max_reconnects.is_some_and(|max| attempts >= max) {
            return None;
        }
        let pass = attempts / pool.len().max(1);
        if attempts % pool.len().max(1) == 0 && pass > 0 {
            unless_closed(shared, tokio::time::sleep((policy.delay)(pass))).await?;
        }
        let addr = pool.next_server()?;
        attempts += 1;
        match unless_closed(shared, handshake::connect(&addr, &shared.options)).await? {
            Ok(established) => return Some(established),
            Err(error) => {
                tracing::debug!(attempt = attempts, server = ?addr, %error, "reconnect failed");
            }
        }
    }
}

/// Connects to the first server of the pool that accepts, one pass, for the initial connect.
pub(crate) async fn first_connect(
    options: &crate::ConnectOptions,
    pool: &mut ServerPool,
) -> Result<Established, crate::ConnectError> {
    let mut last_error = None;
    for _ in 0..pool.len() {
        let Some(addr) = pool.next_server() else {
            break;
        };
        match handshake::connect(&addr, options).await {
            Ok(established) => return Ok(established),
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error.unwrap_or_else(|| crate::error::ConnectCause::NoServers.into()))
}

/// Runs `future` unless the client is closed first (`None` then).
async fn unless_closed<F: Future>(shared: &Shared, future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    poll_fn(|cx| {
        shared.engine_waker.register(cx.waker());
        if shared.close_requested.load(Ordering::Acquire) {
            return Poll::Ready(None);
        }
        future.as_mut().poll(cx).map(Some)
    })
    .await
}

/// Reports servers the cluster advertised that the pool did not know.
pub(crate) fn report_discovered(shared: &Shared, added: Vec<String>) {
    if !added.is_empty() {
        shared.emit(ConnectionEvent::DiscoveredServers(added));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_grows_to_a_cap_with_bounded_jitter() {
        assert_eq!(default_delay(0), Duration::ZERO);
        for pass in 1..20 {
            let base =
                Duration::from_millis(100 * (1 << (pass - 1).min(6))).min(Duration::from_secs(5));
            let d = default_delay(pass);
            assert!(d >= base && d <= base.mul_f64(1.5), "pass {pass}: {d:?}");
        }
    }

    #[test]
    fn pool_round_robins_and_learns_new_servers_once() {
        let servers = vec![
            "a:1".parse::<ServerAddr>().unwrap(),
            "b:2".parse::<ServerAddr>().unwrap(),
        ];
        let mut pool = ServerPool::new(servers, true);
        assert_eq!(pool.next_server().unwrap().host(), "a");
        assert_eq!(pool.next_server().unwrap().host(), "b");
        assert_eq!(pool.next_server().unwrap().host(), "a");
        let added = pool.add_discovered(&advertising(
            &["b:2", "c:3", "not a url:x"],
            &["b:8080", "d:8080"],
        ));
        assert_eq!(added, ["c:3"]);
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.servers[2].scheme(), "nats");
    }

    #[test]
    fn websocket_pools_learn_websocket_servers() {
        let servers = vec!["wss://a:443".parse::<ServerAddr>().unwrap()];
        let mut pool = ServerPool::new(servers, true);
        // What nats-server sends a WebSocket client: its WebSocket peers in connect_urls.
        let added = pool.add_discovered(&advertising(&["a:443", "b:8443"], &[]));
        assert_eq!(added, ["b:8443"]);
        let learnt = &pool.servers[1];
        assert_eq!(
            (learnt.scheme(), learnt.host(), learnt.port()),
            ("wss", "b", 8443)
        );
        // Where ws_connect_urls is present it wins over connect_urls.
        let added = pool.add_discovered(&advertising(&["c:4222"], &["d:8443"]));
        assert_eq!(added, ["d:8443"]);
        assert_eq!(pool.servers[2].scheme(), "wss");
        assert_eq!(pool.len(), 3);

        let mut pool = ServerPool::new(vec!["ws://a:80".parse().unwrap()], true);
        pool.add_discovered(&advertising(&["b:8080", "nats://c:4222"], &[]));
        assert_eq!(pool.len(), 2, "a nats:// address is no WebSocket server");
        assert_eq!(pool.servers[1].scheme(), "ws");
    }

    fn advertising(connect_urls: &[&str], ws_connect_urls: &[&str]) -> ServerInfo {
        let owned = |urls: &[&str]| urls.iter().map(|u| (*u).to_owned()).collect();
        ServerInfo {
            connect_urls: owned(connect_urls),
            ws_connect_urls: owned(ws_connect_urls),
            ..ServerInfo::default()
        }
    }

    #[test]
    fn shuffle_keeps_every_item() {
        let mut items: Vec<u32> = (0..50).collect();
        shuffle(&mut items);
        items.sort_unstable();
        assert_eq!(items, (0..50).collect::<Vec<_>>());
    }
}
