//! The reconnect policy and the plan of each connection attempt over the server pool
//! (ADR-40), in async-nats' terms ([`Attempts`](super::attempts::Attempts)): which server,
//! after what wait, and when to give up.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rnats_proto::ServerInfo;

use super::attempts::{Attempt, Plan};
use super::backoff::default_delay;
use super::server_pool::{ReconnectToServer, Server, ServerPool};
use crate::error::{ConnectError, ConnectErrorKind};
use crate::events::{ClientError, ConnectionEvent, Event};
use crate::server_addr::ServerAddr;

/// When and how to reconnect; see the reconnect setters on
/// [`ConnectOptions`](crate::ConnectOptions).
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
    /// Give up when a server refuses the login twice in a row with the same error (nats.go's
    /// default; async-nats retries for ever, as rnats does unless asked).
    pub(crate) close_on_repeated_auth_error: bool,
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
            close_on_repeated_auth_error: false,
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
        if policy.close_on_repeated_auth_error
            && let Some(refused) = &self.attempts.refused_twice
        {
            return Some(Plan::GiveUp(ClientError::Other(refused.clone())));
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
            return Some(Plan::GiveUp(ClientError::MaxReconnects));
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
                    tls_name: self.tls_name_of(&choice.addr),
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
                let addr = self.next_server()?;
                Attempt {
                    tls_name: self.tls_name_of(&addr),
                    addr,
                    delay: delay(starts),
                    number: count,
                    ends_try: self.attempts.pass_left == 0,
                }
            }
        };
        Some(Plan::Dial(attempt))
    }

    /// Notes whether `addr` refused the login (`refusal`: what it said) since the last
    /// connection: the same refusal as on its attempt before gives up, when the policy asks
    /// for it; any other outcome there starts its count again.
    fn note_refusal(&mut self, addr: &ServerAddr, refusal: Option<&String>) {
        let refusals = &mut self.attempts.refusals;
        let before = refusals.iter().position(|(a, _)| a.same_server(addr));
        let before = before.map(|i| refusals.swap_remove(i).1);
        let Some(refusal) = refusal else {
            return;
        };
        if before.as_ref() == Some(refusal) {
            self.attempts.refused_twice = Some(format!(
                "{addr} refused the login twice in a row ({refusal}): not reconnecting"
            ));
        }
        refusals.push((addr.clone(), refusal.clone()));
    }

    /// Notes that `attempt` failed with `error`. When that ends its try (a rejected login
    /// ends a pass at once, as in async-nats), returns what the event callback is told,
    /// once per try as async-nats tells it: `ClientError::Other` with the error's kind.
    pub(crate) fn note_failure(
        &mut self,
        attempt: &Attempt,
        error: &ConnectError,
    ) -> Option<Event> {
        let error_text = error.to_string();
        let rejected = matches!(
            error.kind(),
            ConnectErrorKind::AuthorizationViolation | ConnectErrorKind::Authentication
        );
        self.note_refusal(&attempt.addr, rejected.then_some(&error_text));
        self.record(&attempt.addr, Err(error_text));
        if rejected {
            self.attempts.pass_left = 0;
        }
        (attempt.ends_try || rejected)
            .then(|| Event::ClientError(ClientError::Other(error.kind().to_string())))
    }
}
