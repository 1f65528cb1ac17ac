//! Byte-literal tests for every server op and every decode error.

mod support;

use bytes::BytesMut;
use rnats_proto::{
    DecodeError, HeaderMap, Msg, Parser, ParserLimits, PermissionOp, ServerError, ServerOp,
    StatusCode, Subject, SubjectCause,
};
use support::{run_bytewise, run_whole};

/// Decodes `input` whole and expects it to be fully consumed without error.
fn ops(input: &[u8]) -> Vec<ServerOp> {
    let out = run_whole(input, ParserLimits::default());
    assert_eq!(out.error, None, "{input:?}");
    assert_eq!(out.leftover, 0, "{input:?}");
    out.ops
}

fn one(input: &[u8]) -> ServerOp {
    let mut all = ops(input);
    assert_eq!(all.len(), 1, "{all:?}");
    all.remove(0)
}

fn msg(input: &[u8]) -> Msg {
    match one(input) {
        ServerOp::Msg(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

fn error_with(input: &[u8], limits: ParserLimits) -> DecodeError {
    let out = run_whole(input, limits);
    match out.error {
        Some(e) => e,
        None => panic!("no error for {input:?}: {:?}", out.ops),
    }
}

fn error(input: &[u8]) -> DecodeError {
    error_with(input, ParserLimits::default())
}

fn server_err(text: &[u8]) -> ServerError {
    let mut line = b"-ERR ".to_vec();
    line.extend_from_slice(text);
    line.extend_from_slice(b"\r\n");
    match one(&line) {
        ServerOp::Err(e) => e,
        other => panic!("expected -ERR, got {other:?}"),
    }
}

#[test]
fn ping_pong_ok_in_any_case_and_spacing() {
    assert_eq!(
        ops(b"PING\r\nping\r\nPoNg\r\n+OK\r\n+ok\r\nPING \t \r\n"),
        [
            ServerOp::Ping,
            ServerOp::Ping,
            ServerOp::Pong,
            ServerOp::Ok,
            ServerOp::Ok,
            ServerOp::Ping
        ]
    );
}

#[test]
fn info() {
    let op = one(
        b"INFO {\"server_id\":\"NABC\",\"version\":\"2.10.0\",\"port\":4222,\"headers\":true,\
          \"max_payload\":1048576,\"proto\":1,\"client_id\":7,\"nonce\":\"xyz\",\"ldm\":false,\
          \"connect_urls\":[\"a:4222\",\"b:4222\"],\"unknown\":[1,2]}\r\n",
    );
    let ServerOp::Info(info) = op else {
        panic!("{op:?}")
    };
    assert_eq!(info.server_id, "NABC");
    assert_eq!(info.port, 4222);
    assert!(info.headers);
    assert_eq!(info.max_payload, 1_048_576);
    assert_eq!(info.proto, 1);
    assert_eq!(info.client_id, 7);
    assert_eq!(info.nonce, "xyz");
    assert_eq!(info.connect_urls, ["a:4222", "b:4222"]);
    assert!(matches!(one(b"info\t{}\r\n"), ServerOp::Info(_)));
}

#[test]
fn msg_without_reply() {
    let m = msg(b"MSG foo.bar 9 11\r\nHello World\r\n");
    assert_eq!(m.subject, "foo.bar");
    assert_eq!(m.sid, 9);
    assert_eq!(m.reply, None);
    assert_eq!(m.headers, None);
    assert_eq!(m.status, None);
    assert_eq!(&m.payload[..], b"Hello World");
    assert_eq!(m.length, 11);
}

#[test]
fn msg_with_reply_tabs_and_mixed_case() {
    let m = msg(b"msg \t foo.bar  9\tINBOX.34   2 \r\nhi\r\n");
    assert_eq!(m.subject, "foo.bar");
    assert_eq!(m.reply, Some(Subject::from_static("INBOX.34")));
    assert_eq!(&m.payload[..], b"hi");
}

#[test]
fn msg_with_empty_payload_and_binary_payload() {
    assert!(msg(b"MSG a 1 0\r\n\r\n").payload.is_empty());
    // The payload may itself contain CRLF and op names.
    let m = msg(b"MSG a 1 8\r\nPING\r\n\r\n\r\n");
    assert_eq!(&m.payload[..], b"PING\r\n\r\n");
}

#[test]
fn hmsg_with_headers() {
    let m = msg(b"HMSG foo 1 reply 30 35\r\nNATS/1.0\r\nA: 1\r\nB: 2\r\nA: 3\r\n\r\nhello\r\n");
    let mut expected = HeaderMap::new();
    expected.append("A", "1");
    expected.append("B", "2");
    expected.append("A", "3");
    assert_eq!(m.headers, Some(expected));
    assert_eq!(m.reply, Some(Subject::from_static("reply")));
    assert_eq!(&m.payload[..], b"hello");
    assert_eq!(m.length, 35);
}

#[test]
fn hmsg_with_only_version_line_has_empty_map() {
    let m = msg(b"HMSG foo 1 12 12\r\nNATS/1.0\r\n\r\n\r\n");
    assert_eq!(m.headers, Some(HeaderMap::new()));
    assert!(m.payload.is_empty());
}

#[test]
fn hmsg_no_responders() {
    let m = msg(b"HMSG _INBOX.abc 3 16 16\r\nNATS/1.0 503\r\n\r\n\r\n");
    assert_eq!(m.status, Some(StatusCode::NO_RESPONDERS));
    assert_eq!(m.description, None);
    assert_eq!(m.headers, Some(HeaderMap::new()));
    // Some servers count only the version line as the header block.
    let m = msg(b"HMSG _INBOX.abc 3 14 14\r\nNATS/1.0 503\r\n\r\n");
    assert_eq!(m.status, Some(StatusCode::NO_RESPONDERS));
}

#[test]
fn hmsg_jetstream_statuses() {
    let m = msg(b"HMSG _INBOX.x 2 81 81\r\nNATS/1.0 408 Request Timeout\r\n\
          Nats-Pending-Messages: 1\r\nNats-Pending-Bytes: 0\r\n\r\n\r\n");
    assert_eq!(m.status, Some(StatusCode::TIMEOUT));
    assert_eq!(m.description.as_deref(), Some("Request Timeout"));
    let headers = m.headers.unwrap();
    assert_eq!(headers.get("Nats-Pending-Messages").unwrap(), "1");
    let m = msg(b"HMSG x 2 31 31\r\nNATS/1.0 100 Idle Heartbeat\r\n\r\n\r\n");
    assert_eq!(m.status, Some(StatusCode::IDLE_HEARTBEAT));
}

#[test]
fn err_texts() {
    assert_eq!(
        server_err(b"'Authorization Violation'"),
        ServerError::AuthorizationViolation
    );
    assert_eq!(
        server_err(b"'user authentication expired'"),
        ServerError::AuthenticationExpired
    );
    assert_eq!(
        server_err(b"'Stale Connection'"),
        ServerError::StaleConnection
    );
    assert_eq!(
        server_err(b"'Maximum Payload Violation'"),
        ServerError::MaxPayload
    );
    assert_eq!(
        server_err(b"'maximum connections exceeded'"),
        ServerError::MaxConnectionsExceeded
    );
    assert_eq!(
        server_err(b"'maximum account active connections exceeded'"),
        ServerError::MaxAccountConnectionsExceeded
    );
    assert_eq!(
        server_err(b"'maximum subscriptions exceeded'"),
        ServerError::MaxSubscriptionsExceeded
    );
    assert_eq!(
        server_err(b"'User Authentication Revoked'"),
        ServerError::AuthenticationRevoked
    );
    assert_eq!(
        server_err(b"'Account Authentication Expired'"),
        ServerError::AccountAuthenticationExpired
    );
    assert_eq!(
        server_err(b"'Permissions Violation for Subscription to \"foo.bar\"'"),
        ServerError::PermissionViolation {
            operation: PermissionOp::Subscribe,
            subject: "foo.bar".into(),
            queue: None
        }
    );
    assert_eq!(
        server_err(b"'Permissions Violation for Subscription to \"foo\" using queue \"q\"'"),
        ServerError::PermissionViolation {
            operation: PermissionOp::Subscribe,
            subject: "foo".into(),
            queue: Some("q".into())
        }
    );
    assert_eq!(
        server_err(b"'Permissions Violation for Publish to \"foo\"'"),
        ServerError::PermissionViolation {
            operation: PermissionOp::Publish,
            subject: "foo".into(),
            queue: None
        }
    );
    assert_eq!(
        server_err(b"'Unknown Protocol Operation'"),
        ServerError::Other("Unknown Protocol Operation".into())
    );
    assert_eq!(
        server_err(b"no quotes"),
        ServerError::Other("no quotes".into())
    );
    assert_eq!(
        one(b"-err\t'Stale Connection'  \r\n"),
        ServerOp::Err(ServerError::StaleConnection)
    );
}

#[test]
fn an_info_line_has_a_limit_of_its_own() {
    let limits = ParserLimits {
        max_control_line: 16,
        max_info_line: 64,
        ..Default::default()
    };
    // An INFO far over the control-line limit parses (any case, any chunking).
    let info = b"INFO {\"server_id\":\"a-server-with-a-long-id\"}\r\n";
    assert!(info.len() > 16 + 2 && info.len() < 64);
    for input in [
        &info[..],
        &b"info {\"server_id\":\"a-server-with-a-long-id\"}\r\n"[..],
    ] {
        let outcome = run_whole(input, limits);
        assert_eq!(outcome.error, None);
        assert!(matches!(outcome.ops.as_slice(), [ServerOp::Info(_)]));
        assert_eq!(run_bytewise(input, limits).error, None);
    }
    // Every other line keeps the tight limit...
    assert_eq!(
        error_with(b"MSG a.very.long.subject.name 1 0\r\n\r\n", limits),
        DecodeError::ControlLineTooLong { max: 16 }
    );
    // ...and an INFO still has one.
    let mut huge = b"INFO {\"server_id\":\"".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 100));
    assert_eq!(
        error_with(&huge, limits),
        DecodeError::ControlLineTooLong { max: 64 }
    );
    // The default is far above a 4,000-server cluster's INFO.
    assert!(ParserLimits::default().max_info_line >= 4 * 1024 * 1024);
}

#[test]
fn control_line_too_long() {
    let limits = ParserLimits {
        max_control_line: 8,
        ..Default::default()
    };
    // Exactly at the limit is fine.
    assert_eq!(
        run_whole(
            b"MSG a 1 0\r\n\r\n",
            ParserLimits {
                max_control_line: 9,
                ..limits
            }
        )
        .error,
        None
    );
    // Over it, with or without a newline further on, fails without waiting.
    let too_long = DecodeError::ControlLineTooLong { max: 8 };
    assert_eq!(error_with(b"MSG a 1 0\r\n\r\n", limits), too_long);
    assert_eq!(error_with(b"PINGPINGPINGPING", limits), too_long);
    // Shorter than the limit without a newline is merely incomplete.
    let out = run_whole(b"PINGPING", limits);
    assert_eq!((out.error, out.leftover), (None, 8));
}

#[test]
fn unknown_ops() {
    assert_eq!(
        error(b"FOO bar\r\n"),
        DecodeError::UnknownOp { op: "FOO".into() }
    );
    assert_eq!(error(b"\r\n"), DecodeError::UnknownOp { op: String::new() });
    assert_eq!(
        error(b" PING\r\n"),
        DecodeError::UnknownOp { op: String::new() }
    );
    assert_eq!(
        error(b"PINGX\r\n"),
        DecodeError::UnknownOp { op: "PINGX".into() }
    );
    assert_eq!(
        error(b"INFO{}\r\n"),
        DecodeError::UnknownOp {
            op: "INFO{}".into()
        }
    );
}

#[test]
fn invalid_arguments() {
    let msg = DecodeError::InvalidArguments { op: "MSG" };
    let hmsg = DecodeError::InvalidArguments { op: "HMSG" };
    assert_eq!(error(b"MSG\r\n"), msg);
    assert_eq!(error(b"MSG foo 1\r\n"), msg);
    assert_eq!(error(b"MSG foo 1 r x 5\r\n"), msg);
    assert_eq!(error(b"MSG a b c d e f g\r\n"), msg);
    assert_eq!(error(b"HMSG foo 1 5\r\n"), hmsg);
    assert_eq!(error(b"HMSG foo 1 r x 5 5\r\n"), hmsg);
    assert_eq!(
        error(b"PING x\r\n"),
        DecodeError::InvalidArguments { op: "PING" }
    );
    assert_eq!(
        error(b"PONG x\r\n"),
        DecodeError::InvalidArguments { op: "PONG" }
    );
    assert_eq!(
        error(b"+OK x\r\n"),
        DecodeError::InvalidArguments { op: "+OK" }
    );
    assert_eq!(
        error(b"INFO  \r\n"),
        DecodeError::InvalidArguments { op: "INFO" }
    );
}

#[test]
fn invalid_numbers() {
    let msg = DecodeError::InvalidNumber { op: "MSG" };
    assert_eq!(error(b"MSG foo x 5\r\n"), msg);
    assert_eq!(error(b"MSG foo 1 -5\r\n"), msg);
    assert_eq!(error(b"MSG foo 1 +5\r\n"), msg);
    assert_eq!(error(b"MSG foo 1 5x\r\n"), msg);
    assert_eq!(error(b"MSG foo 1 99999999999999999999999\r\n"), msg);
    assert_eq!(
        error(b"HMSG foo 1 x 5\r\n"),
        DecodeError::InvalidNumber { op: "HMSG" }
    );
}

#[test]
fn payload_too_large() {
    assert_eq!(
        error(b"MSG foo 1 67108865\r\n"),
        DecodeError::PayloadTooLarge {
            size: 64 * 1024 * 1024 + 1,
            max: 64 * 1024 * 1024
        }
    );
    let mut parser = Parser::new(ParserLimits::default());
    parser.set_max_payload(4);
    let mut buf = BytesMut::from(&b"MSG a 1 4\r\nabcd\r\nHMSG a 1 3 5\r\n"[..]);
    assert!(matches!(
        parser.decode(&mut buf),
        Ok(Some(ServerOp::Msg(_)))
    ));
    assert_eq!(
        parser.decode(&mut buf),
        Err(DecodeError::PayloadTooLarge { size: 5, max: 4 })
    );
}

#[test]
fn header_size_exceeds_total() {
    assert_eq!(
        error(b"HMSG foo 1 20 10\r\n"),
        DecodeError::HeaderSizeExceedsTotal {
            header_len: 20,
            total_len: 10
        }
    );
}

#[test]
fn missing_terminator() {
    assert_eq!(
        error(b"MSG foo 1 2\r\nhiXX"),
        DecodeError::MissingTerminator
    );
    assert_eq!(
        error(b"MSG foo 1 2\r\nhello\r\n"),
        DecodeError::MissingTerminator
    );
    assert_eq!(error(b"PING\n"), DecodeError::MissingTerminator);
    assert_eq!(error(b"\n"), DecodeError::MissingTerminator);
}

#[test]
fn received_subjects_must_be_utf8_and_nothing_more() {
    // The server relays what publishers gave it: a subject or reply outside the subject
    // rules is delivered as it came; only bytes that are not UTF-8 end the frame.
    assert_eq!(
        error(b"MSG \xff 1 0\r\n\r\n"),
        DecodeError::InvalidSubject(SubjectCause::NotUtf8)
    );
    assert_eq!(
        error(b"MSG a 1 r\xe9 0\r\n\r\n"),
        DecodeError::InvalidSubject(SubjectCause::NotUtf8)
    );
    let mut parser = Parser::new(ParserLimits::default());
    let mut buf = BytesMut::from(&b"MSG a..b 1 >.x 0\r\n\r\n"[..]);
    let Ok(Some(ServerOp::Msg(msg))) = parser.decode(&mut buf) else {
        panic!("refused")
    };
    assert_eq!(msg.subject.as_str(), "a..b");
    assert_eq!(msg.reply.as_ref().map(|r| r.as_str()), Some(">.x"));
}

#[test]
fn invalid_header_blocks() {
    let cases: &[&[u8]] = &[
        b"HMSG a 1 5 5\r\nHTTP/\r\n",
        b"HMSG a 1 15 15\r\nNATS/1.0\r\nA\r\n\r\n\r\n",
        b"HMSG a 1 0 0\r\n\r\n",
        b"HMSG a 1 16 16\r\nNATS/1.0 5x3\r\n\r\n\r\n",
    ];
    for input in cases {
        assert!(
            matches!(error(input), DecodeError::InvalidHeaders { .. }),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn invalid_info() {
    assert!(matches!(
        error(b"INFO {\"port\":\"x\"}\r\n"),
        DecodeError::InvalidInfo(_)
    ));
    assert!(matches!(error(b"INFO {\r\n"), DecodeError::InvalidInfo(_)));
    assert!(matches!(error(b"INFO 5\r\n"), DecodeError::InvalidInfo(_)));
}

#[test]
fn errors_have_messages() {
    let e = DecodeError::PayloadTooLarge { size: 5, max: 4 };
    assert_eq!(
        e.to_string(),
        "message of 5 bytes exceeds the limit of 4 bytes"
    );
    let e = DecodeError::InvalidSubject(SubjectCause::Empty);
    assert_eq!(
        e.to_string(),
        "invalid subject in message: subject is empty"
    );
}

#[test]
fn partial_frames_wait_for_more() {
    let mut parser = Parser::new(ParserLimits::default());
    let mut buf = BytesMut::new();
    for piece in [
        &b"HM"[..],
        b"SG foo 1 12 14\r",
        b"\nNATS/1.0\r\n\r",
        b"\nh",
        b"i\r",
    ] {
        buf.extend_from_slice(piece);
        assert_eq!(parser.decode(&mut buf), Ok(None));
    }
    buf.extend_from_slice(b"\nPONG\r\n");
    let Ok(Some(ServerOp::Msg(m))) = parser.decode(&mut buf) else {
        panic!()
    };
    assert_eq!(&m.payload[..], b"hi");
    assert_eq!(parser.decode(&mut buf), Ok(Some(ServerOp::Pong)));
    assert_eq!(parser.decode(&mut buf), Ok(None));
    assert!(buf.is_empty());
}
