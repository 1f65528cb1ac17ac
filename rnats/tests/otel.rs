//! OpenTelemetry across real connections: the trace context a publish, a request or a
//! JetStream publish puts in the headers reaches the receiver, whose process span continues
//! the sender's trace. Spans are collected by the OpenTelemetry SDK's in-memory exporter
//! through the `tracing-opentelemetry` layer, as an application would install them.
#![allow(clippy::unwrap_used, missing_docs)]

use bytes::Bytes;
use futures_util::StreamExt;
use opentelemetry::trace::{FutureExt, SpanId, SpanKind, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context, KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use rnats::jetstream::{self, consumer, stream};
use rnats::otel::{MessageExt, TRACEPARENT};
use rnats_test_server::NatsServer;
use tracing::Instrument;
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::layer::SubscriberExt;

/// The application's side: an SDK tracer exporting to memory, behind the `tracing` layer,
/// installed for this test's thread (each test runs on a current-thread runtime, so the
/// client's tasks and the responders run there too).
struct Collector {
    exporter: InMemorySpanExporter,
    /// Kept for as long as the spans are collected.
    _provider: SdkTracerProvider,
    _installed: DefaultGuard,
}

impl Collector {
    fn install() -> Collector {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("otel-test"));
        let subscriber = tracing_subscriber::registry().with(layer);
        Collector {
            exporter,
            _provider: provider,
            _installed: tracing::subscriber::set_default(subscriber),
        }
    }

    /// Every span that has ended so far.
    fn spans(&self) -> Vec<SpanData> {
        self.exporter.get_finished_spans().unwrap()
    }

    /// The one ended span called `name`.
    fn span(&self, name: &str) -> SpanData {
        let mut found: Vec<SpanData> = self
            .spans()
            .into_iter()
            .filter(|span| span.name == name)
            .collect();
        let names: Vec<String> = self.spans().iter().map(|s| s.name.to_string()).collect();
        assert_eq!(found.len(), 1, "one span {name:?} among {names:?}");
        found.remove(0)
    }
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|KeyValue { key: k, .. }| k.as_str() == key)
        .map(|kv| &kv.value)
}

/// `child`'s parent is `parent`, in the same trace.
fn assert_child_of(child: &SpanData, parent: &SpanData) {
    assert_eq!(
        child.span_context.trace_id(),
        parent.span_context.trace_id(),
        "{} is in the trace of {}",
        child.name,
        parent.name
    );
    assert_eq!(
        child.parent_span_id,
        parent.span_context.span_id(),
        "{} is a child of {}",
        child.name,
        parent.name
    );
}

#[tokio::test]
async fn a_request_and_its_reply_are_one_trace() {
    let collector = Collector::install();
    let server = NatsServer::start();
    let requester = rnats::connect(server.url()).await.unwrap();
    let responder = rnats::connect(server.url()).await.unwrap();
    let mut requests = responder.subscribe("greet").await.unwrap();
    responder.flush().await.unwrap();

    let answering = tokio::spawn(async move {
        let request = requests.next().await.unwrap();
        let span = request.process_span();
        async {
            let reply = request.reply.clone().unwrap();
            responder.publish(reply, "hello".into()).await.unwrap();
        }
        .instrument(span)
        .await;
    });

    let caller = tracing::info_span!("caller");
    let reply = requester
        .request("greet", "hi".into())
        .instrument(caller.clone())
        .await
        .unwrap();
    assert_eq!(reply.payload, Bytes::from("hello"));
    drop(caller);
    answering.await.unwrap();

    let caller = collector.span("caller");
    let request = collector.span("request greet");
    let process = collector.span("process greet");
    // A reply inbox is made for one request: kept out of the span's name.
    let answer = collector.span("publish");

    assert_child_of(&request, &caller);
    // The only way from the requester to the responder is the message's headers.
    assert_child_of(&process, &request);
    assert!(process.parent_span_is_remote);
    assert_child_of(&answer, &process);

    assert_eq!(request.span_kind, SpanKind::Client);
    assert_eq!(process.span_kind, SpanKind::Consumer);
    assert_eq!(answer.span_kind, SpanKind::Producer);
    for span in [&request, &process, &answer] {
        assert_eq!(
            attribute(span, "messaging.system"),
            Some(&Value::from("nats"))
        );
    }
    assert_eq!(
        attribute(&request, "messaging.destination.name"),
        Some(&Value::from("greet"))
    );
    assert_eq!(
        attribute(&process, "messaging.operation.type"),
        Some(&Value::from("process"))
    );
    assert_eq!(
        attribute(&answer, "messaging.message.body.size"),
        Some(&Value::from(5_i64))
    );
    assert_eq!(
        attribute(&answer, "messaging.destination.name"),
        Some(&Value::from(reply.subject.to_string()))
    );
    assert_eq!(
        attribute(&answer, "messaging.destination.temporary"),
        Some(&Value::from(true))
    );
}

#[tokio::test]
async fn a_publish_carries_its_span_in_traceparent() {
    let collector = Collector::install();
    let server = NatsServer::start();
    let client = rnats::connect(server.url()).await.unwrap();
    let mut subscriber = client.subscribe("orders.>").await.unwrap();

    let caller = tracing::info_span!("caller");
    async {
        client.publish("orders.new", "one".into()).await.unwrap();
        let mut headers = rnats::HeaderMap::new();
        headers.insert("X-Kind", "kept");
        client
            .publish_with_headers("orders.old", headers, "two".into())
            .await
            .unwrap();
    }
    .instrument(caller)
    .await;
    client.flush().await.unwrap();
    let first = subscriber.next().await.unwrap();
    let second = subscriber.next().await.unwrap();

    let publish = collector.span("publish orders.new");
    let expected = format!(
        "00-{:032x}-{:016x}-01",
        publish.span_context.trace_id(),
        publish.span_context.span_id()
    );
    let headers = first.headers.as_ref().unwrap();
    assert_eq!(headers.get(TRACEPARENT).unwrap().as_str(), expected);
    let found = first.otel_context();
    assert_eq!(
        found.span().span_context().span_id(),
        publish.span_context.span_id()
    );

    // The application's own headers stay, next to the trace context.
    let headers = second.headers.as_ref().unwrap();
    assert_eq!(headers.get("X-Kind").unwrap().as_str(), "kept");
    let publish_old = collector.span("publish orders.old");
    assert_eq!(
        second.otel_context().span().span_context().span_id(),
        publish_old.span_context.span_id()
    );
}

#[tokio::test]
async fn a_traceparent_the_application_set_is_kept() {
    let _collector = Collector::install();
    let server = NatsServer::start();
    let client = rnats::connect(server.url()).await.unwrap();
    let mut subscriber = client.subscribe("audit").await.unwrap();
    let own = "00-11111111111111111111111111111111-2222222222222222-01";
    let mut headers = rnats::HeaderMap::new();
    headers.insert(TRACEPARENT, own);
    client
        .publish_with_headers("audit", headers, Bytes::new())
        .instrument(tracing::info_span!("caller"))
        .await
        .unwrap();
    client.flush().await.unwrap();
    let message = subscriber.next().await.unwrap();
    let headers = message.headers.unwrap();
    let values: Vec<&str> = headers.get_all(TRACEPARENT).map(|v| v.as_str()).collect();
    assert_eq!(values, [own]);
}

#[tokio::test]
async fn without_a_trace_nothing_is_added() {
    // No tracing layer and no OpenTelemetry context: the feature's hooks add nothing.
    let server = NatsServer::start();
    let client = rnats::connect(server.url()).await.unwrap();
    let mut subscriber = client.subscribe("plain").await.unwrap();
    client.publish("plain", "x".into()).await.unwrap();
    client.flush().await.unwrap();
    let message = subscriber.next().await.unwrap();
    assert!(message.headers.is_none());
    assert!(!message.otel_context().has_active_span());
}

#[tokio::test]
async fn an_opentelemetry_context_without_tracing_is_propagated() {
    // An application that uses the OpenTelemetry API alone: no `tracing` layer, its own span
    // current while the publish runs (`FutureExt::with_context` attaches it on every poll).
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let tracer = provider.tracer("otel-only");
    let server = NatsServer::start();
    let client = rnats::connect(server.url()).await.unwrap();
    let mut subscriber = client.subscribe("direct").await.unwrap();

    let cx = Context::current_with_span(tracer.start("caller"));
    let expected = cx.span().span_context().clone();
    client
        .publish("direct", "x".into())
        .with_context(cx)
        .await
        .unwrap();
    client.flush().await.unwrap();
    let message = subscriber.next().await.unwrap();
    let found = message.otel_context();
    assert_eq!(found.span().span_context().trace_id(), expected.trace_id());
    assert_eq!(found.span().span_context().span_id(), expected.span_id());
    assert_ne!(expected.span_id(), SpanId::INVALID);
    drop(provider);
}

#[tokio::test]
async fn a_jetstream_publish_and_its_consumption_are_one_trace() {
    let collector = Collector::install();
    let server = NatsServer::with_jetstream();
    let client = rnats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client);
    let orders = js
        .get_or_create_stream(stream::Config {
            name: "ORDERS".to_string(),
            subjects: vec!["orders.>".to_string()],
            storage: stream::StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();

    let checkout = tracing::info_span!("checkout");
    let ack = async { js.publish("orders.new", "order 1".into()).await?.await }
        .instrument(checkout.clone())
        .await
        .unwrap();
    assert_eq!(ack.sequence, 1);
    drop(checkout);

    // A separate connection consumes, as another service would, inside a trace of its own:
    // its JetStream API requests and pulls carry trace context too, which the server takes.
    let consuming = jetstream::new(rnats::connect(server.url()).await.unwrap());
    let message = async {
        let billing = consuming
            .get_stream("ORDERS")
            .await
            .unwrap()
            .get_or_create_consumer(
                "billing",
                consumer::pull::Config {
                    durable_name: Some("billing".to_string()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        billing
            .fetch()
            .max_messages(1)
            .messages()
            .await
            .unwrap()
            .next()
            .await
            .unwrap()
            .unwrap()
    }
    .instrument(tracing::info_span!("billing"))
    .await;
    // `rnats::jetstream::Message` derefs to the Core message, so the extension applies.
    let span = message.process_span();
    async { message.ack().await.unwrap() }
        .instrument(span)
        .await;
    drop(orders);

    let checkout = collector.span("checkout");
    let publish = collector.span("request orders.new");
    let process = collector.span("process orders.new");
    assert_child_of(&publish, &checkout);
    // Its parent is the publisher's span from the stored headers, not the consumer's
    // "billing" span that was current when the message was fetched.
    assert_child_of(&process, &publish);
    assert!(process.parent_span_is_remote);
    assert_eq!(process.span_kind, SpanKind::Consumer);
    let billing = collector.span("billing");
    assert_ne!(
        billing.span_context.trace_id(),
        checkout.span_context.trace_id()
    );
}

#[tokio::test]
async fn key_value_works_inside_a_trace() {
    // Every KV call is a JetStream request or publish, and carries trace context here.
    let _collector = Collector::install();
    let server = NatsServer::with_jetstream();
    let js = jetstream::new(rnats::connect(server.url()).await.unwrap());
    async {
        let kv = js
            .create_key_value(jetstream::kv::Config {
                bucket: "PROFILES".to_string(),
                history: 2,
                ..Default::default()
            })
            .await
            .unwrap();
        kv.put("alice", "v1".into()).await.unwrap();
        kv.put("alice", "v2".into()).await.unwrap();
        assert_eq!(kv.get("alice").await.unwrap(), Some(Bytes::from("v2")));
        let entry = kv.entry("alice").await.unwrap().unwrap();
        assert_eq!(entry.revision, 2);
        let keys: Vec<String> = kv.keys().await.unwrap().map(|k| k.unwrap()).collect().await;
        assert_eq!(keys, ["alice"]);
    }
    .instrument(tracing::info_span!("profiles"))
    .await;
}
