//! Getting a connection back, for the tokio client: the attempt loop (ADR-40) over the
//! floor's plan ([`crate::floor::attempts`]). The engine calls [`reconnect`] when a connection ends and resumes
//! with whatever connection it returns.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use rnats_proto::ServerInfo;

use crate::dial::{self, Established};
use crate::events::{ClientError, ConnectionEvent};
use crate::floor::attempts::Plan;
use crate::floor::server_pool::{ReconnectToServer, ServerPool};
use crate::floor::sync::lock;
use crate::rt::Rt;
use crate::shared::Shared;

/// Tries servers until one accepts, as the policy says (see [`Attempts`]). Fails with
/// `None` when the client is closed meanwhile, or with the reason the connection is lost
/// when it gives up (the attempts ran out, or a server refused the same login twice), which
/// it has told the event listeners.
pub(crate) async fn reconnect(shared: &Shared) -> Result<Established, Option<String>> {
    let policy = &shared.options.reconnect;
    loop {
        let choice = ask_callback(shared).await.ok_or(None)?;
        let plan =
            lock(&shared.pool).plan_attempt(policy, choice, true, |event| shared.emit(event));
        let attempt = match plan {
            Some(Plan::Dial(attempt)) => attempt,
            Some(Plan::GiveUp(why)) => return Err(give_up(shared, why)),
            None => return Err(give_up(shared, ClientError::MaxReconnects)),
        };
        if !attempt.delay.is_zero() {
            unless_closed(shared, shared.rt.sleep(attempt.delay))
                .await
                .ok_or(None)?;
        }
        let dialing = dial::connect(
            shared.rt,
            &attempt.addr,
            attempt.tls_name(),
            &shared.options,
        );
        let outcome = unless_closed(shared, dialing).await.ok_or(None)?;
        match outcome {
            Ok(established) => {
                lock(&shared.pool).connected(&attempt, shared.rt.now());
                return Ok(established);
            }
            Err(error) => {
                tracing::debug!(attempt = attempt.number, server = ?attempt.addr, %error, "reconnect failed");
                let try_ended = lock(&shared.pool).note_failure(&attempt, &error);
                shared.emit(attempt.failed(&error));
                if let Some(event) = try_ended {
                    shared.emit_to_callback(event);
                }
            }
        }
    }
}

/// Giving up: the listeners are told why, unless the client is being closed anyway. The
/// reason the connection is lost, `None` when it is closed.
fn give_up(shared: &Shared, why: ClientError) -> Option<String> {
    if shared.close_requested.load(Ordering::Acquire) {
        return None;
    }
    let reason = match &why {
        ClientError::Other(refused) => refused.clone(),
        _ => "reconnect attempts exhausted".to_owned(),
    };
    shared.emit(ConnectionEvent::ClientError(why));
    Some(reason)
}

/// The `reconnect_to_server_callback`'s choice at the start of a try, if one is set
/// (`Some(None)` otherwise); `None` when the client is closed meanwhile.
async fn ask_callback(shared: &Shared) -> Option<Option<ReconnectToServer>> {
    let Some(choose) = &shared.options.reconnect.choose_server else {
        return Some(None);
    };
    let servers = {
        let mut pool = lock(&shared.pool);
        if !pool.attempts.starts_try() {
            return Some(None);
        }
        pool.snapshot()
    };
    let info = Arc::clone(shared.session().info());
    unless_closed(shared, choose(servers, ServerInfo::clone(&info))).await
}

/// The first connect: one try (see [`Attempts`]), with no `max_reconnects` limit.
pub(crate) async fn first_connect(
    rt: Rt,
    options: &crate::ConnectOptions,
    pool: &mut ServerPool,
) -> Result<Established, crate::ConnectError> {
    let policy = &options.reconnect;
    let mut choice = match &policy.choose_server {
        Some(choose) => choose(pool.snapshot(), ServerInfo::default()).await,
        None => None,
    };
    let mut last_error = None;
    // Nobody listens yet: a choice outside the pool only means a pass instead.
    while let Some(Plan::Dial(attempt)) = pool.plan_attempt(policy, choice.take(), false, drop) {
        if !attempt.delay.is_zero() {
            rt.sleep(attempt.delay).await;
        }
        match dial::connect(rt, &attempt.addr, attempt.tls_name(), options).await {
            Ok(established) => {
                pool.connected(&attempt, rt.now());
                return Ok(established);
            }
            Err(error) => {
                let try_ended = pool.note_failure(&attempt, &error).is_some();
                last_error = Some(error);
                if try_ended {
                    break;
                }
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

/// Merges the servers of the INFO updates in `shared.announcements` into the pool, newest
/// last, until none is waiting; run off the engine (see [`crate::floor::server_pool::Announcements`]).
pub(crate) fn merge_announced(shared: &Shared) {
    loop {
        let Some(info) = lock(&shared.announcements).next() else {
            return;
        };
        // Worked out only for a listener: nobody else hears of them.
        let report = shared.events.receiver_count() > 0;
        let added = lock(&shared.pool).take_announced(info, report);
        report_discovered(shared, added);
    }
}

/// Takes in the INFO updates waiting in `shared.announcements` on the calling thread (the
/// engine) when nobody listens for `DiscoveredServers` and the pool is free
/// ([`take_announced_quietly`](crate::floor::server_pool::take_announced_quietly)): waking another
/// thread for that much would cost the traffic behind the INFO more, on a machine with few
/// cores, than it saves. Returns false when the caller must run [`merge_announced`]
/// elsewhere instead.
pub(crate) fn take_announced_here(shared: &Shared) -> bool {
    shared.events.receiver_count() == 0
        && crate::floor::server_pool::take_announced_quietly(&shared.pool, &shared.announcements)
}

/// Reports servers the cluster advertised that the pool did not know.
pub(crate) fn report_discovered(shared: &Shared, added: Vec<String>) {
    if !added.is_empty() {
        shared.emit(ConnectionEvent::DiscoveredServers(added));
    }
}
