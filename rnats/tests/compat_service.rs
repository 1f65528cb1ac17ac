#![allow(missing_docs, clippy::unwrap_used)]
// Timestamps are pinned as async-nats' default type, `time::OffsetDateTime`; with the `chrono`
// feature they are chrono's, in async-nats as here, and this file is left out.
#![cfg(all(feature = "service", not(feature = "chrono")))]
use rnats as async_nats;

// Compile-level compatibility with async-nats 0.51's Service API: only `async_nats::...` paths,
// written the way async-nats programs call them.
//
// The `async fn`s that need a server are compiled, never run; the `#[test]`s check what needs
// no server (JSON shapes, constants, error texts).

use std::collections::HashMap;
use std::time::Duration;

use async_nats::service::{self, ServiceExt};
use bytes::Bytes;
use futures_util::StreamExt;

#[allow(dead_code)]
async fn builder_and_endpoint_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let mut service = client
        .service_builder()
        .description("generates things")
        .stats_handler(|endpoint, stats| {
            serde_json::json!({ "endpoint": endpoint, "requests": stats.requests })
        })
        .metadata(HashMap::from([("team".to_string(), "core".to_string())]))
        .queue_group("generators")
        .start("generator", "1.0.0")
        .await?;

    let mut plain = service.endpoint("generate").await?;
    let mut grouped = service.group("v1").endpoint("products").await?;
    let nested: service::Group = service.group("v2").group("deep");
    let _deeper = nested.endpoint(String::from("item")).await?;
    let _other_queue = service
        .group_with_queue_group("v3", "special")
        .endpoint("x")
        .await?;
    let _builder: service::EndpointBuilder = service.endpoint_builder();
    let with_metadata: service::endpoint::Endpoint = service
        .endpoint_builder()
        .name("api")
        .metadata(HashMap::from([("schema".to_string(), "none".to_string())]))
        .queue_group("own")
        .add("api.call")
        .await?;
    let _from_group = nested
        .endpoint_builder()
        .name("grouped")
        .add("grouped")
        .await?;

    while let Some(request) = plain.next().await {
        let _message: &async_nats::Message = &request.message;
        let _payload: &Bytes = &request.message.payload;
        request.respond(Ok("hi".into())).await?;
    }
    if let Some(request) = grouped.next().await {
        request
            .respond(Err(async_nats::service::error::Error {
                code: 503,
                status: "unavailable".into(),
            }))
            .await?;
    }
    if let Some(request) = grouped.next().await {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("X-Result", "ok");
        let sent: Result<(), async_nats::PublishError> = request
            .respond_with_headers(Ok(Bytes::from_static(b"done")), headers)
            .await;
        sent?;
    }

    // An endpoint served from a task of its own.
    let mut spawned = with_metadata;
    tokio::spawn(async move {
        while let Some(request) = spawned.next().await {
            if let Err(error) = request.respond(Ok(Bytes::new())).await {
                eprintln!("respond failed: {error}");
            }
        }
    });

    let info: service::Info = service.info().await;
    println!(
        "{} {} {} {} {} {:?}",
        info.kind, info.name, info.id, info.description, info.version, info.metadata
    );
    for endpoint in &info.endpoints {
        let _: &service::endpoint::Info = endpoint;
        println!(
            "{} {} {} {:?}",
            endpoint.name, endpoint.subject, endpoint.queue_group, endpoint.metadata
        );
    }
    let stats: HashMap<String, service::endpoint::Stats> = service.stats().await;
    for (name, endpoint) in &stats {
        let requests: usize = endpoint.requests;
        let errors: usize = endpoint.errors;
        let total: Duration = endpoint.processing_time;
        let average: Duration = endpoint.average_processing_time;
        let last: &Option<service::error::Error> = &endpoint.last_error;
        let data: &Option<serde_json::Value> = &endpoint.data;
        println!(
            "{name} {} {} {requests} {errors} {total:?} {average:?} {last:?} {data:?} {}",
            endpoint.name, endpoint.subject, endpoint.queue_group
        );
    }
    service.reset().await;
    plain.stop().await?;
    service.stop().await?;
    Ok(())
}

#[allow(dead_code)]
async fn add_service_shapes(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let service = client
        .add_service(service::Config {
            name: "adder".to_string(),
            version: "0.1.0".to_string(),
            description: Some("adds".to_string()),
            stats_handler: None,
            metadata: None,
            queue_group: None,
        })
        .await?;
    let _endpoint = service.endpoint("add").await?;

    let handler = service::StatsHandler(Box::new(
        |endpoint: String, stats| serde_json::json!({ "endpoint": endpoint, "errors": stats.errors }),
    ));
    let config = async_nats::service::Config {
        name: "counted".to_string(),
        version: "2.0.0".to_string(),
        description: None,
        stats_handler: Some(handler),
        metadata: Some(HashMap::new()),
        queue_group: Some("custom".to_string()),
    };
    // The future is Send: it can be spawned.
    let started: service::Service = tokio::spawn(client.add_service(config)).await??;
    started.stop().await?;

    let _builder: service::ServiceBuilder = client.service_builder();
    let result: Result<service::Service, async_nats::Error> =
        client.service_builder().start("bad name", "1.0.0").await;
    if let Err(error) = result {
        println!("{error}");
    }
    Ok(())
}

#[allow(dead_code)]
async fn calling_a_service(client: async_nats::Client) -> Result<(), async_nats::Error> {
    let reply = client.request("generate", "".into()).await?;
    if let Some(headers) = &reply.headers
        && let Some(status) = headers.get(service::NATS_SERVICE_ERROR)
    {
        let code = headers.get(service::NATS_SERVICE_ERROR_CODE);
        println!("failed: {status} {code:?}");
    }
    let ping = client.request("$SRV.PING.generator", "".into()).await?;
    let ping: service::PingResponse = serde_json::from_slice(&ping.payload)?;
    println!(
        "{} {} {} {} {:?}",
        ping.kind, ping.name, ping.id, ping.version, ping.metadata
    );
    let stats = client.request("$SRV.STATS.generator", "".into()).await?;
    let stats: service::Stats = serde_json::from_slice(&stats.payload)?;
    let _started: time::OffsetDateTime = stats.started;
    println!(
        "{} {} {} {} {}",
        stats.kind,
        stats.name,
        stats.id,
        stats.version,
        stats.endpoints.len()
    );
    let subject = format!("$SRV.{}.generator", service::Verb::Info);
    let info: service::Info =
        serde_json::from_slice(&client.request(subject, "".into()).await?.payload)?;
    println!("{}", info.endpoints.len());
    Ok(())
}

fn assert_send<T: Send>() {}

#[test]
fn compile_only_shapes_are_referenced() {
    let _ = builder_and_endpoint_shapes;
    let _ = add_service_shapes;
    let _ = calling_a_service;
    assert_send::<service::Service>();
    assert_send::<service::endpoint::Endpoint>();
    assert_send::<service::Request>();
    assert_send::<service::Group>();
}

#[test]
fn constants_verbs_and_error_text() {
    assert_eq!(service::NATS_SERVICE_ERROR, "Nats-Service-Error");
    assert_eq!(service::NATS_SERVICE_ERROR_CODE, "Nats-Service-Error-Code");
    assert_eq!(service::Verb::Ping.to_string(), "PING");
    assert_eq!(service::Verb::Stats.to_string(), "STATS");
    assert_eq!(service::Verb::Info.to_string(), "INFO");
    let error = service::error::Error {
        status: "Testing".to_string(),
        code: 101,
    };
    assert_eq!(
        error.to_string(),
        "service request error code: 101, status: Testing"
    );
    let boxed: async_nats::Error = Box::new(error.clone());
    assert_eq!(boxed.to_string(), error.to_string());
}

#[test]
fn responses_from_nats_go_decode() {
    // As nats.go's micro package writes them: nil maps as null, data omitted, nanosecond
    // durations, RFC 3339 time with nanoseconds.
    let stats: service::Stats = serde_json::from_str(
        r#"{"name":"go","id":"abc","version":"1.0.0","metadata":null,
            "type":"io.nats.micro.v1.stats_response","started":"2024-05-01T10:00:00.123456789Z",
            "endpoints":[{"name":"e","subject":"go.e","queue_group":"q","num_requests":3,
            "num_errors":1,"last_error":"500:broken","processing_time":3000,
            "average_processing_time":1000}]}"#,
    )
    .unwrap();
    let endpoint = &stats.endpoints[0];
    assert_eq!(endpoint.requests, 3);
    assert_eq!(endpoint.processing_time, Duration::from_micros(3));
    assert_eq!(
        endpoint.last_error,
        Some(service::error::Error {
            status: "broken".into(),
            code: 500
        })
    );
    assert_eq!(endpoint.data, None);
    assert_eq!(stats.started.nanosecond(), 123_456_789);

    let info: service::Info = serde_json::from_str(
        r#"{"name":"go","id":"abc","version":"1.0.0","metadata":null,"description":"",
            "type":"io.nats.micro.v1.info_response",
            "endpoints":[{"name":"e","subject":"go.e","queue_group":"q","metadata":null}]}"#,
    )
    .unwrap();
    assert!(info.endpoints[0].metadata.is_empty());

    // And what rnats writes: `data` and `metadata` always present, microsecond time.
    let text = serde_json::to_value(&stats).unwrap();
    assert_eq!(text["started"], "2024-05-01T10:00:00.123456Z");
    assert_eq!(text["endpoints"][0]["data"], serde_json::Value::Null);
    assert_eq!(text["endpoints"][0]["last_error"], "500:broken");
    assert_eq!(text["endpoints"][0]["processing_time"], 3000);
    assert_eq!(text["metadata"], serde_json::json!({}));
}
