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
use super::time::TimedOut;
use super::time::deadline_after;
use crate::events::{ConnectionEvent, Event, EventCallback, LISTENER_CAPACITY as CAPACITY};
use crate::floor::sync::lock;

/// Where a client's events go: the queues of its listeners, and the event callback's.
pub(super) struct EventHub {
    state: Mutex<HubState>,
}

struct HubState {
    /// A listener dropped by its owner is pruned at the next event.
    listeners: Vec<Weak<Listener<ConnectionEvent>>>,
    /// The `event_callback`'s queue, in async-nats' shape: it gets every event a listener
    /// gets (as [`ConnectionEvent::to_event`] maps it) and a few only async-nats reports
    /// ([`EventHub::emit_to_callback`]).
    callback: Option<Arc<Listener<Event>>>,
    /// No event comes any more (the client closed).
    ended: bool,
}

/// One listener's queue, shared by the hub and its reader.
struct Listener<T> {
    queue: Mutex<Queue<T>>,
    ready: Condvar,
}

struct Queue<T> {
    events: VecDeque<T>,
    /// Events dropped since the listener last read, reported before the rest.
    skipped: u64,
    ended: bool,
}

/// What a listener's queue gives next.
enum Popped<T> {
    Event(T),
    /// This many events were dropped because the listener fell behind.
    Skipped(u64),
    /// The client closed and every event was read.
    Ended,
}

impl EventHub {
    pub(super) fn new() -> EventHub {
        EventHub {
            state: Mutex::new(HubState {
                listeners: Vec::new(),
                callback: None,
                ended: false,
            }),
        }
    }

    /// Whether any listener would get an event sent now.
    pub(super) fn has_listeners(&self) -> bool {
        let state = lock(&self.state);
        !state.ended && state.listeners.iter().any(|l| l.strong_count() > 0)
    }

    /// A new listener, which gets every event sent from now on. After the client closed it
    /// has none and ends at once.
    pub(super) fn listen(&self) -> Events {
        let mut state = lock(&self.state);
        let listener = Listener::new(state.ended);
        if !state.ended {
            state.listeners.push(Arc::downgrade(&listener));
        }
        Events { listener }
    }

    /// The event callback's queue, from now on; one per client.
    fn listen_for_callback(&self) -> Arc<Listener<Event>> {
        let mut state = lock(&self.state);
        let listener = Listener::new(state.ended);
        if !state.ended {
            state.callback = Some(Arc::clone(&listener));
        }
        listener
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
        if let (Some(callback), Some(event)) = (&state.callback, event.callback_event()) {
            callback.push(event);
        }
        state.listeners.retain(|listener| {
            let Some(listener) = listener.upgrade() else {
                return false;
            };
            listener.push(event.clone());
            true
        });
    }

    /// Gives `event` to the event callback only: what async-nats reports and rnats'
    /// listeners get in their own shape, or not at all (a slow consumer's every dropped
    /// message, where listeners get one event per episode).
    pub(super) fn emit_to_callback(&self, event: Event) {
        let state = lock(&self.state);
        if let (Some(callback), false) = (&state.callback, state.ended) {
            callback.push(event);
        }
    }

    /// No more events: every listener ends after what it holds.
    pub(super) fn end(&self) {
        let mut state = lock(&self.state);
        state.ended = true;
        let callback = state.callback.take();
        for listener in state.listeners.drain(..) {
            if let Some(listener) = listener.upgrade() {
                listener.end();
            }
        }
        if let Some(callback) = callback {
            callback.end();
        }
    }
}

impl Drop for EventHub {
    fn drop(&mut self) {
        self.end();
    }
}

impl<T> Listener<T> {
    fn new(ended: bool) -> Arc<Listener<T>> {
        Arc::new(Listener {
            queue: Mutex::new(Queue {
                events: VecDeque::new(),
                skipped: 0,
                ended,
            }),
            ready: Condvar::new(),
        })
    }

    fn push(&self, event: T) {
        let mut queue = lock(&self.queue);
        if queue.events.len() >= CAPACITY {
            queue.events.pop_front();
            queue.skipped += 1;
        }
        queue.events.push_back(event);
        drop(queue);
        self.ready.notify_one();
    }

    fn end(&self) {
        lock(&self.queue).ended = true;
        self.ready.notify_all();
    }

    /// The next event, waiting until `deadline` (`None`: for ever); `None` if it passed.
    fn next_until(&self, deadline: Option<Instant>) -> Option<Popped<T>> {
        let mut queue = lock(&self.queue);
        loop {
            if let Some(next) = queue.pop() {
                return Some(next);
            }
            queue = match deadline {
                None => self
                    .ready
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    self.ready
                        .wait_timeout(queue, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

impl<T> Queue<T> {
    /// The next event, or `None` when there is none yet.
    fn pop(&mut self) -> Option<Popped<T>> {
        if self.skipped > 0 {
            return Some(Popped::Skipped(std::mem::take(&mut self.skipped)));
        }
        if let Some(event) = self.events.pop_front() {
            return Some(Popped::Event(event));
        }
        self.ended.then_some(Popped::Ended)
    }
}

impl Popped<ConnectionEvent> {
    /// As a listener reports it: `Some(None)` once ended.
    fn into_connection_event(self) -> Option<ConnectionEvent> {
        match self {
            Popped::Event(event) => Some(event),
            Popped::Skipped(n) => Some(ConnectionEvent::Lagged(n)),
            Popped::Ended => None,
        }
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
    listener: Arc<Listener<ConnectionEvent>>,
}

impl Events {
    /// The next event, waiting up to `timeout`: `Ok(None)` once the client closed and every
    /// event was read.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<ConnectionEvent>, TimedOut> {
        self.listener
            .next_until(deadline_after(timeout))
            .map(Popped::into_connection_event)
            .ok_or(TimedOut(timeout))
    }

    /// The next event if one is already in; never waits.
    pub fn try_next(&mut self) -> Option<ConnectionEvent> {
        lock(&self.listener.queue)
            .pop()
            .and_then(Popped::into_connection_event)
    }
}

impl Iterator for Events {
    type Item = ConnectionEvent;

    fn next(&mut self) -> Option<ConnectionEvent> {
        self.listener
            .next_until(None)
            .and_then(Popped::into_connection_event)
    }
}

impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("blocking::Events").finish_non_exhaustive()
    }
}

/// Starts the thread that runs `callback` for every event of `hub` from now on (in
/// async-nats' shape, see [`EventHub::emit_to_callback`]), one at a time and in order: each
/// future is polled to completion (on this thread, without a runtime) before the next event
/// is taken. It ends when the client has closed and every event was handed over.
pub(super) fn spawn_callback(callback: EventCallback, hub: &EventHub) -> std::io::Result<()> {
    let listener = hub.listen_for_callback();
    std::thread::Builder::new()
        .name("rnats-blocking-events".to_owned())
        .spawn(move || run_callback(&callback, &listener))
        .map(drop)
}

fn run_callback(callback: &EventCallback, listener: &Listener<Event>) {
    loop {
        match listener.next_until(None) {
            Some(Popped::Event(event)) => block_on(callback.call(event)),
            Some(Popped::Skipped(skipped)) => {
                tracing::warn!(skipped, "event callback too slow; events skipped");
            }
            Some(Popped::Ended) | None => return,
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
            hub.emit(ConnectionEvent::SlowConsumer {
                sid,
                subject: "s".into(),
                dropped: 1,
            });
        }
        assert_eq!(events.try_next(), Some(ConnectionEvent::Lagged(10)));
        for sid in 10..(CAPACITY as u64 + 10) {
            assert_eq!(
                events.try_next(),
                Some(ConnectionEvent::SlowConsumer {
                    sid,
                    subject: "s".into(),
                    dropped: 1,
                })
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
