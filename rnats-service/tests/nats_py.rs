//! Interchange with nats-py 2.16 as the second client: nats-py calls an rnats service and
//! parses its INFO and STATS with nats-py's own `nats.micro` types; rnats discovers, reads and
//! calls a service written with `nats.micro`.
#![allow(clippy::unwrap_used)]

mod common;
use common::*;

use std::process::Stdio;

use bytes::Bytes;
use rnats_service::discovery::DiscoveryErrorKind;
use rnats_service::{ServiceExt, error};
use rnats_test_server::{NatsServer, nats_py, run_nats_py};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Calls the rnats service's endpoints, then reads PING, INFO and STATS through nats-py's
/// `from_dict` (which fails on a missing field) and prints what it parsed.
const CALL_RNATS_SERVICE: &str = r#"
import asyncio, json, os, sys
import nats
from nats.micro.service import ServiceInfo, ServicePing, ServiceStats

async def main():
    name, sid = sys.argv[1], sys.argv[2]
    nc = await nats.connect(os.environ["NATS_URL"])
    echo = await nc.request("rn.echo", b"from python", timeout=10)
    fail = await nc.request("rn.fail", b"", timeout=10)
    async def get(subject):
        reply = await nc.request(subject, b"", timeout=10)
        return json.loads(reply.data)
    ping = ServicePing.from_dict(await get(f"$SRV.PING.{name}.{sid}"))
    info_raw = await get(f"$SRV.INFO.{name}")
    info = ServiceInfo.from_dict(info_raw)
    stats_raw = await get(f"$SRV.STATS.{name}.{sid}")
    stats = ServiceStats.from_dict(stats_raw)
    print(json.dumps({
        "echo": echo.data.decode(),
        "error": [fail.headers.get("Nats-Service-Error"), fail.headers.get("Nats-Service-Error-Code")],
        "ping": ping.to_dict(),
        "info": info.to_dict(),
        "info_type": info_raw["type"],
        "stats": stats.to_dict(),
        "stats_type": stats_raw["type"],
    }))
    await nc.close()

asyncio.run(main())
"#;

#[tokio::test]
async fn nats_py_calls_an_rnats_service_and_parses_its_info_and_stats() {
    let server = NatsServer::start();
    let client = connect(&server.url()).await;
    let service = client
        .service_builder()
        .description("rust side")
        .metadata([("lang".to_owned(), "rust".to_owned())].into())
        .stats_handler(|name, _| json!({ "from": name }))
        .start("rnats-svc", "1.4.0")
        .await
        .unwrap();
    let id = service.info().await.id;
    let group = service.group("rn");
    serve(group.endpoint("echo").await.unwrap(), echo);
    serve(
        group
            .endpoint_builder()
            .name("fail")
            .metadata([("kind".to_owned(), "broken".to_owned())].into())
            .add("fail")
            .await
            .unwrap(),
        |_| {
            Err(error::Error {
                status: "always fails".into(),
                code: 500,
            })
        },
    );
    client.flush().await.unwrap();

    let url = server.url();
    let script_id = id.clone();
    let out = tokio::task::spawn_blocking(move || {
        run_nats_py(&url, CALL_RNATS_SERVICE, &["rnats-svc", &script_id])
    })
    .await
    .unwrap()
    .unwrap();
    let seen: Value = serde_json::from_str(out.trim()).unwrap();

    assert_eq!(seen["echo"], "from python");
    assert_eq!(seen["error"], json!(["always fails", "500"]));
    assert_eq!(
        seen["ping"],
        json!({"type": "io.nats.micro.v1.ping_response", "id": id, "name": "rnats-svc",
               "version": "1.4.0", "metadata": {"lang": "rust"}})
    );
    assert_eq!(seen["info_type"], "io.nats.micro.v1.info_response");
    assert_eq!(
        seen["info"],
        json!({
            "type": "io.nats.micro.v1.info_response", "id": id, "name": "rnats-svc",
            "version": "1.4.0", "description": "rust side", "metadata": {"lang": "rust"},
            "endpoints": [
                {"name": "rn-echo", "subject": "rn.echo", "queue_group": "q", "metadata": {}},
                {"name": "fail", "subject": "rn.fail", "queue_group": "q",
                 "metadata": {"kind": "broken"}},
            ],
        })
    );
    assert_eq!(seen["stats_type"], "io.nats.micro.v1.stats_response");
    let stats = &seen["stats"];
    assert_eq!(stats["id"], id.as_str());
    assert_eq!(stats["metadata"], json!({"lang": "rust"}));
    let endpoints = stats["endpoints"].as_array().unwrap();
    assert_eq!(endpoints[0]["name"], "rn-echo");
    assert_eq!(endpoints[0]["num_requests"], 1);
    assert_eq!(endpoints[0]["num_errors"], 0);
    assert_eq!(endpoints[0]["data"], json!({"from": "rn.echo"}));
    assert_eq!(endpoints[1]["name"], "fail");
    assert_eq!(endpoints[1]["num_requests"], 1);
    assert_eq!(endpoints[1]["num_errors"], 1);
    assert_eq!(endpoints[1]["last_error"], "500:always fails");
    assert_eq!(endpoints[1]["data"], json!({"from": "fail"}));
    assert!(endpoints[1]["processing_time"].as_u64().unwrap() > 0);
}

/// A `nats.micro` service with a group of two endpoints; prints `ready <id>` once subscribed
/// and exits when asked on `pysvc.quit`.
const PY_MICRO_SERVICE: &str = r#"
import asyncio, os
import nats
from nats import micro

async def main():
    nc = await nats.connect(os.environ["NATS_URL"])
    svc = await micro.add_service(nc, name="pysvc", version="0.3.0",
                                  description="python side", metadata={"lang": "py"})
    async def echo(req):
        await req.respond(req.data)
    async def fail(req):
        await req.respond_error("418", "teapot")
    group = svc.add_group(name="py")
    await group.add_endpoint(name="echo", handler=echo, metadata={"k": "v"})
    await group.add_endpoint(name="fail", handler=fail)
    done = asyncio.Event()
    async def quit(msg):
        await msg.respond(b"bye")
        done.set()
    await nc.subscribe("pysvc.quit", cb=quit)
    await nc.flush()
    print("ready", svc.id, flush=True)
    await done.wait()
    await svc.stop()
    await nc.drain()

asyncio.run(main())
"#;

#[tokio::test]
async fn rnats_discovers_reads_and_calls_a_nats_py_micro_service() {
    let server = NatsServer::start();
    let mut child =
        tokio::process::Command::from(nats_py(&server.url(), PY_MICRO_SERVICE).unwrap())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = within(lines.next_line()).await.unwrap().unwrap();
    let py_id = ready.strip_prefix("ready ").unwrap().to_owned();

    let client = connect(&server.url()).await;
    let discovery = client.service_discovery().max_replies(1);
    let pings = discovery.ping(Some("pysvc")).await.unwrap();
    assert_eq!(pings.len(), 1);
    assert_eq!(pings[0].id, py_id);
    assert_eq!(pings[0].kind, "io.nats.micro.v1.ping_response");
    assert_eq!(pings[0].version, "0.3.0");
    assert_eq!(pings[0].metadata["lang"], "py");

    let info = discovery.info_instance("pysvc", &py_id).await.unwrap();
    assert_eq!(info.kind, "io.nats.micro.v1.info_response");
    assert_eq!(info.description, "python side");
    let endpoints: Vec<(&str, &str, &str)> = info
        .endpoints
        .iter()
        .map(|e| (e.name.as_str(), e.subject.as_str(), e.queue_group.as_str()))
        .collect();
    assert_eq!(
        endpoints,
        [("echo", "py.echo", "q"), ("fail", "py.fail", "q")]
    );
    assert_eq!(info.endpoints[0].metadata["k"], "v");
    assert!(
        info.endpoints[1].metadata.is_empty(),
        "null metadata reads as empty"
    );

    let reply = discovery.call("py.echo", "from rust".into()).await.unwrap();
    assert_eq!(reply.payload, "from rust");
    let err = discovery.call("py.fail", Bytes::new()).await.unwrap_err();
    assert_eq!(err.kind(), DiscoveryErrorKind::Service);
    assert_eq!(
        err.downcast_source::<error::Error>(),
        Some(&error::Error {
            status: "teapot".into(),
            code: 418
        })
    );

    let stats = discovery.stats_instance("pysvc", &py_id).await.unwrap();
    assert_eq!(stats.kind, "io.nats.micro.v1.stats_response");
    assert_eq!(stats.metadata["lang"], "py");
    assert_eq!(stats.endpoints.len(), 2);
    assert_eq!(
        (
            stats.endpoints[0].name.as_str(),
            stats.endpoints[0].requests
        ),
        ("echo", 1)
    );
    assert_eq!(stats.endpoints[1].requests, 1);
    assert!(stats.started <= rnats_core::datetime::now());
    // Collected STATS decode the same way.
    assert_eq!(discovery.stats(None).await.unwrap()[0].id, py_id);

    assert_eq!(request(&client, "pysvc.quit", "").await.payload, "bye");
    let status = within(child.wait()).await.unwrap();
    assert!(status.success());
}
