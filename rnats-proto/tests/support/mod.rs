//! Helpers shared by the integration tests: feeding a byte stream to a
//! parser in chunks and recording everything it produced.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use bytes::BytesMut;
use rnats_proto::{DecodeError, Parser, ParserLimits, ServerOp};

/// Everything a parser produced for one input stream.
#[derive(Debug, PartialEq)]
pub(crate) struct Outcome {
    /// Ops decoded before the stream ended or an error occurred.
    pub(crate) ops: Vec<ServerOp>,
    /// The error that stopped decoding, if any.
    pub(crate) error: Option<DecodeError>,
    /// Bytes left undecoded when the input ran out (0 after an error).
    pub(crate) leftover: usize,
}

/// Feeds `input` in chunks whose lengths are taken from `chunk_lens` (cycled;
/// a zero length appends nothing), decoding after every append. Lengths
/// that are all zero are treated as one byte at a time.
pub(crate) fn run_chunked(input: &[u8], limits: ParserLimits, chunk_lens: &[usize]) -> Outcome {
    let chunk_lens = if chunk_lens.iter().any(|&l| l > 0) {
        chunk_lens
    } else {
        &[1]
    };
    let mut parser = Parser::new(limits);
    let mut buf = BytesMut::new();
    let mut ops = Vec::new();
    let mut fed = 0;
    let mut lens = chunk_lens.iter().copied().cycle();
    loop {
        loop {
            match parser.decode(&mut buf) {
                Ok(Some(op)) => ops.push(op),
                Ok(None) => break,
                Err(e) => {
                    return Outcome {
                        ops,
                        error: Some(e),
                        leftover: 0,
                    };
                }
            }
        }
        if fed == input.len() {
            return Outcome {
                ops,
                error: None,
                leftover: buf.len(),
            };
        }
        let len = lens.next().unwrap_or(1).min(input.len() - fed);
        buf.extend_from_slice(&input[fed..fed + len]);
        fed += len;
    }
}

/// Feeds `input` in one piece.
pub(crate) fn run_whole(input: &[u8], limits: ParserLimits) -> Outcome {
    run_chunked(input, limits, &[input.len()])
}

/// Feeds `input` one byte at a time.
pub(crate) fn run_bytewise(input: &[u8], limits: ParserLimits) -> Outcome {
    run_chunked(input, limits, &[1])
}
