//! The read side with nats.js 3.4 (the pinned peer, on node): Key-Value key filters, watches
//! (with history, updates only, without deletes) and bucket listings see the same data from
//! both clients; a sourced bucket made by rnats takes nats.js's writes and serves its reads;
//! objects (over fast ingest where the bucket allows it) and bucket metadata go both ways;
//! batched direct gets return the same messages.
#![cfg(all(feature = "kv", feature = "object-store"))]
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_jetstream::Context;
use rnats_jetstream::kv::{self, Operation, WatchEvent, WatchOptions};
use rnats_jetstream::object_store;
use rnats_jetstream::stream::{self, Source, StorageType};
use rnats_test_server::{NatsServer, nats_js, run_nats_js};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

const WAIT: Duration = Duration::from_secs(20);

/// The nats.js side; the first argument picks what it does, the output is JSON lines.
const PEER: &str = r#"
const { connect } = require("@nats-io/transport-node");
const { jetstreamManager } = require("@nats-io/jetstream");
const { Kvm, KvWatchInclude } = require("@nats-io/kv");
const { Objm } = require("@nats-io/obj");
const crypto = require("crypto");

const print = (v) => console.log(JSON.stringify(v));
const entry = (e) => `${e.key} ${e.operation} ${e.string()} ${e.revision}`;
// Reads a watch until the sentinel `zz.end` holding `until` came (it is written last).
async function until(iter, value) {
  const out = [];
  for await (const e of iter) {
    out.push(entry(e));
    if (e.key === "zz.end" && e.string() === value) break;
  }
  iter.stop();
  return out;
}
const watchUntil = async (kv, opts, value) => until(await kv.watch(opts), value);
async function keys(kv, filter) {
  const out = [];
  for await (const k of await kv.keys(filter)) out.push(k);
  return out.sort();
}
const data = (len) => Uint8Array.from({ length: len }, (_, i) => i % 251);
const sha = (bytes) => crypto.createHash("sha256").update(bytes).digest("hex");
const owner = (m) => (m || {}).owner || null;

(async () => {
  const [mode, ...args] = process.argv.slice(1);
  const nc = await connect({ servers: process.env.NATS_URL });
  if (mode === "kv") {
    const kvm = new Kvm(nc);
    await kvm.create("jsmade", { history: 2, metadata: { owner: "nats.js" } });
    const kv = await kvm.open("shared");
    const listing = [];
    for await (const s of kvm.list()) {
      listing.push({ bucket: s.bucket, values: s.values, history: s.history, owner: owner(s.metadata) });
    }
    const out = {
      listing: listing.sort((a, b) => a.bucket.localeCompare(b.bucket)),
      keys: await keys(kv, ">"),
      filtered: await keys(kv, ["a.>", "c.*"]),
      history: await watchUntil(kv, { key: ">", include: KvWatchInclude.AllHistory }, "0"),
      no_deletes: await watchUntil(kv, { key: ["a.>", "c.*", "zz.end"], include: KvWatchInclude.AllHistory, ignoreDeletes: true }, "0"),
      last: await watchUntil(kv, { key: ["a.>", "zz.end"] }, "0"),
    };
    // The watch's consumer exists once `watch` resolved: only then may the updates come.
    const updates = await kv.watch({ key: ">", include: KvWatchInclude.UpdatesOnly, ignoreDeletes: true });
    print({ ready: true });
    out.updates = await until(updates, "1");
    print(out);
  } else if (mode === "sourced") {
    const kv = await new Kvm(nc).open(args[0]);
    await kv.put("js.1", "nats.js");
    const get = async (k) => { const e = await kv.get(k); return e ? e.string() : null; };
    print({ origin: await get("o.1"), rnats: await get("r.1"), own: await get("js.1"), keys: await keys(kv, ">") });
  } else if (mode === "obj-put") {
    const objm = new Objm(nc);
    const out = {};
    for (const [bucket, allowBatched] of [["jsfast", true], ["jsplain", false]]) {
      const os = await objm.create(bucket, { allowBatched, metadata: { owner: "nats.js" } });
      const info = await os.putBlob({ name: "big", options: { max_chunk_size: 64 * 1024 } }, data(Number(args[0])));
      out[bucket] = { size: info.size, chunks: info.chunks, digest: info.digest };
    }
    print(out);
  } else if (mode === "obj-get") {
    const objm = new Objm(nc);
    const out = {};
    for (const bucket of args) {
      const os = await objm.open(bucket);
      const bytes = await os.getBlob("big");
      const status = await os.status();
      out[bucket] = { size: bytes.length, sha256: sha(bytes), owner: owner(status.metadata) };
    }
    print(out);
  } else if (mode === "direct") {
    const jsm = await jetstreamManager(nc);
    const read = async (iter) => { const out = []; for await (const m of await iter) out.push(`${m.seq} ${m.subject} ${m.string()}`); return out; };
    print({
      batch: await read(jsm.direct.getBatch(args[0], { seq: 3, next_by_subj: "dg.b", batch: 100 })),
      limited: await read(jsm.direct.getBatch(args[0], { seq: 1, batch: 4 })),
      last: await read(jsm.direct.getLastMessagesFor(args[0], { multi_last: ["dg.a", "dg.c"], up_to_seq: 20 })),
      last_now: await read(jsm.direct.getLastMessagesFor(args[0], { multi_last: ["dg.>"] })),
    });
  }
  await nc.close();
})().catch((e) => { console.error(e); process.exit(1); });
"#;

async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, rnats_jetstream::new(client))
}

/// Runs the peer to its end on a blocking thread and reads its one JSON line.
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

/// An entry as the peer prints it: `key op value revision`.
fn line(entry: &kv::Entry) -> String {
    let op = match entry.operation {
        Operation::Put => "PUT",
        Operation::Delete => "DEL",
        Operation::Purge => "PURGE",
    };
    let value = String::from_utf8_lossy(&entry.value);
    format!("{} {op} {value} {}", entry.key, entry.revision)
}

/// The entries of a watch until the sentinel `zz.end` holding `until`, as the peer's.
async fn watch_until(watch: kv::Watch, until: &str) -> Vec<String> {
    let mut events = watch.events();
    let mut out = Vec::new();
    loop {
        let event = tokio::time::timeout(WAIT, events.next()).await.unwrap();
        if let WatchEvent::Entry(entry) = event.unwrap().unwrap() {
            out.push(line(&entry));
            if entry.key == "zz.end" && entry.value == until.as_bytes() {
                return out;
            }
        }
    }
}

async fn keys(store: &kv::Store, filters: &[&str]) -> Vec<String> {
    let mut keys: Vec<String> = store
        .keys_with_filters(filters.iter().copied())
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    keys.sort();
    keys
}

fn strings(value: &Value) -> Vec<String> {
    serde_json::from_value(value.clone()).unwrap()
}

#[tokio::test]
async fn key_filters_watches_and_listings_see_the_same_data_in_rnats_and_nats_js() {
    let (server, js) = jetstream().await;
    let store = js
        .create_key_value(kv::Config {
            bucket: "shared".into(),
            history: 5,
            storage: StorageType::Memory,
            metadata: HashMap::from([("owner".to_string(), "rnats".to_string())]),
            ..Default::default()
        })
        .await
        .unwrap();
    store.put("a.1", "1".into()).await.unwrap();
    store.put("a.1", "2".into()).await.unwrap();
    store.put("a.2", "x".into()).await.unwrap();
    store.put("b.1", "y".into()).await.unwrap();
    store.delete("a.2").await.unwrap();
    store.put("c.1", "z".into()).await.unwrap();
    store.put("c.d.e", "deep".into()).await.unwrap();
    store.purge("b.1").await.unwrap();
    store.put("zz.end", "0".into()).await.unwrap();

    // What rnats reads of it: keys, with filters, and watches with and without history and
    // deletes, each ended by the sentinel holding "0".
    let rnats_keys = keys(&store, &[">"]).await;
    assert_eq!(rnats_keys, ["a.1", "c.1", "c.d.e", "zz.end"]);
    let rnats_filtered = keys(&store, &["a.>", "c.*"]).await;
    assert_eq!(rnats_filtered, ["a.1", "c.1"]);
    let history = store
        .watch_with_options([">"], WatchOptions::new().include_history())
        .await
        .unwrap();
    let rnats_history = watch_until(history, "0").await;
    // Nine writes, less the value the purge of b.1 took away.
    assert_eq!(rnats_history.len(), 8, "{rnats_history:?}");
    let no_deletes = WatchOptions::new().include_history().ignore_deletes();
    let watch = store
        .watch_with_options(["a.>", "c.*", "zz.end"], no_deletes)
        .await
        .unwrap();
    let rnats_no_deletes = watch_until(watch, "0").await;
    assert!(rnats_no_deletes.iter().all(|l| !l.contains(" DEL ")));
    let watch = store
        .watch_with_options(["a.>", "zz.end"], WatchOptions::new())
        .await
        .unwrap();
    let rnats_last = watch_until(watch, "0").await;
    assert_eq!(rnats_last, ["a.1 PUT 2 2", "a.2 DEL  5", "zz.end PUT 0 9"]);

    // nats.js makes a bucket of its own, reads the same, prints `ready` once its
    // updates-only watch runs, and waits for the updates.
    let mut child = tokio::process::Command::from(nats_js(&server.url(), PEER).unwrap())
        .arg("kv")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap();
    assert_eq!(ready.unwrap().as_deref(), Some(r#"{"ready":true}"#));

    // The bucket listing, as nats.js saw it too, with the bucket nats.js made.
    let mut listing: Vec<Value> = js
        .key_value_stores()
        .map_ok(|status| {
            json!({
                "bucket": status.bucket(),
                "values": status.values(),
                "history": status.history(),
                "owner": status.metadata().get("owner"),
            })
        })
        .try_collect()
        .await
        .unwrap();
    listing.sort_by_key(|v| v["bucket"].as_str().unwrap().to_owned());
    assert_eq!(listing.len(), 2);
    assert_eq!(listing[0]["owner"], "nats.js");
    assert_eq!(listing[1]["owner"], "rnats");

    let updates = store
        .watch_with_options([">"], WatchOptions::new().updates_only().ignore_deletes())
        .await
        .unwrap();
    store.put("a.1", "3".into()).await.unwrap();
    store.delete("c.1").await.unwrap();
    store.put("b.2", "w".into()).await.unwrap();
    store.put("zz.end", "1".into()).await.unwrap();
    let rnats_updates = watch_until(updates, "1").await;
    assert_eq!(
        rnats_updates,
        ["a.1 PUT 3 10", "b.2 PUT w 12", "zz.end PUT 1 13"]
    );

    let out = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap();
    let theirs: Value = serde_json::from_str(&out.unwrap().unwrap()).unwrap();
    assert!(child.wait().await.unwrap().success());
    assert_eq!(strings(&theirs["keys"]), rnats_keys);
    assert_eq!(strings(&theirs["filtered"]), rnats_filtered);
    assert_eq!(strings(&theirs["history"]), rnats_history);
    assert_eq!(strings(&theirs["no_deletes"]), rnats_no_deletes);
    assert_eq!(strings(&theirs["last"]), rnats_last);
    assert_eq!(theirs["listing"], Value::Array(listing));
    assert_eq!(strings(&theirs["updates"]), rnats_updates);
}

#[tokio::test]
async fn a_sourced_bucket_made_by_rnats_is_written_and_read_by_nats_js() {
    let (server, js) = jetstream().await;
    let origin = js
        .create_key_value(kv::Config {
            bucket: "origin".into(),
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();
    let sourced = js
        .create_key_value(kv::Config {
            bucket: "agg".into(),
            storage: StorageType::Memory,
            sources: Some(vec![Source {
                name: "origin".into(),
                ..Default::default()
            }]),
            ..Default::default()
        })
        .await
        .unwrap();
    // The sourced key arrives in its own time: watch for it.
    let mut watch = sourced.watch("o.1").await.unwrap();
    origin.put("o.1", "from origin".into()).await.unwrap();
    let arrived = tokio::time::timeout(WAIT, watch.next()).await.unwrap();
    assert_eq!(arrived.unwrap().unwrap().value, "from origin");
    sourced.put("r.1", "rnats".into()).await.unwrap();

    let theirs = peer(&server, &["sourced", "agg"]).await;
    assert_eq!(theirs["origin"], "from origin");
    assert_eq!(theirs["rnats"], "rnats");
    assert_eq!(theirs["own"], "nats.js");
    assert_eq!(strings(&theirs["keys"]), ["js.1", "o.1", "r.1"]);
    assert_eq!(
        sourced.get("js.1").await.unwrap(),
        Some(Bytes::from("nats.js"))
    );
    assert_eq!(keys(&sourced, &[">"]).await, ["js.1", "o.1", "r.1"]);
}

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn objects_and_bucket_metadata_go_both_ways_over_fast_ingest_or_not() {
    const LEN: usize = 1_000_000;
    let (server, js) = jetstream().await;
    let expected = data(LEN);

    // nats.js puts into a bucket that allows batches (its fast ingest) and one that does
    // not; rnats reads both, checking the digest.
    let put = peer(&server, &["obj-put", &LEN.to_string()]).await;
    for (bucket, fast) in [("jsfast", true), ("jsplain", false)] {
        assert_eq!(put[bucket]["size"], LEN, "{put}");
        let store = js.get_object_store(bucket).await.unwrap();
        let status = store.status().await.unwrap();
        assert_eq!(status.fast_ingest, fast);
        assert_eq!(status.metadata["owner"], "nats.js");
        let info = store.info("big").await.unwrap();
        assert_eq!(
            Some(put[bucket]["digest"].as_str().unwrap()),
            info.digest.as_deref()
        );
        let mut read = Vec::new();
        store
            .get("big")
            .await
            .unwrap()
            .read_to_end(&mut read)
            .await
            .unwrap();
        assert!(read == expected, "{bucket}: the object read differs");
    }

    // rnats puts the same way; nats.js reads.
    for (bucket, fast_ingest) in [("rsfast", true), ("rsplain", false)] {
        let store = js
            .create_object_store(object_store::Config {
                bucket: bucket.into(),
                storage: StorageType::Memory,
                fast_ingest,
                metadata: HashMap::from([("owner".to_string(), "rnats".to_string())]),
                ..Default::default()
            })
            .await
            .unwrap();
        let meta = object_store::ObjectMetadata {
            name: "big".into(),
            chunk_size: Some(64 * 1024),
            ..Default::default()
        };
        store.put(meta, &mut expected.as_slice()).await.unwrap();
    }
    let got = peer(&server, &["obj-get", "rsfast", "rsplain"]).await;
    for bucket in ["rsfast", "rsplain"] {
        assert_eq!(got[bucket]["size"], LEN);
        assert_eq!(got[bucket]["sha256"], sha256_hex(&expected));
        assert_eq!(got[bucket]["owner"], "rnats");
    }
}

#[tokio::test]
async fn batched_direct_gets_return_what_nats_js_gets() {
    let (server, js) = jetstream().await;
    let stream = js
        .create_stream(stream::Config {
            name: "DG".into(),
            subjects: vec!["dg.>".into()],
            storage: StorageType::Memory,
            allow_direct: true,
            ..Default::default()
        })
        .await
        .unwrap();
    for i in 0..30 {
        let subject = ["dg.a", "dg.b", "dg.c"][i % 3];
        js.publish(subject, Bytes::from(i.to_string()))
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let lines = |messages: Vec<rnats_jetstream::message::StreamMessage>| -> Vec<String> {
        messages
            .iter()
            .map(|m| {
                let payload = String::from_utf8_lossy(&m.payload);
                format!("{} {} {payload}", m.sequence, m.subject)
            })
            .collect()
    };
    let theirs = peer(&server, &["direct", "DG"]).await;

    // rnats pages in threes where nats.js asked for everything at once.
    let batch = stream
        .direct_batch("dg.b")
        .sequence(3)
        .batch(3)
        .await
        .unwrap();
    let batch = lines(batch.try_collect().await.unwrap());
    assert_eq!(batch.len(), 9);
    assert_eq!(strings(&theirs["batch"]), batch);
    let limited = stream.direct_batch(">").max_messages(4).await.unwrap();
    assert_eq!(
        strings(&theirs["limited"]),
        lines(limited.try_collect().await.unwrap())
    );
    let last = stream
        .direct_multi_last(["dg.a", "dg.c"])
        .up_to_sequence(20)
        .await
        .unwrap();
    let last = lines(last.try_collect().await.unwrap());
    assert_eq!(last, ["18 dg.c 17", "19 dg.a 18"]);
    assert_eq!(strings(&theirs["last"]), last);
    let now = stream.direct_multi_last(["dg.>"]).await.unwrap();
    assert_eq!(
        strings(&theirs["last_now"]),
        lines(now.try_collect().await.unwrap())
    );
}
