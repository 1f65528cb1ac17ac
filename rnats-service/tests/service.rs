//! The Service API against a real nats-server: monitoring replies, load sharing, stats,
//! errors, stop.
#![allow(clippy::unwrap_used)]

mod common;
use common::*;

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::{HeaderMap, RequestErrorKind};
use rnats_service::{
    Config, NATS_SERVICE_ERROR, NATS_SERVICE_ERROR_CODE, ServiceError, ServiceErrorKind,
    ServiceExt, error,
};
use rnats_test_server::NatsServer;
use serde_json::{Value, json};

#[tokio::test]
async fn ping_info_and_stats_answer_on_all_name_and_id_subjects_with_adr32_fields() {
    let server = NatsServer::start();
    let client = connect(&server.url()).await;
    let metadata = HashMap::from([("region".to_owned(), "eu".to_owned())]);
    let service = client
        .service_builder()
        .description("counts things")
        .metadata(metadata.clone())
        .start("counter", "1.2.3-beta.1")
        .await
        .unwrap();
    let endpoint_metadata = HashMap::from([("unit".to_owned(), "items".to_owned())]);
    let _count = service
        .endpoint_builder()
        .name("count")
        .metadata(endpoint_metadata)
        .add("counter.count")
        .await
        .unwrap();
    let _total = service
        .group("counter")
        .endpoint("total.all")
        .await
        .unwrap();
    client.flush().await.unwrap();
    let id = service.info().await.id;
    assert_eq!(id.len(), 22, "a nuid");

    let caller = connect(&server.url()).await;
    for suffix in ["", ".counter", &format!(".counter.{id}")] {
        let ping = request_json(&caller, &format!("$SRV.PING{suffix}")).await;
        assert_eq!(keys(&ping), ["id", "metadata", "name", "type", "version"]);
        assert_eq!(
            ping,
            json!({
                "type": "io.nats.micro.v1.ping_response",
                "name": "counter",
                "id": id,
                "version": "1.2.3-beta.1",
                "metadata": {"region": "eu"},
            })
        );

        let info = request_json(&caller, &format!("$SRV.INFO{suffix}")).await;
        assert_eq!(
            info,
            json!({
                "type": "io.nats.micro.v1.info_response",
                "name": "counter",
                "id": id,
                "description": "counts things",
                "version": "1.2.3-beta.1",
                "metadata": {"region": "eu"},
                "endpoints": [
                    {"name": "count", "subject": "counter.count", "queue_group": "q",
                     "metadata": {"unit": "items"}},
                    {"name": "counter-total-all", "subject": "counter.total.all",
                     "queue_group": "q", "metadata": {}},
                ],
            })
        );

        let stats = request_json(&caller, &format!("$SRV.STATS{suffix}")).await;
        assert_eq!(
            keys(&stats),
            [
                "endpoints",
                "id",
                "metadata",
                "name",
                "started",
                "type",
                "version"
            ]
        );
        assert_eq!(stats["type"], "io.nats.micro.v1.stats_response");
        assert_eq!(stats["name"], "counter");
        assert_eq!(stats["id"], id.as_str());
        assert_eq!(stats["version"], "1.2.3-beta.1");
        assert_eq!(stats["metadata"], json!({"region": "eu"}));
        let started = stats["started"].as_str().unwrap();
        time::OffsetDateTime::parse(started, &time::format_description::well_known::Rfc3339)
            .unwrap();
        assert!(started.ends_with('Z'), "{started}");
        let endpoints = stats["endpoints"].as_array().unwrap();
        assert_eq!(endpoints.len(), 2);
        assert_eq!(
            endpoints[0],
            json!({
                "name": "count", "subject": "counter.count", "queue_group": "q",
                "num_requests": 0, "num_errors": 0, "processing_time": 0,
                "average_processing_time": 0, "last_error": "", "data": null,
            })
        );
        assert_eq!(endpoints[1]["name"], "counter-total-all");
    }

    // Another name, or an unknown id, is not this service's.
    let other = caller
        .request("$SRV.PING.other", Bytes::new())
        .await
        .unwrap_err();
    assert_eq!(other.kind(), RequestErrorKind::NoResponders);
    let wrong_id = caller
        .request("$SRV.PING.counter.nope", Bytes::new())
        .await
        .unwrap_err();
    assert_eq!(wrong_id.kind(), RequestErrorKind::NoResponders);
}

#[tokio::test]
async fn instances_with_the_same_name_share_requests_through_the_queue_group() {
    let server = NatsServer::start();
    let mut ids = HashSet::new();
    let mut services = Vec::new();
    for _ in 0..2 {
        let client = connect(&server.url()).await;
        let service = client
            .service_builder()
            .start("shared", "1.0.0")
            .await
            .unwrap();
        let id = service.info().await.id;
        let endpoint = service.endpoint("shared.work").await.unwrap();
        let reply = Bytes::from(id.clone());
        serve(endpoint, move |_| Ok(reply.clone()));
        client.flush().await.unwrap();
        ids.insert(id);
        services.push((client, service));
    }

    let caller = connect(&server.url()).await;
    let mut answered_by = HashMap::<String, usize>::new();
    for _ in 0..200 {
        let reply = request(&caller, "shared.work", "x").await;
        let id = String::from_utf8(reply.payload.to_vec()).unwrap();
        *answered_by.entry(id).or_default() += 1;
    }
    // Each request reaches exactly one instance, and both get some (the server picks at
    // random; both missing out 200 times is a 2^-199 chance).
    assert_eq!(answered_by.values().sum::<usize>(), 200);
    assert_eq!(answered_by.keys().cloned().collect::<HashSet<_>>(), ids);

    let pings = caller
        .service_discovery()
        .max_replies(2)
        .ping(Some("shared"))
        .await
        .unwrap();
    assert_eq!(
        pings.iter().map(|p| p.id.clone()).collect::<HashSet<_>>(),
        ids
    );
}

/// Sends one request on a fresh inbox and collects the replies of both instances.
async fn replies_to_both(caller: &rnats_core::Client, subject: &str) -> Vec<String> {
    let inbox = caller.new_inbox();
    let mut replies = caller.subscribe(inbox.clone()).await.unwrap();
    caller
        .publish_with_reply(subject.to_owned(), inbox, "x".into())
        .await
        .unwrap();
    let mut got = Vec::new();
    for _ in 0..2 {
        let reply = within(replies.next()).await.unwrap();
        got.push(String::from_utf8(reply.payload.to_vec()).unwrap());
    }
    got.sort();
    got
}

#[tokio::test]
async fn without_a_queue_group_every_instance_gets_every_request() {
    let server = NatsServer::start();
    let mut infos = Vec::new();
    let mut keep = Vec::new();
    for instance in ["a", "b"] {
        let client = connect(&server.url()).await;
        let service = client
            .service_builder()
            .queue_group_disabled()
            .start("fanout", "1.0.0")
            .await
            .unwrap();
        let reply = Bytes::from(instance);
        let on_service = service.endpoint("fan.service").await.unwrap();
        let r = reply.clone();
        serve(on_service, move |_| Ok(r.clone()));
        // A group and an endpoint can switch it off on a queue-grouped service too.
        let grouped = client
            .service_builder()
            .start("fanout-grouped", "1.0.0")
            .await
            .unwrap();
        let on_group = grouped
            .group_with_queue_group_disabled("fan")
            .endpoint("group")
            .await
            .unwrap();
        let r = reply.clone();
        serve(on_group, move |_| Ok(r.clone()));
        let on_endpoint = grouped
            .endpoint_builder()
            .queue_group_disabled()
            .add("fan.endpoint")
            .await
            .unwrap();
        serve(on_endpoint, move |_| Ok(reply.clone()));
        client.flush().await.unwrap();
        infos.push(service.info().await);
        infos.push(grouped.info().await);
        keep.push((client, service, grouped));
    }
    let caller = connect(&server.url()).await;
    for subject in ["fan.service", "fan.group", "fan.endpoint"] {
        assert_eq!(
            replies_to_both(&caller, subject).await,
            ["a", "b"],
            "{subject}"
        );
    }
    // INFO shows a disabled queue group as an empty one.
    for info in &infos {
        for endpoint in &info.endpoints {
            assert_eq!(endpoint.queue_group, "", "{}", endpoint.subject);
        }
    }
}

#[tokio::test]
async fn queue_groups_are_set_per_service_group_and_endpoint() {
    let server = NatsServer::start();
    let client = connect(&server.url()).await;
    let service = client
        .service_builder()
        .queue_group("workers")
        .start("queues", "0.1.0")
        .await
        .unwrap();
    let _a = service.endpoint("q.a").await.unwrap();
    let v1 = service.group("v1");
    let _b = v1.endpoint("b").await.unwrap();
    let custom = v1.group_with_queue_group("custom", "special");
    let _c = custom.endpoint("c").await.unwrap();
    let _d = custom.group("deeper").endpoint("d").await.unwrap();
    let _e = custom
        .endpoint_builder()
        .queue_group("own")
        .add("e")
        .await
        .unwrap();
    let _f = service
        .group_with_queue_group("x", "gx")
        .group_with_queue_group_disabled("y")
        .endpoint("f")
        .await
        .unwrap();
    let found: Vec<(String, String)> = service
        .info()
        .await
        .endpoints
        .into_iter()
        .map(|e| (e.subject, e.queue_group))
        .collect();
    let expected = [
        ("q.a", "workers"),
        ("v1.b", "workers"),
        ("v1.custom.c", "special"),
        ("v1.custom.deeper.d", "special"),
        ("v1.custom.e", "own"),
        ("x.y.f", ""),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(s, q)| (s.to_string(), q.to_string()))
        .collect();
    assert_eq!(found, expected);

    // Two endpoints in different queue groups on one subject both get each request.
    let one = service
        .endpoint_builder()
        .queue_group("one")
        .add("dup")
        .await
        .unwrap();
    let two = service
        .endpoint_builder()
        .queue_group("two")
        .add("dup")
        .await
        .unwrap();
    serve(one, |_| Ok("one".into()));
    serve(two, |_| Ok("two".into()));
    client.flush().await.unwrap();
    assert_eq!(replies_to_both(&client, "dup").await, ["one", "two"]);
}

#[tokio::test]
async fn stats_add_up_over_a_thousand_requests_and_reset_zeroes_them() {
    let server = NatsServer::start();
    let client = connect(&server.url()).await;
    let mut service = client
        .service_builder()
        .stats_handler(|name, stats| json!({ "endpoint": name, "seen": stats.requests }))
        .start("tally", "1.0.0")
        .await
        .unwrap();
    let endpoint = service.endpoint("tally.add").await.unwrap();
    serve(endpoint, |request| {
        let n: usize = std::str::from_utf8(&request.message.payload)
            .unwrap()
            .parse()
            .unwrap();
        if n.is_multiple_of(10) {
            Err(error::Error {
                status: format!("no multiples of ten: {n}"),
                code: 422,
            })
        } else {
            Ok(Bytes::from((n * 2).to_string()))
        }
    });
    client.flush().await.unwrap();

    let caller = connect(&server.url()).await;
    // Many in flight at once, answered as they come.
    let pending: Vec<_> = {
        let mut pending = Vec::new();
        for n in 1..=1000 {
            let p = caller
                .start_request("tally.add", None, n.to_string().into())
                .await
                .unwrap();
            pending.push((n, p));
        }
        pending
    };
    let mut errors = 0;
    for (n, reply) in pending {
        let reply = within(reply.wait(None)).await.unwrap();
        match error::Error::from_headers(reply.headers.as_ref().unwrap_or(&HeaderMap::new())) {
            Some(e) => {
                assert_eq!(n % 10, 0);
                assert_eq!(e.code, 422);
                assert_eq!(e.status, format!("no multiples of ten: {n}"));
                assert!(reply.payload.is_empty());
                errors += 1;
            }
            None => assert_eq!(reply.payload, (n * 2).to_string()),
        }
    }
    assert_eq!(errors, 100);

    let stats = service.stats().await;
    let add = &stats["tally.add"];
    assert_eq!(add.requests, 1000);
    assert_eq!(add.errors, 100);
    assert!(add.processing_time > std::time::Duration::ZERO);
    assert_eq!(add.average_processing_time, add.processing_time / 1000);
    assert_eq!(
        add.last_error,
        Some(error::Error {
            status: "no multiples of ten: 1000".into(),
            code: 422
        })
    );

    // The same over the wire, with the handler's data.
    let id = service.info().await.id;
    let wire = request_json(&caller, &format!("$SRV.STATS.tally.{id}")).await;
    let entry = &wire["endpoints"][0];
    assert_eq!(entry["name"], "tally-add");
    assert_eq!(entry["num_requests"], 1000);
    assert_eq!(entry["num_errors"], 100);
    assert_eq!(entry["last_error"], "422:no multiples of ten: 1000");
    let total = entry["processing_time"].as_u64().unwrap();
    assert!(total > 0);
    assert_eq!(
        entry["average_processing_time"].as_u64().unwrap(),
        total / 1000
    );
    assert_eq!(
        entry["data"],
        json!({"endpoint": "tally.add", "seen": 1000})
    );
    // The handler's data is also kept for `stats()`.
    assert_eq!(
        service.stats().await["tally.add"].data,
        Some(json!({"endpoint": "tally.add", "seen": 1000}))
    );

    service.reset().await;
    let add = &service.stats().await["tally.add"];
    assert_eq!((add.requests, add.errors), (0, 0));
    assert_eq!(add.processing_time, std::time::Duration::ZERO);
    assert_eq!(add.last_error, None);
    let wire = request_json(&caller, &format!("$SRV.STATS.tally.{id}")).await;
    assert_eq!(wire["endpoints"][0]["num_requests"], 0);
    assert_eq!(wire["endpoints"][0]["last_error"], "");
    assert_eq!(
        wire["endpoints"][0]["data"],
        json!({"endpoint": "tally.add", "seen": 0})
    );
}

#[tokio::test]
async fn error_responses_carry_the_service_error_headers_and_keep_other_headers() {
    let server = NatsServer::start();
    let client = connect(&server.url()).await;
    let service = client
        .service_builder()
        .start("failing", "1.0.0")
        .await
        .unwrap();
    let mut endpoint = service.endpoint("failing.op").await.unwrap();
    client.flush().await.unwrap();
    let caller = connect(&server.url()).await;

    let answer = async {
        let request = endpoint.next().await.unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("X-Trace", "t-1");
        headers.insert(NATS_SERVICE_ERROR, "overridden");
        let failure = error::Error {
            status: "unavailable".into(),
            code: 503,
        };
        request
            .respond_with_headers(Err(failure), headers)
            .await
            .unwrap();
        let request = endpoint.next().await.unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("X-Trace", "t-2");
        request
            .respond_with_headers(Ok("fine".into()), headers)
            .await
            .unwrap();
    };
    let ask = async {
        let failed = request(&caller, "failing.op", "").await;
        let second = request(&caller, "failing.op", "").await;
        (failed, second)
    };
    let ((), (failed, second)) = tokio::join!(answer, ask);
    let headers = failed.headers.unwrap();
    assert_eq!(
        headers.get(NATS_SERVICE_ERROR).unwrap().as_str(),
        "unavailable"
    );
    assert_eq!(
        headers.get(NATS_SERVICE_ERROR_CODE).unwrap().as_str(),
        "503"
    );
    assert_eq!(headers.get("X-Trace").unwrap().as_str(), "t-1");
    assert!(failed.payload.is_empty());
    let headers = second.headers.unwrap();
    assert_eq!(headers.get("X-Trace").unwrap().as_str(), "t-2");
    assert_eq!(error::Error::from_headers(&headers), None);
    assert_eq!(second.payload, "fine");

    let stats = &service.stats().await["failing.op"];
    assert_eq!((stats.requests, stats.errors), (2, 1));

    // Discovery's `call` turns the headers back into an error.
    let mut endpoint = endpoint;
    let failing = tokio::spawn(async move {
        let request = endpoint.next().await.unwrap();
        request
            .respond(Err(error::Error {
                status: "nope".into(),
                code: 400,
            }))
            .await
            .unwrap();
        endpoint
    });
    let err = caller
        .service_discovery()
        .call("failing.op", Bytes::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.kind(),
        rnats_service::discovery::DiscoveryErrorKind::Service
    );
    assert_eq!(
        err.downcast_source::<error::Error>(),
        Some(&error::Error {
            status: "nope".into(),
            code: 400
        })
    );
    drop(failing.await.unwrap());
}

#[tokio::test]
async fn stop_drains_in_flight_requests_and_takes_no_new_ones() {
    let server = NatsServer::start();
    let client = connect(&server.url()).await;
    let service = client
        .service_builder()
        .start("draining", "1.0.0")
        .await
        .unwrap();
    let id = service.info().await.id;
    let mut endpoint = service.endpoint("draining.job").await.unwrap();
    client.flush().await.unwrap();

    let caller = connect(&server.url()).await;
    let first = caller
        .start_request("draining.job", None, "first".into())
        .await
        .unwrap();
    let second = caller
        .start_request("draining.job", None, "second".into())
        .await
        .unwrap();
    caller.flush().await.unwrap();

    // A handler holds the first request while the service stops; nobody polls the endpoint.
    let held = within(endpoint.next()).await.unwrap();
    assert_eq!(held.message.payload, "first");
    within(service.stop()).await.unwrap();

    // No new requests, no monitoring replies.
    let after = caller
        .request("draining.job", "third".into())
        .await
        .unwrap_err();
    assert_eq!(after.kind(), RequestErrorKind::NoResponders);
    let ping = caller
        .request(format!("$SRV.PING.draining.{id}"), Bytes::new())
        .await
        .unwrap_err();
    assert_eq!(ping.kind(), RequestErrorKind::NoResponders);

    // The held request is answered after the stop; the one already received is still yielded.
    held.respond(Ok("done first".into())).await.unwrap();
    assert_eq!(
        within(first.wait(None)).await.unwrap().payload,
        "done first"
    );
    let buffered = within(endpoint.next()).await.unwrap();
    assert_eq!(buffered.message.payload, "second");
    buffered.respond(Ok("done second".into())).await.unwrap();
    assert_eq!(
        within(second.wait(None)).await.unwrap().payload,
        "done second"
    );
    assert!(within(endpoint.next()).await.is_none(), "the stream ends");
}

#[tokio::test]
async fn endpoint_stop_takes_it_out_of_the_service_and_drop_only_unsubscribes() {
    let server = NatsServer::start();
    let client = connect(&server.url()).await;
    let service = client
        .service_builder()
        .start("shrinking", "1.0.0")
        .await
        .unwrap();
    let mut a = service.endpoint("shrink.a").await.unwrap();
    let b = service.endpoint("shrink.b").await.unwrap();
    let c = service.endpoint("shrink.c").await.unwrap();
    serve(c, echo);
    assert_eq!(service.info().await.endpoints.len(), 3);
    within(a.stop()).await.unwrap();
    assert!(within(a.next()).await.is_none());
    drop(b);
    let names: Vec<String> = service
        .info()
        .await
        .endpoints
        .into_iter()
        .map(|e| e.name)
        .collect();
    // A dropped endpoint stays listed, as async-nats keeps it; only stop() takes it out.
    assert_eq!(names, ["shrink-b", "shrink-c"]);
    client.flush().await.unwrap();
    for gone in ["shrink.a", "shrink.b"] {
        let err = client.request(gone, Bytes::new()).await.unwrap_err();
        assert_eq!(err.kind(), RequestErrorKind::NoResponders, "{gone}");
    }
    assert_eq!(request(&client, "shrink.c", "still").await.payload, "still");
}

/// The typed kind of a set-up error. An invalid name or version comes as a `std::io::Error` of
/// kind `InvalidInput` (what async-nats returns) with rnats' typed error inside it.
fn kind_of(error: rnats_core::Error) -> ServiceErrorKind {
    if let Some(io) = error.downcast_ref::<std::io::Error>() {
        assert_eq!(io.kind(), std::io::ErrorKind::InvalidInput);
        let inner = io.get_ref().expect("the typed error is kept inside");
        return inner.downcast_ref::<ServiceError>().unwrap().kind();
    }
    error.downcast_ref::<ServiceError>().unwrap().kind()
}

#[tokio::test]
async fn names_versions_subjects_and_queue_groups_are_checked() {
    let server = NatsServer::start();
    let client = connect(&server.url()).await;
    for (name, version, kind) in [
        ("bad name", "1.0.0", ServiceErrorKind::InvalidName),
        ("", "1.0.0", ServiceErrorKind::InvalidName),
        ("a.b", "1.0.0", ServiceErrorKind::InvalidName),
        ("good", "1.0", ServiceErrorKind::InvalidVersion),
        ("good", "01.0.0", ServiceErrorKind::InvalidVersion),
        ("good", "1.0.0.1", ServiceErrorKind::InvalidVersion),
    ] {
        let err = client
            .service_builder()
            .start(name, version)
            .await
            .unwrap_err();
        assert_eq!(
            err.downcast_ref::<std::io::Error>().map(|e| e.kind()),
            Some(std::io::ErrorKind::InvalidInput),
            "{name} {version} reads as async-nats' io::Error"
        );
        assert_eq!(kind_of(err), kind, "{name} {version}");
    }
    let err = client
        .service_builder()
        .queue_group("bad group")
        .start("good", "1.0.0")
        .await
        .unwrap_err();
    assert_eq!(kind_of(err), ServiceErrorKind::InvalidQueueGroup);
    let err = client
        .add_service(Config {
            name: "good".into(),
            version: "2.0.0+build.7".into(),
            description: None,
            stats_handler: None,
            metadata: None,
            queue_group: Some("".into()),
        })
        .await
        .unwrap_err();
    assert_eq!(kind_of(err), ServiceErrorKind::InvalidQueueGroup);

    let service = client
        .add_service(Config {
            name: "good".into(),
            version: "2.0.0+build.7".into(),
            description: None,
            stats_handler: None,
            metadata: None,
            queue_group: None,
        })
        .await
        .unwrap();
    let info = service.info().await;
    assert_eq!((info.description.as_str(), info.metadata.len()), ("", 0));
    let err = service.endpoint("bad subject").await.unwrap_err();
    assert_eq!(kind_of(err), ServiceErrorKind::InvalidSubject);
    let err = service
        .endpoint_builder()
        .queue_group("bad queue")
        .add("ok")
        .await
        .unwrap_err();
    assert_eq!(kind_of(err), ServiceErrorKind::InvalidQueueGroup);
}

#[tokio::test]
async fn discovery_collects_every_instance_and_reads_one_by_id() {
    let server = NatsServer::start();
    let mut ids = HashSet::new();
    let mut keep = Vec::new();
    for name in ["alpha", "alpha", "beta"] {
        let client = connect(&server.url()).await;
        let service = client
            .service_builder()
            .description(format!("the {name} service"))
            .start(name, "1.0.0")
            .await
            .unwrap();
        let endpoint = service.endpoint(format!("{name}.echo")).await.unwrap();
        serve(endpoint, echo);
        client.flush().await.unwrap();
        ids.insert((name, service.info().await.id));
        keep.push((client, service));
    }
    let caller = connect(&server.url()).await;
    let discovery = caller.service_discovery().max_replies(3);

    let everyone: HashSet<(String, String)> = discovery
        .ping(None)
        .await
        .unwrap()
        .into_iter()
        .map(|p| (p.name, p.id))
        .collect();
    let expected: HashSet<(String, String)> = ids
        .iter()
        .map(|(n, id)| (n.to_string(), id.clone()))
        .collect();
    assert_eq!(everyone, expected);

    // A timeout past the clock's range waits for the replies asked for.
    let far = caller
        .service_discovery()
        .timeout(std::time::Duration::MAX)
        .max_replies(1);
    assert_eq!(far.ping(Some("beta")).await.unwrap().len(), 1);

    // Only two alphas answer: without max_replies the timeout ends the wait.
    let alphas = caller
        .service_discovery()
        .timeout(std::time::Duration::from_millis(300))
        .info(Some("alpha"))
        .await
        .unwrap();
    assert_eq!(alphas.len(), 2);
    assert!(alphas.iter().all(|i| i.description == "the alpha service"));
    assert_eq!(alphas[0].endpoints[0].subject, "alpha.echo");

    let stats = discovery.stats(Some("beta")).await.unwrap();
    assert_eq!(stats.len(), 1);
    let beta_id = &stats[0].id;
    let one = discovery.stats_instance("beta", beta_id).await.unwrap();
    assert_eq!(one.endpoints[0].name, "beta-echo");
    assert_eq!(
        discovery.ping_instance("beta", beta_id).await.unwrap().id,
        *beta_id
    );
    assert_eq!(
        discovery
            .info_instance("beta", beta_id)
            .await
            .unwrap()
            .endpoints
            .len(),
        1
    );

    // Nobody by that name: an empty answer at once (no responders), not a timeout.
    let none = caller
        .service_discovery()
        .timeout(crate::WAIT)
        .ping(Some("nobody"))
        .await
        .unwrap();
    assert!(none.is_empty());
    let err = discovery
        .ping_instance("beta", "unknown")
        .await
        .unwrap_err();
    assert_eq!(
        err.kind(),
        rnats_service::discovery::DiscoveryErrorKind::Request
    );

    let reply = discovery.call("beta.echo", "hello".into()).await.unwrap();
    assert_eq!(reply.payload, "hello");
    let parsed: Value = serde_json::to_value(&one).unwrap();
    assert_eq!(parsed["type"], "io.nats.micro.v1.stats_response");
}

#[tokio::test]
async fn stopping_one_instance_leaves_the_other_and_a_dropped_handle_keeps_serving() {
    let server = NatsServer::start();
    let first_client = connect(&server.url()).await;
    let first = first_client
        .service_builder()
        .start("pair", "1.0.0")
        .await
        .unwrap();
    serve(first.endpoint("pair.op").await.unwrap(), |_| {
        Ok("first".into())
    });
    let second_client = connect(&server.url()).await;
    let second = second_client
        .service_builder()
        .start("pair", "1.0.0")
        .await
        .unwrap();
    let second_id = second.info().await.id;
    serve(second.endpoint("pair.op").await.unwrap(), |_| {
        Ok("second".into())
    });
    // Dropped without stop: the instance keeps running, as with async-nats.
    drop(second);
    first_client.flush().await.unwrap();
    second_client.flush().await.unwrap();

    within(first.stop()).await.unwrap();
    let caller = connect(&server.url()).await;
    for _ in 0..20 {
        assert_eq!(request(&caller, "pair.op", "").await.payload, "second");
    }
    let pings = caller
        .service_discovery()
        .timeout(std::time::Duration::from_millis(200))
        .ping(Some("pair"))
        .await
        .unwrap();
    assert_eq!(pings.len(), 1);
    assert_eq!(pings[0].id, second_id);
}

#[tokio::test]
async fn an_endpoint_with_a_capacity_of_its_own_drops_past_it_and_counts_the_drops() {
    let server = NatsServer::start();
    let client = connect(&server.url()).await;
    let mut events = client.events();
    let mut service = client
        .service_builder()
        .start("bounded", "1.0.0")
        .await
        .unwrap();
    // Neither stream is read until the flood is in: a handler blocked for the duration.
    let mut small = service
        .endpoint_builder()
        .name("small")
        .capacity(5, 1 << 20)
        .add("bounded.small")
        .await
        .unwrap();
    let mut open = service.endpoint("bounded.open").await.unwrap();
    client.flush().await.unwrap();

    let caller = connect(&server.url()).await;
    for n in 0..50 {
        for subject in ["bounded.small", "bounded.open"] {
            caller
                .publish_with_reply(subject, "nobody.listens", n.to_string().into())
                .await
                .unwrap();
        }
    }
    // The server has routed the flood once the caller's flush returns, and the service's
    // client has read it once its own flush returns after that.
    caller.flush().await.unwrap();
    client.flush().await.unwrap();

    let slow = within(async {
        loop {
            if let rnats_core::ConnectionEvent::SlowConsumer { subject, .. } =
                events.next().await.unwrap()
            {
                return subject;
            }
        }
    })
    .await;
    assert_eq!(slow.as_str(), "bounded.small");

    let stats = service.stats().await;
    assert_eq!((stats["small"].requests, stats["small"].errors), (0, 45));
    assert_eq!(stats["bounded.open"].errors, 0);
    let wire = request_json(&caller, "$SRV.STATS.bounded").await;
    let small_entry = wire["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "small")
        .unwrap();
    assert_eq!(small_entry["num_errors"], 45);

    // The bounded endpoint kept its first five; the other kept all fifty.
    for n in 0..5 {
        let request = within(small.next()).await.unwrap();
        assert_eq!(request.message.payload, Bytes::from(n.to_string()));
    }
    for n in 0..50 {
        let request = within(open.next()).await.unwrap();
        assert_eq!(request.message.payload, Bytes::from(n.to_string()));
    }

    // A reset starts the count of drops again.
    service.reset().await;
    assert_eq!(service.stats().await["small"].errors, 0);
}
