//! Property tests: encode/decode round trips, chunking independence and
//! robustness against arbitrary bytes.

mod support;

use bytes::BytesMut;
use proptest::collection::vec;
use proptest::prelude::*;
use rnats_proto::{HeaderMap, Parser, ParserLimits, Pub, ServerOp};
use support::{run_bytewise, run_chunked, run_whole};

fn subject() -> impl Strategy<Value = String> {
    vec("[a-zA-Z0-9_\\-]{1,8}", 1..4).prop_map(|tokens| tokens.join("."))
}

fn header_map() -> impl Strategy<Value = HeaderMap> {
    // Values are trimmed on decode, so generated ones neither start nor end
    // with a space.
    let pair = (
        "[A-Za-z][A-Za-z0-9\\-]{0,10}",
        "([!-~]([ -~]{0,10}[!-~])?)?",
    );
    vec(pair, 0..5).prop_map(|pairs| {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(name, value);
        }
        map
    })
}

/// A publish as the client would send it.
#[derive(Debug, Clone)]
struct Publish {
    subject: String,
    reply: Option<String>,
    headers: Option<HeaderMap>,
    payload: Vec<u8>,
}

impl Publish {
    fn as_pub(&self) -> Pub<'_> {
        Pub {
            subject: &self.subject,
            reply: self.reply.as_deref(),
            headers: self.headers.as_ref(),
        }
    }

    /// The same message as a server would deliver it to subscription `sid`:
    /// `PUB s [r] n` becomes `MSG s sid [r] n` (and `HPUB` becomes `HMSG`).
    fn as_delivered(&self, sid: u64) -> Vec<u8> {
        let mut frame = BytesMut::new();
        let publish = self.as_pub();
        publish.encode(&mut frame, &self.payload);
        assert_eq!(frame.len(), publish.encoded_len(self.payload.len()));
        let line_end = frame
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("PUB line ends");
        let line = std::str::from_utf8(&frame[..line_end]).expect("PUB line is text");
        let mut args = line.split(' ');
        let op = if args.next() == Some("HPUB") {
            "HMSG"
        } else {
            "MSG"
        };
        let subject = args.next().expect("PUB line has a subject");
        let rest: Vec<&str> = args.collect();
        let mut out = format!("{op} {subject} {sid} {}", rest.join(" ")).into_bytes();
        out.extend_from_slice(&frame[line_end..]);
        out
    }
}

fn publish() -> impl Strategy<Value = Publish> {
    (
        subject(),
        proptest::option::of(subject()),
        proptest::option::of(header_map()),
        vec(any::<u8>(), 0..64),
    )
        .prop_map(|(subject, reply, headers, payload)| Publish {
            subject,
            reply,
            headers,
            payload,
        })
}

/// One valid server op, with varied case and spacing.
fn server_op() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "[Pp][Ii][Nn][Gg][ \t]{0,2}\r\n".prop_map(String::into_bytes),
        "[Pp][Oo][Nn][Gg]\r\n".prop_map(String::into_bytes),
        "\\+[Oo][Kk]\r\n".prop_map(String::into_bytes),
        ("[a-zA-Z0-9]{1,12}", any::<u32>(), any::<bool>()).prop_map(|(id, max, headers)| {
            let json = format!(r#"{{"server_id":"{id}","max_payload":{max},"headers":{headers}}}"#);
            format!("INFO {json}\r\n").into_bytes()
        }),
        prop::sample::select(vec![
            "Authorization Violation",
            "Stale Connection",
            "Permissions Violation for Publish to \"a.b\"",
            "Unknown Protocol Operation",
        ])
        .prop_map(|text| format!("-ERR '{text}'\r\n").into_bytes()),
        (publish(), any::<u64>()).prop_map(|(p, sid)| p.as_delivered(sid)),
    ]
}

fn small_limits() -> impl Strategy<Value = ParserLimits> {
    (1usize..200, 0usize..400, 0usize..300).prop_map(
        |(max_control_line, max_info_line, max_payload)| ParserLimits {
            max_control_line,
            max_info_line,
            max_payload,
        },
    )
}

proptest! {
    #[test]
    fn pub_frames_decode_as_the_published_message(p in publish(), sid in any::<u64>()) {
        let out = run_whole(&p.as_delivered(sid), ParserLimits::default());
        prop_assert_eq!(out.error, None);
        prop_assert_eq!(out.leftover, 0);
        prop_assert_eq!(out.ops.len(), 1);
        let ServerOp::Msg(msg) = &out.ops[0] else { panic!("{:?}", out.ops) };
        prop_assert_eq!(msg.subject.as_str(), p.subject.as_str());
        prop_assert_eq!(msg.sid, sid);
        prop_assert_eq!(msg.reply.as_ref().map(|r| r.as_str()), p.reply.as_deref());
        prop_assert_eq!(&msg.headers, &p.headers);
        prop_assert_eq!(&msg.payload[..], &p.payload[..]);
        let header_len = p.headers.as_ref().map_or(0, rnats_proto::encoded_len);
        prop_assert_eq!(msg.length, header_len + p.payload.len());
    }

    #[test]
    fn a_frame_kept_whole_or_detached_cuts_into_the_published_message(
        p in publish(),
        sid in any::<u64>(),
    ) {
        let mut buf = BytesMut::from(&p.as_delivered(sid)[..]);
        let frame = Parser::default()
            .decode_frame_with(&mut buf, Some, |_| None)
            .expect("decodes")
            .flatten()
            .expect("a message");
        prop_assert!(buf.is_empty());
        let read = frame.as_bytes().as_ptr_range();
        let header_len = p.headers.as_ref().map_or(0, rnats_proto::encoded_len);
        prop_assert_eq!(frame.sid(), sid);
        prop_assert_eq!(frame.length(), header_len + p.payload.len());
        prop_assert_eq!(frame.subject(), p.subject.as_str());
        let mut detached = frame.clone();
        detached.detach();
        prop_assert!(!read.contains(&detached.as_bytes().as_ptr()));
        for msg in [frame.into_msg(), detached.into_msg()] {
            prop_assert_eq!(msg.subject.as_str(), p.subject.as_str());
            prop_assert_eq!(msg.sid, sid);
            prop_assert_eq!(msg.reply.as_ref().map(|r| r.as_str()), p.reply.as_deref());
            prop_assert_eq!(&msg.headers, &p.headers);
            prop_assert_eq!(&msg.payload[..], &p.payload[..]);
            prop_assert_eq!(msg.length, header_len + p.payload.len());
        }
    }

    #[test]
    fn any_split_yields_the_same_ops(
        ops in vec(server_op(), 0..8),
        chunk_lens in vec(0usize..24, 1..16),
    ) {
        let stream = ops.concat();
        let whole = run_whole(&stream, ParserLimits::default());
        prop_assert_eq!(&whole.error, &None);
        prop_assert_eq!(whole.leftover, 0);
        prop_assert_eq!(whole.ops.len(), ops.len());
        prop_assert_eq!(&run_chunked(&stream, ParserLimits::default(), &chunk_lens), &whole);
        prop_assert_eq!(&run_bytewise(&stream, ParserLimits::default()), &whole);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_ignore_chunking(
        bytes in vec(any::<u8>(), 0..512),
        limits in small_limits(),
        chunk_lens in vec(0usize..24, 1..8),
    ) {
        let whole = run_whole(&bytes, limits);
        prop_assert_eq!(run_chunked(&bytes, limits, &chunk_lens), whole);
    }

    #[test]
    fn mutated_streams_never_panic_and_ignore_chunking(
        ops in vec(server_op(), 1..6),
        edits in vec((any::<usize>(), any::<u8>(), any::<bool>()), 1..4),
        limits in prop_oneof![Just(ParserLimits::default()), small_limits()],
        chunk_lens in vec(0usize..24, 1..8),
    ) {
        let mut stream = ops.concat();
        for (at, byte, insert) in edits {
            let at = at % (stream.len() + 1);
            if insert || at == stream.len() {
                stream.insert(at, byte);
            } else {
                stream[at] = byte;
            }
        }
        let whole = run_whole(&stream, limits);
        prop_assert_eq!(&run_chunked(&stream, limits, &chunk_lens), &whole);
        prop_assert_eq!(&run_bytewise(&stream, limits), &whole);
    }
}
