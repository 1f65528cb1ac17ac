//! Fuzzes what Key-Value reads from delivered messages: the entry a watch, history or key
//! listing delivery carries (ack subject metadata and the `KV-Operation` /
//! `Nats-Marker-Reason` headers) and the entry a direct get returns (`Nats-Sequence`,
//! `Nats-Time-Stamp`, `Nats-Subject`).
//!
//! The input is server bytes, parsed as the client parses them; every `MSG`/`HMSG` in it is
//! read both ways.

#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rnats_jetstream::fuzzing;
use rnats_jetstream::message::StreamMessage;
use rnats_proto::{Parser, ParserLimits, ServerOp};

fuzz_target!(|data: &[u8]| {
    let mut parser = Parser::new(ParserLimits::default());
    let mut buf = BytesMut::from(data);
    while let Ok(Some(op)) = parser.decode(&mut buf) {
        let ServerOp::Msg(msg) = op else {
            continue;
        };
        let message = rnats_core::Message::from(msg);
        let _ = fuzzing::kv_operation(message.headers.as_ref());
        if let Ok(entry) = fuzzing::kv_entry(&message, "$KV.b.", "b") {
            assert_eq!(entry.value, message.payload);
        }
        if let Ok(direct) = StreamMessage::try_from(message) {
            let _ = fuzzing::kv_operation(Some(&direct.headers));
        }
    }
});
