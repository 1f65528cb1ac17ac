//! Blocking Key-Value (`rnats_jetstream::blocking::Store`) against a real nats-server, with no
//! async runtime: puts and reads (direct and from the leader), create and update with their
//! expectations, deletes and purges, history, keys, watches, and agreement with the async
//! store on the same bucket.
#![cfg(feature = "kv")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashSet;
use std::time::Duration;

use bytes::Bytes;
use rnats_jetstream::blocking::{self, Context, Store};
use rnats_jetstream::context::{KeyValueErrorKind, UpdateKeyValueErrorKind};
use rnats_jetstream::kv::{self, CreateErrorKind, Operation, ServerRefusal, UpdateErrorKind};
use rnats_jetstream::{ErrorCode, stream};
use rnats_test_server::NatsServer;

/// How long any single wait in these tests may take before the test fails.
const WAIT: Duration = Duration::from_secs(10);

fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::with_jetstream();
    let client = rnats_core::blocking::connect(server.url()).unwrap();
    let mut context = blocking::new(client);
    context.set_timeout(WAIT);
    (server, context)
}

fn bucket(js: &Context, name: &str, history: i64) -> Store {
    js.create_key_value(kv::Config {
        bucket: name.to_owned(),
        history,
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn put_get_update_create_delete_and_purge() {
    let (_server, js) = jetstream();
    let kv = bucket(&js, "profiles", 5);
    assert!(kv.get("sue").unwrap().is_none());
    let first = kv.put("sue", "blue".into()).unwrap();
    assert_eq!(kv.get("sue").unwrap().unwrap(), "blue");

    // An update must name the key's last revision.
    let second = kv.update("sue", "green".into(), first).unwrap();
    let stale = kv.update("sue", "red".into(), first).unwrap_err();
    assert_eq!(stale.kind(), UpdateErrorKind::WrongLastRevision);
    assert_eq!(
        stale.error_code(),
        Some(ErrorCode::STREAM_WRONG_LAST_SEQUENCE)
    );
    let entry = kv.entry("sue").unwrap().unwrap();
    assert_eq!(
        (entry.revision, entry.value.clone()),
        (second, "green".into())
    );
    assert_eq!(entry.operation, Operation::Put);
    let old = kv.entry_for_revision("sue", first).unwrap().unwrap();
    assert_eq!(old.value, "blue");

    // Create takes only a key without a value.
    let exists = kv.create("sue", "x".into()).unwrap_err();
    assert_eq!(exists.kind(), CreateErrorKind::AlreadyExists);
    kv.delete("sue").unwrap();
    assert!(kv.get("sue").unwrap().is_none());
    assert_eq!(
        kv.entry("sue").unwrap().unwrap().operation,
        Operation::Delete
    );
    let revived = kv.create("sue", "yellow".into()).unwrap();
    assert_eq!(kv.get("sue").unwrap().unwrap(), "yellow");
    assert!(revived > second);

    kv.purge("sue").unwrap();
    let history: Vec<_> = kv.history("sue").unwrap().map(Result::unwrap).collect();
    assert_eq!(history.len(), 1, "only the purge marker: {history:?}");
    assert_eq!(history[0].operation, Operation::Purge);
    assert!(kv.get("sue").unwrap().is_none());

    assert!(kv.put("bad..key", "x".into()).is_err());
}

#[test]
fn history_and_keys_end_at_the_last_entry() {
    let (_server, js) = jetstream();
    let kv = bucket(&js, "listing", 10);
    // Nothing stored: both end at once.
    assert_eq!(kv.keys().unwrap().count(), 0);
    assert_eq!(kv.history("a").unwrap().count(), 0);

    kv.put("a", "1".into()).unwrap();
    kv.put("b", "1".into()).unwrap();
    kv.put("a", "2".into()).unwrap();
    kv.put("c", "1".into()).unwrap();
    kv.delete("c").unwrap();
    let keys: HashSet<String> = kv.keys().unwrap().map(Result::unwrap).collect();
    assert_eq!(keys, HashSet::from(["a".to_owned(), "b".to_owned()]));

    let history: Vec<(u64, Bytes)> = kv
        .history("a")
        .unwrap()
        .map(|entry| entry.map(|e| (e.revision, e.value)).unwrap())
        .collect();
    assert_eq!(history, [(1, "1".into()), (3, "2".into())]);
}

#[test]
fn a_watch_sees_changes_made_after_it_started() {
    let (_server, js) = jetstream();
    let kv = bucket(&js, "watched", 1);
    kv.put("before", "old".into()).unwrap();
    let mut watch = kv.watch_all().unwrap();
    // Updates only: nothing was current to send.
    assert!(watch.seen_current());
    kv.put("after", "new".into()).unwrap();
    kv.delete("before").unwrap();
    let put = watch.next().unwrap().unwrap();
    assert_eq!(
        (put.key.as_str(), put.value.clone()),
        ("after", "new".into())
    );
    assert_eq!(put.operation, Operation::Put);
    let deleted = watch.next_timeout(WAIT).unwrap().unwrap();
    assert_eq!(
        (deleted.key.as_str(), deleted.operation),
        ("before", Operation::Delete)
    );

    // A watch of one key with its current value first.
    let mut one = kv.watch_with_history("after").unwrap();
    assert!(!one.seen_current());
    let current = one.next().unwrap().unwrap();
    assert_eq!(current.value, "new");
    assert!(current.seen_current);
    kv.put("other", "x".into()).unwrap();
    kv.put("after", "newer".into()).unwrap();
    let next = one.next().unwrap().unwrap();
    assert_eq!(
        (next.key.as_str(), next.value.clone()),
        ("after", "newer".into())
    );

    let mut replay = kv.watch_from_revision("after", next.revision).unwrap();
    assert_eq!(replay.next().unwrap().unwrap().value, "newer");
}

#[test]
fn a_bucket_without_direct_gets_reads_from_the_leader() {
    let (_server, js) = jetstream();
    // A bucket made by hand, as an older client would have made it: no direct gets.
    js.create_stream(stream::Config {
        name: "KV_plain".to_owned(),
        subjects: vec!["$KV.plain.>".to_owned()],
        max_messages_per_subject: 3,
        allow_direct: false,
        allow_rollup: true,
        deny_delete: true,
        ..Default::default()
    })
    .unwrap();
    let kv = js.get_key_value("plain").unwrap();
    let revision = kv.put("k", "v".into()).unwrap();
    let entry = kv.entry("k").unwrap().unwrap();
    assert_eq!((entry.revision, entry.value), (revision, "v".into()));
    assert!(kv.get("missing").unwrap().is_none());
}

#[test]
fn buckets_are_created_found_and_deleted() {
    let (_server, js) = jetstream();
    let kv = bucket(&js, "managed", 3);
    let status = kv.status().unwrap();
    assert_eq!((status.bucket(), status.history()), ("managed", 3));
    assert_eq!(
        js.get_key_value("managed").unwrap().stream_name,
        "KV_managed"
    );
    assert!(js.delete_key_value("managed").unwrap().success);
    let missing = js.get_key_value("managed").unwrap_err();
    assert_eq!(missing.kind(), KeyValueErrorKind::GetBucket);
    assert_eq!(missing.error_code(), Some(ErrorCode::STREAM_NOT_FOUND));
    let invalid = js.get_key_value("no.dots").unwrap_err();
    assert_eq!(invalid.kind(), KeyValueErrorKind::InvalidStoreName);

    // Get or create: made once, then found with its first config.
    let config = |history| kv::Config {
        bucket: "settings".to_owned(),
        history,
        ..Default::default()
    };
    let made = js.get_or_create_key_value(config(2)).unwrap();
    assert_eq!(made.status().unwrap().history(), 2);
    let found = js.get_or_create_key_value(config(4)).unwrap();
    assert_eq!(found.status().unwrap().history(), 2);
    let updated = js.update_key_value(config(4)).unwrap();
    assert_eq!(updated.status().unwrap().history(), 4);
    let missing = js
        .update_key_value(kv::Config {
            bucket: "nowhere".to_owned(),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(missing.kind(), UpdateKeyValueErrorKind::NotFound);

    // Buckets are listed, other streams are not.
    js.create_stream(stream::Config {
        name: "PLAIN".to_owned(),
        ..Default::default()
    })
    .unwrap();
    let names: Vec<String> = js.key_value_store_names().map(Result::unwrap).collect();
    assert_eq!(names, ["settings"]);
}

#[test]
fn the_blocking_and_async_stores_agree() {
    let (server, js) = jetstream();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let async_kv = runtime.block_on(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        rnats_jetstream::new(client)
            .create_key_value(kv::Config {
                bucket: "shared".to_owned(),
                history: 2,
                ..Default::default()
            })
            .await
            .unwrap()
    });
    let revision = runtime
        .block_on(async_kv.put("from.async", "a".into()))
        .unwrap();
    let kv = js.get_key_value("shared").unwrap();
    let entry = kv.entry("from.async").unwrap().unwrap();
    assert_eq!((entry.revision, entry.value), (revision, "a".into()));

    kv.put("from.blocking", "b".into()).unwrap();
    kv.delete("from.async").unwrap();
    let (value, deleted) = runtime.block_on(async {
        let value = async_kv.get("from.blocking").await.unwrap();
        let deleted = async_kv.entry("from.async").await.unwrap().unwrap();
        (value, deleted)
    });
    assert_eq!(value.unwrap(), "b");
    assert_eq!(deleted.operation, Operation::Delete);
}

#[test]
fn a_watch_whose_consumer_vanished_makes_it_again_and_misses_nothing() {
    let (_server, js) = jetstream();
    let kv = bucket(&js, "recovering", 1);
    let mut watch = kv.watch_all().unwrap();
    // Delete the consumer under the watch: its heartbeats stop.
    let names: serde_json::Value = js
        .request("CONSUMER.NAMES.KV_recovering", &serde_json::json!({}))
        .unwrap();
    let names = names["consumers"].as_array().unwrap();
    assert_eq!(names.len(), 1, "{names:?}");
    let name = names[0].as_str().unwrap();
    assert!(kv.stream.delete_consumer(name).unwrap().success);
    // Made while no consumer delivers: the watch's next consumer must start before it.
    kv.put("while.gone", "kept".into()).unwrap();
    // Two missed heartbeats (10 s) pass before the watch makes its consumer again.
    let entry = watch
        .next_timeout(Duration::from_secs(30))
        .unwrap()
        .unwrap();
    assert_eq!(
        (entry.key.as_str(), entry.value),
        ("while.gone", "kept".into())
    );
    kv.put("after", "too".into()).unwrap();
    assert_eq!(watch.next().unwrap().unwrap().key, "after");
}

#[test]
fn a_watch_is_made_again_at_once_after_a_server_restart_lost_its_consumer() {
    let mut server = NatsServer::with_jetstream();
    let client = rnats_core::ConnectOptions::new()
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect_blocking(server.url())
        .unwrap();
    let mut js = blocking::new(client);
    js.set_timeout(WAIT);
    let kv = bucket(&js, "restarted", 1);
    let mut watch = kv.watch_all().unwrap();
    kv.put("before", "1".into()).unwrap();
    assert_eq!(watch.next_timeout(WAIT).unwrap().unwrap().key, "before");

    // The watch's consumer lives in the server's memory: the restarted server has none.
    let mut events = js.client().events();
    server.restart().unwrap();
    loop {
        match events.next_timeout(WAIT).unwrap() {
            Some(rnats_core::ConnectionEvent::Reconnected) => break,
            Some(_) => {}
            None => panic!("the client closed"),
        }
    }
    // Nothing to read yet, but the wait sees the reconnect and makes the consumer again at
    // once, where a watch waiting for two missed heartbeats (10 s since "before") would not
    // have one yet.
    assert!(
        watch
            .next_timeout(Duration::from_secs(3))
            .unwrap()
            .is_none()
    );
    let names: serde_json::Value = js
        .request("CONSUMER.NAMES.KV_restarted", &serde_json::json!({}))
        .unwrap();
    let names = names["consumers"].as_array().map_or(0, Vec::len);
    assert_eq!(names, 1, "the watch's consumer was not made again");
    kv.put("after", "2".into()).unwrap();
    let entry = watch
        .next_timeout(WAIT)
        .unwrap()
        .expect("the entry after the restart");
    assert_eq!((entry.key.as_str(), entry.value), ("after", "2".into()));
}

#[test]
fn watch_options_pick_keys_start_and_what_is_left_out() {
    let (_server, js) = jetstream();
    let kv = bucket(&js, "options", 5);
    kv.put("a", "a1".into()).unwrap();
    kv.put("a", "a2".into()).unwrap();
    kv.put("b", "b1".into()).unwrap();
    kv.put("c", "c1".into()).unwrap();
    kv.delete("b").unwrap();

    // Two keys, their whole history, without deletes, without values.
    let options = kv::WatchOptions::new()
        .include_history()
        .ignore_deletes()
        .meta_only();
    let mut watch = kv.watch_with_options(["a", "b"], options).unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let entry = watch.next_timeout(WAIT).unwrap().expect("an entry");
        assert!(entry.value.is_empty(), "meta only: {entry:?}");
        assert!(!entry.seen_current, "the delete of `b` is still to come");
        seen.push((entry.key, entry.revision));
    }
    assert_eq!(
        seen,
        [
            ("a".to_owned(), 1),
            ("a".to_owned(), 2),
            ("b".to_owned(), 3)
        ]
    );
    // The delete of `b` (revision 5) is left out, `c` is not watched: this put of `b` is
    // next, the first after the initial values.
    kv.put("c", "c2".into()).unwrap();
    kv.put("b", "b2".into()).unwrap();
    let next = watch.next().unwrap().unwrap();
    assert_eq!((next.key.as_str(), next.revision), ("b", 7));
    assert!(next.seen_current && watch.seen_current());

    // Several keys, updates only.
    let mut many = kv.watch_many(["a", "c"]).unwrap();
    kv.put("b", "b3".into()).unwrap();
    kv.put("c", "c3".into()).unwrap();
    assert_eq!(many.next().unwrap().unwrap().value, "c3");
}

/// A listing asks the stream for its last message once the server says nothing more is
/// pending: with the newest message gone (purged here; aged out would do the same) the
/// answer is the last one still there, so the listing ends at once rather than waiting out
/// the context's timeout for a message that will not come.
#[test]
fn keys_and_history_end_at_once_when_the_newest_message_was_purged() {
    let (_server, js) = jetstream();
    let kv = bucket(&js, "purged", 5);
    kv.put("a", "1".into()).unwrap();
    kv.put("a", "2".into()).unwrap();
    kv.put("b", "1".into()).unwrap();
    js.get_stream("KV_purged")
        .unwrap()
        .purge_with(stream::PurgeRequest {
            filter: Some("$KV.purged.b".into()),
            ..Default::default()
        })
        .unwrap();
    let started = std::time::Instant::now();
    let keys: Vec<String> = kv.keys().unwrap().map(Result::unwrap).collect();
    assert_eq!(keys, ["a"]);
    let values: Vec<Bytes> = kv.history("a").unwrap().map(|e| e.unwrap().value).collect();
    assert_eq!(values, ["1", "2"]);
    let empty: Vec<_> = kv.history("b").unwrap().collect();
    assert!(empty.is_empty(), "{empty:?}");
    assert!(
        started.elapsed() < WAIT / 2,
        "the listings waited {:?}, as for a message that will not come",
        started.elapsed()
    );
}

/// As the async listing: in a bucket that keeps one revision, keys rewritten in turn by two
/// other connections while the listings run are each listed once, none left out.
#[test]
fn keys_of_a_one_revision_bucket_leave_none_out_while_they_are_rewritten() {
    let (server, js) = jetstream();
    let (kv, rewriters) = rewritten_bucket(&server, &js);
    for listing in 0..40 {
        let keys: Vec<String> = kv.keys().unwrap().map(Result::unwrap).collect();
        let unique: HashSet<&String> = keys.iter().collect();
        assert_eq!(
            unique.len(),
            keys.len(),
            "listing {listing}: a key listed twice"
        );
        assert_eq!(
            keys.len(),
            REWRITTEN_KEYS,
            "listing {listing}: a key left out"
        );
    }
    rewriters.stop();
}

/// As the async watch: the initial values hold every key of a one-revision bucket whose keys
/// are rewritten meanwhile, up to the entry marked `seen_current`.
#[test]
fn a_watchs_initial_values_leave_no_key_out_while_they_are_rewritten() {
    let (server, js) = jetstream();
    let (kv, rewriters) = rewritten_bucket(&server, &js);
    for watch in 0..30 {
        let mut entries = kv
            .watch_with_options([">"], kv::WatchOptions::new())
            .unwrap();
        let mut keys = HashSet::new();
        loop {
            let entry = entries.next_timeout(WAIT).unwrap().expect("an entry");
            keys.insert(entry.key);
            if entry.seen_current {
                break;
            }
        }
        assert_eq!(keys.len(), REWRITTEN_KEYS, "watch {watch}: a key left out");
    }
    rewriters.stop();
}

/// Keys in [`rewritten_bucket`].
const REWRITTEN_KEYS: usize = 400;

/// Two writers on connections of their own, rewriting a bucket's keys in turn until stopped.
struct Rewriters {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    writers: Vec<std::thread::JoinHandle<()>>,
}

impl Rewriters {
    fn stop(self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        for writer in self.writers {
            writer.join().unwrap();
        }
    }
}

/// A bucket `one` that keeps one revision, with [`REWRITTEN_KEYS`] keys rewritten in a loop.
fn rewritten_bucket(server: &NatsServer, js: &Context) -> (Store, Rewriters) {
    let kv = bucket(js, "one", 1);
    for i in 0..REWRITTEN_KEYS {
        kv.put(format!("k{i}"), "0".into()).unwrap();
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers = (0..2)
        .map(|half| {
            let client = rnats_core::blocking::connect(server.url()).unwrap();
            let writer = blocking::new(client).get_key_value("one").unwrap();
            let stop = stop.clone();
            std::thread::spawn(move || {
                for round in 1u64.. {
                    for i in (half..REWRITTEN_KEYS).step_by(2) {
                        if stop.load(std::sync::atomic::Ordering::SeqCst) {
                            return;
                        }
                        writer
                            .put(format!("k{i}"), round.to_string().into())
                            .unwrap();
                    }
                }
            })
        })
        .collect();
    (kv, Rewriters { stop, writers })
}
