//! Key-Value interchange with a second, independent client, nats-py: buckets one creates the
//! other uses, values and revisions either way, deletes and purges as each one's watch sees
//! them, and the same keys and watch results (with history, without deletes, metadata only)
//! from both.
#![cfg(feature = "kv")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_jetstream::kv::{self, Operation, WatchEvent, WatchOptions};
use rnats_jetstream::stream::StorageType;
use rnats_test_server::{NatsServer, run_nats_py};

const WAIT: Duration = Duration::from_secs(20);

/// nats-py writes a bucket: two values of `a`, `b` deleted, `c` purged; prints revisions.
const PY_WRITES: &str = r#"
import asyncio, os, sys
import nats

async def main():
    nc = await nats.connect(os.environ["NATS_URL"])
    js = nc.jetstream()
    kv = await js.create_key_value(bucket=sys.argv[1], history=5)
    revisions = [
        await kv.put("a", b"1"),
        await kv.put("a", b"2"),
        await kv.put("b", b"x"),
    ]
    await kv.delete("b")
    revisions.append(await kv.put("c.d", b"y"))
    await kv.purge("c.d")
    print(" ".join(str(r) for r in revisions))
    await nc.close()

asyncio.run(main())
"#;

/// nats-py reads a bucket and its watch with history until the initial-values marker.
const PY_READS: &str = r#"
import asyncio, os, sys
import nats
from nats.js.errors import KeyNotFoundError

# nats-py 2.16 decides that a watch has no initial values from the consumer's info, read
# before it counts what was delivered: on a loaded machine the initial-values marker can so
# come ahead of every value. None of the watches here is empty, so a marker before any value
# is that race, and the watch starts again; its values come after the marker and are dropped.
async def initial(kv, key, **options):
    for _ in range(20):
        watcher = await kv.watch(key, **options)
        out = []
        while True:
            entry = await watcher.updates(timeout=30)
            if entry is None:
                break
            out.append(entry)
        await watcher.stop()
        if out:
            return out
    return []

async def main():
    nc = await nats.connect(os.environ["NATS_URL"])
    js = nc.jetstream()
    kv = await js.key_value(sys.argv[1])
    entry = await kv.get("a")
    print(f"get a {entry.value.decode()} {entry.revision}")
    for key in ["b", "c.d"]:
        try:
            await kv.get(key)
            print(f"get {key} present")
        except KeyNotFoundError as e:
            print(f"get {key} {e.op}")
    for entry in await initial(kv, ">", include_history=True):
        value = entry.value.decode() if entry.value else ""
        print(f"watch {entry.key} {entry.operation or 'PUT'} {value} {entry.revision}")
    await nc.close()

asyncio.run(main())
"#;

/// nats-py changes keys of an existing bucket while rnats watches: each argument after the
/// bucket's name is `put:KEY`, `delete:KEY` or `purge:KEY`, done in order.
const PY_CHANGES: &str = r#"
import asyncio, os, sys
import nats

async def main():
    nc = await nats.connect(os.environ["NATS_URL"])
    js = nc.jetstream()
    kv = await js.key_value(sys.argv[1])
    for change in sys.argv[2:]:
        op, key = change.split(":")
        if op == "put":
            await kv.put(key, b"v")
        elif op == "delete":
            await kv.delete(key)
        else:
            await kv.purge(key)
    await nc.close()

asyncio.run(main())
"#;

/// nats-py reads a bucket's keys (all, and with filters) and its watches with options, each
/// until the initial-values marker; prints one line per result.
const PY_QUERIES: &str = r#"
import asyncio, os, sys
import nats
from nats.js.errors import NoKeysError

# nats-py 2.16 decides that a watch has no initial values from the consumer's info, read
# before it counts what was delivered: on a loaded machine the initial-values marker can so
# come ahead of every value. None of the watches here is empty, so a marker before any value
# is that race, and the watch starts again; its values come after the marker and are dropped.
async def initial(kv, key, **options):
    for _ in range(20):
        watcher = await kv.watch(key, **options)
        out = []
        while True:
            entry = await watcher.updates(timeout=30)
            if entry is None:
                break
            out.append(entry)
        await watcher.stop()
        if out:
            return out
    return []

async def watch(kv, key, **options):
    out = []
    for entry in await initial(kv, key, **options):
        value = entry.value.decode() if entry.value else ""
        out.append(f"{entry.key} {entry.operation or 'PUT'} {value} {entry.revision}")
    return "|".join(out)

# kv.keys() reads a watch the same way, and reports the race as NoKeysError.
async def keys(kv, **options):
    for _ in range(20):
        try:
            return await kv.keys(**options)
        except NoKeysError:
            pass
    return []

async def main():
    nc = await nats.connect(os.environ["NATS_URL"])
    kv = await nc.jetstream().key_value(sys.argv[1])
    print(",".join(sorted(await keys(kv))))
    print(",".join(sorted(await keys(kv, filters=["a.1", "c.1"]))))
    print(await watch(kv, ">", include_history=True))
    print(await watch(kv, "a.>", include_history=True, ignore_deletes=True))
    print(await watch(kv, "a.>"))
    print(await watch(kv, ">", meta_only=True))
    await nc.close()

asyncio.run(main())
"#;

async fn py(url: String, script: &'static str, args: Vec<String>) -> String {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_nats_py(&url, script, &args).unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn rnats_reads_what_nats_py_writes() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let printed = py(server.url(), PY_WRITES, vec!["frompy".into()]).await;
    let revisions: Vec<u64> = printed
        .split_whitespace()
        .map(|r| r.parse().unwrap())
        .collect();

    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let kv = js.get_key_value("frompy").await.unwrap();
    let entry = kv.entry("a").await.unwrap().unwrap();
    assert_eq!(
        (entry.value, entry.revision),
        (Bytes::from("2"), revisions[1])
    );
    let first = kv
        .entry_for_revision("a", revisions[0])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.value, "1");
    assert_eq!(kv.get("b").await.unwrap(), None);
    assert_eq!(
        kv.entry("b").await.unwrap().unwrap().operation,
        Operation::Delete
    );
    assert_eq!(
        kv.entry("c.d").await.unwrap().unwrap().operation,
        Operation::Purge
    );
    let history: Vec<_> = kv.history("a").await.unwrap().try_collect().await.unwrap();
    assert_eq!(history.len(), 2);
    let keys: Vec<String> = kv.keys().await.unwrap().try_collect().await.unwrap();
    assert_eq!(keys, ["a"]);

    // nats-py builds the bucket's stream as rnats does.
    let theirs = kv.stream.cached_info().config.clone();
    let ours = js
        .create_key_value(kv::Config {
            bucket: "fromrust".into(),
            history: 5,
            ..Default::default()
        })
        .await
        .unwrap()
        .stream
        .cached_info()
        .config
        .clone();
    assert_eq!(theirs.subjects, ["$KV.frompy.>"]);
    assert_eq!(ours.subjects, ["$KV.fromrust.>"]);
    assert_eq!(
        (
            theirs.max_messages_per_subject,
            theirs.discard,
            theirs.storage
        ),
        (ours.max_messages_per_subject, ours.discard, ours.storage)
    );
    // nats-py 2.16 leaves direct gets off; rnats reads such a bucket from the leader.
    assert_eq!(
        (theirs.allow_rollup, theirs.deny_delete),
        (ours.allow_rollup, ours.deny_delete)
    );
    assert!(ours.allow_direct && !theirs.allow_direct);
}

#[tokio::test]
async fn nats_py_reads_and_watches_what_rnats_writes() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let kv = js
        .create_key_value(kv::Config {
            bucket: "fromrust".into(),
            history: 5,
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();
    kv.put("a", "1".into()).await.unwrap();
    let a = kv.put("a", "2".into()).await.unwrap();
    kv.put("b", "x".into()).await.unwrap();
    kv.delete("b").await.unwrap();
    kv.put("c.d", "y".into()).await.unwrap();
    kv.purge("c.d").await.unwrap();

    let printed = py(server.url(), PY_READS, vec!["fromrust".into()]).await;
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(
        lines,
        [
            format!("get a 2 {a}").as_str(),
            "get b DEL",
            "get c.d PURGE",
            "watch a PUT 1 1",
            "watch a PUT 2 2",
            "watch b PUT x 3",
            "watch b DEL  4",
            "watch c.d PURGE  6",
        ]
    );
}

#[tokio::test]
async fn an_rnats_watch_sees_nats_py_deletes_and_purges() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let kv = js
        .create_key_value(kv::Config {
            bucket: "watched".into(),
            // With the default history of one, the delete would take `k`'s put off the
            // stream, maybe before the watch was sent it.
            history: 10,
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut events = kv
        .watch_with_options([">"], WatchOptions::new())
        .await
        .unwrap()
        .events();
    let marker = tokio::time::timeout(WAIT, events.next()).await.unwrap();
    assert_eq!(marker.unwrap().unwrap(), WatchEvent::InitialValuesDone);

    // The purge is a roll-up: it takes `j`'s put off the stream whatever the history, and a
    // watch that has not been sent that put yet (a busy server) would never see it. So the
    // purge waits until the watch has seen the rest.
    let mut seen = Vec::new();
    for ops in [&["put:k", "delete:k", "put:j"][..], &["purge:j"]] {
        let args = std::iter::once("watched").chain(ops.iter().copied());
        py(server.url(), PY_CHANGES, args.map(String::from).collect()).await;
        for _ in ops {
            match tokio::time::timeout(WAIT, events.next()).await.unwrap() {
                Some(Ok(WatchEvent::Entry(entry))) => {
                    seen.push((entry.key, entry.operation, entry.revision))
                }
                other => panic!("expected an entry, got {other:?}"),
            }
        }
    }
    assert_eq!(
        seen,
        [
            ("k".to_string(), Operation::Put, 1),
            ("k".to_string(), Operation::Delete, 2),
            ("j".to_string(), Operation::Put, 3),
            ("j".to_string(), Operation::Purge, 4),
        ]
    );
}

/// The entries of a watch until its initial-values marker, as `key OP value revision`.
async fn initial_entries(kv: &kv::Store, key: &str, options: WatchOptions) -> String {
    let mut events = kv
        .watch_with_options([key], options)
        .await
        .unwrap()
        .events();
    let mut out = Vec::new();
    loop {
        match tokio::time::timeout(WAIT, events.next()).await.unwrap() {
            Some(Ok(WatchEvent::Entry(entry))) => {
                let op = match entry.operation {
                    Operation::Put => "PUT",
                    Operation::Delete => "DEL",
                    Operation::Purge => "PURGE",
                };
                let value = String::from_utf8_lossy(&entry.value);
                out.push(format!("{} {op} {value} {}", entry.key, entry.revision));
            }
            Some(Ok(WatchEvent::InitialValuesDone)) => return out.join("|"),
            other => panic!("expected an entry, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn keys_and_watch_options_see_the_same_data_in_rnats_and_nats_py() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let kv = js
        .create_key_value(kv::Config {
            bucket: "queried".into(),
            history: 5,
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();
    kv.put("a.1", "1".into()).await.unwrap();
    kv.put("a.1", "2".into()).await.unwrap();
    kv.put("a.2", "x".into()).await.unwrap();
    kv.put("b.1", "y".into()).await.unwrap();
    kv.delete("a.2").await.unwrap();
    kv.put("c.1", "z".into()).await.unwrap();
    kv.put("c.d.e", "deep".into()).await.unwrap();
    kv.purge("b.1").await.unwrap();

    let out = py(server.url(), PY_QUERIES, vec!["queried".into()]).await;
    let theirs: Vec<&str> = out.lines().collect();
    let mut keys: Vec<String> = kv.keys().await.unwrap().try_collect().await.unwrap();
    keys.sort();
    assert_eq!(keys.join(","), "a.1,c.1,c.d.e");
    assert_eq!(theirs[0], keys.join(","));
    // nats-py's filters are substrings matched in the client; where they name whole keys
    // they select what rnats's subject filters do.
    let mut filtered: Vec<String> = kv
        .keys_with_filters(["a.1", "c.1"])
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    filtered.sort();
    assert_eq!(filtered, ["a.1", "c.1"]);
    assert_eq!(theirs[1], filtered.join(","));

    let history = initial_entries(&kv, ">", WatchOptions::new().include_history()).await;
    assert_eq!(history.split('|').count(), 7, "{history}");
    assert_eq!(theirs[2], history);
    let no_deletes = WatchOptions::new().include_history().ignore_deletes();
    let no_deletes = initial_entries(&kv, "a.>", no_deletes).await;
    assert_eq!(no_deletes, "a.1 PUT 1 1|a.1 PUT 2 2|a.2 PUT x 3");
    assert_eq!(theirs[3], no_deletes);
    let last = initial_entries(&kv, "a.>", WatchOptions::new()).await;
    assert_eq!(last, "a.1 PUT 2 2|a.2 DEL  5");
    assert_eq!(theirs[4], last);
    let meta_only = initial_entries(&kv, ">", WatchOptions::new().meta_only()).await;
    assert!(!meta_only.contains("deep"), "{meta_only}");
    assert_eq!(theirs[5], meta_only);
}
