//! Message tracing (ADR-41) against real nats-servers: one server, JetStream, and a
//! three-node cluster where the reports come from two servers.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::trace::{ConnectionKind, TraceEvent, TraceReport, Traces};
use rnats_core::{Client, ManyEnd};
use rnats_test_server::{Cluster, NatsServer};

/// Every report of a trace, failing the test on a malformed one.
async fn reports(traces: &mut Traces) -> Vec<TraceReport> {
    let mut all = Vec::new();
    while let Some(report) = traces.next().await {
        all.push(report.unwrap());
    }
    all
}

/// Publishes a plain message and returns the next payload `sub` receives: everything the
/// server sent it before that is already in, so a missing message was never delivered.
async fn next_after_marker(
    client: &Client,
    sub: &mut rnats_core::Subscriber,
    subject: &str,
) -> Bytes {
    client
        .publish(subject.to_owned(), "marker".into())
        .await
        .unwrap();
    client.flush().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap()
        .unwrap()
        .payload
}

#[tokio::test]
async fn one_server_reports_ingress_and_the_subscriber_egress() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut sub = client.subscribe("traced.one").await.unwrap();
    client.flush().await.unwrap();
    let mut traces = client
        .trace("traced.one", "hello".into())
        .timeout(Duration::from_secs(30))
        .await
        .unwrap();
    let all = reports(&mut traces).await;
    assert!(traces.is_complete());
    // Ended on the tally, not at the 30 s timeout (that would be `ManyEnd::Timeout`).
    assert_eq!(traces.ended(), Some(ManyEnd::Closed), "ended on the tally");
    assert_eq!(all.len(), 1);
    let report = &all[0];
    assert_eq!(report.hops, 0);
    let ingress = report.ingress().unwrap();
    assert_eq!(ingress.kind, ConnectionKind::Client);
    assert_eq!(ingress.subject, "traced.one");
    let egress = report.egresses().next().unwrap();
    assert_eq!(egress.kind, ConnectionKind::Client);
    assert_eq!(egress.subscription.as_deref(), Some("traced.one"));
    // Traced, not trace-only: the subscriber gets the message itself.
    let got = sub.next().await.unwrap();
    assert_eq!(got.payload, "hello");
}

#[tokio::test]
async fn trace_only_reports_the_route_but_delivers_nothing() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut sub = client.subscribe("traced.only").await.unwrap();
    client.flush().await.unwrap();
    let mut traces = client
        .trace("traced.only", "secret".into())
        .trace_only()
        .timeout(Duration::from_secs(30))
        .await
        .unwrap();
    let all = reports(&mut traces).await;
    assert_eq!(all.len(), 1);
    let egress = all[0].egresses().next().unwrap();
    assert_eq!(egress.subscription.as_deref(), Some("traced.only"));
    assert_eq!(
        all[0]
            .request
            .header
            .get("Nats-Trace-Only")
            .map(Vec::as_slice),
        Some(&["true".to_owned()][..])
    );
    assert_eq!(
        next_after_marker(&client, &mut sub, "traced.only").await,
        "marker",
        "the traced message was not delivered"
    );
}

#[tokio::test]
async fn a_stream_that_stores_the_message_reports_a_jetstream_event() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let created = client
        .request(
            "$JS.API.STREAM.CREATE.TRACED",
            r#"{"name":"TRACED","subjects":["traced.js.>"],"storage":"memory"}"#.into(),
        )
        .await
        .unwrap();
    assert!(!String::from_utf8_lossy(&created.payload).contains("\"error\""));
    let mut traces = client
        .trace("traced.js.order", "stored".into())
        .timeout(Duration::from_secs(30))
        .await
        .unwrap();
    let all = reports(&mut traces).await;
    let jetstream = all
        .iter()
        .flat_map(|report| &report.events)
        .find_map(|event| match event {
            TraceEvent::JetStream(js) => Some(js),
            _ => None,
        })
        .expect("a JetStream event");
    assert_eq!(jetstream.stream, "TRACED");
    assert!(jetstream.error.is_none(), "{jetstream:?}");
}

#[tokio::test]
async fn a_cluster_reports_from_each_server_the_message_crossed() {
    let cluster = Cluster::start(3).unwrap();
    let tracer = rnats_core::connect(cluster.nodes()[0].url()).await.unwrap();
    let remote = rnats_core::connect(cluster.nodes()[1].url()).await.unwrap();
    let mut sub = remote.subscribe("traced.cluster").await.unwrap();
    remote.flush().await.unwrap();
    // Interest crosses the route asynchronously: publish until it has.
    let mut crossed = false;
    for _ in 0..100 {
        tracer
            .publish("traced.cluster", "probe".into())
            .await
            .unwrap();
        if let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(100), sub.next()).await {
            crossed = true;
            break;
        }
    }
    assert!(crossed, "interest never reached the first node");

    let mut traces = tracer
        .trace("traced.cluster", "hop".into())
        .trace_only()
        .timeout(Duration::from_secs(30))
        .await
        .unwrap();
    let all = reports(&mut traces).await;
    assert!(traces.is_complete(), "{all:?}");
    assert_eq!(all.len(), 2, "{all:?}");
    let origin = all.iter().find(|r| r.hop().is_none()).unwrap();
    let forwarded = all.iter().find(|r| r.hop() == Some("1")).unwrap();
    assert_eq!(origin.hops, 1);
    let route = origin.egresses().next().unwrap();
    assert_eq!(route.kind, ConnectionKind::Router);
    assert_eq!(route.hop.as_deref(), Some("1"));
    assert_ne!(origin.server.id, forwarded.server.id);
    assert_eq!(forwarded.ingress().unwrap().kind, ConnectionKind::Router);
    let delivered = forwarded.egresses().next().unwrap();
    assert_eq!(delivered.kind, ConnectionKind::Client);
    assert_eq!(delivered.subscription.as_deref(), Some("traced.cluster"));
}

#[tokio::test]
async fn a_subject_nobody_listens_on_reports_only_the_ingress() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut traces = client
        .trace("traced.nobody", "x".into())
        .timeout(Duration::from_secs(30))
        .await
        .unwrap();
    let all = reports(&mut traces).await;
    assert_eq!(all.len(), 1);
    assert!(all[0].egresses().next().is_none(), "nobody to deliver to");
    assert!(traces.is_complete());
}
