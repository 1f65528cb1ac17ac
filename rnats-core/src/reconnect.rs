//! Getting a connection back: the server pool, the backoff between passes over it, and the
//! attempt loop (ADR-40). The engine calls [`reconnect`] when a connection ends and resumes
//! with whatever connection it returns.

use std::collections::hash_map::RandomState;
use std::future::{Future, poll_fn};
use std::hash::{BuildHasher, Hasher};
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use rnats_proto::ServerInfo;

use crate::events::{ClientError, ConnectionEvent};
use crate::handshake::{self, Established};
use crate::options::ReconnectPolicy;
use crate::server_addr::ServerAddr;
use crate::server_pool::{ReconnectToServer, Server, ServerPool};
use crate::shared::{Shared, lock};

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

/// How long after a lame duck INFO to leave the server: a random moment within a second, so
/// that all its clients do not land on the next server at once (ADR-40). Both clients use it.
pub(crate) fn lame_duck_delay() -> Duration {
    const LAME_DUCK_JITTER: Duration = Duration::from_secs(1);
    LAME_DUCK_JITTER.mul_f64(random_unit())
}

/// Shuffles in place (Fisher-Yates).
pub(crate) fn shuffle<T>(items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = (random_unit() * (i + 1) as f64) as usize;
        items.swap(i, j.min(i));
    }
}

/// Tries servers until one accepts, waiting between passes over the pool as the policy says.
/// Returns `None` when the client is closed meanwhile or the attempts run out.
pub(crate) async fn reconnect(shared: &Shared) -> Option<Established> {
    let policy = &shared.options.reconnect;
    let mut attempts = 0usize;
    loop {
        if policy.max_reconnects.is_some_and(|max| attempts >= max) {
            return None;
        }
        let (addr, delay) = next_attempt(shared, attempts).await?;
        if !delay.is_zero() {
            unless_closed(shared, tokio::time::sleep(delay)).await?;
        }
        attempts += 1;
        let outcome = unless_closed(shared, handshake::connect(&addr, &shared.options)).await?;
        let noted = outcome.as_ref().map(drop).map_err(ToString::to_string);
        lock(&shared.pool).record(&addr, noted);
        match outcome {
            Ok(established) => return Some(established),
            Err(error) => {
                tracing::debug!(attempt = attempts, server = ?addr, %error, "reconnect failed");
            }
        }
    }
}

/// The server for attempt `attempts` (counted from 0) and the wait before it: the pool's next
/// server after the policy's delay at the start of each pass but the first, unless the
/// user's `reconnect_to_server_callback` picks a server of the pool (and maybe a delay).
async fn next_attempt(shared: &Shared, attempts: usize) -> Option<(ServerAddr, Duration)> {
    let policy = &shared.options.reconnect;
    let (delay, servers) = plan_attempt(&shared.pool, policy, attempts);
    let mut choice = None;
    if let (Some(choose), Some(servers)) = (&policy.choose_server, servers) {
        let info = Arc::clone(shared.session().info());
        choice = unless_closed(shared, choose(servers, ServerInfo::clone(&info))).await?;
    }
    settle_attempt(&shared.pool, choice, delay, |event| shared.emit(event))
}

/// Before reconnect attempt `attempts`: the wait before it, and the pool's servers to offer
/// the `reconnect_to_server_callback`, if one is set. Both clients plan attempts with it.
pub(crate) fn plan_attempt(
    pool: &Mutex<ServerPool>,
    policy: &ReconnectPolicy,
    attempts: usize,
) -> (Duration, Option<Vec<Server>>) {
    let pool = lock(pool);
    let servers = policy.choose_server.as_ref().map(|_| pool.snapshot());
    (delay_before(policy, attempts, pool.len()), servers)
}

/// Where attempt goes after [`plan_attempt`]: the callback's `choice` if it names a server of
/// the pool (otherwise `ServerNotInPool` goes to `emit`), else the pool's next server, after
/// `delay` unless the choice says otherwise. `None`: the pool is empty.
pub(crate) fn settle_attempt(
    pool: &Mutex<ServerPool>,
    choice: Option<ReconnectToServer>,
    delay: Duration,
    emit: impl FnOnce(ConnectionEvent),
) -> Option<(ServerAddr, Duration)> {
    if let Some(choice) = choice {
        if lock(pool).contains(&choice.addr) {
            return Some((choice.addr, choice.delay.unwrap_or(delay)));
        }
        emit(ConnectionEvent::ClientError(ClientError::ServerNotInPool));
    }
    let addr = lock(pool).next_server()?;
    Some((addr, delay))
}

/// The wait before attempt `attempts` (counted from 0) over a pool of `len` servers: the
/// policy's delay at the start of every pass but the first, none between the servers of a
/// pass. Both clients space their attempts with it.
pub(crate) fn delay_before(policy: &ReconnectPolicy, attempts: usize, len: usize) -> Duration {
    let len = len.max(1);
    let pass = attempts / len;
    match attempts % len == 0 && pass > 0 {
        true => (policy.delay)(pass),
        false => Duration::ZERO,
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
            Ok(established) => {
                pool.record(&addr, Ok(()));
                return Ok(established);
            }
            Err(error) => {
                pool.record(&addr, Err(error.to_string()));
                last_error = Some(error);
            }
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
    fn shuffle_keeps_every_item() {
        let mut items: Vec<u32> = (0..50).collect();
        shuffle(&mut items);
        items.sort_unstable();
        assert_eq!(items, (0..50).collect::<Vec<_>>());
    }
}
