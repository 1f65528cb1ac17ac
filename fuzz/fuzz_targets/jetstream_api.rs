//! Fuzzes JetStream API replies: every reply type rnats-jetstream reads from `$JS.API.*`, the
//! error envelope, the publish ack (its hand-written fast path checked against serde_json),
//! atomic batch commits, direct-get-by-JSON messages and counter values.
//!
//! Every input is tried as every type (each decode is cheap). Configurations, which the
//! client also sends, must survive encode -> decode unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rnats_core::{HeaderMap, StatusCode};
use rnats_jetstream::account::Account;
use rnats_jetstream::consumer::{self, ConsumerResetResponse, PauseResponse};
use rnats_jetstream::fuzzing;
use rnats_jetstream::message::StreamMessage;
use rnats_jetstream::publish::PublishAck;
use rnats_jetstream::response::Response;
use rnats_jetstream::stream::{self, PurgeResponse, RawMessage};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

fuzz_target!(|data: &[u8]| {
    if let Some(info) = reply::<stream::Info>(data) {
        config_round_trip(&info.config);
    }
    if let Some(info) = reply::<consumer::Info>(data) {
        config_round_trip(&info.config);
    }
    if let Some(config) = reply::<stream::Config>(data) {
        config_round_trip(&config);
    }
    if let Some(config) = reply::<consumer::Config>(data) {
        config_round_trip(&config);
    }
    reply::<Account>(data);
    reply::<PurgeResponse>(data);
    reply::<PauseResponse>(data);
    reply::<ConsumerResetResponse>(data);
    if let Some(get) = reply::<MessageGet>(data) {
        let _ = StreamMessage::try_from(get.message);
    }

    // The fast path must agree with serde_json wherever it answers.
    if let Some(plain) = fuzzing::plain_publish_ack(data) {
        let serde: PublishAck = serde_json::from_slice(data).expect("serde_json reads a plain ack");
        assert_eq!(plain, serde);
    }
    for status in [None, Some(StatusCode::NO_RESPONDERS)] {
        let _ = fuzzing::publish_ack(data, status);
        let _ = fuzzing::batch_commit(data, status);
    }
    let mut headers = HeaderMap::new();
    let _ = fuzzing::counter_entry("c".to_owned(), 1, &headers, data);
    if let Ok(text) = std::str::from_utf8(data) {
        // The same bytes as the header values a counter's value is read with.
        if let Ok(value) = text.parse::<rnats_core::HeaderValue>() {
            headers.insert("Nats-Incr", value.clone());
            headers.insert("Nats-Counter-Sources", value);
            let _ = fuzzing::counter_entry("c".to_owned(), 1, &headers, br#"{"val":"1"}"#);
        }
    }
});

/// The `STREAM.MSG.GET` reply: the message in an envelope of its own.
#[derive(Deserialize)]
struct MessageGet {
    message: RawMessage,
}

/// `data` read as the reply to a request for a `T`, through the error envelope.
fn reply<T: DeserializeOwned>(data: &[u8]) -> Option<T> {
    serde_json::from_slice::<Response<T>>(data)
        .ok()?
        .into_result()
        .ok()
}

fn config_round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(config: &T) {
    let json = serde_json::to_vec(config).expect("a decoded config encodes");
    let again: T = serde_json::from_slice(&json).expect("an encoded config decodes");
    assert_eq!(&again, config);
}
