//! Fuzzes `rnats_proto::Parser` with arbitrary server bytes, fed in arbitrary splits.
//!
//! The first input byte is a knob, the rest is the stream. The stream is decoded whole, then
//! again in two halves cut where the knob says (nats-server's own parser fuzzing feeds every
//! input in two halves), in fixed-size chunks, and in uneven chunks whose sizes the stream's
//! own bytes pick, and whole once more keeping each message as the connection's engine does
//! (a `MsgFrame`), detached from the buffer as a lagging subscription's are, and cut into its
//! parts after. Besides not panicking, every run must produce the same ops, the same error and
//! the same leftover as the whole-buffer parse, and every subject and reply in them must be
//! one whole token.

#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rnats_proto::{DecodeError, Parser, ParserLimits, ServerOp};

fuzz_target!(|data: &[u8]| {
    let Some((&knob, stream)) = data.split_first() else {
        return;
    };
    let limits = if knob & 0x80 == 0 {
        ParserLimits::default()
    } else {
        // Small limits reach the size checks with short inputs.
        ParserLimits {
            max_control_line: 64,
            max_info_line: 96,
            max_payload: 256,
        }
    };
    let whole = run(stream, limits, &mut std::iter::once(stream.len()));
    // Every subject and reply that came out is one whole token of its line: not empty, no
    // blank, no newline (the subject rules are not required of them: the server relays what
    // publishers gave it).
    let token = |s: &rnats_proto::Subject| {
        !s.is_empty() && !s.bytes().any(|b| matches!(b, b' ' | b'\t' | b'\n'))
    };
    for op in &whole.0 {
        if let ServerOp::Msg(msg) = op {
            assert!(token(&msg.subject), "{:?}", msg.subject);
            assert!(msg.reply.as_ref().is_none_or(token), "{:?}", msg.reply);
        }
    }
    let cut = stream.len() * usize::from(knob & 0x7f) / 0x7f;
    let halves = run(stream, limits, &mut [cut, stream.len() - cut].into_iter());
    assert_eq!(whole, halves, "cut at {cut}");
    let chunk = usize::from(knob & 0x1f) + 1;
    assert_eq!(
        whole,
        run(stream, limits, &mut std::iter::repeat(chunk)),
        "chunks of {chunk}"
    );
    let mut uneven = stream.iter().cycle().map(|b| usize::from(b % 23) + 1);
    assert_eq!(whole, run(stream, limits, &mut uneven), "uneven chunks");
    assert_eq!(whole, run_detached(stream, limits), "frames detached");
});

/// Decodes `stream` whole as the connection's engine does (`Parser::decode_frame_with`), as
/// a lagging subscription would keep each message (detached from the read buffer), and cuts
/// each into its `Msg` only then.
fn run_detached(stream: &[u8], limits: ParserLimits) -> Outcome {
    let mut parser = Parser::new(limits);
    let mut buf = BytesMut::from(stream);
    let mut ops = Vec::new();
    loop {
        let decoded = parser.decode_frame_with(
            &mut buf,
            |mut frame| {
                frame.detach();
                ServerOp::Msg(frame.into_msg())
            },
            |op| op,
        );
        match decoded {
            Ok(Some(op)) => ops.push(op),
            Ok(None) => return (ops, None, buf.len()),
            Err(e) => return (ops, Some(e), 0),
        }
    }
}

/// What decoding a stream ends with: the ops, the error that stopped decoding (if any) and
/// the leftover length.
type Outcome = (Vec<ServerOp>, Option<DecodeError>, usize);

/// Feeds `stream` in pieces whose sizes `sizes` gives (at least 1 each), decoding after
/// each, and returns what came out.
fn run(stream: &[u8], limits: ParserLimits, sizes: &mut dyn Iterator<Item = usize>) -> Outcome {
    let mut parser = Parser::new(limits);
    let mut buf = BytesMut::new();
    let mut ops = Vec::new();
    let mut rest = stream;
    loop {
        match parser.decode(&mut buf) {
            Ok(Some(op)) => ops.push(op),
            Ok(None) if rest.is_empty() => return (ops, None, buf.len()),
            Ok(None) => {
                let size = sizes.next().unwrap_or(rest.len()).min(rest.len());
                let (piece, after) = rest.split_at(size);
                buf.extend_from_slice(piece);
                rest = after;
            }
            Err(e) => return (ops, Some(e), 0),
        }
    }
}
