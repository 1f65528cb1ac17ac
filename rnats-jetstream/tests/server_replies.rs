//! The fuzz targets' seeds, replies captured from nats-server 2.15.1 (`fuzz/seeds/capture.py`),
//! decoded as what they are: every JetStream API reply to its type or to the server's error,
//! the publish acks through the publish path, and the Key-Value deliveries to their entries.
//! The fuzz targets check that no bytes make these decoders panic; this checks that the real
//! bytes still decode right.

use std::path::PathBuf;

use rnats_jetstream::account::Account;
use rnats_jetstream::consumer::{self, PauseResponse};
use rnats_jetstream::fuzzing;
use rnats_jetstream::publish::PublishErrorKind;
use rnats_jetstream::response::Response;
use rnats_jetstream::stream;
use serde::de::DeserializeOwned;

fn seed(target: &str, name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target)
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn reply<T: DeserializeOwned>(name: &str) -> Result<T, rnats_jetstream::Error> {
    let json = seed("jetstream_api", name);
    serde_json::from_slice::<Response<T>>(&json)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .into_result()
}

#[test]
fn api_replies_decode_to_their_types() {
    for name in [
        "stream_create.json",
        "stream_info.json",
        "stream_info_subjects.json",
        "kv_create.json",
    ] {
        reply::<stream::Info>(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for name in [
        "consumer_create.json",
        "consumer_info.json",
        "kv_watch_consumer.json",
    ] {
        reply::<consumer::Info>(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let account = reply::<Account>("account_info.json").unwrap();
    assert_eq!(account.streams, 0);
    let paused = reply::<PauseResponse>("consumer_pause.json").unwrap();
    assert!(paused.paused);
    let resumed = reply::<PauseResponse>("consumer_unpause.json").unwrap();
    assert!(!resumed.paused);
}

#[test]
fn api_errors_decode_with_their_codes() {
    let exists = reply::<stream::Info>("stream_exists.json").unwrap_err();
    assert_eq!(
        exists.error_code(),
        rnats_jetstream::ErrorCode::STREAM_NAME_EXIST
    );
    let missing = reply::<stream::Info>("stream_not_found.json").unwrap_err();
    assert_eq!(
        missing.error_code(),
        rnats_jetstream::ErrorCode::STREAM_NOT_FOUND
    );
}

#[test]
fn publish_acks_decode_through_the_publish_path() {
    let ack = fuzzing::publish_ack(&seed("jetstream_api", "pub_ack.json"), None).unwrap();
    assert_eq!(
        (ack.stream.as_str(), ack.sequence, ack.duplicate),
        ("ORDERS", 1, false)
    );
    // The server's usual ack takes the hand-written path.
    assert!(fuzzing::plain_publish_ack(&seed("jetstream_api", "pub_ack.json")).is_some());
    let duplicate = seed("jetstream_api", "pub_ack_duplicate.json");
    assert!(fuzzing::publish_ack(&duplicate, None).unwrap().duplicate);
    let wrong = seed("jetstream_api", "pub_wrong_last_sequence.json");
    let error = fuzzing::publish_ack(&wrong, None).unwrap_err();
    assert_eq!(error.kind(), PublishErrorKind::WrongLastSequence);
}

#[cfg(feature = "kv")]
#[test]
fn kv_deliveries_decode_to_entries() {
    use bytes::BytesMut;
    use rnats_core::proto::{Parser, ParserLimits, ServerOp};
    use rnats_jetstream::kv::Operation;
    use rnats_jetstream::message::StreamMessage;

    let messages = |name: &str| {
        let mut buf = BytesMut::from(&seed("kv_entry", name)[..]);
        let mut parser = Parser::new(ParserLimits::default());
        let mut out = Vec::new();
        while let Some(op) = parser.decode(&mut buf).unwrap() {
            if let ServerOp::Msg(msg) = op {
                out.push(rnats_core::Message::from(msg));
            }
        }
        out
    };
    let watched: Vec<_> = messages("watch")
        .iter()
        .map(|m| fuzzing::kv_entry(m, "$KV.b.", "b").unwrap())
        .map(|e| (e.key, e.operation, e.revision))
        .collect();
    assert_eq!(
        watched,
        [
            ("k".to_owned(), Operation::Put, 1),
            ("k".to_owned(), Operation::Delete, 2),
            ("gone".to_owned(), Operation::Purge, 4),
        ]
    );
    let direct: Vec<_> = messages("direct_get")
        .into_iter()
        .map(|m| {
            let m = StreamMessage::try_from(m).unwrap();
            let op = fuzzing::kv_operation(Some(&m.headers)).unwrap();
            (m.subject.to_string(), op, m.sequence)
        })
        .collect();
    assert_eq!(
        direct,
        [
            ("$KV.b.k".to_owned(), Operation::Delete, 2),
            ("$KV.b.gone".to_owned(), Operation::Purge, 4),
        ]
    );
}
