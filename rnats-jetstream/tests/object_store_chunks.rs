//! An object's data as a stream of its chunks (`Object::into_chunks`, an rnats addition)
//! against a real nats-server: each chunk whole and in order, the digest checked at the end
//! (a tampered chunk or a wrong digest is an error item in place of the last chunk), ranges,
//! and a stream taken over from a reader part way through.
#![cfg(feature = "object-store")]
#![allow(clippy::unwrap_used, missing_docs)]

mod objects;

use base64::Engine;
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FusedStream;
use objects::{bucket, data, jetstream};
use rnats_core::HeaderMap;
use rnats_jetstream::object_store::{
    Chunks, ObjectInfo, ObjectMetadata, ObjectStore, ReadError, ReadErrorKind,
};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;

/// Puts `bytes` as `name` in chunks of `chunk_size`.
async fn put(store: &ObjectStore, name: &str, bytes: &[u8], chunk_size: usize) -> ObjectInfo {
    let meta = ObjectMetadata {
        name: name.into(),
        chunk_size: Some(chunk_size),
        ..Default::default()
    };
    store.put(meta, &mut &bytes[..]).await.unwrap()
}

/// Every item of `chunks` to its end.
async fn items(chunks: Chunks) -> Vec<Result<Bytes, ReadError>> {
    chunks.collect().await
}

#[tokio::test]
async fn an_object_comes_as_its_chunks_whole_and_in_order() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "c").await;
    let bytes = data(10_500, 1);
    put(&store, "obj", &bytes, 1_000).await;

    let chunks = store.get("obj").await.unwrap().into_chunks();
    assert_eq!(chunks.info().chunks, 11);
    let chunks: Vec<Bytes> = items(chunks)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let sizes: Vec<usize> = chunks.iter().map(Bytes::len).collect();
    assert_eq!(sizes, [[1_000; 10].as_slice(), &[500]].concat());
    assert_eq!(chunks.concat(), bytes);

    // An empty object is a stream that ends at once.
    store.put("empty", &mut &b""[..]).await.unwrap();
    let mut chunks = store.get("empty").await.unwrap().into_chunks();
    assert!(chunks.next().await.is_none());
    assert!(chunks.is_terminated());
}

#[tokio::test]
async fn a_tampered_chunk_is_an_error_item_in_place_of_the_last() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "t").await;
    let bytes = data(4_000, 2);
    let info = put(&store, "obj", &bytes, 1_000).await;
    // Replace the first chunk by one of the same size (it now comes last).
    let subject = format!("$O.t.C.{}", info.nuid);
    let stream = js.get_stream("OBJ_t").await.unwrap();
    let first = stream.direct_get_first_for_subject(&subject).await.unwrap();
    assert!(stream.delete_message(first.sequence).await.unwrap());
    js.publish(subject, Bytes::from(vec![0u8; 1_000]))
        .await
        .unwrap()
        .await
        .unwrap();

    let mut chunks = store.get("obj").await.unwrap().into_chunks();
    let mut good = Vec::new();
    let error = loop {
        match chunks.next().await.unwrap() {
            Ok(chunk) => good.push(chunk),
            Err(error) => break error,
        }
    };
    assert_eq!(error.kind(), ReadErrorKind::DigestMismatch);
    // The forged chunk was never handed out, and the stream ends after its error.
    assert_eq!(good.concat(), bytes[1_000..]);
    assert!(chunks.next().await.is_none());
    assert!(chunks.is_terminated());
}

#[tokio::test]
async fn a_digest_that_does_not_match_is_the_last_item() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "d").await;
    let bytes = data(3_000, 3);
    let mut info = put(&store, "obj", &bytes, 1_000).await;
    // Metadata stored again, as another client (or an attacker) could, with another digest.
    let other = Sha256::digest(b"something else");
    info.digest = Some(format!(
        "SHA-256={}",
        base64::engine::general_purpose::URL_SAFE.encode(other)
    ));
    let mut headers = HeaderMap::new();
    headers.insert("Nats-Rollup", "sub");
    let name = base64::engine::general_purpose::URL_SAFE.encode("obj");
    let payload = Bytes::from(serde_json::to_vec(&info).unwrap());
    js.publish_with_headers(format!("$O.d.M.{name}"), headers, payload)
        .await
        .unwrap()
        .await
        .unwrap();

    let items = items(store.get("obj").await.unwrap().into_chunks()).await;
    let kinds: Vec<Option<ReadErrorKind>> = items
        .iter()
        .map(|item| item.as_ref().err().map(ReadError::kind))
        .collect();
    assert_eq!(
        kinds,
        [None, None, Some(ReadErrorKind::DigestMismatch)],
        "two chunks, then the error in place of the third"
    );
}

#[tokio::test]
async fn a_range_comes_as_the_parts_of_the_chunks_that_hold_it() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "r").await;
    let bytes = data(5_000, 4);
    put(&store, "obj", &bytes, 1_000).await;

    let range = store.get_range("obj", 1_500..3_200).await.unwrap();
    let parts: Vec<Bytes> = items(range.into_chunks())
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let sizes: Vec<usize> = parts.iter().map(Bytes::len).collect();
    assert_eq!(sizes, [500, 1_000, 200]);
    assert_eq!(parts.concat(), bytes[1_500..3_200]);
}

#[tokio::test]
async fn a_stream_goes_on_where_a_read_stopped() {
    let (_server, js) = jetstream().await;
    let store = bucket(&js, "p").await;
    let bytes = data(3_000, 5);
    put(&store, "obj", &bytes, 1_000).await;

    let mut object = store.get("obj").await.unwrap();
    let mut start = [0u8; 100];
    object.read_exact(&mut start).await.unwrap();
    let rest: Vec<Bytes> = items(object.into_chunks())
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    // What the read left of the first chunk, then the others whole; the digest held.
    let sizes: Vec<usize> = rest.iter().map(Bytes::len).collect();
    assert_eq!(sizes, [900, 1_000, 1_000]);
    assert_eq!([&start[..], &rest.concat()].concat(), bytes);
}
