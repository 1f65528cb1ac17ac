//! Reading part of an Object Store object (`ObjectStore::get_range`) against a real
//! nats-server with JetStream: exact bytes for ranges anywhere in the object, the errors of
//! ranges past the end, links, chunks of uneven sizes interleaved with another object's, a
//! bucket without direct gets, consumers cleaned up, and far fewer bytes received than the
//! whole object for a range near its end.
#![cfg(feature = "object-store")]
#![allow(clippy::unwrap_used, missing_docs)]

mod consumers;
mod objects;

use std::collections::HashMap;
use std::ops::RangeBounds;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use base64::Engine;
use bytes::Bytes;
use rnats_core::HeaderMap;
use rnats_jetstream::Context;
use rnats_jetstream::object_store::{
    GetErrorKind, ObjectInfo, ObjectMetadata, ObjectOptions, ObjectStore, Progress,
    RangeNotSatisfiable, ReadError, ReadErrorKind,
};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;

use consumers::until_no_consumers;
use objects::{bucket, bucket_without_direct_gets, jetstream};

const CHUNK: usize = 64 * 1024;

/// `len` bytes that do not repeat within any range read here: each 8-byte word is its own
/// offset mixed with `seed`, so a slice read from the wrong place cannot pass for the right
/// one.
fn data(len: usize, seed: u64) -> Vec<u8> {
    (0..len.div_ceil(8) as u64)
        .flat_map(|word| {
            let mixed = (word ^ seed.rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            mixed.to_le_bytes()
        })
        .take(len)
        .collect()
}

/// Puts `bytes` as `name` in chunks of [`CHUNK`] bytes.
async fn put(store: &ObjectStore, name: &str, bytes: &[u8]) -> ObjectInfo {
    let meta = ObjectMetadata {
        name: name.to_owned(),
        chunk_size: Some(CHUNK),
        ..Default::default()
    };
    store.put(meta, &mut &bytes[..]).await.unwrap()
}

async fn read_range(
    store: &ObjectStore,
    name: &str,
    range: impl RangeBounds<u64> + Send,
) -> std::io::Result<Vec<u8>> {
    let mut object = store.get_range(name, range).await.unwrap();
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

fn in_bytes(js: &Context) -> u64 {
    js.client().statistics().in_bytes.load(Ordering::Relaxed)
}

#[tokio::test]
async fn ranges_read_exactly_the_bytes_asked_for() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "ranges").await;
    // 3 MiB and a bit: 49 chunks, the last one short.
    let bytes = data(3 * 1024 * 1024 + 12_345, 1);
    let info = put(&store, "obj", &bytes).await;
    assert_eq!(info.chunks, 49);
    let size = bytes.len() as u64;
    let c = CHUNK as u64;

    let ranges: Vec<(u64, u64)> = vec![
        (100, 200),                 // inside the first chunk
        (10 * c + 7, 10 * c + 900), // inside a chunk in the middle
        (c - 10, c + 10),           // across one boundary
        (3 * c - 1, 7 * c + 1),     // across several
        (5 * c, 6 * c),             // exactly one chunk
        (size - 1000, size),        // the last bytes
        (size - 1, size),           // the last byte
        (48 * c, size),             // the short last chunk
        (0, 1),                     // the first byte
        (0, size),                  // everything
    ];
    for (start, end) in ranges {
        let read = read_range(&store, "obj", start..end).await.unwrap();
        assert!(
            read == bytes[start as usize..end as usize],
            "{start}..{end}: {} bytes read",
            read.len()
        );
    }
    // Every form of range bound.
    assert_eq!(read_range(&store, "obj", ..).await.unwrap(), bytes);
    assert_eq!(
        read_range(&store, "obj", size - 5..).await.unwrap(),
        bytes[bytes.len() - 5..]
    );
    assert_eq!(read_range(&store, "obj", ..=0).await.unwrap(), bytes[..1]);
    assert_eq!(
        read_range(&store, "obj", c..=c + 1).await.unwrap(),
        bytes[CHUNK..CHUNK + 2]
    );
    // Empty ranges read nothing, at the end too.
    assert!(
        read_range(&store, "obj", 500..500)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(read_range(&store, "obj", size..).await.unwrap().is_empty());

    // The metadata is the whole object's; progress counts the range.
    let seen = Arc::new(Mutex::new(Vec::<Progress>::new()));
    let record = seen.clone();
    let mut object = store
        .get_range("obj", c - 10..2 * c + 10)
        .await
        .unwrap()
        .with_progress(move |p| record.lock().unwrap().push(p));
    assert_eq!(object.info().size as u64, size);
    let mut out = Vec::new();
    object.read_to_end(&mut out).await.unwrap();
    assert_eq!(out, bytes[CHUNK - 10..2 * CHUNK + 10]);
    let seen = seen.lock().unwrap();
    let bytes_seen: Vec<u64> = seen.iter().map(|p| p.bytes).collect();
    assert_eq!(bytes_seen, [10, 10 + c, 20 + c]);
    assert!(seen.iter().all(|p| p.total == Some(c + 20)));
}

#[tokio::test]
async fn a_range_near_the_end_receives_a_small_part_of_the_object() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "thrifty").await;
    let bytes = data(3 * 1024 * 1024, 2);
    put(&store, "obj", &bytes).await;
    let size = bytes.len() as u64;

    let before = in_bytes(&js);
    let tail = read_range(&store, "obj", size - 1000..).await.unwrap();
    let for_range = in_bytes(&js) - before;
    assert_eq!(tail, bytes[bytes.len() - 1000..]);

    let before = in_bytes(&js);
    let mut whole = Vec::new();
    store
        .get("obj")
        .await
        .unwrap()
        .read_to_end(&mut whole)
        .await
        .unwrap();
    let for_whole = in_bytes(&js) - before;
    assert_eq!(whole, bytes);

    println!("received for the last 1000 bytes: {for_range} bytes; for the whole: {for_whole}");
    // The chunk holding the range, the other 47 chunks' headers, and the API replies.
    assert!(for_range < CHUNK as u64 + 32 * 1024, "{for_range}");
    assert!(for_whole > size, "{for_whole}");
    assert!(for_range * 20 < for_whole, "{for_range} vs {for_whole}");
}

#[tokio::test]
async fn a_range_past_the_end_is_refused_with_the_size() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "bounds").await;
    let bytes = data(100_000, 3);
    put(&store, "obj", &bytes).await;

    #[allow(clippy::reversed_empty_ranges)]
    let backwards = 20..10;
    let refusals = [
        (
            store.get_range("obj", 99_000..100_001).await,
            99_000,
            100_001,
        ),
        (store.get_range("obj", 100_001..).await, 100_001, 100_000),
        (store.get_range("obj", ..=100_000).await, 0, 100_001),
        (store.get_range("obj", backwards).await, 20, 10),
    ];
    for (result, start, end) in refusals {
        let error = result.unwrap_err();
        assert_eq!(error.kind(), GetErrorKind::Other);
        let range = error.downcast_source::<RangeNotSatisfiable>().unwrap();
        assert_eq!(
            *range,
            RangeNotSatisfiable {
                start,
                end,
                size: 100_000
            }
        );
        assert!(error.to_string().contains("100000 bytes"), "{error}");
    }
    // A missing or deleted object is not found, as with `get`.
    let missing = store.get_range("none", 0..1).await.unwrap_err();
    assert_eq!(missing.kind(), GetErrorKind::NotFound);
    store.delete("obj").await.unwrap();
    let deleted = store.get_range("obj", 0..1).await.unwrap_err();
    assert_eq!(deleted.kind(), GetErrorKind::NotFound);
    // An empty object has only the empty range.
    store.put("empty", &mut &b""[..]).await.unwrap();
    assert!(read_range(&store, "empty", ..).await.unwrap().is_empty());
    let error = store.get_range("empty", 0..1).await.unwrap_err();
    assert!(error.downcast_source::<RangeNotSatisfiable>().is_some());
}

#[tokio::test]
async fn a_linked_object_s_range_is_the_target_s() {
    let (_server, js) = jetstream().await;
    let here = bucket(&js, "here").await;
    let there = bucket(&js, "there").await;
    let bytes = data(500_000, 4);
    let target = there.put("target", &mut bytes.as_slice()).await.unwrap();
    here.add_link("link", &target).await.unwrap();
    there.add_link("near", &target).await.unwrap();

    let far = here.get_range("link", 200_000..300_000).await.unwrap();
    assert_eq!(far.info().name, "target");
    assert_eq!(far.info().bucket, "there");
    for (store, name) in [(&here, "link"), (&there, "near")] {
        let read = read_range(store, name, 131_000..132_000).await.unwrap();
        assert_eq!(read, bytes[131_000..132_000], "{name}");
    }
    here.add_bucket_link("all", "there").await.unwrap();
    let error = here.get_range("all", 0..1).await.unwrap_err();
    assert_eq!(error.kind(), GetErrorKind::BucketLink);
}

/// Stores `info` on its meta subject as another client would.
async fn publish_raw_meta(js: &Context, info: &ObjectInfo) {
    let name = base64::engine::general_purpose::URL_SAFE.encode(&info.name);
    let mut headers = HeaderMap::new();
    headers.insert("Nats-Rollup", "sub");
    let payload = Bytes::from(serde_json::to_vec(info).unwrap());
    js.publish_with_headers(format!("$O.{}.M.{name}", info.bucket), headers, payload)
        .await
        .unwrap()
        .await
        .unwrap();
}

#[tokio::test]
async fn ranges_of_uneven_interleaved_chunks_are_exact() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "uneven").await;
    // As nats.go stores an object read from a socket: a chunk per read, short ones anywhere,
    // and here another object's chunks between them, as two puts at once leave them.
    let sizes = [1000, 300, 1000, 1, 999, 1000, 640, 1000, 17];
    let bytes = data(sizes.iter().sum(), 5);
    let (nuid, other) = ("UNEVENOBJECT", "OTHEROBJECT");
    let mut at = 0;
    for (i, size) in sizes.iter().enumerate() {
        let chunk = Bytes::copy_from_slice(&bytes[at..at + size]);
        at += size;
        js.publish(format!("$O.uneven.C.{nuid}"), chunk)
            .await
            .unwrap()
            .await
            .unwrap();
        if i % 3 != 2 {
            let noise = Bytes::from(data(1000, i as u64 + 100));
            js.publish(format!("$O.uneven.C.{other}"), noise)
                .await
                .unwrap()
                .await
                .unwrap();
        }
    }
    let info = ObjectInfo {
        name: "obj".into(),
        description: None,
        metadata: HashMap::new(),
        headers: None,
        options: Some(ObjectOptions {
            link: None,
            max_chunk_size: Some(1000),
        }),
        bucket: "uneven".into(),
        nuid: nuid.into(),
        size: bytes.len(),
        chunks: sizes.len(),
        modified: None,
        digest: Some(format!(
            "SHA-256={}",
            base64::engine::general_purpose::URL_SAFE.encode(Sha256::digest(&bytes))
        )),
        deleted: false,
    };
    publish_raw_meta(&js, &info).await;
    let mut whole = Vec::new();
    let mut object = store.get("obj").await.unwrap();
    object.read_to_end(&mut whole).await.unwrap();
    assert_eq!(whole, bytes);

    // Every range between chunk boundaries, a byte either side of them, and the ends.
    let mut offsets = vec![0, 1, 500];
    let mut boundary = 0;
    for size in sizes {
        boundary += size;
        offsets.extend([boundary - 1, boundary, boundary + 1]);
    }
    offsets.retain(|&offset| offset <= bytes.len());
    offsets.sort_unstable();
    offsets.dedup();
    for &start in &offsets {
        for &end in offsets.iter().filter(|&&end| end >= start) {
            let read = read_range(&store, "obj", start as u64..end as u64)
                .await
                .unwrap();
            assert!(read == bytes[start..end], "{start}..{end}");
        }
    }
}

#[tokio::test]
async fn a_range_with_a_chunk_gone_fails_the_read() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "holes").await;
    let bytes = data(10 * CHUNK, 6);
    put(&store, "obj", &bytes).await;
    // The fourth chunk (stream sequence 4) goes.
    let stream = js.get_stream("OBJ_holes").await.unwrap();
    stream.delete_message(4).await.unwrap();

    let error = read_range(&store, "obj", 8 * CHUNK as u64..)
        .await
        .unwrap_err();
    assert_eq!(read_error_kind(&error), ReadErrorKind::ChunksMissing);
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
}

#[tokio::test]
async fn a_bucket_without_direct_gets_serves_ranges_from_the_leader() {
    let (_server, js) = jetstream().await;
    let store = bucket_without_direct_gets(&js).await;
    let bytes = data(5 * CHUNK + 77, 7);
    put(&store, "obj", &bytes).await;
    let (start, end) = (2 * CHUNK - 3, 4 * CHUNK + 3);
    let read = read_range(&store, "obj", start as u64..end as u64)
        .await
        .unwrap();
    assert_eq!(read, bytes[start..end]);
}

#[tokio::test]
async fn a_range_read_leaves_no_consumer_behind() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "tidy").await;
    let bytes = data(20 * CHUNK, 8);
    put(&store, "obj", &bytes).await;
    let mut deleted = js
        .client()
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.DELETED.OBJ_tidy.*")
        .await
        .unwrap();
    js.client().flush().await.unwrap();

    // Read to the end: the locator is gone once it found the range's last chunk.
    let read = read_range(&store, "obj", 3 * CHUNK as u64..5 * CHUNK as u64)
        .await
        .unwrap();
    assert_eq!(read, bytes[3 * CHUNK..5 * CHUNK]);
    until_no_consumers(&js, "OBJ_tidy", &mut deleted).await;

    // Dropped after the first bytes of a long range.
    let mut object = store.get_range("obj", 100..).await.unwrap();
    let mut first = vec![0u8; 1000];
    object.read_exact(&mut first).await.unwrap();
    assert_eq!(first, bytes[100..1100]);
    drop(object);
    until_no_consumers(&js, "OBJ_tidy", &mut deleted).await;
    // And the object still reads whole.
    let mut whole = Vec::new();
    let mut object = store.get("obj").await.unwrap();
    object.read_to_end(&mut whole).await.unwrap();
    assert_eq!(whole, bytes);
}
