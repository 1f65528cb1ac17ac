//! An object's `modified` is the server's timestamp of its meta message (ADR-20, as nats.go
//! reads it), on every path that reads metadata back: `info` (by direct get and from the
//! leader), `get`, `list` and `watch`. Metadata stored by hand, as another client would store
//! it, without `mtime` or with the zero time nats.go writes, reads back with the time the
//! server stored it, compared with a raw get of the same message.
#![cfg(feature = "object-store")]
#![allow(clippy::unwrap_used, missing_docs)]

mod objects;

use base64::Engine;
use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use objects::{bucket, bucket_without_direct_gets, jetstream};
use rnats_core::HeaderMap;
use rnats_core::datetime::DateTime;
use rnats_jetstream::Context;
use rnats_jetstream::object_store::{ObjectInfo, ObjectStore, WatchOptions};
use tokio::io::AsyncReadExt;

fn meta_subject(bucket: &str, name: &str) -> String {
    let name = base64::engine::general_purpose::URL_SAFE.encode(name);
    format!("$O.{bucket}.M.{name}")
}

/// The metadata JSON stored for `name`, and when the server stored it, by a raw get from the
/// stream leader (not the path `info` takes in a bucket with direct gets).
async fn stored_meta(js: &Context, bucket: &str, name: &str) -> (serde_json::Value, DateTime) {
    let stream = js.get_stream(format!("OBJ_{bucket}")).await.unwrap();
    let message = stream
        .get_last_raw_message_by_subject(&meta_subject(bucket, name))
        .await
        .unwrap();
    (
        serde_json::from_slice(&message.payload).unwrap(),
        message.time,
    )
}

/// Stores the metadata of `name` again as another client would, with `mtime` as `mtime`
/// says (`None`: no `mtime` at all); the time the server stored it.
async fn restore_meta_by_hand(
    js: &Context,
    store: &ObjectStore,
    name: &str,
    mtime: Option<&str>,
) -> DateTime {
    let (mut json, _) = stored_meta(js, store.name(), name).await;
    let fields = json.as_object_mut().unwrap();
    fields.remove("mtime");
    if let Some(mtime) = mtime {
        fields.insert("mtime".into(), mtime.into());
    }
    let mut headers = HeaderMap::new();
    headers.insert("Nats-Rollup", "sub");
    let payload = Bytes::from(serde_json::to_vec(&json).unwrap());
    js.publish_with_headers(meta_subject(store.name(), name), headers, payload)
        .await
        .unwrap()
        .await
        .unwrap();
    let (json, stored) = stored_meta(js, store.name(), name).await;
    assert_eq!(json.get("mtime").and_then(|m| m.as_str()), mtime);
    stored
}

/// The metadata of `name` in a listing of `store`.
async fn listed(store: &ObjectStore, name: &str) -> ObjectInfo {
    let all: Vec<ObjectInfo> = store.list().await.unwrap().try_collect().await.unwrap();
    all.into_iter().find(|info| info.name == name).unwrap()
}

#[tokio::test]
async fn metadata_without_mtime_reads_back_with_the_time_the_server_stored_it() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "plain").await;
    store.put("obj", &mut &b"some data"[..]).await.unwrap();
    let stored = restore_meta_by_hand(&js, &store, "obj", None).await;

    assert_eq!(store.info("obj").await.unwrap().modified, Some(stored));
    let mut object = store.get("obj").await.unwrap();
    assert_eq!(object.info().modified, Some(stored));
    let mut data = Vec::new();
    object.read_to_end(&mut data).await.unwrap();
    assert_eq!(data, b"some data");
    assert_eq!(listed(&store, "obj").await.modified, Some(stored));
    let mut current = store.watch_with_history().await.unwrap();
    assert_eq!(
        current.next().await.unwrap().unwrap().modified,
        Some(stored)
    );
}

#[tokio::test]
async fn the_zero_time_nats_go_stores_is_not_read_back() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "zero").await;
    let zero = "0001-01-01T00:00:00Z";
    store.put("obj", &mut &b"some data"[..]).await.unwrap();
    let stored = restore_meta_by_hand(&js, &store, "obj", Some(zero)).await;

    assert_eq!(store.info("obj").await.unwrap().modified, Some(stored));
    assert_eq!(listed(&store, "obj").await.modified, Some(stored));
}

#[tokio::test]
async fn what_rnats_puts_reads_back_with_the_time_the_server_stored_it() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "own").await;
    let put = store.put("obj", &mut &b"data"[..]).await.unwrap();
    let (json, stored) = stored_meta(&js, "own", "obj").await;
    // rnats still writes its own clock into the JSON, as async-nats does, for readers that
    // take the time from there; it is what the put returns.
    let written = rnats_core::datetime::parse_rfc3339(json["mtime"].as_str().unwrap()).unwrap();
    assert_eq!(put.modified, Some(written));

    let read = store.info("obj").await.unwrap();
    assert_eq!(read.modified, Some(stored));
    assert_eq!(
        ObjectInfo {
            modified: put.modified,
            ..read
        },
        put
    );
    assert_eq!(listed(&store, "obj").await.modified, Some(stored));
}

#[tokio::test]
async fn a_watch_sees_each_change_at_the_time_the_server_stored_it() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "w").await;
    let mut changes = store
        .watch_with_options(WatchOptions::new().updates_only())
        .await
        .unwrap();
    store.put("obj", &mut &b"some data"[..]).await.unwrap();
    // Seen before the metadata is stored again, which rolls the put's up: a consumer the
    // server had not yet sent it to would skip it.
    let put = changes.next().await.unwrap().unwrap();
    let (_, stored) = stored_meta(&js, "w", "obj").await;
    assert_eq!(put.modified, Some(stored));

    let stored = restore_meta_by_hand(&js, &store, "obj", None).await;
    let by_hand = changes.next().await.unwrap().unwrap();
    assert_eq!(by_hand.modified, Some(stored));

    store.delete("obj").await.unwrap();
    let deleted = changes.next().await.unwrap().unwrap();
    assert!(deleted.deleted);
    let (_, stored) = stored_meta(&js, "w", "obj").await;
    assert_eq!(deleted.modified, Some(stored));
}

#[tokio::test]
async fn a_bucket_without_direct_gets_reads_the_time_from_the_leader() {
    let (_server, js) = jetstream().await;
    let store = bucket_without_direct_gets(&js).await;
    store.put("obj", &mut &b"some data"[..]).await.unwrap();
    let stored = restore_meta_by_hand(&js, &store, "obj", None).await;
    assert_eq!(store.info("obj").await.unwrap().modified, Some(stored));
    assert_eq!(
        store.get("obj").await.unwrap().info().modified,
        Some(stored)
    );
}
