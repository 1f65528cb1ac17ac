//! Answers as servers send them, decoded: unknown fields kept, missing ones defaulted,
//! errors and undecodable text reported.

use serde_json::json;

use super::census::{Gathering, Until};
use super::*;

/// One answer decoded as a gathering decodes it: its envelope, then its data as `T`.
fn decode_answer<T: DeserializeOwned>(
    payload: &[u8],
) -> Result<ServerAnswer<T>, AnswerDecodeError> {
    ServerAnswer::decode_envelope(payload).map(ServerAnswer::decode_data)
}

/// An answer with `data`, as a 2.15 server sends it, plus fields no server sends yet at
/// every level.
fn varz_answer() -> Vec<u8> {
    json!({
        "server": {
            "name": "n1", "host": "0.0.0.0", "id": "NID1", "cluster": "c1", "ver": "2.15.1",
            "jetstream": true, "flags": 3, "seq": 42, "time": "2026-12-07T07:00:00.5Z",
            "from_the_future": {"a": 1}
        },
        "data": {
            "server_id": "NID1", "server_name": "n1", "version": "2.15.1", "go": "go1.25",
            "host": "0.0.0.0", "port": 4222, "max_connections": 65536, "connections": 3,
            "total_connections": 9, "routes": 2, "remotes": 2, "leafnodes": 0,
            "in_msgs": 10, "out_msgs": 11, "in_bytes": 100, "out_bytes": 110,
            "slow_consumers": 0, "subscriptions": 57, "mem": 12345, "cpu": 1.5, "cores": 2,
            "start": "2026-12-07T06:00:00Z", "now": "2026-12-07T07:00:00Z", "uptime": "1h",
            "jetstream": {
                "config": {"max_memory": -1, "max_storage": 1024, "store_dir": "/tmp/js",
                           "sync_interval": 120_000_000_000_i64},
                "stats": {"memory": 0, "storage": 5, "accounts": 1, "ha_assets": 2,
                          "api": {"level": 2, "total": 7, "errors": 1, "brand_new": true}},
                "meta": {"name": "c1", "leader": "n2", "cluster_size": 3, "pending": 0}
            },
            "cluster": {"name": "c1", "cluster_port": 6222},
            "a_new_counter": 99
        },
        "another_envelope_field": "x"
    })
    .to_string()
    .into_bytes()
}

#[test]
fn unknown_fields_do_not_break_decoding_and_are_kept() {
    let answer = decode_answer::<Varz>(&varz_answer()).unwrap();
    assert_eq!(answer.server.id, "NID1");
    assert_eq!(answer.server.version, "2.15.1");
    assert_eq!(answer.server.seq, 42);
    assert!(answer.server.time.is_some());
    assert_eq!(answer.server.extra["from_the_future"], json!({"a": 1}));
    assert_eq!(answer.error, None);
    assert_eq!(answer.rtt, None, "decoded from text, not received");
    let varz = answer.data.unwrap();
    assert_eq!(
        (varz.server_name.as_str(), varz.port, varz.connections),
        ("n1", 4222, 3)
    );
    assert_eq!(varz.extra["a_new_counter"], 99);
    assert_eq!(varz.extra["cluster"]["cluster_port"], 6222);
    let stats = varz.jetstream.stats.unwrap();
    assert_eq!((stats.storage, stats.api.total), (5, 7));
    assert_eq!(stats.api.extra["brand_new"], true);
    assert_eq!(varz.jetstream.config.unwrap().max_memory, -1);
    assert_eq!(varz.jetstream.meta.unwrap().leader, "n2");
}

#[test]
fn a_pings_statsz_is_the_data_and_missing_fields_default() {
    let text = json!({
        "server": {"name": "n1", "id": "NID1"},
        "statsz": {"connections": 2, "active_servers": 3, "sent": {"msgs": 4, "bytes": 5}}
    });
    let answer = decode_answer::<ServerStats>(text.to_string().as_bytes()).unwrap();
    let stats = answer.data.unwrap();
    assert_eq!((stats.connections, stats.active_servers), (2, 3));
    assert_eq!((stats.sent.msgs, stats.sent.bytes), (4, 5));
    assert_eq!(stats.start, None);
    assert_eq!(answer.server.version, "");
}

#[test]
fn an_error_answer_has_no_data_and_says_why() {
    let text = r#"{"server":{"name":"n1","id":"NID1"},"error":{"code":400,"description":"invalid character 'x'"}}"#;
    let answer = decode_answer::<Connz>(text.as_bytes()).unwrap();
    assert!(answer.data.is_none());
    assert_eq!(answer.decode_error, None);
    let AnswerError::Server(error) = answer.into_result().unwrap_err() else {
        panic!("the server's error");
    };
    assert_eq!(error.code, 400);
    assert!(error.to_string().contains("invalid character"), "{error}");
}

#[test]
fn an_answer_that_is_no_envelope_is_a_decode_error_with_its_text() {
    for text in [&b"not json"[..], br#"{"server":{"id":7}}"#, b"[1]"] {
        let error = decode_answer::<Varz>(text).unwrap_err();
        assert_eq!(error.text().as_bytes(), text);
        assert!(std::error::Error::source(&error).is_some());
    }
}

#[test]
fn data_of_another_shape_costs_the_data_alone_and_says_why() {
    let text = br#"{"server":{"name":"n1","id":"NID1"},"data":{"port":"x"}}"#;
    let answer = decode_answer::<Varz>(text).unwrap();
    assert_eq!(answer.server.id, "NID1", "the envelope decoded");
    assert_eq!(answer.data, None);
    let error = answer
        .decode_error
        .clone()
        .expect("why the data is missing");
    assert_eq!(
        error.text(),
        r#"{"port":"x"}"#,
        "the data's text, not the answer's"
    );
    assert!(error.to_string().contains("port") || error.to_string().contains("string"));
    assert_eq!(answer.into_result(), Err(AnswerError::Decode(error)));
    // The same answer as JSON decodes whole.
    let raw = decode_answer::<Value>(text).unwrap();
    assert_eq!(raw.data, Some(json!({"port": "x"})));
    assert_eq!(raw.decode_error, None);
}

/// A ping's answer from `id`, which counts `active` servers up.
fn ping_from(id: &str, active: u64) -> Vec<u8> {
    json!({"server": {"name": id, "id": id}, "statsz": {"active_servers": active}})
        .to_string()
        .into_bytes()
}

/// Gathers `payloads` as they would arrive, until `until`, decoding each as `T`.
fn gather_payloads<T: DeserializeOwned>(
    until: Until,
    payloads: &[&[u8]],
    ended: Option<ManyEnd>,
) -> Result<Gathered<T>, SystemError> {
    let mut gathering = Gathering::new(until);
    let answers = payloads
        .iter()
        .map(|payload| handle_payload(&mut gathering, payload))
        .collect();
    gathered(answers, &gathering, ended)
}

#[test]
fn one_answer_that_does_not_decode_keeps_the_others() {
    let a = ping_from("A", 3);
    let b_bad_data = br#"{"server":{"name":"B","id":"B"},"statsz":{"active_servers":"three"}}"#;
    let garbage = b"\x00 not json";
    let ping = Until::Ping { filtered: false };
    let got = gather_payloads::<ServerStats>(ping, &[&a, b_bad_data, garbage], None).unwrap();
    assert_eq!(got.answers.len(), 3, "every answer is kept");
    assert_eq!(got.answers[0].data.as_ref().unwrap().active_servers, 3);
    // B's envelope decoded: it answered, its statistics did not decode.
    assert_eq!(got.answers[1].server.id, "B");
    assert!(got.answers[1].data.is_none());
    assert!(got.answers[1].decode_error.is_some());
    // The garbage is from nobody known, with its text.
    assert_eq!(got.answers[2].server, ServerIdentity::default());
    let error = got.answers[2].decode_error.as_ref().unwrap();
    assert_eq!(error.text().as_bytes(), garbage);
    // A and B answered of the three A counts; the garbage stands in for nobody.
    assert_eq!(got.missing, 1);
    // As JSON, B's statistics are whole.
    let ping = Until::Ping { filtered: false };
    let raw = gather_payloads::<Value>(ping, &[&a, b_bad_data, garbage], None).unwrap();
    assert_eq!(
        raw.answers[1].data.as_ref().unwrap()["active_servers"],
        "three"
    );
}

#[test]
fn only_answers_that_all_fail_to_decode_fail_the_gathering() {
    let error = gather_payloads::<Varz>(Until::Count(2), &[b"nope", b"{"], None).unwrap_err();
    assert_eq!(error.kind(), SystemErrorKind::Decode);
    let source = std::error::Error::source(&error)
        .and_then(|e| e.downcast_ref::<AnswerDecodeError>())
        .expect("the first answer's error as the source");
    assert_eq!(source.text(), "nope");
    // An answer whose data alone failed is still an answer from a known server.
    let bad_data = br#"{"server":{"id":"A"},"data":{"port":"x"}}"#;
    let got = gather_payloads::<Varz>(Until::Count(2), &[b"nope", bad_data], None).unwrap();
    assert_eq!(got.answers.len(), 2);
    assert_eq!(
        got.missing, 1,
        "both answers are kept, but the one from nobody known counts for no server"
    );
}

#[test]
fn no_answer_is_no_answer_unless_the_client_closed() {
    let none = gather_payloads::<Varz>(Until::Count(1), &[], Some(ManyEnd::Timeout));
    assert_eq!(none.unwrap_err().kind(), SystemErrorKind::NoAnswer);
    let closed = gather_payloads::<Varz>(Until::Count(1), &[], Some(ManyEnd::Closed));
    assert_eq!(closed.unwrap_err().kind(), SystemErrorKind::Request);
}

#[test]
fn options_are_sent_with_the_servers_names_and_only_when_set() {
    assert_eq!(json_of(&ConnzOptions::new()), json!({}));
    assert_eq!(
        json_of(
            &ConnzOptions::new()
                .sort(ConnzSort::MsgsTo)
                .subscriptions(true)
                .state(ConnState::All)
                .account("APP")
                .limit(5)
        ),
        json!({"sort": "msgs_to", "subscriptions": true, "state": 2, "acc": "APP", "limit": 5})
    );
    assert_eq!(
        json_of(&HealthzOptions::new().js_server_only(true)),
        json!({"js-server-only": true})
    );
    assert_eq!(
        json_of(&JszOptions::new().streams(true).account("APP")),
        json!({"streams": true, "account": "APP"})
    );
}

/// Options of any kind, as the JSON they send.
fn json_of<T: serde::Serialize>(options: &T) -> Value {
    serde_json::to_value(options).unwrap()
}

#[test]
fn requests_go_to_every_server_or_to_one_with_options_and_filter_in_one_body() {
    assert_eq!(subject(None, "VARZ").unwrap(), "$SYS.REQ.SERVER.PING.VARZ");
    assert_eq!(
        subject(Some("NID1"), "JSZ").unwrap(),
        "$SYS.REQ.SERVER.NID1.JSZ"
    );
    let bad = subject(Some("N.ID"), "VARZ").unwrap_err();
    assert_eq!(bad.kind(), SystemErrorKind::InvalidSubject);

    assert!(body(Map::new(), &ServerFilter::new()).unwrap().is_empty());
    let Value::Object(options) = json_of(&JszOptions::new().accounts(true)) else {
        panic!("options are an object");
    };
    let sent = body(options, &ServerFilter::new().cluster("east")).unwrap();
    let sent: Value = serde_json::from_slice(&sent).unwrap();
    assert_eq!(sent, json!({"accounts": true, "cluster": "east"}));
}

#[test]
fn kinds_and_server_ids_must_be_single_tokens() {
    assert!(is_token("VARZ"));
    assert!(is_token("NCXYZ123"));
    for bad in ["", "A.B", "*", ">", "A B"] {
        assert!(!is_token(bad), "{bad:?}");
    }
}
