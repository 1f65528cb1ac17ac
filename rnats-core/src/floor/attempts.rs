//! Planning connection attempts over the server pool, as async-nats counts them: the
//! reconnect policy, the attempts since the last connection, and what the pool tries next.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rnats_proto::ServerInfo;

use super::backoff::default_delay;
use super::server_pool::{ReconnectToServer, Server, ServerPool};
use crate::error::{ConnectError, ConnectErrorKind};
use crate::events::{ClientError, ConnectionEvent, Event};
use crate::server_addr::ServerAddr;

/// When and how to reconnect; see the reconnect setters on [`ConnectOptions`].
#[derive(Clone)]
pub(crate) struct ReconnectPolicy {
    /// Attempts after a disconnect before giving up; `None`: never give up, `Some(0)`: never
    /// reconnect.
    pub(crate) max_reconnects: Option<usize>,
    /// The user's `reconnect_delay_callback`: the wait before each attempt, by its number
    /// since the last connection. `None`: rnats' default (see `reconnect::Attempts`).
    pub(crate) delay: Option<Arc<dyn Fn(usize) -> Duration + Send + Sync>>,
    /// Bytes of publishes kept while disconnected.
    pub(crate) buffer_size: usize,
    pub(crate) retry_on_initial_connect: bool,
    pub(crate) retain_servers_order: bool,
    pub(crate) ignore_discovered_servers: bool,
    pub(crate) fail_requests_on_disconnect: bool,
    /// The user's `reconnect_to_server_callback`.
    pub(crate) choose_server: Option<Arc<ChooseServerFn>>,
}

/// A `reconnect_to_server_callback`, boxed.
pub(crate) type ChooseServerFn = dyn Fn(Vec<Server>, ServerInfo) -> Pin<Box<dyn Future<Output = Option<ReconnectToServer>> + Send>>
    + Send
    + Sync;

impl ReconnectPolicy {
    /// With `retry_on_initial_connect`, the first connect is made in the background (the
    /// client comes back at once), unless reconnecting is off altogether.
    pub(crate) fn connects_in_background(&self) -> bool {
        self.retry_on_initial_connect && self.max_reconnects != Some(0)
    }
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            max_reconnects: None,
            delay: None,
            buffer_size: 8 * 1024 * 1024,
            retry_on_initial_connect: false,
            retain_servers_order: false,
            ignore_discovered_servers: false,
            fail_requests_on_disconnect: false,
            choose_server: None,
        }
    }
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
    pub(crate) fn failed(&self, error: &ConnectError) -> ConnectionEvent {
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
        error: &ConnectError,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(servers: &[&str]) -> ServerPool {
        ServerPool::new(servers.iter().map(|s| s.parse().unwrap()).collect(), true)
    }

    fn dial(plan: Option<Plan>) -> Attempt {
        match plan {
            Some(Plan::Dial(attempt)) => attempt,
            other => panic!("an attempt expected, not {other:?}"),
        }
    }

    fn refused() -> ConnectError {
        ConnectError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
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
}
