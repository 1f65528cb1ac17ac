//! Fuzzes the client's WebSocket transport reading server frames (after the HTTP upgrade).
//!
//! The frame codec is tokio-websockets'; rnats' part is turning the messages into one byte
//! stream for the parser (binary and text payloads in order, control frames skipped, a
//! message larger than the read buffer handed out over several reads). The first input byte
//! picks a read size; the bytes and the error must not depend on it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rnats_core::fuzzing::websocket_read;

fuzz_target!(|data: &[u8]| {
    let Some((&knob, frames)) = data.split_first() else {
        return;
    };
    let small = websocket_read(frames, usize::from(knob % 16) + 1);
    let large = websocket_read(frames, 64 * 1024);
    assert_eq!(small, large);
});
