//! Blocking Object Store (`rnats_jetstream::blocking::ObjectStore`) against a real
//! nats-server, with no async runtime: objects of several chunks, replacing and deleting
//! them (their chunks purged), listings, links, watches, metadata updates, sealing, a
//! digest that does not match, and agreement with the async store on the same bucket.
#![cfg(feature = "object-store")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashSet;
use std::io::Read;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use bytes::Bytes;
use rnats_core::header::{HeaderMap, NATS_ROLLUP};
use rnats_jetstream::ErrorCode;
use rnats_jetstream::blocking::{self, Context, ObjectStore};
use rnats_jetstream::object_store::{
    AddLinkErrorKind, Config, DeleteErrorKind, GetErrorKind, InfoErrorKind, ObjectMetadata,
    ObjectStoreErrorKind, PutErrorKind, ReadError, ReadErrorKind, UpdateMetadata,
};
use rnats_test_server::NatsServer;
use sha2::{Digest, Sha256};

/// How long any single wait in these tests may take before the test fails.
const WAIT: Duration = Duration::from_secs(10);

fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::with_jetstream();
    let client = rnats_core::blocking::connect(server.url()).unwrap();
    let mut context = blocking::new(client);
    context.set_timeout(WAIT);
    (server, context)
}

fn bucket(js: &Context, name: &str) -> ObjectStore {
    js.create_object_store(Config {
        bucket: name.to_owned(),
        ..Default::default()
    })
    .unwrap()
}

/// `len` bytes that differ from chunk to chunk, so a chunk out of place changes the data.
fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

fn digest(data: &[u8]) -> String {
    format!("SHA-256={}", URL_SAFE.encode(Sha256::digest(data)))
}

fn with_chunk_size(name: &str, chunk_size: usize) -> ObjectMetadata {
    ObjectMetadata {
        name: name.to_owned(),
        chunk_size: Some(chunk_size),
        ..Default::default()
    }
}

/// The messages the bucket's stream holds: chunks and metadata.
fn stored_messages(store: &ObjectStore) -> u64 {
    store.stream().get_info().unwrap().state.messages
}

/// A reader that hands out at most 100 bytes a call, as a pipe or socket may.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.0.len()).min(100);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn an_object_of_several_chunks_round_trips() {
    let (_server, js) = jetstream();
    let store = bucket(&js, "files");
    let bytes = data(10 * 1024 + 17);
    let info = store
        .put(with_chunk_size("a/b.bin", 1024), &mut Trickle(&bytes))
        .unwrap();
    // Full chunks however little each read returned, and the last one short.
    assert_eq!((info.size, info.chunks), (bytes.len(), 11));
    assert_eq!(info.digest.as_deref(), Some(digest(&bytes).as_str()));
    assert_eq!((info.bucket.as_str(), info.deleted), ("files", false));
    assert_eq!(stored_messages(&store), 12, "11 chunks and the metadata");

    let stored = store.info("a/b.bin").unwrap();
    assert_eq!(
        (stored.size, stored.chunks, stored.digest, stored.nuid),
        (
            info.size,
            info.chunks,
            info.digest.clone(),
            info.nuid.clone()
        )
    );
    assert_eq!(
        stored.options.unwrap().max_chunk_size,
        Some(1024),
        "the chunk size is kept"
    );

    // Read in small pieces: the bytes are exact.
    let mut object = store.get("a/b.bin").unwrap();
    assert_eq!(object.info().size, bytes.len());
    let mut read = Vec::new();
    let mut piece = [0u8; 333];
    loop {
        let n = object.read(&mut piece).unwrap();
        if n == 0 {
            break;
        }
        read.extend_from_slice(&piece[..n]);
    }
    assert_eq!(read, bytes);
    assert_eq!(object.read(&mut piece).unwrap(), 0, "the end stays the end");
    assert_eq!(store.get_bytes("a/b.bin").unwrap(), bytes);
    // Each read deleted the consumer it read through.
    assert_eq!(store.stream().consumer_names().count(), 0);
    // So does a reader dropped half-way, without waiting for the server in its drop: its
    // consumer is gone once the server has taken the request.
    let mut half = store.get("a/b.bin").unwrap();
    half.read_exact(&mut piece).unwrap();
    assert_eq!(store.stream().consumer_names().count(), 1);
    drop(half);
    let deadline = Instant::now() + Duration::from_secs(20);
    while store.stream().consumer_names().count() != 0 {
        assert!(
            Instant::now() < deadline,
            "the dropped reader's consumer stays"
        );
    }

    // More chunks than the put keeps unacked at once (256): the window moves on.
    let many = data(300 * 64);
    let info = store
        .put_bytes(with_chunk_size("many", 64), many.clone().into())
        .unwrap();
    assert_eq!(info.chunks, 300);
    assert_eq!(store.get_bytes("many").unwrap(), many);

    // An empty object has no chunks and reads as nothing.
    let empty = store.put_bytes("empty", Bytes::new()).unwrap();
    assert_eq!((empty.size, empty.chunks), (0, 0));
    assert_eq!(empty.digest.as_deref(), Some(digest(b"").as_str()));
    assert!(store.get_bytes("empty").unwrap().is_empty());

    // Through files, with the default chunk size: more than 128 KiB is two chunks.
    let dir = tempfile::tempdir().unwrap();
    let (source, target) = (dir.path().join("in"), dir.path().join("out"));
    let large = data(128 * 1024 + 1);
    std::fs::write(&source, &large).unwrap();
    let info = store.put_file("large", &source).unwrap();
    assert_eq!((info.size, info.chunks), (large.len(), 2));
    assert_eq!(store.get_file("large", &target).unwrap().nuid, info.nuid);
    assert_eq!(std::fs::read(&target).unwrap(), large);
    let missing = store
        .put_file("nothing", dir.path().join("absent"))
        .unwrap_err();
    assert_eq!(missing.kind(), PutErrorKind::ReadChunks);
    let invalid = store.put_bytes("", "x".into()).unwrap_err();
    assert_eq!(invalid.kind(), PutErrorKind::InvalidName);
}

#[test]
fn a_large_object_streams_through_with_flow_control() {
    let (_server, js) = jetstream();
    let store = bucket(&js, "large");
    // 48 chunks of 128 KiB: more than a push consumer sends before it asks for flow control.
    let bytes = data(6 * 1024 * 1024);
    let info = store.put_bytes("video", bytes.clone().into()).unwrap();
    assert_eq!(info.chunks, 48);
    let mut object = store.get("video").unwrap();
    let mut hasher = Sha256::new();
    let copied = std::io::copy(&mut object, &mut HashWriter(&mut hasher)).unwrap();
    assert_eq!(copied, bytes.len() as u64);
    assert_eq!(
        format!("SHA-256={}", URL_SAFE.encode(hasher.finalize())),
        digest(&bytes)
    );
}

/// Hashes what is written to it.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The bytes `get_range` reads of `name` in `range`.
fn read_range(
    store: &ObjectStore,
    name: &str,
    range: impl std::ops::RangeBounds<u64>,
) -> Result<Vec<u8>, std::io::Error> {
    let mut part = Vec::new();
    store
        .get_range(name, range)
        .map_err(std::io::Error::other)?
        .read_to_end(&mut part)?;
    Ok(part)
}

/// The consumers on the bucket's stream (none once every reader is done).
fn consumers(js: &Context, bucket: &str) -> usize {
    let names: serde_json::Value = js
        .request(
            format!("CONSUMER.NAMES.OBJ_{bucket}"),
            &serde_json::json!({}),
        )
        .unwrap();
    names["consumers"].as_array().map_or(0, Vec::len)
}

#[test]
fn ranges_read_exactly_the_bytes_asked_for_and_leave_no_consumer() {
    let (_server, js) = jetstream();
    let store = bucket(&js, "ranges");
    let bytes = data(10_000);
    store
        .put(with_chunk_size("obj", 1024), &mut &bytes[..])
        .unwrap();
    let cases: [(u64, u64); 7] = [
        (0, 10_000),
        (0, 1),
        (1023, 1025),
        (1024, 2048),
        (5_000, 9_999),
        (9_999, 10_000),
        (4_321, 4_321),
    ];
    for (start, end) in cases {
        let part = read_range(&store, "obj", start..end).unwrap();
        assert_eq!(part, bytes[start as usize..end as usize], "{start}..{end}");
    }
    assert_eq!(read_range(&store, "obj", 9_000..).unwrap(), bytes[9_000..]);
    assert_eq!(read_range(&store, "obj", ..=99).unwrap(), bytes[..100]);
    assert_eq!(consumers(&js, "ranges"), 0);

    // Past the end: refused with the object's size, as in the async store.
    let error = store.get_range("obj", 9_000..10_001).unwrap_err();
    assert_eq!(error.kind(), GetErrorKind::Other);
    let refused = error
        .downcast_source::<rnats_jetstream::object_store::RangeNotSatisfiable>()
        .unwrap();
    assert_eq!(
        (refused.start, refused.end, refused.size),
        (9_000, 10_001, 10_000)
    );
    let missing = store.get_range("none", 0..1).unwrap_err();
    assert_eq!(missing.kind(), GetErrorKind::NotFound);

    // Only the chunk holding a range near the end is received whole: the others' headers
    // and the API's answers are a fraction of the object.
    let big = data(100_000);
    store
        .put(with_chunk_size("big", 8 * 1024), &mut &big[..])
        .unwrap();
    let statistics = js.client().statistics();
    let before = statistics
        .in_bytes
        .load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(read_range(&store, "big", 99_990..).unwrap(), big[99_990..]);
    let received = statistics
        .in_bytes
        .load(std::sync::atomic::Ordering::Relaxed)
        - before;
    assert!(
        received < 40_000,
        "{received} bytes received for a 10-byte range"
    );

    // A reader dropped half-way deletes its consumer without waiting.
    let mut reader = store.get_range("obj", 0..10_000).unwrap();
    let mut first = [0; 10];
    reader.read_exact(&mut first).unwrap();
    drop(reader);
    let deadline = Instant::now() + WAIT;
    while consumers(&js, "ranges") > 0 {
        assert!(Instant::now() < deadline, "the range's consumer stayed");
    }
}

#[test]
fn a_range_in_a_bucket_without_direct_gets_and_one_through_a_link() {
    let (_server, js) = jetstream();
    // A bucket made by hand, as an older client would have made it: no direct gets.
    js.create_stream(rnats_jetstream::stream::Config {
        name: "OBJ_leader".to_owned(),
        subjects: vec!["$O.leader.C.>".to_owned(), "$O.leader.M.>".to_owned()],
        allow_rollup: true,
        allow_direct: false,
        discard: rnats_jetstream::stream::DiscardPolicy::New,
        ..Default::default()
    })
    .unwrap();
    let store = js.get_object_store("leader").unwrap();
    let bytes = data(5_000);
    store
        .put(with_chunk_size("obj", 700), &mut &bytes[..])
        .unwrap();
    assert_eq!(
        read_range(&store, "obj", 1_000..3_500).unwrap(),
        bytes[1_000..3_500]
    );
    let info = store.info("obj").unwrap();
    store.add_link("alias", &info).unwrap();
    assert_eq!(
        read_range(&store, "alias", 4_900..).unwrap(),
        bytes[4_900..]
    );
}

#[test]
fn a_bucket_without_direct_gets_reads_from_the_leader() {
    let (_server, js) = jetstream();
    // A bucket made by hand, as an older client would have made it: no direct gets.
    js.create_stream(rnats_jetstream::stream::Config {
        name: "OBJ_plain".to_owned(),
        subjects: vec!["$O.plain.C.>".to_owned(), "$O.plain.M.>".to_owned()],
        allow_rollup: true,
        allow_direct: false,
        discard: rnats_jetstream::stream::DiscardPolicy::New,
        ..Default::default()
    })
    .unwrap();
    let store = js.get_object_store("plain").unwrap();
    assert!(!store.stream().cached_info().config.allow_direct);
    store.put_bytes("n", "v".into()).unwrap();
    assert_eq!(store.info("n").unwrap().size, 1);
    assert_eq!(store.get_bytes("n").unwrap(), "v");
    assert_eq!(store.info("m").unwrap_err().kind(), InfoErrorKind::NotFound);
}

#[test]
fn replacing_an_object_purges_its_old_chunks() {
    let (_server, js) = jetstream();
    let store = bucket(&js, "versions");
    let first = store
        .put_bytes(with_chunk_size("doc", 100), data(450).into())
        .unwrap();
    assert_eq!(first.chunks, 5);
    assert_eq!(stored_messages(&store), 6);

    let newer = data(250).into_iter().rev().collect::<Vec<u8>>();
    let second = store
        .put_bytes(with_chunk_size("doc", 100), newer.clone().into())
        .unwrap();
    assert_ne!(second.nuid, first.nuid);
    // The new version's 3 chunks and its metadata; the old chunks and metadata are gone.
    assert_eq!(stored_messages(&store), 4);
    assert_eq!(store.get_bytes("doc").unwrap(), newer);
}

#[test]
fn a_deleted_object_is_not_found_and_not_listed() {
    let (_server, js) = jetstream();
    let store = bucket(&js, "deletes");
    // Nothing stored: the listing ends at once.
    assert_eq!(store.list().unwrap().count(), 0);
    store
        .put_bytes(with_chunk_size("gone", 10), data(35).into())
        .unwrap();
    store.put_bytes("kept", "k".into()).unwrap();
    store.delete("gone").unwrap();

    let missing = store.get("gone").unwrap_err();
    assert_eq!(missing.kind(), GetErrorKind::NotFound);
    let marker = store.info("gone").unwrap();
    assert!(marker.deleted);
    assert_eq!((marker.size, marker.chunks, marker.digest), (0, 0, None));
    // The deleted object's chunks are purged: `kept`'s chunk and the two metadata remain.
    assert_eq!(stored_messages(&store), 3);

    let listed: Vec<String> = store.list().unwrap().map(|i| i.unwrap().name).collect();
    assert_eq!(listed, ["kept"]);
    // A listing read to its end deleted its consumer.
    assert_eq!(store.stream().consumer_names().count(), 0);
    let all: HashSet<(String, bool)> = store
        .list_with_deleted()
        .unwrap()
        .map(|i| i.map(|i| (i.name, i.deleted)).unwrap())
        .collect();
    let expected = [("gone".to_owned(), true), ("kept".to_owned(), false)];
    assert_eq!(all, HashSet::from(expected));

    assert_eq!(
        store.delete("never").unwrap_err().kind(),
        DeleteErrorKind::NotFound
    );
    assert_eq!(
        store.info("never").unwrap_err().kind(),
        InfoErrorKind::NotFound
    );
    assert_eq!(store.get("").unwrap_err().kind(), GetErrorKind::InvalidName);
}

#[test]
fn links_are_followed_within_and_across_buckets() {
    let (_server, js) = jetstream();
    let images = bucket(&js, "images");
    let other = bucket(&js, "other");
    let target = images.put_bytes("cat.png", "meow".into()).unwrap();

    let link = images.add_link("latest.png", &target).unwrap();
    assert!(link.is_link());
    assert_eq!(images.get_bytes("latest.png").unwrap(), "meow");
    let far = other.add_link("cat", &target).unwrap();
    assert_eq!(far.link().unwrap().bucket, "images");
    let object = other.get("cat").unwrap();
    assert_eq!(object.info().name, "cat.png", "the object linked to");
    assert_eq!(other.get_bytes("cat").unwrap(), "meow");

    // What links cannot be.
    let to_link = images.add_link("again", &link).unwrap_err();
    assert_eq!(to_link.kind(), AddLinkErrorKind::LinkToLink);
    let over = images.add_link("cat.png", &target).unwrap_err();
    assert_eq!(over.kind(), AddLinkErrorKind::AlreadyExists);
    images.add_bucket_link("everything", "other").unwrap();
    let whole = images.get("everything").unwrap_err();
    assert_eq!(whole.kind(), GetErrorKind::BucketLink);

    // A link to an object since deleted finds nothing.
    images.delete("cat.png").unwrap();
    assert_eq!(other.get("cat").unwrap_err().kind(), GetErrorKind::NotFound);
}

#[test]
fn the_blocking_and_async_stores_read_each_other() {
    let (server, js) = jetstream();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let async_store = runtime.block_on(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        rnats_jetstream::new(client)
            .create_object_store(Config {
                bucket: "shared".to_owned(),
                ..Default::default()
            })
            .await
            .unwrap()
    });
    let from_async = data(5000);
    let written = runtime
        .block_on(async_store.put(with_chunk_size("from.async", 1000), &mut &from_async[..]))
        .unwrap();
    assert_eq!(written.chunks, 5);

    let store = js.get_object_store("shared").unwrap();
    let read = store.info("from.async").unwrap();
    assert_eq!((read.nuid, read.digest), (written.nuid, written.digest));
    assert_eq!(store.get_bytes("from.async").unwrap(), from_async);

    let from_blocking: Vec<u8> = data(3000).into_iter().rev().collect();
    let put = store
        .put_bytes(
            with_chunk_size("from.blocking", 700),
            from_blocking.clone().into(),
        )
        .unwrap();
    let (info, bytes) = runtime.block_on(async {
        use tokio::io::AsyncReadExt;
        let mut object = async_store.get("from.blocking").await.unwrap();
        let mut bytes = Vec::new();
        object.read_to_end(&mut bytes).await.unwrap();
        (object.info, bytes)
    });
    assert_eq!(bytes, from_blocking);
    assert_eq!((info.size, info.chunks, info.digest), (3000, 5, put.digest));

    // A delete by one is a delete for the other.
    store.delete("from.async").unwrap();
    let gone = runtime.block_on(async_store.get("from.async")).unwrap_err();
    assert_eq!(gone.kind(), GetErrorKind::NotFound);
}

#[test]
fn a_digest_that_does_not_match_fails_the_read() {
    let (_server, js) = jetstream();
    let store = bucket(&js, "corrupt");
    let bytes = data(2500);
    let mut info = store
        .put_bytes(with_chunk_size("victim", 1000), bytes.clone().into())
        .unwrap();
    // Metadata whose digest is another data's, written by hand over the real one.
    info.digest = Some(digest(b"something else"));
    let mut headers = HeaderMap::new();
    headers.insert(NATS_ROLLUP, "sub");
    let subject = format!("$O.corrupt.M.{}", URL_SAFE.encode("victim"));
    js.publish_with_headers(subject, headers, serde_json::to_vec(&info).unwrap().into())
        .unwrap();

    let mut object = store.get("victim").unwrap();
    let mut read = Vec::new();
    let error = object.read_to_end(&mut read).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
    let inner = error
        .get_ref()
        .unwrap()
        .downcast_ref::<ReadError>()
        .unwrap();
    assert_eq!(inner.kind(), ReadErrorKind::DigestMismatch);
    // The last chunk is held back until the check: not all of the data came out.
    assert!(read.len() < bytes.len(), "{} bytes handed out", read.len());
    // The failure sticks.
    assert!(object.read(&mut [0; 16]).is_err());
    assert_eq!(
        store.get_bytes("victim").unwrap_err().kind(),
        GetErrorKind::Other
    );
}

#[test]
fn an_object_whose_chunks_are_gone_fails_to_read() {
    let (_server, js) = jetstream();
    let store = bucket(&js, "lossy");
    let info = store
        .put_bytes(with_chunk_size("hollow", 10), data(25).into())
        .unwrap();
    // The chunks purged by hand, the metadata left: nothing to read, at once.
    let purge = rnats_jetstream::stream::PurgeRequest {
        filter: Some(format!("$O.lossy.C.{}", info.nuid)),
        ..Default::default()
    };
    assert_eq!(store.stream().purge_with(purge).unwrap().purged, 3);
    let error = store.get("hollow").unwrap().read(&mut [0; 8]).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
    let inner = error
        .get_ref()
        .unwrap()
        .downcast_ref::<ReadError>()
        .unwrap();
    assert_eq!(inner.kind(), ReadErrorKind::ChunksMissing);
}

#[test]
fn a_watch_sees_puts_and_deletes_made_after_it_started() {
    let (_server, js) = jetstream();
    let store = bucket(&js, "watched");
    store.put_bytes("before", "b".into()).unwrap();
    let mut watch = store.watch().unwrap();
    store.put_bytes("after", "a".into()).unwrap();
    store.delete("before").unwrap();
    let put = watch.next_timeout(WAIT).unwrap().unwrap();
    assert_eq!(
        (put.name.as_str(), put.size, put.deleted),
        ("after", 1, false)
    );
    let deleted = watch.next_timeout(WAIT).unwrap().unwrap();
    assert_eq!((deleted.name.as_str(), deleted.deleted), ("before", true));

    // With history: the current metadata of each object first.
    let mut history = store.watch_with_history().unwrap();
    let mut names = HashSet::new();
    for _ in 0..2 {
        names.insert(history.next_timeout(WAIT).unwrap().unwrap().name);
    }
    assert_eq!(
        names,
        HashSet::from(["after".to_owned(), "before".to_owned()])
    );
}

#[test]
fn metadata_updates_status_seal_and_buckets() {
    let (_server, js) = jetstream();
    let mut store = bucket(&js, "managed");
    store.put_bytes("draft.txt", "text".into()).unwrap();
    let renamed = store
        .update_metadata(
            "draft.txt",
            UpdateMetadata {
                name: "final.txt".to_owned(),
                description: Some("the final version".to_owned()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(renamed.name, "final.txt");
    let info = store.info("final.txt").unwrap();
    assert_eq!(info.description.as_deref(), Some("the final version"));
    assert_eq!(store.get_bytes("final.txt").unwrap(), "text");
    assert_eq!(
        store.info("draft.txt").unwrap_err().kind(),
        InfoErrorKind::NotFound
    );

    let status = store.status().unwrap();
    assert_eq!((status.bucket.as_str(), status.sealed), ("managed", false));
    store.seal().unwrap();
    assert!(store.status().unwrap().sealed);
    let refused = store.put_bytes("late", "x".into()).unwrap_err();
    assert_eq!(refused.kind(), PutErrorKind::PublishChunks);

    // Buckets are listed, other streams are not; a deleted bucket is gone.
    bucket(&js, "second");
    js.create_stream(rnats_jetstream::stream::Config {
        name: "PLAIN".to_owned(),
        subjects: vec!["plain".to_owned()],
        ..Default::default()
    })
    .unwrap();
    let names: HashSet<String> = js.object_store_names().map(Result::unwrap).collect();
    assert_eq!(
        names,
        HashSet::from(["managed".to_owned(), "second".to_owned()])
    );
    js.delete_object_store("second").unwrap();
    let missing = js.get_object_store("second").unwrap_err();
    assert_eq!(missing.kind(), ObjectStoreErrorKind::GetStore);
    let refusal = rnats_jetstream::object_store::server_error(&missing).unwrap();
    assert_eq!(refusal.error_code(), ErrorCode::STREAM_NOT_FOUND);
    assert_eq!(
        js.get_object_store("no.dots").unwrap_err().kind(),
        ObjectStoreErrorKind::InvalidBucketName
    );
}

/// As the async listing: objects put again by two other connections while listings run are
/// each listed once, none left out.
#[test]
fn a_listing_leaves_no_object_out_while_they_are_put_again() {
    let (server, js) = jetstream();
    let store = bucket(&js, "again");
    const OBJECTS: usize = 200;
    for i in 0..OBJECTS {
        store
            .put(format!("o{i}").as_str(), &mut "x".as_bytes())
            .unwrap();
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|half| {
            let client = rnats_core::blocking::connect(server.url()).unwrap();
            let writer = blocking::new(client).get_object_store("again").unwrap();
            let stop = stop.clone();
            std::thread::spawn(move || {
                loop {
                    for i in (half..OBJECTS).step_by(2) {
                        if stop.load(std::sync::atomic::Ordering::SeqCst) {
                            return;
                        }
                        let name = format!("o{i}");
                        writer.put(name.as_str(), &mut "y".as_bytes()).unwrap();
                    }
                }
            })
        })
        .collect();
    for listing in 0..40 {
        let names: Vec<String> = store
            .list()
            .unwrap()
            .map(|info| info.unwrap().name)
            .collect();
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
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for writer in writers {
        writer.join().unwrap();
    }
}
