//! The Object Store (ADR-20) against a real nats-server with JetStream: buckets, the stream
//! and subjects they use, puts and verified reads (tampered data caught), replacement,
//! deletion, listing, watching, metadata updates and renames, links, sealing, progress, and
//! the errors of each.
#![cfg(feature = "object-store")]
#![allow(clippy::unwrap_used, missing_docs)]

mod consumers;
mod objects;

use std::collections::HashMap;
use std::io::ErrorKind;
use std::sync::{Arc, Mutex};

use base64::Engine;
use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_core::HeaderMap;
use rnats_jetstream::object_store::{
    AddLinkErrorKind, Config, CreateObjectStoreErrorKind, DeleteErrorKind, GetErrorKind,
    InfoErrorKind, ObjectInfo, ObjectMetadata, ObjectStore, ObjectStoreErrorKind, Progress,
    PutErrorKind, ReadError, ReadErrorKind, UpdateMetadata, UpdateMetadataErrorKind, server_error,
};
use rnats_jetstream::stream::{DiscardPolicy, StorageType};
use rnats_jetstream::{Context, ErrorCode};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;

use consumers::{consumer_names, until_no_consumers};
use objects::{bucket, bucket_without_direct_gets, data, jetstream};

fn digest_of(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    format!(
        "SHA-256={}",
        base64::engine::general_purpose::URL_SAFE.encode(hash)
    )
}

async fn read_all(bucket: &ObjectStore, name: &str) -> std::io::Result<Vec<u8>> {
    let mut object = bucket.get(name).await.unwrap();
    let mut out = Vec::new();
    object.read_to_end(&mut out).await.map(|_| out)
}

/// The [`ReadError`] kind inside a failed read.
fn read_error_kind(error: &std::io::Error) -> ReadErrorKind {
    error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ReadError>())
        .map(ReadError::kind)
        .unwrap_or_else(|| panic!("not a ReadError: {error:?}"))
}

fn meta_subject(bucket: &str, name: &str) -> String {
    let name = base64::engine::general_purpose::URL_SAFE.encode(name);
    format!("$O.{bucket}.M.{name}")
}

/// Stores `info` on its meta subject as another client (or an attacker) would.
async fn publish_raw_meta(js: &Context, info: &ObjectInfo) {
    let mut headers = HeaderMap::new();
    headers.insert("Nats-Rollup", "sub");
    let payload = Bytes::from(serde_json::to_vec(info).unwrap());
    js.publish_with_headers(meta_subject(&info.bucket, &info.name), headers, payload)
        .await
        .unwrap()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_bucket_is_a_stream_laid_out_as_adr_20_says() {
    let (_server, js) = jetstream().await;
    let store = js
        .create_object_store(Config {
            bucket: "files".into(),
            description: Some("user files".into()),
            max_bytes: 1 << 30,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(store.name(), "files");
    let config = js
        .get_stream("OBJ_files")
        .await
        .unwrap()
        .cached_info()
        .config
        .clone();
    assert_eq!(config.subjects, vec!["$O.files.C.>", "$O.files.M.>"]);
    assert!(config.allow_rollup);
    assert!(config.allow_direct);
    assert_eq!(config.discard, DiscardPolicy::New);
    assert_eq!(config.max_bytes, 1 << 30);
    assert_eq!(config.description.as_deref(), Some("user files"));

    // The metadata goes to the name's base64url subject with a subject rollup.
    store.put("dir/a.txt", &mut &b"hello"[..]).await.unwrap();
    let stream = js.get_stream("OBJ_files").await.unwrap();
    let meta = stream
        .get_last_raw_message_by_subject(&meta_subject("files", "dir/a.txt"))
        .await
        .unwrap();
    assert_eq!(
        meta.headers.get("Nats-Rollup").map(|v| v.as_str()),
        Some("sub")
    );
    let json: serde_json::Value = serde_json::from_slice(&meta.payload).unwrap();
    assert_eq!(json["name"], "dir/a.txt");
    assert_eq!(json["bucket"], "files");
    assert_eq!(json["size"], 5);
    assert_eq!(json["chunks"], 1);
    assert_eq!(json["digest"], digest_of(b"hello"));
    assert_eq!(json["options"]["max_chunk_size"], 128 * 1024);
    assert!(json["mtime"].as_str().unwrap().ends_with('Z'));
    let nuid = json["nuid"].as_str().unwrap();
    let chunk = stream
        .get_last_raw_message_by_subject(&format!("$O.files.C.{nuid}"))
        .await
        .unwrap();
    assert_eq!(&chunk.payload[..], b"hello");
}

#[tokio::test]
async fn buckets_are_fetched_listed_updated_and_deleted() {
    let (_server, js) = jetstream().await;
    bucket(&js, "one").await;
    bucket(&js, "two").await;
    // A stream that is not a bucket is not listed.
    js.create_stream(rnats_jetstream::stream::Config {
        name: "OTHER".into(),
        subjects: vec!["other.>".into()],
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();

    let mut names: Vec<String> = js.object_store_names().try_collect().await.unwrap();
    names.sort();
    assert_eq!(names, ["one", "two"]);
    let statuses: Vec<_> = js.object_stores().try_collect().await.unwrap();
    assert_eq!(statuses.len(), 2);

    let store = js.get_object_store("one").await.unwrap();
    store.put("x", &mut &b"12345"[..]).await.unwrap();
    let status = store.status().await.unwrap();
    assert_eq!(status.bucket, "one");
    assert_eq!(status.storage, StorageType::Memory);
    assert!(!status.sealed);
    assert!(status.size > 5);

    let updated = js
        .update_object_store(Config {
            bucket: "one".into(),
            description: Some("now described".into()),
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();
    let status = updated.status().await.unwrap();
    assert_eq!(status.description.as_deref(), Some("now described"));
    // Updating keeps the objects.
    assert_eq!(read_all(&updated, "x").await.unwrap(), b"12345");

    js.delete_object_store("one").await.unwrap();
    let error = js.get_object_store("one").await.unwrap_err();
    assert_eq!(error.kind(), ObjectStoreErrorKind::GetStore);
    assert_eq!(
        server_error(&error).map(|e| e.error_code()),
        Some(ErrorCode::STREAM_NOT_FOUND)
    );
    let error = js.delete_object_store("one").await.unwrap_err();
    assert_eq!(error.kind(), ObjectStoreErrorKind::GetStore);
}

#[tokio::test]
async fn bad_bucket_names_and_conflicting_configs_are_refused() {
    let (_server, js) = jetstream().await;
    for name in ["", "a.b", "a b", "a*"] {
        let error = js
            .create_object_store(Config {
                bucket: name.into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(error.kind(), CreateObjectStoreErrorKind::InvalidStoreName);
        let error = js.get_object_store(name).await.unwrap_err();
        assert_eq!(error.kind(), ObjectStoreErrorKind::InvalidBucketName);
    }
    bucket(&js, "b").await;
    // The same name with another storage type is a different stream config.
    let error = js
        .create_object_store(Config {
            bucket: "b".into(),
            storage: StorageType::File,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CreateObjectStoreErrorKind::BucketCreate);
    assert_eq!(
        server_error(&error).map(|e| e.error_code()),
        Some(ErrorCode::STREAM_NAME_EXIST)
    );
    let error = js
        .update_object_store(Config {
            bucket: "missing".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        error.kind(),
        rnats_jetstream::object_store::UpdateObjectStoreErrorKind::NotFound
    );
}

#[tokio::test]
async fn objects_of_any_size_round_trip_in_chunks() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "data").await;

    let empty = store.put("empty", &mut &b""[..]).await.unwrap();
    assert_eq!((empty.size, empty.chunks), (0, 0));
    assert_eq!(empty.digest.as_deref(), Some(digest_of(b"").as_str()));
    assert!(read_all(&store, "empty").await.unwrap().is_empty());

    // 1 MiB + 1 in the default 128 KiB chunks: 8 full chunks and one of a byte.
    let big = data((1 << 20) + 1, 1);
    let info = store.put("big", &mut big.as_slice()).await.unwrap();
    assert_eq!((info.size, info.chunks), (big.len(), 9));
    assert_eq!(info.digest.as_deref(), Some(digest_of(&big).as_str()));
    assert_eq!(read_all(&store, "big").await.unwrap(), big);

    // A chosen chunk size, and a reader smaller than the caller's buffer reads.
    let small = data(10_500, 2);
    let info = store
        .put(
            ObjectMetadata {
                name: "small".into(),
                description: Some("ten and a half k".into()),
                chunk_size: Some(1_000),
                metadata: HashMap::from([("k".to_string(), "v".to_string())]),
                headers: None,
            },
            &mut small.as_slice(),
        )
        .await
        .unwrap();
    assert_eq!(info.chunks, 11);
    let fetched = store.info("small").await.unwrap();
    // Read back, `modified` is when the server stored the metadata, not the client's clock.
    assert!(fetched.modified.is_some());
    assert_eq!(
        ObjectInfo {
            modified: info.modified,
            ..fetched.clone()
        },
        info
    );
    assert_eq!(fetched.metadata["k"], "v");
    let mut object = store.get("small").await.unwrap();
    assert_eq!(
        object.info().description.as_deref(),
        Some("ten and a half k")
    );
    let mut out = Vec::new();
    let mut buf = [0u8; 333];
    loop {
        let n = object.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    assert_eq!(out, small);
    // After the end, reads keep reporting the end.
    assert_eq!(object.read(&mut buf).await.unwrap(), 0);
}

/// A reader that hands out at most `step` bytes per read, as sockets and pipes do.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl tokio::io::AsyncRead for Trickle<'_> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let n = self.step.min(self.data.len()).min(buf.remaining());
        buf.put_slice(&self.data[..n]);
        self.data = &self.data[n..];
        std::task::Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn a_reader_that_trickles_still_fills_whole_chunks() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "trickle").await;
    let bytes = data(5_000, 3);
    let meta = ObjectMetadata {
        name: "t".into(),
        chunk_size: Some(1_000),
        ..Default::default()
    };
    let mut reader = Trickle {
        data: &bytes,
        step: 64,
    };
    let info = store.put(meta, &mut reader).await.unwrap();
    assert_eq!((info.size, info.chunks), (5_000, 5));
    assert_eq!(read_all(&store, "t").await.unwrap(), bytes);
}

#[tokio::test]
async fn a_replaced_object_leaves_no_old_chunks() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "r").await;
    let first = data(300_000, 4);
    let old = store.put("obj", &mut first.as_slice()).await.unwrap();
    let second = data(1_000, 5);
    let new = store.put("obj", &mut second.as_slice()).await.unwrap();
    assert_ne!(old.nuid, new.nuid);
    assert_eq!(read_all(&store, "obj").await.unwrap(), second);
    // One chunk and one metadata message remain.
    let stream = js.get_stream("OBJ_r").await.unwrap();
    assert_eq!(stream.cached_info().state.messages, 2);
}

#[tokio::test]
async fn a_digest_that_does_not_match_fails_the_read() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "t").await;
    let bytes = data(50_000, 6);
    let mut info = store.put("obj", &mut bytes.as_slice()).await.unwrap();

    // Metadata rewritten with the digest of other data.
    info.digest = Some(digest_of(b"something else"));
    publish_raw_meta(&js, &info).await;
    let error = read_all(&store, "obj").await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidData);
    assert_eq!(read_error_kind(&error), ReadErrorKind::DigestMismatch);
}

#[tokio::test]
async fn a_tampered_chunk_fails_the_read() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "t").await;
    let bytes = data(4_000, 7);
    let meta = ObjectMetadata {
        name: "obj".into(),
        chunk_size: Some(1_000),
        ..Default::default()
    };
    let info = store.put(meta, &mut bytes.as_slice()).await.unwrap();
    // Replace the first chunk by one of the same size (it now comes last).
    let chunks = format!("$O.t.C.{}", info.nuid);
    let stream = js.get_stream("OBJ_t").await.unwrap();
    let first = stream.direct_get_first_for_subject(&chunks).await.unwrap();
    assert!(stream.delete_message(first.sequence).await.unwrap());
    let forged = Bytes::from(vec![0u8; 1_000]);
    js.publish(chunks, forged).await.unwrap().await.unwrap();

    let mut object = store.get("obj").await.unwrap();
    let mut out = Vec::new();
    let error = object.read_to_end(&mut out).await.unwrap_err();
    assert_eq!(read_error_kind(&error), ReadErrorKind::DigestMismatch);
    // The forged last chunk was never handed out, and the failure sticks.
    assert_eq!(out.len(), 3_000);
    let error = object.read(&mut [0u8; 16]).await.unwrap_err();
    assert_eq!(read_error_kind(&error), ReadErrorKind::DigestMismatch);
}

#[tokio::test]
async fn missing_or_extra_chunks_fail_the_read() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "m").await;
    let bytes = data(3_000, 8);
    let meta = ObjectMetadata {
        name: "gone".into(),
        chunk_size: Some(1_000),
        ..Default::default()
    };
    let info = store
        .put(meta.clone(), &mut bytes.as_slice())
        .await
        .unwrap();
    let stream = js.get_stream("OBJ_m").await.unwrap();
    stream
        .purge()
        .filter(format!("$O.m.C.{}", info.nuid))
        .await
        .unwrap();
    let error = read_all(&store, "gone").await.unwrap_err();
    assert_eq!(read_error_kind(&error), ReadErrorKind::ChunksMissing);

    let info = store
        .put(
            ObjectMetadata {
                name: "extra".into(),
                ..meta
            },
            &mut bytes.as_slice(),
        )
        .await
        .unwrap();
    js.publish(format!("$O.m.C.{}", info.nuid), Bytes::from_static(b"more"))
        .await
        .unwrap()
        .await
        .unwrap();
    let error = read_all(&store, "extra").await.unwrap_err();
    assert_eq!(read_error_kind(&error), ReadErrorKind::SizeMismatch);
}

#[tokio::test]
async fn a_chunk_size_over_the_server_s_limit_is_cut_to_it() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "big").await;
    let max_payload = js.client().max_payload();
    // Two chunks' worth at the server's limit, and a little.
    let bytes = data(2 * max_payload + 10, 3);
    for (name, chunk_size) in [("max", usize::MAX), ("over", max_payload + 1)] {
        let meta = ObjectMetadata {
            name: name.into(),
            chunk_size: Some(chunk_size),
            ..Default::default()
        };
        let info = store.put(meta, &mut bytes.as_slice()).await.unwrap();
        assert_eq!(info.chunks, 3, "{name}");
        assert_eq!(info.options.unwrap().max_chunk_size, Some(max_payload));
        assert_eq!(read_all(&store, name).await.unwrap(), bytes);
    }
}

#[tokio::test]
async fn a_read_hands_out_nothing_past_the_announced_size() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "x").await;
    let bytes = data(3_000, 5);
    let meta = ObjectMetadata {
        name: "grown".into(),
        chunk_size: Some(1_000),
        ..Default::default()
    };
    let info = store.put(meta, &mut bytes.as_slice()).await.unwrap();
    // Chunks the metadata does not count, stored after the object's own.
    for _ in 0..5 {
        js.publish(
            format!("$O.x.C.{}", info.nuid),
            Bytes::from(vec![7u8; 1_000]),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    }
    let mut object = store.get("grown").await.unwrap();
    let mut read = Vec::new();
    let mut buf = [0u8; 512];
    let error = loop {
        match object.read(&mut buf).await {
            Ok(0) => panic!("the read ended without an error after {} bytes", read.len()),
            Ok(n) => read.extend_from_slice(&buf[..n]),
            Err(error) => break error,
        }
    };
    assert_eq!(read_error_kind(&error), ReadErrorKind::SizeMismatch);
    // The object's own bytes come, and the first chunk past them fails the read.
    assert_eq!(read, bytes);
}

#[tokio::test]
async fn deleted_objects_are_gone_but_leave_a_marker() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "d").await;
    let bytes = data(200_000, 9);
    store.put("obj", &mut bytes.as_slice()).await.unwrap();
    store.delete("obj").await.unwrap();

    let error = store.get("obj").await.unwrap_err();
    assert_eq!(error.kind(), GetErrorKind::NotFound);
    let marker = store.info("obj").await.unwrap();
    assert!(marker.deleted);
    assert_eq!((marker.size, marker.chunks), (0, 0));
    // Only the marker is left in the stream.
    let stream = js.get_stream("OBJ_d").await.unwrap();
    assert_eq!(stream.cached_info().state.messages, 1);

    assert_eq!(
        store.delete("never").await.unwrap_err().kind(),
        DeleteErrorKind::NotFound
    );
    assert_eq!(
        store.info("never").await.unwrap_err().kind(),
        InfoErrorKind::NotFound
    );
    assert_eq!(
        store.get("never").await.unwrap_err().kind(),
        GetErrorKind::NotFound
    );
    assert_eq!(
        store.info("").await.unwrap_err().kind(),
        InfoErrorKind::InvalidName
    );
    assert_eq!(
        store.put("", &mut &b"x"[..]).await.unwrap_err().kind(),
        PutErrorKind::InvalidName
    );
}

#[tokio::test]
async fn list_yields_each_live_object_once() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "l").await;
    assert!(store.list().await.unwrap().next().await.is_none());

    for name in ["a", "b", "c"] {
        store.put(name, &mut name.as_bytes()).await.unwrap();
    }
    store.put("b", &mut &b"again"[..]).await.unwrap();
    store.delete("c").await.unwrap();
    let mut names: Vec<String> = store
        .list()
        .await
        .unwrap()
        .map_ok(|info| info.name)
        .try_collect()
        .await
        .unwrap();
    names.sort();
    assert_eq!(names, ["a", "b"]);
}

#[tokio::test]
async fn watch_sees_puts_updates_and_deletes() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "w").await;
    store.put("before", &mut &b"1"[..]).await.unwrap();

    let mut watch = store.watch().await.unwrap();
    let mut history = store.watch_with_history().await.unwrap();
    store.put("after", &mut &b"2"[..]).await.unwrap();
    // Seen before the delete: the delete's metadata rolls the put's up, and a consumer the
    // server had not yet sent it to (its deliveries trail the store) skips it.
    let seen = watch.next().await.unwrap().unwrap();
    assert_eq!((seen.name.as_str(), seen.deleted), ("after", false));
    store.delete("after").await.unwrap();
    let seen = watch.next().await.unwrap().unwrap();
    assert_eq!((seen.name.as_str(), seen.deleted), ("after", true));

    let seen = history.next().await.unwrap().unwrap();
    assert_eq!(seen.name, "before");
}

#[tokio::test]
async fn list_with_deleted_shows_deleted_objects_marked() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "ld").await;
    assert!(
        store
            .list_with_deleted()
            .await
            .unwrap()
            .next()
            .await
            .is_none()
    );
    store.put("a", &mut &b"1"[..]).await.unwrap();
    store.put("b", &mut &b"2"[..]).await.unwrap();
    store.delete("a").await.unwrap();

    let mut all: Vec<(String, bool)> = store
        .list_with_deleted()
        .await
        .unwrap()
        .map_ok(|info| (info.name, info.deleted))
        .try_collect()
        .await
        .unwrap();
    all.sort();
    assert_eq!(all, [("a".to_owned(), true), ("b".to_owned(), false)]);
    let live: Vec<String> = store
        .list()
        .await
        .unwrap()
        .map_ok(|info| info.name)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(live, ["b"]);
}

#[tokio::test]
async fn watch_options_choose_the_start_and_whether_deletes_show() {
    use rnats_jetstream::object_store::{Watch, WatchOptions};

    /// The next `count` changes a watch sees, as (name, deleted).
    async fn changes(watch: &mut Watch, count: usize) -> Vec<(String, bool)> {
        let mut seen = Vec::new();
        for _ in 0..count {
            let info = tokio::time::timeout(std::time::Duration::from_secs(20), watch.next())
                .await
                .expect("timed out waiting for a change")
                .expect("the watch ended")
                .unwrap();
            seen.push((info.name, info.deleted));
        }
        seen
    }
    let change = |name: &str, deleted| (name.to_owned(), deleted);

    let (_server, js) = jetstream().await;
    let store = bucket(&js, "wo").await;
    store.put("a", &mut &b"1"[..]).await.unwrap();
    store.put("b", &mut &b"2"[..]).await.unwrap();
    store.delete("a").await.unwrap();

    let start = |options| store.watch_with_options(options);
    let mut current = start(WatchOptions::new()).await.unwrap();
    let mut history = start(WatchOptions::new().include_history()).await.unwrap();
    let mut live = start(WatchOptions::new().ignore_deletes()).await.unwrap();
    let mut updates = start(WatchOptions::new().updates_only()).await.unwrap();
    let mut live_updates = start(WatchOptions::new().updates_only().ignore_deletes())
        .await
        .unwrap();
    // What each starts with, all in before anything changes: a later delete rolls up the
    // metadata of its object, and a watch the server had not sent it to yet would skip it.
    let before = [change("b", false), change("a", true)];
    assert_eq!(changes(&mut current, 2).await, before);
    assert_eq!(changes(&mut history, 2).await, before);
    assert_eq!(changes(&mut live, 1).await, [change("b", false)]);

    store.put("c", &mut &b"3"[..]).await.unwrap();
    store.delete("b").await.unwrap();
    store.put("d", &mut &b"4"[..]).await.unwrap();
    let after = [change("c", false), change("b", true), change("d", false)];
    assert_eq!(changes(&mut current, 3).await, after);
    assert_eq!(changes(&mut history, 3).await, after);
    assert_eq!(changes(&mut updates, 3).await, after);
    // The delete of b is left out: d follows c.
    let puts = [change("c", false), change("d", false)];
    assert_eq!(changes(&mut live, 2).await, puts);
    assert_eq!(changes(&mut live_updates, 2).await, puts);
}

#[tokio::test]
async fn metadata_is_updated_and_objects_renamed() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "u").await;
    let bytes = data(300_000, 10);
    store.put("draft", &mut bytes.as_slice()).await.unwrap();
    store.put("taken", &mut &b"x"[..]).await.unwrap();

    let updated = store
        .update_metadata(
            "draft",
            UpdateMetadata {
                name: "draft".into(),
                description: Some("described".into()),
                metadata: HashMap::from([("owner".to_string(), "me".to_string())]),
                headers: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.description.as_deref(), Some("described"));
    let info = store.info("draft").await.unwrap();
    assert_eq!(info.metadata["owner"], "me");

    let renamed = store
        .update_metadata(
            "draft",
            UpdateMetadata {
                name: "final".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(renamed.name, "final");
    assert_eq!(read_all(&store, "final").await.unwrap(), bytes);
    assert_eq!(
        store.info("draft").await.unwrap_err().kind(),
        InfoErrorKind::NotFound
    );

    let error = store
        .update_metadata(
            "final",
            UpdateMetadata {
                name: "taken".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), UpdateMetadataErrorKind::NameAlreadyInUse);
    let error = store
        .update_metadata("nothing", UpdateMetadata::default())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), UpdateMetadataErrorKind::NotFound);
}

#[tokio::test]
async fn links_lead_to_objects_here_and_in_other_buckets() {
    let (_server, js) = jetstream().await;
    let here = bucket(&js, "here").await;
    let there = bucket(&js, "there").await;
    let bytes = data(200_000, 11);
    let target = here.put("target", &mut bytes.as_slice()).await.unwrap();
    let remote = there.put("remote", &mut &b"far away"[..]).await.unwrap();

    let link = here.add_link("link", &target).await.unwrap();
    assert!(link.is_link());
    assert_eq!(read_all(&here, "link").await.unwrap(), bytes);
    // The object read is the target's, with its metadata.
    assert_eq!(here.get("link").await.unwrap().info().name, "target");

    here.add_link("to-there", &remote).await.unwrap();
    assert_eq!(read_all(&here, "to-there").await.unwrap(), b"far away");
    // A link through an `Object` handle, and replacing a link is fine.
    let object = there.get("remote").await.unwrap();
    here.add_link("link", &object).await.unwrap();
    assert_eq!(read_all(&here, "link").await.unwrap(), b"far away");

    here.add_bucket_link("everything-there", "there")
        .await
        .unwrap();
    let error = here.get("everything-there").await.unwrap_err();
    assert_eq!(error.kind(), GetErrorKind::BucketLink);

    let link_info = here.info("link").await.unwrap();
    let refusals = [
        (
            here.add_link("x", &link_info).await,
            AddLinkErrorKind::LinkToLink,
        ),
        (
            here.add_link("target", &remote).await,
            AddLinkErrorKind::AlreadyExists,
        ),
        (
            here.add_link("", &remote).await,
            AddLinkErrorKind::EmptyName,
        ),
        (
            here.add_bucket_link("", "there").await,
            AddLinkErrorKind::EmptyName,
        ),
    ];
    for (result, kind) in refusals {
        assert_eq!(result.unwrap_err().kind(), kind);
    }
    there.delete("remote").await.unwrap();
    let deleted = there.info("remote").await.unwrap();
    assert_eq!(
        here.add_link("y", &deleted).await.unwrap_err().kind(),
        AddLinkErrorKind::Deleted
    );
    // A link whose target is gone reads as not found.
    assert_eq!(
        here.get("to-there").await.unwrap_err().kind(),
        GetErrorKind::NotFound
    );
}

#[tokio::test]
async fn a_sealed_bucket_refuses_puts() {
    let (_server, js) = jetstream().await;
    let mut store = bucket(&js, "s").await;
    store.put("kept", &mut &b"still here"[..]).await.unwrap();
    store.seal().await.unwrap();
    assert!(store.status().await.unwrap().sealed);

    let error = store.put("new", &mut &b"x"[..]).await.unwrap_err();
    assert_eq!(error.kind(), PutErrorKind::PublishChunks);
    assert_eq!(
        server_error(&error).map(|e| e.error_code()),
        Some(ErrorCode::STREAM_SEALED)
    );
    assert_eq!(read_all(&store, "kept").await.unwrap(), b"still here");
}

#[tokio::test]
async fn a_full_bucket_refuses_the_put_and_keeps_no_partial_object() {
    let (_server, js) = jetstream().await;
    let store = js
        .create_object_store(Config {
            bucket: "full".into(),
            storage: StorageType::Memory,
            max_bytes: 100_000,
            ..Default::default()
        })
        .await
        .unwrap();
    let bytes = data(500_000, 12);
    let meta = ObjectMetadata {
        name: "too-big".into(),
        chunk_size: Some(10_000),
        ..Default::default()
    };
    let error = store.put(meta, &mut bytes.as_slice()).await.unwrap_err();
    assert_eq!(error.kind(), PutErrorKind::PublishChunks);
    assert!(server_error(&error).is_some(), "{error:?}");
    assert_eq!(
        store.info("too-big").await.unwrap_err().kind(),
        InfoErrorKind::NotFound
    );
    let stream = js.get_stream("OBJ_full").await.unwrap();
    assert_eq!(stream.cached_info().state.messages, 0);
}

#[tokio::test]
async fn progress_is_reported_chunk_by_chunk() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "p").await;
    let bytes = data(25_000, 13);
    let meta = ObjectMetadata {
        name: "obj".into(),
        chunk_size: Some(10_000),
        ..Default::default()
    };
    let mut put_steps = Vec::new();
    store
        .put_with_progress(meta, &mut bytes.as_slice(), |p: Progress| {
            put_steps.push((p.bytes, p.chunks))
        })
        .await
        .unwrap();
    assert_eq!(put_steps, [(10_000, 1), (20_000, 2), (25_000, 3)]);

    let get_steps = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&get_steps);
    let mut object = store
        .get("obj")
        .await
        .unwrap()
        .with_progress(move |p| seen.lock().unwrap().push((p.bytes, p.total)));
    let mut out = Vec::new();
    object.read_to_end(&mut out).await.unwrap();
    assert_eq!(
        *get_steps.lock().unwrap(),
        [
            (10_000, Some(25_000)),
            (20_000, Some(25_000)),
            (25_000, Some(25_000))
        ]
    );
}

#[tokio::test]
async fn a_bucket_without_direct_gets_is_read_from_the_leader() {
    let (_server, js) = jetstream().await;
    let store = bucket_without_direct_gets(&js).await;
    let bytes = data(150_000, 14);
    store.put("obj", &mut bytes.as_slice()).await.unwrap();
    assert_eq!(store.info("obj").await.unwrap().size, 150_000);
    assert_eq!(read_all(&store, "obj").await.unwrap(), bytes);
    assert_eq!(
        store.info("none").await.unwrap_err().kind(),
        InfoErrorKind::NotFound
    );
}

#[tokio::test]
async fn headers_are_stored_with_the_object() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "h").await;
    let mut headers = HeaderMap::new();
    headers.insert("Content-Type", "text/plain");
    headers.append("X-Tag", "a");
    headers.append("X-Tag", "b");
    let meta = ObjectMetadata {
        name: "doc.txt".into(),
        headers: Some(headers.clone()),
        ..Default::default()
    };
    store.put(meta, &mut &b"text"[..]).await.unwrap();
    let info = store.info("doc.txt").await.unwrap();
    assert_eq!(info.headers, Some(headers));
    // On the wire as every client writes headers: a name to a list of values.
    let stream = js.get_stream("OBJ_h").await.unwrap();
    let raw = stream
        .get_last_raw_message_by_subject(&meta_subject("h", "doc.txt"))
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&raw.payload).unwrap();
    assert_eq!(json["headers"]["X-Tag"], serde_json::json!(["a", "b"]));
}

#[tokio::test]
async fn an_object_dropped_mid_read_leaves_the_bucket_readable() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "half").await;
    let bytes = data(1 << 20, 15);
    store.put("obj", &mut bytes.as_slice()).await.unwrap();
    let mut object = store.get("obj").await.unwrap();
    let mut first = vec![0u8; 1000];
    object.read_exact(&mut first).await.unwrap();
    assert_eq!(first, bytes[..1000]);
    drop(object);
    assert_eq!(read_all(&store, "obj").await.unwrap(), bytes);
}

#[tokio::test]
async fn a_reader_deletes_its_consumer_when_done_or_dropped() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "tidy").await;
    let bytes = data(1 << 20, 16);
    store.put("obj", &mut bytes.as_slice()).await.unwrap();
    let mut deleted = js
        .client()
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.DELETED.OBJ_tidy.*")
        .await
        .unwrap();
    js.client().flush().await.unwrap();

    // A read to the end deletes the consumer it read through. (Counted rather than matched
    // to advisories one for one: a recreated consumer adds a deletion of its own.)
    assert_eq!(read_all(&store, "obj").await.unwrap(), bytes);
    until_no_consumers(&js, "OBJ_tidy", &mut deleted).await;

    // So does an object dropped halfway: the clean-up lives in the reader, not in `Object`,
    // which callers may take apart (`object.info`) as with async-nats.
    let mut object = store.get("obj").await.unwrap();
    let mut first = vec![0u8; 1000];
    object.read_exact(&mut first).await.unwrap();
    assert_eq!(consumer_names(&js, "OBJ_tidy").await.len(), 1);
    drop(object);
    until_no_consumers(&js, "OBJ_tidy", &mut deleted).await;
    let info: ObjectInfo = store.get("obj").await.unwrap().info;
    assert_eq!(info.size, bytes.len());
}

#[tokio::test]
async fn a_reader_deletes_the_consumer_that_replaced_its_first() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "renewed").await;
    let bytes = data(300_000, 17);
    let meta = ObjectMetadata {
        name: "obj".into(),
        chunk_size: Some(1_000),
        ..Default::default()
    };
    store.put(meta, &mut bytes.as_slice()).await.unwrap();
    let mut object = store.get("obj").await.unwrap();
    let mut first = vec![0u8; 1000];
    object.read_exact(&mut first).await.unwrap();
    let names = consumer_names(&js, "OBJ_renewed").await;
    let [name] = names.as_slice() else {
        panic!("one consumer expected, found {names:?}");
    };

    // Deleting the consumer mid-read makes the ordered stream go on through a new one (the
    // 300 chunks take several pull requests), which the reader deletes in its turn.
    let mut deleted = js
        .client()
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.DELETED.OBJ_renewed.*")
        .await
        .unwrap();
    js.client().flush().await.unwrap();
    let stream = js.get_stream("OBJ_renewed").await.unwrap();
    stream.delete_consumer(name).await.unwrap();
    // Chunks past the two pull requests the first consumer can have been sent.
    let mut middle = vec![0u8; 200_000];
    object.read_exact(&mut middle).await.unwrap();
    let now = consumer_names(&js, "OBJ_renewed").await;
    assert!(
        matches!(now.as_slice(), [replacement] if replacement != name),
        "one replacement of {name} expected, found {now:?}"
    );
    let mut rest = Vec::new();
    object.read_to_end(&mut rest).await.unwrap();
    assert_eq!([first, middle, rest].concat(), bytes);
    drop(object);
    until_no_consumers(&js, "OBJ_renewed", &mut deleted).await;
}

#[tokio::test]
async fn a_read_whose_start_times_out_fails_as_timed_out() {
    let (mut server, js) = jetstream().await;
    let store = bucket(&js, "slow").await;
    store.put("obj", &mut &b"some data"[..]).await.unwrap();
    let impatient = rnats_core::ConnectOptions::new()
        .request_timeout(Some(std::time::Duration::from_millis(300)))
        .connect(server.url())
        .await
        .unwrap();
    let mut object = rnats_jetstream::new(impatient)
        .get_object_store("slow")
        .await
        .unwrap()
        .get("obj")
        .await
        .unwrap();
    // With the server gone, the first read's consumer request gets no answer.
    server.kill();
    let mut buffer = [0u8; 4];
    let error = object.read(&mut buffer).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::TimedOut, "{error:?}");
    assert_eq!(read_error_kind(&error), ReadErrorKind::TimedOut);
}

#[tokio::test]
async fn whole_objects_go_up_and_down_as_bytes_and_files() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "whole").await;
    let bytes = data(300_000, 11);

    let info = store
        .put_bytes("blob", bytes::Bytes::from(bytes.clone()))
        .await
        .unwrap();
    assert_eq!((info.size, info.chunks), (300_000, 3));
    assert_eq!(store.get_bytes("blob").await.unwrap(), bytes);

    let dir = std::env::temp_dir().join(format!("rnats-obj-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (source, target) = (dir.join("source.bin"), dir.join("target.bin"));
    std::fs::write(&source, &bytes[..123_457]).unwrap();
    let info = store.put_file("file", &source).await.unwrap();
    assert_eq!(info.digest, Some(digest_of(&bytes[..123_457])));
    let got = store.get_file("file", &target).await.unwrap();
    assert_eq!(got.size, 123_457);
    assert_eq!(std::fs::read(&target).unwrap(), &bytes[..123_457]);

    let missing = store
        .put_file("nope", dir.join("absent"))
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), PutErrorKind::ReadChunks);
    std::fs::remove_dir_all(&dir).unwrap();

    // A digest that does not match fails the whole read, with the reason inside.
    let mut tampered = store.info("blob").await.unwrap();
    tampered.digest = Some(digest_of(b"other"));
    publish_raw_meta(&js, &tampered).await;
    let error = store.get_bytes("blob").await.unwrap_err();
    assert_eq!(error.kind(), GetErrorKind::Other);
    let io = error.downcast_source::<std::io::Error>().unwrap();
    assert_eq!(read_error_kind(io), ReadErrorKind::DigestMismatch);
}

#[tokio::test]
async fn bucket_metadata_and_fast_ingest_show_in_status_and_listings() {
    let (_server, js) = jetstream().await;
    let config = Config {
        bucket: "tagged".into(),
        storage: StorageType::Memory,
        metadata: HashMap::from([("team".to_string(), "ops".to_string())]),
        fast_ingest: true,
        ..Default::default()
    };
    let store = js.create_object_store(config.clone()).await.unwrap();
    let status = store.status().await.unwrap();
    assert_eq!(status.metadata["team"], "ops");
    assert!(status.fast_ingest);
    assert!(status.info.config.allow_batch_publish);
    bucket(&js, "plain").await;
    let listed: Vec<_> = js.object_stores().try_collect().await.unwrap();
    let tagged = listed.iter().find(|s| s.bucket == "tagged").unwrap();
    assert_eq!(tagged.metadata["team"], "ops");
    let plain = listed.iter().find(|s| s.bucket == "plain").unwrap();
    assert!(!plain.metadata.contains_key("team") && !plain.fast_ingest);

    let store = js
        .update_object_store(Config {
            metadata: HashMap::from([("team".to_string(), "dev".to_string())]),
            fast_ingest: false,
            ..config
        })
        .await
        .unwrap();
    let status = store.status().await.unwrap();
    assert_eq!(status.metadata["team"], "dev");
    assert!(!status.fast_ingest);
}

/// The reply subjects of the messages published to `subject` until `count` came.
async fn replies_seen(mut sub: rnats_core::Subscriber, count: usize) -> Vec<String> {
    let mut replies = Vec::new();
    while replies.len() < count {
        let message = sub.next().await.unwrap();
        replies.push(message.reply.map(|r| r.to_string()).unwrap_or_default());
    }
    replies
}

#[tokio::test]
async fn a_fast_ingest_bucket_puts_an_object_as_one_batch_and_others_do_not() {
    let (_server, js) = jetstream().await;
    let store = js
        .create_object_store(Config {
            bucket: "fast".into(),
            storage: StorageType::Memory,
            fast_ingest: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let client = js.client();
    let sub = client.subscribe("$O.fast.>").await.unwrap();
    client.flush().await.unwrap();
    let bytes = data(1_000_000, 21);
    let meta = || ObjectMetadata {
        name: "big".into(),
        chunk_size: Some(64 * 1024),
        ..Default::default()
    };
    let mut steps = Vec::new();
    let info = store
        .put_with_progress(meta(), &mut bytes.as_slice(), |p: Progress| {
            steps.push((p.bytes, p.chunks))
        })
        .await
        .unwrap();
    assert_eq!((info.size, info.chunks), (1_000_000, 16));
    // Every chunk and the metadata went out as batch messages (ADR-50's `$FI` replies).
    let replies = replies_seen(sub, 17).await;
    assert!(replies.iter().all(|r| r.ends_with(".$FI")), "{replies:?}");
    assert!(
        replies[16].ends_with(".17.2.$FI"),
        "committed by the metadata"
    );
    assert_eq!(steps.len(), 16);
    assert!(
        steps
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 + 1 == w[1].1)
    );
    assert_eq!(steps.last(), Some(&(1_000_000, 16)));
    assert_eq!(read_all(&store, "big").await.unwrap(), bytes);

    // A replacement leaves only its own chunks; an empty object needs no batch.
    let replacement = data(200_000, 22);
    store
        .put(meta(), &mut replacement.as_slice())
        .await
        .unwrap();
    store.put("empty", &mut &b""[..]).await.unwrap();
    assert_eq!(read_all(&store, "big").await.unwrap(), replacement);
    assert!(read_all(&store, "empty").await.unwrap().is_empty());
    let stream = js.get_stream("OBJ_fast").await.unwrap();
    assert_eq!(stream.cached_info().state.messages, 4 + 2);

    // A bucket that does not allow batches gets the pipelined upload.
    let plain = bucket(&js, "plain").await;
    let sub = client.subscribe("$O.plain.C.>").await.unwrap();
    client.flush().await.unwrap();
    plain.put(meta(), &mut bytes.as_slice()).await.unwrap();
    let replies = replies_seen(sub, 16).await;
    assert!(replies.iter().all(|r| !r.ends_with(".$FI")), "{replies:?}");
}

#[tokio::test]
async fn a_full_fast_ingest_bucket_refuses_the_put_and_keeps_no_partial_object() {
    let (_server, js) = jetstream().await;
    let store = js
        .create_object_store(Config {
            bucket: "full".into(),
            storage: StorageType::Memory,
            max_bytes: 100_000,
            fast_ingest: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let bytes = data(500_000, 23);
    let meta = ObjectMetadata {
        name: "too-big".into(),
        chunk_size: Some(10_000),
        ..Default::default()
    };
    let error = store.put(meta, &mut bytes.as_slice()).await.unwrap_err();
    assert_eq!(error.kind(), PutErrorKind::PublishChunks, "{error:?}");
    // The refusal (10077), or the server's word that the batch it ended is unknown, when
    // more chunks reach it first.
    assert!(server_error(&error).is_some(), "{error:?}");
    assert_eq!(
        store.info("too-big").await.unwrap_err().kind(),
        InfoErrorKind::NotFound
    );
    let stream = js.get_stream("OBJ_full").await.unwrap();
    assert_eq!(stream.cached_info().state.messages, 0);
}

/// Objects put again by two other connections while listings run: each listing has every
/// object, once. An object put again just as a listing's consumer is made lost its listed
/// metadata before delivery while the server counted the new one as listed (3 of 40
/// listings left one out before a listing that came short was read again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_leaves_no_object_out_while_they_are_put_again() {
    let (server, js) = jetstream().await;
    let store = bucket(&js, "again").await;
    const OBJECTS: usize = 200;
    for i in 0..OBJECTS {
        store
            .put(format!("o{i}").as_str(), &mut "x".as_bytes())
            .await
            .unwrap();
    }
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut writers = Vec::new();
    for half in 0..2 {
        let client = rnats_core::connect(server.url()).await.unwrap();
        let writer = rnats_jetstream::new(client)
            .get_object_store("again")
            .await
            .unwrap();
        let stopped = stopped.clone();
        writers.push(tokio::spawn(async move {
            loop {
                for i in (half..OBJECTS).step_by(2) {
                    if *stopped.borrow() {
                        return;
                    }
                    let name = format!("o{i}");
                    writer
                        .put(name.as_str(), &mut "y".as_bytes())
                        .await
                        .unwrap();
                }
            }
        }));
    }
    for listing in 0..40 {
        let names: Vec<String> = store
            .list()
            .await
            .unwrap()
            .map(|info| info.unwrap().name)
            .collect()
            .await;
        let unique: std::collections::HashSet<&String> = names.iter().collect();
        assert_eq!(
            unique.len(),
            names.len(),
            "listing {listing}: an object twice"
        );
        assert_eq!(
            names.len(),
            OBJECTS,
            "listing {listing}: an object left out"
        );
    }
    stop.send(true).unwrap();
    for writer in writers {
        writer.await.unwrap();
    }
}
