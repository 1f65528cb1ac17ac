//! Key-Value completeness against a real nats-server (ADR-8, ADR-48, ADR-57): bucket
//! metadata and limit-marker TTLs in the status, listings that include mirrors, a sourced
//! bucket that takes writes of its own, and nats-py 2.16 working with a sourced bucket rnats
//! made. Mirrors and sources across JetStream domains are in `topologies.rs`.
#![cfg(feature = "kv")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_jetstream::context::CreateKeyValueErrorKind;
use rnats_jetstream::kv::{self, Operation, ServerRefusal, Store, WatchOptions};
use rnats_jetstream::stream::{self, Source, StorageType, SubjectTransform};
use rnats_jetstream::{Context, ErrorCode};
use rnats_test_server::{NatsServer, run_nats_py};

const WAIT: Duration = Duration::from_secs(20);

async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::with_jetstream();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, rnats_jetstream::new(client))
}

fn memory(bucket: &str) -> kv::Config {
    kv::Config {
        bucket: bucket.to_owned(),
        storage: StorageType::Memory,
        ..Default::default()
    }
}

/// The value `key` has once a watch of it sees `value` (the bucket copies asynchronously).
async fn wait_for_value(kv: &Store, key: &str, value: &str) {
    // The last value first, then changes (a plain `watch` sees only changes, as in async-nats).
    let mut watch = kv.watch_with_history(key).await.unwrap();
    tokio::time::timeout(WAIT, async {
        while let Some(entry) = watch.next().await {
            let entry = entry.unwrap();
            if entry.operation == Operation::Put && entry.value == value {
                return;
            }
        }
        panic!("watch ended");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn status_carries_metadata_and_limit_marker_ttl() {
    let (_server, js) = jetstream().await;
    let metadata = HashMap::from([("owner".to_owned(), "billing".to_owned())]);
    let kv = js
        .create_key_value(kv::Config {
            metadata: metadata.clone(),
            limit_markers: Some(Duration::from_secs(5)),
            ..memory("meta")
        })
        .await
        .unwrap();
    let status = kv.status().await.unwrap();
    assert_eq!(status.metadata()["owner"], "billing");
    assert_eq!(status.limit_marker_ttl(), Some(Duration::from_secs(5)));

    // Metadata changes with an update.
    js.update_key_value(kv::Config {
        metadata: HashMap::from([("owner".to_owned(), "ops".to_owned())]),
        limit_markers: Some(Duration::from_secs(5)),
        ..memory("meta")
    })
    .await
    .unwrap();
    assert_eq!(kv.status().await.unwrap().metadata()["owner"], "ops");

    let plain = js.create_key_value(memory("plain")).await.unwrap();
    let status = plain.status().await.unwrap();
    assert_eq!(status.limit_marker_ttl(), None);
    assert!(!status.metadata().contains_key("owner"));
}

#[tokio::test]
async fn get_or_create_keeps_an_existing_bucket_and_makes_a_missing_one() {
    let (_server, js) = jetstream().await;
    js.create_key_value(kv::Config {
        history: 5,
        ..memory("kept")
    })
    .await
    .unwrap();
    let kept = js
        .get_or_create_key_value(kv::Config {
            history: 2,
            ..memory("kept")
        })
        .await
        .unwrap();
    assert_eq!(kept.status().await.unwrap().history(), 5);

    let made = js
        .get_or_create_key_value(kv::Config {
            history: 3,
            ..memory("made")
        })
        .await
        .unwrap();
    assert_eq!(made.status().await.unwrap().history(), 3);
    made.put("k", "v".into()).await.unwrap();
    assert_eq!(made.get("k").await.unwrap().unwrap(), "v");

    // A stream under a bucket's name that is not a bucket is not taken, nor replaced.
    js.create_stream(stream::Config {
        name: "KV_plain".into(),
        subjects: vec!["plain.>".into()],
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();
    let error = js
        .get_or_create_key_value(memory("plain"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CreateKeyValueErrorKind::InvalidStoreName);

    // Configs that could never make the bucket are refused before anything is sent.
    let error = js
        .get_or_create_key_value(kv::Config {
            history: 65,
            ..memory("kept")
        })
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CreateKeyValueErrorKind::TooLongHistory);
    let error = js
        .get_or_create_key_value(memory("no.dots"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CreateKeyValueErrorKind::InvalidStoreName);
}

#[tokio::test]
async fn callers_racing_to_get_or_create_a_bucket_all_get_it() {
    let (_server, js) = jetstream().await;
    // Eight callers at once, on one connection: their lookups reach the server before any
    // create does, so all find no bucket and all create. Asking for the same config, every
    // create succeeds; asking for different ones, all but the first are refused as the name
    // exists, and get the bucket that won.
    for (bucket, same_config) in [("same", true), ("differ", false)] {
        let callers = (1..=8).map(|i| {
            js.get_or_create_key_value(kv::Config {
                history: if same_config { 4 } else { i },
                ..memory(bucket)
            })
        });
        let stores = futures_util::future::join_all(callers).await;
        let mut histories = Vec::new();
        for store in stores {
            let store = store.unwrap_or_else(|e| panic!("{bucket}: {e}"));
            histories.push(store.status().await.unwrap().history());
        }
        histories.dedup();
        assert_eq!(histories.len(), 1, "{bucket}: {histories:?}");
    }
    let names: Vec<String> = js.key_value_store_names().try_collect().await.unwrap();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[tokio::test]
async fn a_bucket_whose_subjects_a_stream_holds_names_that_stream() {
    let (_server, js) = jetstream().await;
    js.create_stream(stream::Config {
        name: "SQUATTER".into(),
        subjects: vec!["$KV.taken.>".into()],
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();
    let error = js.create_key_value(memory("taken")).await.unwrap_err();
    assert_eq!(error.kind(), CreateKeyValueErrorKind::BucketCreate);
    assert_eq!(error.error_code(), Some(ErrorCode::STREAM_SUBJECT_OVERLAP));
    let overlap = error.downcast_source::<stream::SubjectOverlap>().unwrap();
    assert_eq!(overlap.stream(), "KV_taken");
    assert_eq!(overlap.streams(), ["SQUATTER"]);
    let message = error.to_string();
    assert!(
        message.starts_with("bucket creation failed: JetStream error:"),
        "{message}"
    );
    assert!(
        message.ends_with(
            "stream `KV_taken` (subjects `$KV.taken.>`) overlaps stream `SQUATTER` on `$KV.taken.>`"
        ),
        "{message}"
    );
    let error = js
        .get_or_create_key_value(memory("taken"))
        .await
        .unwrap_err();
    assert_eq!(error.error_code(), Some(ErrorCode::STREAM_SUBJECT_OVERLAP));
    assert!(error.to_string().contains("`SQUATTER`"), "{error}");
}

#[tokio::test]
async fn listings_include_mirrors_and_skip_other_streams() {
    let (_server, js) = jetstream().await;
    js.create_key_value(memory("origin")).await.unwrap();
    js.create_key_value(kv::Config {
        mirror: Some(Source {
            name: "origin".into(),
            ..Default::default()
        }),
        ..memory("copy")
    })
    .await
    .unwrap();
    js.create_stream(rnats_jetstream::stream::Config {
        name: "ORDERS".into(),
        subjects: vec!["orders.>".into()],
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();

    let mut names: Vec<String> = js.key_value_store_names().try_collect().await.unwrap();
    names.sort();
    assert_eq!(names, ["copy", "origin"]);
    let mut statuses: Vec<kv::Status> = js.key_value_stores().try_collect().await.unwrap();
    statuses.sort_by(|a, b| a.bucket().cmp(b.bucket()));
    assert_eq!(statuses.len(), 2);
    assert_eq!(statuses[0].bucket(), "copy");
    assert_eq!(statuses[0].mirror().unwrap().name, "KV_origin");
    assert_eq!(statuses[1].bucket(), "origin");
}

#[tokio::test]
async fn a_sourced_bucket_takes_its_own_writes_and_its_sources() {
    let (_server, js) = jetstream().await;
    let east = js.create_key_value(memory("east")).await.unwrap();
    let west = js.create_key_value(memory("west")).await.unwrap();
    let all = js
        .create_key_value(kv::Config {
            sources: Some(vec![
                Source {
                    name: "east".into(),
                    ..Default::default()
                },
                Source {
                    name: "KV_west".into(),
                    ..Default::default()
                },
            ]),
            ..memory("all")
        })
        .await
        .unwrap();
    east.put("e", "from east".into()).await.unwrap();
    west.put("w", "from west".into()).await.unwrap();
    all.put("own", "written here".into()).await.unwrap();
    wait_for_value(&all, "e", "from east").await;
    wait_for_value(&all, "w", "from west").await;
    let mut keys: Vec<String> = all.keys().await.unwrap().try_collect().await.unwrap();
    keys.sort();
    assert_eq!(keys, ["e", "own", "w"]);
    let mut some: Vec<String> = all
        .keys_with_filters(["e", "own"])
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    some.sort();
    assert_eq!(some, ["e", "own"]);

    // Only what changes from now on, values only: a source's write shows up as an update.
    let mut updates = all
        .watch_with_options([">"], WatchOptions::new().updates_only().ignore_deletes())
        .await
        .unwrap();
    east.delete("e").await.unwrap();
    west.put("w", "again".into()).await.unwrap();
    let entry = tokio::time::timeout(WAIT, updates.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (entry.key.as_str(), entry.value.as_ref()),
        ("w", &b"again"[..])
    );
}

/// nats-py writes to a bucket rnats made with a source, and reads back both its own write
/// and what came from the source.
const PY_SOURCED: &str = r#"
import asyncio, os, sys
import nats

async def main():
    nc = await nats.connect(os.environ["NATS_URL"])
    js = nc.jetstream()
    kv = await js.key_value("all")
    await kv.put("frompy", b"py")
    print((await kv.get("frompy")).value.decode())
    watcher = await kv.watch("e")
    while True:
        entry = await watcher.updates(timeout=10)
        if entry is not None and entry.value == b"from east":
            print(entry.value.decode())
            break
    await watcher.stop()
    await nc.close()

asyncio.run(main())
"#;

/// ADR-57: a source with subject transforms of its own is taken as given, so a stream that is
/// not a bucket can feed one, and keys can be remapped between buckets.
#[tokio::test]
async fn sources_with_their_own_transforms_feed_a_bucket_from_any_stream() {
    let (_server, js) = jetstream().await;
    js.create_stream(stream::Config {
        name: "EVENTS".into(),
        subjects: vec!["events.>".into()],
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();
    let cache = js
        .create_key_value(kv::Config {
            sources: Some(vec![Source {
                name: "EVENTS".into(),
                subject_transforms: vec![SubjectTransform {
                    source: "events.processed.>".into(),
                    destination: "$KV.event_cache.>".into(),
                }],
                ..Default::default()
            }]),
            ..memory("event_cache")
        })
        .await
        .unwrap();
    let info = cache.status().await.unwrap().info;
    let sources = info.config.sources.unwrap();
    assert_eq!(
        sources[0].name, "EVENTS",
        "the stream's own name, no KV_ prefix"
    );
    js.publish("events.received.order1", "ignored".into())
        .await
        .unwrap()
        .await
        .unwrap();
    js.publish("events.processed.order1", "done".into())
        .await
        .unwrap()
        .await
        .unwrap();
    wait_for_value(&cache, "order1", "done").await;
    let keys: Vec<String> = cache.keys().await.unwrap().try_collect().await.unwrap();
    assert_eq!(keys, ["order1"], "only the processed events became keys");

    // Bucket to bucket with a key mapping: `warehouse.<site>.product.<id>` to `<id>`.
    let inventory = js.create_key_value(memory("inventory")).await.unwrap();
    let products = js
        .create_key_value(kv::Config {
            sources: Some(vec![Source {
                name: "KV_inventory".into(),
                subject_transforms: vec![SubjectTransform {
                    source: "$KV.inventory.warehouse.*.product.>".into(),
                    destination: "$KV.products.>".into(),
                }],
                ..Default::default()
            }]),
            ..memory("products")
        })
        .await
        .unwrap();
    inventory
        .put("warehouse.nyc.product.item123", "12 in stock".into())
        .await
        .unwrap();
    inventory
        .put("warehouse.nyc.staff", "4".into())
        .await
        .unwrap();
    wait_for_value(&products, "item123", "12 in stock").await;
    let keys: Vec<String> = products.keys().await.unwrap().try_collect().await.unwrap();
    assert_eq!(keys, ["item123"]);
}

#[tokio::test]
async fn nats_py_writes_and_reads_a_sourced_bucket_rnats_made() {
    let (server, js) = jetstream().await;
    let east = js.create_key_value(memory("east")).await.unwrap();
    let all = js
        .create_key_value(kv::Config {
            sources: Some(vec![Source {
                name: "east".into(),
                ..Default::default()
            }]),
            ..memory("all")
        })
        .await
        .unwrap();
    east.put("e", "from east".into()).await.unwrap();
    let url = server.url();
    let printed = tokio::task::spawn_blocking(move || run_nats_py(&url, PY_SOURCED, &[]).unwrap())
        .await
        .unwrap();
    assert_eq!(printed.lines().collect::<Vec<_>>(), ["py", "from east"]);
    assert_eq!(all.get("frompy").await.unwrap(), Some(Bytes::from("py")));
}
