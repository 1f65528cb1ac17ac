//! Interchange of batch publishing with nats.js 3.4 (the pinned peer, on node): each side
//! reads what the other wrote with atomic batches and fast-ingest batches.
#![allow(clippy::unwrap_used, missing_docs)]

use rnats_jetstream::Context;
use rnats_jetstream::stream::{Config, StorageType};
use rnats_test_server::{NatsServer, run_nats_js};
use serde_json::Value;

/// The nats.js side: `write-batch`, `write-ingest` or `read <count>`, on `stream`/`subject`.
const PEER: &str = r#"
const { connect } = require("@nats-io/transport-node");
const { jetstream, jetstreamManager } = require("@nats-io/jetstream");
const { startFastIngest } = require("@nats-io/jetstream/internal");
(async () => {
  const [mode, stream, subject, count] = process.argv.slice(1);
  const nc = await connect({ servers: process.env.NATS_URL });
  const js = jetstream(nc);
  let out;
  if (mode === "write-batch") {
    const batch = await js.startBatch(`${subject}.0`, "js-0");
    for (let i = 1; i < Number(count) - 1; i++) batch.add(`${subject}.${i}`, `js-${i}`);
    out = await batch.commit(`${subject}.${Number(count) - 1}`, `js-${Number(count) - 1}`);
  } else if (mode === "write-ingest") {
    const ingest = await startFastIngest(nc, subject, "js-0", { allowGaps: false });
    for (let i = 1; i < Number(count); i++) await ingest.add(subject, `js-${i}`);
    out = await ingest.end();
  } else {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    const messages = [];
    for (let seq = 1; seq <= Number(count); seq++) {
      const m = await jsm.streams.getMessage(stream, { seq });
      messages.push({ subject: m.subject, data: m.string(), commit: m.header.get("Nats-Batch-Commit") });
    }
    out = { stored: info.state.messages, messages };
  }
  console.log(JSON.stringify(out));
  await nc.close();
})().catch((e) => { console.error(e); process.exit(1); });
"#;

async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, rnats_jetstream::new(client))
}

async fn stream(js: &Context, name: &str, subject: &str) {
    js.create_stream(Config {
        name: name.to_owned(),
        subjects: vec![format!("{subject}.>"), subject.to_owned()],
        storage: StorageType::Memory,
        allow_atomic_publish: true,
        allow_batch_publish: true,
        ..Default::default()
    })
    .await
    .unwrap();
}

/// Runs the peer on a blocking thread (it is a child process) and reads its JSON.
async fn peer(server: &NatsServer, args: &[&str]) -> Value {
    let url = server.url();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let out = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_nats_js(&url, PEER, &args)
    })
    .await
    .unwrap()
    .unwrap();
    serde_json::from_str(out.trim()).unwrap()
}

#[tokio::test]
async fn nats_js_reads_an_rnats_atomic_batch_and_rnats_reads_one_of_nats_js() {
    let (server, js) = jetstream().await;
    stream(&js, "ORDERS", "orders").await;
    let mut batch = js.atomic_batch();
    batch.add("orders.0", "rs-0".into()).await.unwrap();
    batch.add("orders.1", "rs-1".into()).await.unwrap();
    batch.commit("orders.2", "rs-2".into()).await.unwrap();
    let read = peer(&server, &["read", "ORDERS", "orders", "3"]).await;
    assert_eq!(read["stored"], 3);
    let messages = read["messages"].as_array().unwrap();
    for (i, message) in messages.iter().enumerate() {
        assert_eq!(message["subject"], format!("orders.{i}"));
        assert_eq!(message["data"], format!("rs-{i}"));
    }
    assert_eq!(messages[2]["commit"], "1");

    // nats.js writes a batch of 5; rnats reads it back.
    let ack = peer(&server, &["write-batch", "ORDERS", "orders.js", "5"]).await;
    assert_eq!(ack["count"], 5);
    assert_eq!(ack["seq"], 8);
    let stream = js.get_stream("ORDERS").await.unwrap();
    for i in 0..5u64 {
        let message = stream.get_raw_message(4 + i).await.unwrap();
        assert_eq!(message.subject.as_str(), format!("orders.js.{i}"));
        assert_eq!(message.payload, format!("js-{i}"));
        assert_eq!(
            message.headers.get("Nats-Batch-Id").unwrap().as_str(),
            ack["batch"].as_str().unwrap()
        );
    }
}

#[tokio::test]
async fn nats_js_reads_an_rnats_fast_ingest_and_rnats_reads_one_of_nats_js() {
    let (server, js) = jetstream().await;
    stream(&js, "METRICS", "metrics").await;
    let mut ingest = js.fast_ingest().start().await.unwrap();
    for i in 0..999 {
        ingest
            .publish("metrics.cpu", format!("rs-{i}").into())
            .await
            .unwrap();
    }
    let ack = ingest.commit("metrics.cpu", "rs-999".into()).await.unwrap();
    assert_eq!(ack.batch_size, Some(1000));
    let read = peer(&server, &["read", "METRICS", "metrics", "1000"]).await;
    assert_eq!(read["stored"], 1000);
    let messages = read["messages"].as_array().unwrap();
    for (i, message) in messages.iter().enumerate() {
        assert_eq!(message["data"], format!("rs-{i}"));
    }

    let ack = peer(&server, &["write-ingest", "METRICS", "metrics.js", "2000"]).await;
    assert_eq!(ack["count"], 2000);
    let stream = js.get_stream("METRICS").await.unwrap();
    assert_eq!(stream.get_info().await.unwrap().state.messages, 3000);
    for i in [0u64, 1, 1999] {
        let message = stream.get_raw_message(1001 + i).await.unwrap();
        assert_eq!(message.subject.as_str(), "metrics.js");
        assert_eq!(message.payload, format!("js-{i}"));
    }
}
