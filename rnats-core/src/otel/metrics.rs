//! OpenTelemetry metrics for a [`Client`]: its message, byte and reconnect counters, its
//! connection state and the duration of its requests, reported to a [`Meter`] the
//! application chose.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = rnats_core::connect("nats://127.0.0.1:4222").await?;
//! // The application's meter (here the global provider's; any SDK and exporter).
//! let meter = opentelemetry::global::meter("rnats");
//! let metrics = rnats_core::otel::metrics::observe(&client, &meter);
//! // ... the client works; every collection reads its counters ...
//! drop(metrics); // the client's series are reported no more
//! # Ok(()) }
//! ```
//!
//! Nearly everything is an *observable* instrument: its callback runs when the SDK collects
//! (every export interval), and reads the counters the client keeps anyway
//! ([`Client::statistics`], [`Client::connection_state`]). Publishing and receiving do no
//! work for metrics at all. The one exception is [`OPERATION_DURATION`], a histogram that
//! each operation records into once when it ends: every request (`request*`,
//! `send_request`, `start_request` timed to its reply's arrival) as `request`, a
//! `request_many` gathering as `request_many`, and, with rnats-jetstream's `opentelemetry`
//! feature, each JetStream publish from send to ack as `publish` (with the stream's name as
//! `messaging.destination.name`; see [`OperationTiming`]). Only a client with a
//! registration that asks for it ([`Options::request_duration`], on by default) reads a clock
//! for it; an operation of a client without one adds no atomic, lock or clock read, but for a
//! request with an inbox of its own and a request-many (which subscribe and unsubscribe
//! anyway): they take the request table's lock once to learn it.
//! Works the same for a [`blocking::Client`](crate::blocking::Client) (its `request_many`
//! is not timed).
//!
//! | Instrument | Kind | Unit | Value |
//! |---|---|---|---|
//! | [`SENT_MESSAGES`] | counter | `{message}` | messages published, requests included |
//! | [`CONSUMED_MESSAGES`] | counter | `{message}` | messages received from the server |
//! | [`SENT_BYTES`] | counter | `By` | protocol bytes written to the server |
//! | [`RECEIVED_BYTES`] | counter | `By` | protocol bytes read from the server |
//! | [`RECONNECTS`] | counter | `{reconnect}` | connections made after the first |
//! | [`DROPPED_MESSAGES`] | counter | `{message}` | messages dropped because a subscription's queue was full (slow consumers) |
//! | [`CONNECTION_COUNT`] | up-down counter | `{connection}` | 1 for the state the connection is in, 0 for the others |
//! | [`OPERATION_DURATION`] | histogram | `s` | a request's time from sending to its reply or failure |
//!
//! Every point carries `messaging.system = "nats"`, `messaging.client.id` (one per
//! registration unless [`Options::client_id`] says otherwise, so that the series of several
//! clients stay apart), `nats.client.name` when the client has a
//! [name](crate::ConnectOptions::name), and the [`Options::attribute`]s. The guide
//! (`rnats::guides::opentelemetry`) lists the attributes of each instrument.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{AsyncInstrument, Meter};

use crate::Client;
use crate::client::Statistics;
use crate::connection::LinkState;
use crate::floor::sync::lock;
use crate::otel::durations::Recorder;
use crate::server_addr::ServerAddr;
use crate::shared::Shared;

pub use crate::otel::durations::OperationTiming;

/// Messages the client published, requests included (a request is a publish with a reply
/// subject): OpenTelemetry's messaging metric, with `messaging.operation.name = "publish"`.
pub const SENT_MESSAGES: &str = "messaging.client.sent.messages";
/// Messages the client received from the server (every subscription's, request replies
/// included): OpenTelemetry's messaging metric, with `messaging.operation.name = "receive"`.
pub const CONSUMED_MESSAGES: &str = "messaging.client.consumed.messages";
/// Protocol bytes written to the server.
pub const SENT_BYTES: &str = "nats.client.sent.bytes";
/// Protocol bytes read from the server.
pub const RECEIVED_BYTES: &str = "nats.client.received.bytes";
/// Connections made after the first one.
pub const RECONNECTS: &str = "nats.client.reconnects";
/// Messages the client dropped because a subscription's queue was full (slow consumers),
/// over all its subscriptions ([`Statistics::dropped_messages`]).
pub const DROPPED_MESSAGES: &str = "nats.client.dropped.messages";
/// The client's connection by state (`nats.client.connection.state`): 1 for the state it is
/// in, 0 for the others.
pub const CONNECTION_COUNT: &str = "nats.client.connection.count";
/// How long operations took, from sending to the answer: OpenTelemetry's messaging metric,
/// with `messaging.operation.name` `request`, `request_many` or (JetStream) `publish`,
/// `messaging.operation.type = "send"`, and `error.type` when the operation failed.
pub const OPERATION_DURATION: &str = "messaging.client.operation.duration";

/// The histogram's bucket bounds, in seconds: the messaging conventions' bounds (from 5 ms),
/// with finer ones below them, where most NATS requests end.
const DURATION_BOUNDS: [f64; 19] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75,
    1.0, 2.5, 5.0, 7.5, 10.0,
];

/// The states [`CONNECTION_COUNT`] reports, by their attribute value.
const STATES: [(LinkState, &str); 4] = [
    (LinkState::Pending, "pending"),
    (LinkState::Connected, "connected"),
    (LinkState::Disconnected, "disconnected"),
    (LinkState::Closed, "closed"),
];

/// Registrations made in this process, for the default `messaging.client.id`.
static REGISTRATIONS: AtomicU64 = AtomicU64::new(0);

/// Reports `client`'s metrics to `meter` with the default [`Options`], until the returned
/// [`Registration`] is dropped. `client` is an async [`Client`] or a
/// [`blocking::Client`](crate::blocking::Client).
pub fn observe(client: &impl Observable, meter: &Meter) -> Registration {
    observe_with(client, meter, Options::default())
}

/// Reports `client`'s metrics to `meter` as `options` say, until the returned
/// [`Registration`] is dropped. Each call makes a registration of its own: observe a client
/// once per meter.
pub fn observe_with(client: &impl Observable, meter: &Meter, options: Options) -> Registration {
    let number = REGISTRATIONS.fetch_add(1, Ordering::Relaxed) + 1;
    let target = client.target().0;
    let client_id = (options.client_id).unwrap_or_else(|| format!("rnats-{number}"));
    let mut attributes = vec![
        KeyValue::new("messaging.system", "nats"),
        KeyValue::new("messaging.client.id", client_id.clone()),
    ];
    if let Some(name) = target.name() {
        attributes.push(KeyValue::new("nats.client.name", name));
    }
    attributes.extend(options.attributes);
    let source = Arc::new(Source { target, attributes });
    register_counters(meter, &source);
    register_connection_count(meter, &source);
    let recorder = options.request_duration.then(|| {
        let recorder = Recorder {
            id: number,
            histogram: meter
                .f64_histogram(OPERATION_DURATION)
                .with_unit("s")
                .with_description("Duration of messaging operations, from sending to the answer")
                .with_boundaries(DURATION_BOUNDS.to_vec())
                .build(),
            common: source.attributes.clone(),
            request: source.with(&[
                KeyValue::new("messaging.operation.name", "request"),
                KeyValue::new("messaging.operation.type", "send"),
            ]),
        };
        source.target.add_recorder(Arc::new(recorder));
        number
    });
    Registration {
        source,
        client_id,
        recorder,
    }
}

/// A client that [`observe`] can report: the async [`Client`] and the
/// [`blocking::Client`](crate::blocking::Client) (whose impl lives with the blocking driver,
/// which this module does not name). Sealed: only rnats' clients are.
pub trait Observable: sealed::Sealed {}

impl Observable for Client {}

pub(crate) mod sealed {
    /// What a registration reads a client through; unnameable outside the crate.
    pub struct Target(pub(crate) Box<dyn super::ObservedClient>);

    pub trait Sealed {
        fn target(&self) -> Target;
    }

    impl Sealed for crate::Client {
        fn target(&self) -> Target {
            Target(Box::new(super::AsyncClient(std::sync::Arc::downgrade(
                self.shared_arc(),
            ))))
        }
    }
}

/// What a registration reads of a client it does not keep alive: each `None` once the
/// client is gone.
pub(crate) trait ObservedClient: Send + Sync {
    /// The client's counters.
    fn statistics(&self) -> Option<Arc<Statistics>>;
    /// The connection's state.
    fn state(&self) -> Option<LinkState>;
    /// The server the connection is up to, if it is.
    fn server(&self) -> Option<ServerAddr>;
    /// The name the client connected with.
    fn name(&self) -> Option<String>;
    /// Times the client's requests into `recorder` too.
    fn add_recorder(&self, recorder: Arc<Recorder>);
    /// Stops timing into registration `id`'s recorder.
    fn remove_recorder(&self, id: u64);
}

/// The async client, held weakly.
struct AsyncClient(Weak<Shared>);

impl ObservedClient for AsyncClient {
    fn statistics(&self) -> Option<Arc<Statistics>> {
        Some(Arc::clone(&self.0.upgrade()?.statistics))
    }

    fn state(&self) -> Option<LinkState> {
        Some(self.0.upgrade()?.state())
    }

    fn server(&self) -> Option<ServerAddr> {
        let shared = self.0.upgrade()?;
        if shared.state() != LinkState::Connected {
            return None;
        }
        lock(&shared.pool).current().cloned()
    }

    fn name(&self) -> Option<String> {
        self.0.upgrade()?.options.name.clone()
    }

    fn add_recorder(&self, recorder: Arc<Recorder>) {
        if let Some(shared) = self.0.upgrade() {
            shared.requests().durations.add(recorder);
        }
    }

    fn remove_recorder(&self, id: u64) {
        if let Some(shared) = self.0.upgrade() {
            shared.requests().durations.remove(id);
        }
    }
}

/// `server.address` and `server.port` of the server `client` is connected to, if it is.
fn server_attributes(client: &dyn ObservedClient) -> Option<[KeyValue; 2]> {
    let addr = client.server()?;
    Some([
        KeyValue::new("server.address", addr.host().to_owned()),
        KeyValue::new("server.port", i64::from(addr.port())),
    ])
}

/// What a registration reports, beyond the defaults. Every setting has a default; change
/// only those that matter.
#[derive(Debug, Clone)]
pub struct Options {
    client_id: Option<String>,
    attributes: Vec<KeyValue>,
    request_duration: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            client_id: None,
            attributes: Vec::new(),
            request_duration: true,
        }
    }
}

impl Options {
    /// The default options: a generated client id, no attributes of the application's, and
    /// request durations recorded.
    pub fn new() -> Options {
        Options::default()
    }

    /// The `messaging.client.id` of every point, instead of `rnats-<n>` (`n` counting the
    /// registrations made in the process). Two clients observed with the same id and
    /// attributes on one meter report into one series, each hiding the other: keep ids
    /// unique.
    pub fn client_id(mut self, id: impl Into<String>) -> Options {
        self.client_id = Some(id.into());
        self
    }

    /// An attribute of the application's on every point (a tenant, a role); added after the
    /// client's own.
    pub fn attribute(mut self, attribute: KeyValue) -> Options {
        self.attributes.push(attribute);
        self
    }

    /// Whether requests record their duration ([`OPERATION_DURATION`]; default on). Off,
    /// the registration adds nothing to a request: no clock read, no histogram.
    pub fn request_duration(mut self, on: bool) -> Options {
        self.request_duration = on;
        self
    }
}

/// A client's metrics being reported: they stop when it is dropped (the client's series are
/// left out of every collection from then on). It does not keep the client open: once the
/// client is gone, nothing is reported either.
///
/// OpenTelemetry 0.33 cannot take an instrument's callback back out of the SDK, so a dropped
/// registration leaves a few callbacks behind that report nothing (a few bytes each, until
/// the meter provider is dropped).
#[must_use = "the metrics are reported only while the registration is kept"]
pub struct Registration {
    source: Arc<Source>,
    client_id: String,
    /// This registration's recorder in the client's request table, if it times requests.
    recorder: Option<u64>,
}

impl Registration {
    /// The `messaging.client.id` of this registration's points.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("client_id", &self.client_id)
            .field("request_duration", &self.recorder.is_some())
            .finish()
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(id) = self.recorder {
            self.source.target.remove_recorder(id);
        }
    }
}

/// What a registration's callbacks read: the client (without keeping it alive) and the
/// attributes of every point. The callbacks hold it weakly, the [`Registration`] strongly.
struct Source {
    target: Box<dyn ObservedClient>,
    attributes: Vec<KeyValue>,
}

impl Source {
    /// The common attributes followed by `more`.
    fn with(&self, more: &[KeyValue]) -> Vec<KeyValue> {
        let mut attributes = self.attributes.clone();
        attributes.extend_from_slice(more);
        attributes
    }
}

/// The source behind a callback, while the registration lives.
fn source_of(source: &Weak<Source>) -> Option<Arc<Source>> {
    source.upgrade()
}

/// One counter over [`Statistics`].
struct Counter {
    name: &'static str,
    unit: &'static str,
    description: &'static str,
    /// Attributes of this counter's points beyond the common ones.
    operation: Option<&'static str>,
    read: fn(&Statistics) -> u64,
}

const COUNTERS: [Counter; 6] = [
    Counter {
        name: SENT_MESSAGES,
        unit: "{message}",
        description: "Messages published, requests included",
        operation: Some("publish"),
        read: |s| s.out_messages.load(Ordering::Relaxed),
    },
    Counter {
        name: CONSUMED_MESSAGES,
        unit: "{message}",
        description: "Messages received from the server",
        operation: Some("receive"),
        read: |s| s.in_messages.load(Ordering::Relaxed),
    },
    Counter {
        name: SENT_BYTES,
        unit: "By",
        description: "Protocol bytes written to the server",
        operation: None,
        read: |s| s.out_bytes.load(Ordering::Relaxed),
    },
    Counter {
        name: RECEIVED_BYTES,
        unit: "By",
        description: "Protocol bytes read from the server",
        operation: None,
        read: |s| s.in_bytes.load(Ordering::Relaxed),
    },
    Counter {
        name: RECONNECTS,
        unit: "{reconnect}",
        description: "Connections made after the first",
        operation: None,
        read: |s| s.connects.load(Ordering::Relaxed).saturating_sub(1),
    },
    Counter {
        name: DROPPED_MESSAGES,
        unit: "{message}",
        description: "Messages dropped because a subscription's queue was full",
        operation: None,
        read: |s| s.dropped_messages.load(Ordering::Relaxed),
    },
];

fn register_counters(meter: &Meter, source: &Arc<Source>) {
    for counter in COUNTERS {
        let operation = counter
            .operation
            .map(|name| KeyValue::new("messaging.operation.name", name));
        let attributes = source.with(operation.as_slice());
        let weak = Arc::downgrade(source);
        let read = counter.read;
        meter
            .u64_observable_counter(counter.name)
            .with_unit(counter.unit)
            .with_description(counter.description)
            .with_callback(move |observer: &dyn AsyncInstrument<u64>| {
                if let Some(statistics) = source_of(&weak).and_then(|s| s.target.statistics()) {
                    observer.observe(read(&statistics), &attributes);
                }
            })
            .build();
    }
}

fn register_connection_count(meter: &Meter, source: &Arc<Source>) {
    let by_state: Vec<(LinkState, Vec<KeyValue>)> = (STATES.iter())
        .map(|&(state, name)| {
            let attribute = KeyValue::new("nats.client.connection.state", name);
            (state, source.with(&[attribute]))
        })
        .collect();
    let weak = Arc::downgrade(source);
    meter
        .i64_observable_up_down_counter(CONNECTION_COUNT)
        .with_unit("{connection}")
        .with_description("The client's connection, by state")
        .with_callback(move |observer: &dyn AsyncInstrument<i64>| {
            let Some(source) = source_of(&weak) else {
                return;
            };
            let Some(now) = source.target.state() else {
                return;
            };
            for (state, attributes) in &by_state {
                if *state != now {
                    observer.observe(0, attributes);
                    continue;
                }
                match server_attributes(source.target.as_ref()) {
                    Some(server) => observer.observe(1, &[attributes.as_slice(), &server].concat()),
                    None => observer.observe(1, attributes),
                }
            }
        })
        .build();
}
