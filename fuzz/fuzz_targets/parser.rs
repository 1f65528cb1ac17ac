//! Fuzzes `rnats_proto::Parser` with arbitrary server bytes.
//!
//! Run from this directory with the checked-in seeds:
//!
//! ```text
//! cargo +nightly fuzz run parser corpus/parser ../rnats-proto/tests/corpus
//! ```
//!
//! The first input byte picks the chunk size and limits, the rest is the
//! stream. The stream is decoded whole and in chunks; besides not panicking,
//! both runs must produce the same ops, error and leftover.

#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rnats_proto::{DecodeError, Parser, ParserLimits, ServerOp};

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, stream)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(knobs & 0x1f) + 1;
    let limits = if knobs & 0x20 == 0 {
        ParserLimits::default()
    } else {
        // Small limits reach the size checks with short inputs.
        ParserLimits { max_control_line: 64, max_info_line: 96, max_payload: 256 }
    };
    let whole = run(stream, limits, stream.len().max(1));
    let chunked = run(stream, limits, chunk);
    assert_eq!(whole, chunked);
});

/// Feeds `stream` in `chunk`-byte pieces, decoding after each, and returns
/// the ops, the error that stopped decoding (if any) and the leftover length.
fn run(
    stream: &[u8],
    limits: ParserLimits,
    chunk: usize,
) -> (Vec<ServerOp>, Option<DecodeError>, usize) {
    let mut parser = Parser::new(limits);
    let mut buf = BytesMut::new();
    let mut ops = Vec::new();
    let mut pieces = stream.chunks(chunk);
    loop {
        match parser.decode(&mut buf) {
            Ok(Some(op)) => ops.push(op),
            Ok(None) => match pieces.next() {
                Some(piece) => buf.extend_from_slice(piece),
                None => return (ops, None, buf.len()),
            },
            Err(e) => return (ops, Some(e), 0),
        }
    }
}
