//! Fuzzes JetStream ack subjects (`Info::from_ack_subject`): the v1 layout
//! `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>` and
//! the v2 layout with `<domain>.<account hash>` first and an optional token last.
//!
//! Structure-aware: an input is either raw text or the fields of a subject, which are written
//! out in either layout and must read back as themselves.

#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use rnats_jetstream::message::Info;

#[derive(Debug, Arbitrary)]
enum Input<'a> {
    Raw(&'a str),
    Fields(Fields<'a>),
}

#[derive(Debug, Arbitrary)]
struct Fields<'a> {
    v2: Option<(Option<&'a str>, &'a str, Option<&'a str>)>,
    stream: &'a str,
    consumer: &'a str,
    delivered: i64,
    stream_sequence: u64,
    consumer_sequence: u64,
    nanos: i64,
    pending: u64,
}

fuzz_target!(|input: Input<'_>| {
    match input {
        Input::Raw(text) => {
            let _ = Info::from_ack_subject(text);
        }
        Input::Fields(fields) => round_trip(&fields),
    }
});

fn round_trip(f: &Fields<'_>) {
    let plain = |t: &str| !t.is_empty() && !t.contains('.');
    let names = [f.stream, f.consumer];
    if !names.iter().all(|t| plain(t)) {
        return;
    }
    let tail = format!(
        "{}.{}.{}.{}.{}.{}.{}",
        f.stream,
        f.consumer,
        f.delivered,
        f.stream_sequence,
        f.consumer_sequence,
        f.nanos,
        f.pending
    );
    let subject = match f.v2 {
        None => format!("$JS.ACK.{tail}"),
        Some((domain, hash, token)) => {
            if !plain(hash) || domain.is_some_and(|d| !plain(d) || d == "_") {
                return;
            }
            if token.is_some_and(|t| t.contains('.')) {
                return;
            }
            let mut s = format!("$JS.ACK.{}.{hash}.{tail}", domain.unwrap_or("_"));
            if let Some(token) = token {
                s.push('.');
                s.push_str(token);
            }
            s
        }
    };
    let info = Info::from_ack_subject(&subject).expect("a well-formed ack subject parses");
    assert_eq!(info.stream, f.stream);
    assert_eq!(info.consumer, f.consumer);
    assert_eq!(info.delivered, f.delivered);
    assert_eq!(info.stream_sequence, f.stream_sequence);
    assert_eq!(info.consumer_sequence, f.consumer_sequence);
    assert_eq!(info.published.unix_timestamp_nanos(), i128::from(f.nanos));
    assert_eq!(info.pending, f.pending);
    match f.v2 {
        None => assert_eq!((info.domain, info.acc_hash, info.token), (None, None, None)),
        Some((domain, hash, token)) => {
            assert_eq!(info.domain, domain);
            assert_eq!(info.acc_hash, Some(hash));
            assert_eq!(info.token, token);
        }
    }
}
