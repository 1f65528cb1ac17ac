//! A blocking client's connection events: [`Events`], the pull form, and the thread that
//! runs an `event_callback`.
//!
//! The threads that see what happens (readers, the background thread, `close`) hand each
//! event to every listener's own bounded queue and move on: they never wait for a listener.
//! A listener that falls behind loses its oldest events and is told how many, as with the
//! async client's broadcast channel.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use super::executor::block_on;
use super::state::deadline_after;
use super::subscriber::TimedOut;
use crate::events::{ConnectionEvent, EventCallback, LISTENER_CAPACITY as CAPACITY};
use crate::shared::lock;

/// Where a client's events go: the queues of its listeners.
pub(super) struct EventHub {
    state: Mutex<HubState>,
}

struct HubState {
    /// A listener dropped by its owner is pruned at the next event.
    listeners: Vec<Weak<Listener>>,
    /// No event comes any more (the client closed).
    ended: bool,
}

/// One listener's queue, shared by the hub and its [`Events`].
struct Listener {
    queue: Mutex<Queue>,
    ready: Condvar,
}

struct Queue {
    events: VecDeque<ConnectionEvent>,
    /// Events dropped since the listener last read, reported as `Lagged` before the rest.
    skipped: u64,
    ended: bool,
}

impl EventHub {
    pub(super) fn new() -> EventHub {
        EventHub {
            state: Mutex::new(HubState {
                listeners: Vec::new(),
                ended: false,
            }),
        }
    }

    /// A new listener, which gets every event sent from now on. After the client closed it
    /// has none and ends at once.
    pub(super) fn listen(&self) -> Events {
        let mut state = lock(&self.state);
        let listener = Arc::new(Listener {
            queue: Mutex::new(Queue {
                events: VecDeque::new(),
                skipped: 0,
                ended: state.ended,
            }),
            ready: Condvar::new(),
        });
        if !state.ended {
            state.listeners.push(Arc::downgrade(&listener));
        }
        Events { listener }
    }

    /// Gives `event` to every listener without waiting for any: a full queue drops its
    /// oldest event. Events keep the order of the calls (they pass the hub's lock one at a
    /// time), the same for every listener.
    pub(super) fn emit(&self, event: ConnectionEvent) {
        tracing::trace!(%event, "event");
        let mut state = lock(&self.state);
        if state.ended {
            return;
        }
        state.listeners.retain(|listener| {
            let Some(listener) = listener.upgrade() else {
                return false;
            };
            listener.push(event.clone());
            true
        });
    }

    /// No more events: every listener ends after what it holds.
    pub(super) fn end(&self) {
        let mut state = lock(&self.state);
        state.ended = true;
        for listener in state.listeners.drain(..) {
            if let Some(listener) = listener.upgrade() {
                lock(&listener.queue).ended = true;
                listener.ready.notify_all();
            }
        }
    }
}

impl Drop for EventHub {
    fn drop(&mut self) {
        self.end();
    }
}

impl Listener {
    fn push(&self, event: ConnectionEvent) {
        let mut queue = lock(&self.queue);
        if queue.events.len() >= CAPACITY {
            queue.events.pop_front();
            queue.skipped += 1;
        }
        queue.events.push_back(event);
        drop(queue);
        self.ready.notify_one();
    }
}

impl Queue {
    /// The next event (`Some(None)`: ended), or `None` when there is none yet.
    fn pop(&mut self) -> Option<Option<ConnectionEvent>> {
        if self.skipped > 0 {
            let skipped = std::mem::take(&mut self.skipped);
            return Some(Some(ConnectionEvent::Lagged(skipped)));
        }
        if let Some(event) = self.events.pop_front() {
            return Some(Some(event));
        }
        self.ended.then_some(None)
    }
}

/// The connection events of a blocking client from the moment [`Client::events`] was
/// called: `Connected`, `Disconnected`, `Reconnected`, `LameDuckMode`, `ServerError`,
/// `SlowConsumer`, `Draining`, `ClientError`, `DiscoveredServers`, and `Closed` last, after
/// which the iterator ends. Each call to `events` gets its own copy of every event.
///
/// Iterating blocks until the next event. The queue behind it is bounded (256 events): the
/// client's threads never wait for a listener, so one that falls behind loses its oldest
/// events, and the next it reads is [`ConnectionEvent::Lagged`] with how many were lost.
/// [`ConnectionEvent::to_event`] gives the async-nats [`Event`](crate::Event) of each.
///
/// An `Events` does not keep the client open: when the last client handle is dropped the
/// client closes and the iterator ends after `Closed`.
///
/// [`Client::events`]: super::Client::events
pub struct Events {
    listener: Arc<Listener>,
}

impl Events {
    /// The next event, waiting up to `timeout`: `Ok(None)` once the client closed and every
    /// event was read.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<ConnectionEvent>, TimedOut> {
        self.next_until(deadline_after(timeout))
            .ok_or(TimedOut(timeout))
    }

    /// The next event if one is already in; never waits.
    pub fn try_next(&mut self) -> Option<ConnectionEvent> {
        lock(&self.listener.queue).pop().flatten()
    }

    /// The next event (`Some(None)`: ended), or `None` when `deadline` passed first.
    fn next_until(&mut self, deadline: Option<Instant>) -> Option<Option<ConnectionEvent>> {
        let mut queue = lock(&self.listener.queue);
        loop {
            if let Some(next) = queue.pop() {
                return Some(next);
            }
            queue = match deadline {
                None => self
                    .listener
                    .ready
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    self.listener
                        .ready
                        .wait_timeout(queue, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

impl Iterator for Events {
    type Item = ConnectionEvent;

    fn next(&mut self) -> Option<ConnectionEvent> {
        self.next_until(None).flatten()
    }
}

impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("blocking::Events").finish_non_exhaustive()
    }
}

/// Starts the thread that runs `callback` for every event of `events`, one at a time and in
/// order: each future is polled to completion (on this thread, without a runtime) before
/// the next event is taken. It ends after `Closed`.
pub(super) fn spawn_callback(callback: EventCallback, events: Events) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("rnats-blocking-events".to_owned())
        .spawn(move || run_callback(&callback, events))
        .map(drop)
}

fn run_callback(callback: &EventCallback, events: Events) {
    for event in events {
        match event.to_event() {
            Some(event) => block_on(callback.call(event)),
            None => {
                if let ConnectionEvent::Lagged(skipped) = event {
                    tracing::warn!(skipped, "event callback too slow; events skipped");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listener_gets_every_later_event_in_order() {
        let hub = EventHub::new();
        hub.emit(ConnectionEvent::Connected);
        let mut first = hub.listen();
        hub.emit(ConnectionEvent::LameDuckMode);
        let mut second = hub.listen();
        hub.emit(ConnectionEvent::Reconnected);
        assert_eq!(first.try_next(), Some(ConnectionEvent::LameDuckMode));
        assert_eq!(first.try_next(), Some(ConnectionEvent::Reconnected));
        assert_eq!(first.try_next(), None);
        assert_eq!(second.try_next(), Some(ConnectionEvent::Reconnected));
        assert_eq!(second.try_next(), None);
    }

    #[test]
    fn a_slow_listener_loses_the_oldest_events_and_is_told() {
        let hub = EventHub::new();
        let mut events = hub.listen();
        for sid in 0..(CAPACITY as u64 + 10) {
            hub.emit(ConnectionEvent::SlowConsumer { sid, dropped: 1 });
        }
        assert_eq!(events.try_next(), Some(ConnectionEvent::Lagged(10)));
        for sid in 10..(CAPACITY as u64 + 10) {
            assert_eq!(
                events.try_next(),
                Some(ConnectionEvent::SlowConsumer { sid, dropped: 1 })
            );
        }
        assert_eq!(events.try_next(), None);
    }

    #[test]
    fn the_end_comes_after_what_a_listener_holds() {
        let hub = EventHub::new();
        let mut events = hub.listen();
        hub.emit(ConnectionEvent::Closed);
        hub.end();
        hub.emit(ConnectionEvent::Connected);
        assert_eq!(
            events.next_timeout(Duration::ZERO),
            Ok(Some(ConnectionEvent::Closed))
        );
        assert_eq!(events.next_timeout(Duration::ZERO), Ok(None));
        assert_eq!(events.next(), None);
        // A listener made after the end ends at once.
        assert_eq!(hub.listen().next(), None);
    }

    #[test]
    fn a_waiting_listener_wakes_for_an_event_from_another_thread() {
        let hub = Arc::new(EventHub::new());
        let mut events = hub.listen();
        assert_eq!(
            events.next_timeout(Duration::from_millis(1)),
            Err(TimedOut(Duration::from_millis(1)))
        );
        let emitter = {
            let hub = Arc::clone(&hub);
            std::thread::spawn(move || hub.emit(ConnectionEvent::Draining))
        };
        assert_eq!(events.next(), Some(ConnectionEvent::Draining));
        emitter.join().ok();
    }

    #[test]
    fn a_dropped_listener_is_pruned() {
        let hub = EventHub::new();
        drop(hub.listen());
        let _kept = hub.listen();
        hub.emit(ConnectionEvent::Connected);
        assert_eq!(lock(&hub.state).listeners.len(), 1);
    }
}
