//! OpenTelemetry metrics across real connections: what `rnats::otel::metrics` reports,
//! collected by the SDK into its in-memory exporter as an application's exporter would get
//! it, checked against the client's own counters.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use opentelemetry::metrics::MeterProvider;
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use rnats::ConnectOptions;
use rnats::jetstream::{self, context::Publish, stream};
use rnats::otel::metrics::{self, Options, Registration};
use rnats_test_server::NatsServer;

/// How long a test waits for an event before it fails instead of hanging.
const WAIT: Duration = Duration::from_secs(10);

/// The application's side: an SDK meter provider whose collections go to memory.
struct Collector {
    provider: SdkMeterProvider,
    exporter: InMemoryMetricExporter,
}

/// One exported point: a sum's value, or a histogram's count.
#[derive(Debug)]
struct Point {
    metric: String,
    unit: String,
    attributes: Vec<KeyValue>,
    value: i128,
}

impl Point {
    fn attribute(&self, key: &str) -> Option<&Value> {
        (self.attributes.iter())
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| &kv.value)
    }

    fn is(&self, key: &str, value: impl Into<Value>) -> bool {
        self.attribute(key) == Some(&value.into())
    }
}

impl Collector {
    fn install() -> Collector {
        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_periodic_exporter(exporter.clone())
            .build();
        Collector { provider, exporter }
    }

    fn meter(&self) -> opentelemetry::metrics::Meter {
        self.provider.meter("rnats-test")
    }

    /// Collects now: every point the callbacks and the histogram report.
    fn collect(&self) -> Vec<Point> {
        self.exporter.reset();
        self.provider.force_flush().unwrap();
        let exported = self.exporter.get_finished_metrics().unwrap();
        exported.last().map(points).unwrap_or_default()
    }
}

fn points(exported: &ResourceMetrics) -> Vec<Point> {
    let mut all = Vec::new();
    for metric in exported.scope_metrics().flat_map(|scope| scope.metrics()) {
        let mut add = |attributes: Vec<KeyValue>, value: i128| {
            all.push(Point {
                metric: metric.name().to_owned(),
                unit: metric.unit().to_owned(),
                attributes,
                value,
            })
        };
        match metric.data() {
            AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                for point in sum.data_points() {
                    add(point.attributes().cloned().collect(), point.value().into());
                }
            }
            AggregatedMetrics::I64(MetricData::Sum(sum)) => {
                for point in sum.data_points() {
                    add(point.attributes().cloned().collect(), point.value().into());
                }
            }
            AggregatedMetrics::F64(MetricData::Histogram(histogram)) => {
                for point in histogram.data_points() {
                    add(point.attributes().cloned().collect(), point.count().into());
                }
            }
            other => panic!("unexpected data for {}: {other:?}", metric.name()),
        }
    }
    all
}

/// The points of `metric` that `registration` reported.
fn of<'a>(points: &'a [Point], metric: &str, registration: &Registration) -> Vec<&'a Point> {
    (points.iter())
        .filter(|p| {
            p.metric == metric && p.is("messaging.client.id", registration.client_id().to_owned())
        })
        .collect()
}

/// The one value of `metric` that `registration` reported.
fn value(points: &[Point], metric: &str, registration: &Registration) -> i128 {
    let found = of(points, metric, registration);
    assert_eq!(found.len(), 1, "one point of {metric}: {found:?}");
    found[0].value
}

async fn wait_for(events: &mut rnats::Events, want: impl Fn(&rnats::ConnectionEvent) -> bool) {
    tokio::time::timeout(WAIT, async {
        while let Some(event) = events.next().await {
            if want(&event) {
                return;
            }
        }
        panic!("events ended");
    })
    .await
    .expect("the event did not come");
}

#[tokio::test]
async fn counts_match_the_client_statistics() {
    let collector = Collector::install();
    let server = NatsServer::start();
    let client = rnats::connect(server.url()).await.unwrap();
    let registration = metrics::observe(&client, &collector.meter());
    let mut subscriber = client.subscribe("metrics.counted").await.unwrap();

    const N: u64 = 250;
    for i in 0..N {
        let payload = Bytes::from(format!("message {i}"));
        client.publish("metrics.counted", payload).await.unwrap();
    }
    client.flush().await.unwrap();
    for _ in 0..N {
        subscriber.next().await.unwrap();
    }

    let before = client.statistics();
    let (in_bytes, out_bytes) = (
        before.in_bytes.load(std::sync::atomic::Ordering::Relaxed),
        before.out_bytes.load(std::sync::atomic::Ordering::Relaxed),
    );
    let points = collector.collect();
    let stats = client.statistics();
    let load = |counter: &std::sync::atomic::AtomicU64| {
        i128::from(counter.load(std::sync::atomic::Ordering::Relaxed))
    };

    let sent = of(&points, metrics::SENT_MESSAGES, &registration);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].value, i128::from(N));
    assert_eq!(sent[0].value, load(&stats.out_messages));
    assert_eq!(sent[0].unit, "{message}");
    assert!(sent[0].is("messaging.system", "nats"));
    assert!(sent[0].is("messaging.operation.name", "publish"));

    let consumed = of(&points, metrics::CONSUMED_MESSAGES, &registration);
    assert_eq!(consumed.len(), 1, "{consumed:?}");
    assert_eq!(consumed[0].value, i128::from(N));
    assert_eq!(consumed[0].value, load(&stats.in_messages));
    assert!(consumed[0].is("messaging.operation.name", "receive"));

    // The connection may have traded a keepalive PING while collecting: between the two
    // reads of the counters.
    let sent_bytes = value(&points, metrics::SENT_BYTES, &registration);
    assert!((i128::from(out_bytes)..=load(&stats.out_bytes)).contains(&sent_bytes));
    assert!(
        sent_bytes > i128::from(N) * 20,
        "{sent_bytes} bytes for {N} PUBs"
    );
    let received_bytes = value(&points, metrics::RECEIVED_BYTES, &registration);
    assert!((i128::from(in_bytes)..=load(&stats.in_bytes)).contains(&received_bytes));
    assert!(received_bytes > i128::from(N) * 20);

    assert_eq!(value(&points, metrics::RECONNECTS, &registration), 0);
    assert_eq!(value(&points, metrics::DROPPED_MESSAGES, &registration), 0);
    let unit = |name: &str| of(&points, name, &registration)[0].unit.clone();
    assert_eq!(unit(metrics::SENT_BYTES), "By");
    assert_eq!(unit(metrics::RECONNECTS), "{reconnect}");
    assert_eq!(unit(metrics::CONNECTION_COUNT), "{connection}");
}

#[tokio::test]
async fn messages_dropped_for_slow_consumers_are_counted() {
    let collector = Collector::install();
    let server = NatsServer::start();
    let client = rnats::ConnectOptions::new()
        .subscription_capacity(5)
        .connect(server.url())
        .await
        .unwrap();
    let registration = metrics::observe(&client, &collector.meter());
    // Nobody reads: five are queued, the rest dropped.
    let subscriber = client.subscribe("metrics.slow").await.unwrap();
    for i in 0..20 {
        client
            .publish("metrics.slow", Bytes::from(i.to_string()))
            .await
            .unwrap();
    }
    client.flush().await.unwrap();
    let points = collector.collect();
    let dropped = of(&points, metrics::DROPPED_MESSAGES, &registration);
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].value, 15);
    assert_eq!(dropped[0].unit, "{message}");
    assert_eq!(subscriber.dropped(), 15);
}

#[tokio::test]
async fn a_reconnect_is_counted_and_the_state_follows() {
    let collector = Collector::install();
    let server = NatsServer::start();
    let client = ConnectOptions::new()
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect(server.url())
        .await
        .unwrap();
    let registration = metrics::observe(&client, &collector.meter());

    let points = collector.collect();
    assert_eq!(value(&points, metrics::RECONNECTS, &registration), 0);
    let states = of(&points, metrics::CONNECTION_COUNT, &registration);
    assert_eq!(states.len(), 4, "one point per state: {states:?}");
    let connected: Vec<_> = (states.iter()).filter(|p| p.value == 1).collect();
    assert_eq!(connected.len(), 1, "{states:?}");
    assert!(connected[0].is("nats.client.connection.state", "connected"));
    assert!(connected[0].is("server.address", "127.0.0.1"));
    assert!(connected[0].is("server.port", i64::from(server.port())));

    let mut events = client.events();
    client.force_reconnect().await.unwrap();
    wait_for(&mut events, |e| *e == rnats::ConnectionEvent::Reconnected).await;
    let points = collector.collect();
    assert_eq!(value(&points, metrics::RECONNECTS, &registration), 1);

    client.close().await;
    let points = collector.collect();
    let states = of(&points, metrics::CONNECTION_COUNT, &registration);
    let current: Vec<_> = states.iter().filter(|p| p.value == 1).collect();
    assert_eq!(current.len(), 1, "{states:?}");
    assert!(current[0].is("nats.client.connection.state", "closed"));
    assert!(current[0].attribute("server.address").is_none());
}

#[tokio::test]
async fn two_clients_report_apart() {
    let collector = Collector::install();
    let server = NatsServer::start();
    let named = ConnectOptions::new()
        .name("orders")
        .connect(server.url())
        .await
        .unwrap();
    let plain = rnats::connect(server.url()).await.unwrap();
    let meter = collector.meter();
    let of_named = metrics::observe(&named, &meter);
    let of_plain = metrics::observe_with(
        &plain,
        &meter,
        Options::new()
            .client_id("billing-1")
            .attribute(KeyValue::new("tenant", "acme")),
    );
    assert_ne!(of_named.client_id(), of_plain.client_id());
    assert_eq!(of_plain.client_id(), "billing-1");

    for _ in 0..3 {
        named.publish("metrics.apart", "n".into()).await.unwrap();
    }
    for _ in 0..5 {
        plain.publish("metrics.apart", "p".into()).await.unwrap();
    }
    named.flush().await.unwrap();
    plain.flush().await.unwrap();

    let points = collector.collect();
    assert_eq!(value(&points, metrics::SENT_MESSAGES, &of_named), 3);
    assert_eq!(value(&points, metrics::SENT_MESSAGES, &of_plain), 5);
    let named_point = &of(&points, metrics::SENT_MESSAGES, &of_named)[0];
    assert!(named_point.is("nats.client.name", "orders"));
    assert!(named_point.attribute("tenant").is_none());
    let plain_point = &of(&points, metrics::SENT_MESSAGES, &of_plain)[0];
    assert!(plain_point.attribute("nats.client.name").is_none());
    assert!(plain_point.is("tenant", "acme"));
}

#[tokio::test]
async fn a_dropped_registration_reports_no_more() {
    let collector = Collector::install();
    let server = NatsServer::start();
    let client = rnats::connect(server.url()).await.unwrap();
    let meter = collector.meter();
    let kept = metrics::observe(&client, &meter);
    let dropped = metrics::observe(&client, &meter);
    let responder = answer_requests(&server, "metrics.echo").await;

    client.request("metrics.echo", "one".into()).await.unwrap();
    let points = collector.collect();
    for registration in [&kept, &dropped] {
        assert_eq!(value(&points, metrics::RECONNECTS, registration), 0);
        assert_eq!(value(&points, metrics::OPERATION_DURATION, registration), 1);
    }

    let dropped_id = dropped.client_id().to_owned();
    drop(dropped);
    client.request("metrics.echo", "two".into()).await.unwrap();
    let points = collector.collect();
    let left: Vec<&Point> = (points.iter())
        .filter(|p| p.is("messaging.client.id", dropped_id.clone()))
        .collect();
    // The histogram is the SDK's own: its cumulative series stays, and records no more.
    assert!(
        (left.iter()).all(|p| p.metric == metrics::OPERATION_DURATION && p.value == 1),
        "{left:?}"
    );
    assert_eq!(value(&points, metrics::OPERATION_DURATION, &kept), 2);
    assert_eq!(value(&points, metrics::SENT_MESSAGES, &kept), 2);
    responder.abort();
}

#[tokio::test]
async fn requests_record_their_duration_and_outcome() {
    let collector = Collector::install();
    let server = NatsServer::start();
    let client = rnats::connect(server.url()).await.unwrap();
    let meter = collector.meter();
    let timed = metrics::observe(&client, &meter);
    let untimed = metrics::observe_with(&client, &meter, Options::new().request_duration(false));
    let responder = answer_requests(&server, "metrics.echo").await;

    for _ in 0..3 {
        client.request("metrics.echo", "hi".into()).await.unwrap();
    }
    let error = client
        .request("metrics.nobody", "hi".into())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), rnats::RequestErrorKind::NoResponders);
    let _silent = client.subscribe("metrics.silent").await.unwrap();
    client.flush().await.unwrap();
    let limit = Some(Duration::from_millis(50));
    let error = (client.request_with_timeout("metrics.silent", "hi".into(), limit))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), rnats::RequestErrorKind::TimedOut);

    let points = collector.collect();
    let durations = of(&points, metrics::OPERATION_DURATION, &timed);
    assert_eq!(durations.len(), 3, "{durations:?}");
    let ok = (durations.iter())
        .find(|p| p.attribute("error.type").is_none())
        .unwrap();
    assert_eq!(ok.value, 3);
    assert_eq!(ok.unit, "s");
    assert!(ok.is("messaging.operation.name", "request"));
    assert!(ok.is("messaging.system", "nats"));
    let failed = (durations.iter())
        .find(|p| p.is("error.type", "no_responders"))
        .unwrap();
    assert_eq!(failed.value, 1);
    let timed_out = (durations.iter())
        .find(|p| p.is("error.type", "timeout"))
        .unwrap();
    assert_eq!(timed_out.value, 1);
    assert!(of(&points, metrics::OPERATION_DURATION, &untimed).is_empty());
    // The untimed registration reports everything else.
    assert_eq!(value(&points, metrics::SENT_MESSAGES, &untimed), 5);
    responder.abort();
}

/// How many times `registration` recorded operation `name` with `error_type` (`None`: a
/// success), and the points themselves.
fn durations<'a>(
    points: &'a [Point],
    registration: &Registration,
    name: &str,
    error_type: Option<&str>,
) -> Vec<&'a Point> {
    (of(points, metrics::OPERATION_DURATION, registration).into_iter())
        .filter(|p| p.is("messaging.operation.name", name.to_owned()))
        .filter(|p| match error_type {
            None => p.attribute("error.type").is_none(),
            Some(error_type) => p.is("error.type", error_type.to_owned()),
        })
        .collect()
}

/// The count of [`durations`]' points (at most one is expected).
fn count(points: &[Point], registration: &Registration, name: &str, error: Option<&str>) -> i128 {
    let found = durations(points, registration, name, error);
    assert!(found.len() <= 1, "one series: {found:?}");
    found.first().map_or(0, |p| p.value)
}

#[tokio::test]
async fn every_request_shape_records_its_duration_once() {
    let collector = Collector::install();
    let server = NatsServer::start();
    let client = rnats::connect(server.url()).await.unwrap();
    let registration = metrics::observe(&client, &collector.meter());
    let responder = answer_requests(&server, "metrics.echo").await;
    let _silent = client.subscribe("metrics.silent").await.unwrap();
    client.flush().await.unwrap();

    // Awaited later: timed from sending to the reply's arrival.
    let first = (client.start_request("metrics.echo", None, "1".into()))
        .await
        .unwrap();
    let second = (client.start_request("metrics.echo", None, "2".into()))
        .await
        .unwrap();
    second.wait(Some(WAIT)).await.unwrap();
    first.wait(Some(WAIT)).await.unwrap();
    let nobody = (client.start_request("metrics.nobody", None, "3".into()))
        .await
        .unwrap();
    let error = nobody.wait(Some(WAIT)).await.unwrap_err();
    assert_eq!(error.kind(), rnats::RequestErrorKind::NoResponders);

    // A request with an inbox of its own.
    let own = rnats::Request::new()
        .payload("4".into())
        .inbox(client.new_inbox());
    client.send_request("metrics.echo", own).await.unwrap();
    let own = rnats::Request::new()
        .inbox(client.new_inbox())
        .timeout(Some(Duration::from_millis(50)));
    let error = client
        .send_request("metrics.silent", own)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), rnats::RequestErrorKind::TimedOut);

    // Request-many: one operation per gathering, however many replies.
    let mut replies = client
        .request_many("metrics.echo", "5".into())
        .max_messages(1)
        .await
        .unwrap();
    while let Some(reply) = replies.next().await {
        reply.unwrap();
    }
    let mut replies = (client.request_many("metrics.nobody", "6".into()))
        .await
        .unwrap();
    let error = replies.next().await.unwrap().unwrap_err();
    assert_eq!(error.kind(), rnats::RequestErrorKind::NoResponders);
    assert!(replies.next().await.is_none());

    let points = collector.collect();
    assert_eq!(count(&points, &registration, "request", None), 3);
    assert_eq!(
        count(&points, &registration, "request", Some("no_responders")),
        1
    );
    assert_eq!(count(&points, &registration, "request", Some("timeout")), 1);
    assert_eq!(count(&points, &registration, "request_many", None), 1);
    assert_eq!(
        count(
            &points,
            &registration,
            "request_many",
            Some("no_responders")
        ),
        1
    );
    let all = of(&points, metrics::OPERATION_DURATION, &registration);
    assert_eq!(all.len(), 5, "nothing else: {all:?}");
    for point in all {
        assert!(point.is("messaging.operation.type", "send"), "{point:?}");
        assert!(point.is("messaging.system", "nats"), "{point:?}");
        assert_eq!(point.unit, "s");
    }
    responder.abort();
}

#[tokio::test]
async fn jetstream_publishes_record_their_time_to_the_ack() {
    let collector = Collector::install();
    let server = NatsServer::with_jetstream();
    let client = rnats::connect(server.url()).await.unwrap();
    let registration = metrics::observe(&client, &collector.meter());
    let js = jetstream::new(client);
    js.get_or_create_stream(stream::Config {
        name: "ORDERS".to_string(),
        subjects: vec!["orders.>".to_string()],
        storage: stream::StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();
    // The stream's creation: JetStream API requests, each a request.
    let requests = count(&collector.collect(), &registration, "request", None);
    assert!(requests >= 1);

    for i in 0..3 {
        let ack = js.publish(format!("orders.{i}"), "o".into()).await.unwrap();
        ack.await.unwrap();
    }
    // Pipelined, never awaited: the context's acker sees their acks come.
    for i in 3..5 {
        drop(js.publish(format!("orders.{i}"), "o".into()).await.unwrap());
    }
    js.wait_for_acks().await;
    let wrong = Publish::build()
        .payload("o".into())
        .expected_last_sequence(999);
    let error = js.send_publish("orders.x", wrong).await.unwrap().await;
    assert_eq!(
        error.unwrap_err().kind(),
        jetstream::context::PublishErrorKind::WrongLastSequence
    );
    // No stream: sent again as the retry policy says, and recorded once.
    let error = js.publish("nowhere.x", "o".into()).await.unwrap().await;
    assert_eq!(
        error.unwrap_err().kind(),
        jetstream::context::PublishErrorKind::StreamNotFound
    );

    let points = collector.collect();
    let acked = durations(&points, &registration, "publish", None);
    assert_eq!(acked.len(), 1, "{acked:?}");
    assert_eq!(acked[0].value, 5);
    assert!(acked[0].is("messaging.destination.name", "ORDERS"));
    assert!(acked[0].is("messaging.operation.type", "send"));
    let wrong = durations(
        &points,
        &registration,
        "publish",
        Some("wrong_last_sequence"),
    );
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    assert_eq!(wrong[0].value, 1);
    assert!(wrong[0].attribute("messaging.destination.name").is_none());
    assert_eq!(
        count(&points, &registration, "publish", Some("stream_not_found")),
        1
    );
    // The publishes are not counted as the requests they are made of.
    assert_eq!(count(&points, &registration, "request", None), requests);
    assert!(durations(&points, &registration, "request", Some("no_responders")).is_empty());
}

#[test]
fn a_blocking_client_is_observed() {
    let collector = Collector::install();
    let server = NatsServer::start();
    let client = rnats::blocking::connect(server.url()).unwrap();
    let registration = metrics::observe(&client, &collector.meter());
    let responder = rnats::blocking::connect(server.url()).unwrap();
    let mut requests = responder.subscribe("metrics.blocking").unwrap();
    responder.flush().unwrap();
    let answering = std::thread::spawn(move || {
        let request = requests.next().unwrap();
        responder
            .publish(request.reply.unwrap(), request.payload)
            .unwrap();
        responder.flush().unwrap();
    });

    let mut subscriber = client.subscribe("metrics.counted").unwrap();
    for _ in 0..4 {
        client.publish("metrics.counted", "m".into()).unwrap();
    }
    client.flush().unwrap();
    for _ in 0..4 {
        subscriber.next_timeout(WAIT).unwrap().unwrap();
    }
    client.request("metrics.blocking", "hi".into()).unwrap();
    answering.join().unwrap();
    let error = client.request("metrics.nobody", "hi".into()).unwrap_err();
    assert_eq!(error.kind(), rnats::RequestErrorKind::NoResponders);
    let _silent = client.subscribe("metrics.silent").unwrap();
    client.flush().unwrap();
    let own = rnats::Request::new()
        .inbox(client.new_inbox())
        .timeout(Some(Duration::from_millis(50)));
    let error = client.send_request("metrics.silent", own).unwrap_err();
    assert_eq!(error.kind(), rnats::RequestErrorKind::TimedOut);

    let points = collector.collect();
    let stats = client.statistics();
    let out = stats
        .out_messages
        .load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(out, 7);
    assert_eq!(
        value(&points, metrics::SENT_MESSAGES, &registration),
        i128::from(out)
    );
    // The four published, the reply, the 503, and the silent subscription's own request.
    let came = stats.in_messages.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(came, 7);
    assert_eq!(
        value(&points, metrics::CONSUMED_MESSAGES, &registration),
        i128::from(came)
    );
    assert_eq!(value(&points, metrics::RECONNECTS, &registration), 0);
    let states = of(&points, metrics::CONNECTION_COUNT, &registration);
    let connected: Vec<_> = (states.iter()).filter(|p| p.value == 1).collect();
    assert_eq!(connected.len(), 1, "{states:?}");
    assert!(connected[0].is("nats.client.connection.state", "connected"));
    assert!(connected[0].is("server.port", i64::from(server.port())));
    assert_eq!(count(&points, &registration, "request", None), 1);
    assert_eq!(
        count(&points, &registration, "request", Some("no_responders")),
        1
    );
    assert_eq!(count(&points, &registration, "request", Some("timeout")), 1);

    client.close();
    let points = collector.collect();
    let states = of(&points, metrics::CONNECTION_COUNT, &registration);
    let current: Vec<_> = states.iter().filter(|p| p.value == 1).collect();
    assert_eq!(current.len(), 1, "{states:?}");
    assert!(current[0].is("nats.client.connection.state", "closed"));
}

/// A client of its own that answers every request on `subject` with its payload, until
/// dropped.
async fn answer_requests(server: &NatsServer, subject: &str) -> tokio::task::JoinHandle<()> {
    let responder = rnats::connect(server.url()).await.unwrap();
    let mut requests = responder.subscribe(subject.to_owned()).await.unwrap();
    responder.flush().await.unwrap();
    tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            if let Some(reply) = request.reply {
                responder.publish(reply, request.payload).await.unwrap();
            }
        }
    })
}
