//! Getting a connection back: the server pool, the backoff between passes over it, and the
//! attempt loop (ADR-40). The engine calls [`reconnect`] when a connection ends and resumes
//! with whatever connection it returns.

use std::collections::hash_map::RandomState;
use std::future::{Future, poll_fn};
use std::hash::{BuildHasher, Hasher};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::Duration;

use rnats_proto::ServerInfo;

use crate::ConnectErrorKind;
use crate::events::{ClientError, ConnectionEvent, Event};
use crate::handshake::{self, Established};
use crate::options::ReconnectPolicy;
use crate::server_addr::ServerAddr;
use crate::server_pool::{ReconnectToServer, ServerPool};
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

/// Tries servers until one accepts, as the policy says (see [`Attempts`]). Returns `None`
/// when the client is closed meanwhile or the attempts run out.
pub(crate) async fn reconnect(shared: &Shared) -> Option<Established> {
    let policy = &shared.options.reconnect;
    loop {
        let choice = ask_callback(shared).await?;
        let plan =
            lock(&shared.pool).plan_attempt(policy, choice, true, |event| shared.emit(event));
        let Some(Plan::Dial(attempt)) = plan else {
            return None;
        };
        if !attempt.delay.is_zero() {
            unless_closed(shared, tokio::time::sleep(attempt.delay)).await?;
        }
        let outcome =
            unless_closed(shared, handshake::connect(&attempt.addr, &shared.options)).await?;
        match outcome {
            Ok(established) => {
                lock(&shared.pool).record(&attempt.addr, Ok(()));
                return Some(established);
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

/// How the attempts since the last connection stand, in async-nats' terms, which both
/// clients and their first connect share. Attempts come in *tries*: one attempt on the
/// server the `reconnect_to_server_callback` chooses (it is asked at the start of every try),
/// or else a pass over the pool. Attempts are numbered from 1 after every successful connect
/// and every `set_server_pool`; `max_reconnects` bounds that number.
///
/// The wait before an attempt is what the `reconnect_delay_callback` says for its number,
/// when one is set (as in async-nats, the first attempt included). rnats' default waits
/// only before a try, none before the first, then [`default_delay`] by the try's number,
/// and never between the servers of one pass. A server the callback chose with a delay of
/// its own waits that long instead.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Attempts {
    /// Attempts since the last connection, the one under way included.
    count: usize,
    /// Tries since the last connection, the one under way included.
    tries: usize,
    /// Attempts left in the pass under way.
    pass_left: usize,
}

impl Attempts {
    /// Whether the next attempt starts a try (and so asks the reconnect-to-server callback).
    pub(crate) fn starts_try(&self) -> bool {
        self.pass_left == 0
    }
}

/// What [`ServerPool::plan_attempt`] decided.
#[derive(Debug)]
pub(crate) enum Plan {
    /// Make this attempt.
    Dial(Attempt),
    /// `max_reconnects` attempts were made: give up.
    GiveUp,
}

/// One connection attempt.
#[derive(Debug)]
pub(crate) struct Attempt {
    pub(crate) addr: ServerAddr,
    /// The wait before it.
    pub(crate) delay: Duration,
    /// Its number since the last connection, from 1.
    pub(crate) number: usize,
    /// It is the last of its try: when it fails, the try has failed.
    ends_try: bool,
}

impl Attempt {
    /// The event for listeners when this attempt failed with `error`.
    pub(crate) fn failed(&self, error: &crate::ConnectError) -> ConnectionEvent {
        ConnectionEvent::ReconnectFailed {
            attempt: self.number,
            server: self.addr.to_string(),
            error: error.to_string(),
        }
    }
}

impl ServerPool {
    /// The next attempt. `choice` is the reconnect-to-server callback's, asked if
    /// [`Attempts::starts_try`]: a server of the pool is tried alone (one outside it is
    /// reported to `emit` as `ServerNotInPool` and a pass follows instead). `limited`:
    /// whether `max_reconnects` applies (not to the first connect). `None`: the pool is
    /// empty.
    pub(crate) fn plan_attempt(
        &mut self,
        policy: &ReconnectPolicy,
        choice: Option<ReconnectToServer>,
        limited: bool,
        emit: impl FnOnce(ConnectionEvent),
    ) -> Option<Plan> {
        let starts = self.attempts.starts_try();
        let chosen = match choice {
            Some(choice) if starts && self.contains(&choice.addr) => Some(choice),
            Some(_) if starts => {
                emit(ConnectionEvent::ClientError(ClientError::ServerNotInPool));
                None
            }
            _ => None,
        };
        if self.len() == 0 {
            return None;
        }
        let attempts = &mut self.attempts;
        attempts.count += 1;
        if starts {
            attempts.tries += 1;
        }
        if limited
            && policy
                .max_reconnects
                .is_some_and(|max| attempts.count > max)
        {
            return Some(Plan::GiveUp);
        }
        let (count, tries) = (attempts.count, attempts.tries);
        let delay = |starts: bool| match &policy.delay {
            Some(delay) => delay(count),
            None if starts => default_delay(tries - 1),
            None => Duration::ZERO,
        };
        let attempt = match chosen {
            Some(choice) => {
                self.attempts.pass_left = 0;
                Attempt {
                    delay: choice.delay.unwrap_or_else(|| delay(true)),
                    addr: choice.addr,
                    number: count,
                    ends_try: true,
                }
            }
            None => {
                if starts {
                    self.attempts.pass_left = self.len();
                    self.start_pass_after_current();
                }
                self.attempts.pass_left -= 1;
                Attempt {
                    addr: self.next_server()?,
                    delay: delay(starts),
                    number: count,
                    ends_try: self.attempts.pass_left == 0,
                }
            }
        };
        Some(Plan::Dial(attempt))
    }

    /// Notes that `attempt` failed with `error`. When that ends its try (a rejected login
    /// ends a pass at once, as in async-nats), returns what the event callback is told,
    /// once per try as async-nats tells it: `ClientError::Other` with the error's kind.
    pub(crate) fn note_failure(
        &mut self,
        attempt: &Attempt,
        error: &crate::ConnectError,
    ) -> Option<Event> {
        self.record(&attempt.addr, Err(error.to_string()));
        let rejected = matches!(
            error.kind(),
            ConnectErrorKind::AuthorizationViolation | ConnectErrorKind::Authentication
        );
        if rejected {
            self.attempts.pass_left = 0;
        }
        (attempt.ends_try || rejected)
            .then(|| Event::ClientError(ClientError::Other(error.kind().to_string())))
    }
}

/// The first connect: one try (see [`Attempts`]), with no `max_reconnects` limit.
pub(crate) async fn first_connect(
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
            tokio::time::sleep(attempt.delay).await;
        }
        match handshake::connect(&attempt.addr, options).await {
            Ok(established) => {
                pool.record(&attempt.addr, Ok(()));
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
/// last, until none is waiting; run off the engine (see [`crate::server_pool::Announcements`]).
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
/// ([`take_announced_quietly`](crate::server_pool::take_announced_quietly)): waking another
/// thread for that much would cost the traffic behind the INFO more, on a machine with few
/// cores, than it saves. Returns false when the caller must run [`merge_announced`]
/// elsewhere instead.
pub(crate) fn take_announced_here(shared: &Shared) -> bool {
    shared.events.receiver_count() == 0
        && crate::server_pool::take_announced_quietly(&shared.pool, &shared.announcements)
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

    fn pool(servers: &[&str]) -> ServerPool {
        ServerPool::new(servers.iter().map(|s| s.parse().unwrap()).collect(), true)
    }

    fn dial(plan: Option<Plan>) -> Attempt {
        match plan {
            Some(Plan::Dial(attempt)) => attempt,
            other => panic!("an attempt expected, not {other:?}"),
        }
    }

    fn refused() -> crate::ConnectError {
        crate::ConnectError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
    }

    #[test]
    fn a_delay_callback_is_asked_before_every_attempt_by_its_number() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let policy = ReconnectPolicy {
            delay: Some(Arc::new({
                let seen = Arc::clone(&seen);
                move |n| {
                    seen.lock().unwrap().push(n);
                    Duration::from_millis(n as u64)
                }
            })),
            max_reconnects: Some(3),
            ..ReconnectPolicy::default()
        };
        let mut pool = pool(&["a:1", "b:2"]);
        for n in 1..=3 {
            let attempt = dial(pool.plan_attempt(&policy, None, true, drop));
            assert_eq!(
                (attempt.number, attempt.delay),
                (n, Duration::from_millis(n as u64))
            );
            // Once per pass over the two servers, the callback hears of the failure.
            let told = pool.note_failure(&attempt, &refused());
            assert_eq!(told.is_some(), n % 2 == 0, "attempt {n}");
        }
        assert!(matches!(
            pool.plan_attempt(&policy, None, true, drop),
            Some(Plan::GiveUp)
        ));
        // Given up before asking for a fourth delay.
        assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
        // A new pool counts from 1 again, as does a connection.
        pool.replace(vec!["c:3".parse().unwrap()]);
        assert_eq!(dial(pool.plan_attempt(&policy, None, true, drop)).number, 1);
        pool.record(&"c:3".parse().unwrap(), Ok(()));
        assert_eq!(dial(pool.plan_attempt(&policy, None, true, drop)).number, 1);
    }

    #[test]
    fn a_pass_tries_the_server_just_lost_last() {
        let policy = ReconnectPolicy::default();
        // Connected to the only server given; the cluster then advertised two more.
        let mut pool = pool(&["a:1"]);
        let first = dial(pool.plan_attempt(&policy, None, false, drop));
        pool.record(&first.addr, Ok(()));
        pool.add_discovered(&ServerInfo {
            connect_urls: vec!["b:2".into(), "c:3".into()],
            ..ServerInfo::default()
        });
        let mut hosts = Vec::new();
        for _ in 0..3 {
            let attempt = dial(pool.plan_attempt(&policy, None, true, drop));
            hosts.push(attempt.addr.host().to_owned());
            pool.note_failure(&attempt, &refused());
        }
        assert_eq!(hosts, ["b", "c", "a"]);
    }

    #[test]
    fn the_default_waits_only_before_passes_after_the_first() {
        let policy = ReconnectPolicy::default();
        let mut pool = pool(&["a:1", "b:2"]);
        let mut delays = Vec::new();
        for _ in 0..4 {
            let attempt = dial(pool.plan_attempt(&policy, None, true, drop));
            delays.push(attempt.delay);
            pool.note_failure(&attempt, &refused());
        }
        // The first pass at once, the second after a wait, none between its servers.
        assert_eq!(delays[..2], [Duration::ZERO; 2]);
        assert!(delays[2] >= Duration::from_millis(100));
        assert_eq!(delays[3], Duration::ZERO);
    }

    #[test]
    fn a_chosen_server_is_a_try_of_its_own() {
        let policy = ReconnectPolicy::default();
        let mut pool = pool(&["a:1", "b:2"]);
        assert!(pool.attempts.starts_try());
        let choice = ReconnectToServer {
            addr: "b:2".parse().unwrap(),
            delay: Some(Duration::from_millis(7)),
        };
        let attempt = dial(pool.plan_attempt(&policy, Some(choice), true, drop));
        assert_eq!(attempt.addr.host(), "b");
        assert_eq!(attempt.delay, Duration::from_millis(7));
        assert!(pool.note_failure(&attempt, &refused()).is_some());
        assert!(pool.attempts.starts_try(), "the callback is asked again");
        // A server outside the pool is reported, and a pass follows.
        let mut reported = None;
        let stranger = ReconnectToServer {
            addr: "z:9".parse().unwrap(),
            delay: None,
        };
        let attempt = dial(pool.plan_attempt(&policy, Some(stranger), true, |e| {
            reported = Some(e);
        }));
        assert_eq!(
            reported,
            Some(ConnectionEvent::ClientError(ClientError::ServerNotInPool))
        );
        assert!(pool.note_failure(&attempt, &refused()).is_none());
        assert!(!pool.attempts.starts_try(), "mid-pass");
    }

    #[test]
    fn shuffle_keeps_every_item() {
        let mut items: Vec<u32> = (0..50).collect();
        shuffle(&mut items);
        items.sort_unstable();
        assert_eq!(items, (0..50).collect::<Vec<_>>());
    }
}
