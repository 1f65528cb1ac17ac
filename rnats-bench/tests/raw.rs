//! The raw client against a real nats-server: every scenario must move real messages, so the
//! baseline cannot silently measure nothing.

use std::time::Duration;

use rnats_bench::raw::{Connection, RawError, scenarios};
use rnats_test_server::NatsServer;

#[test]
fn raw_scenarios_run_against_a_server() {
    let server = NatsServer::start();
    let url = server.url();

    let published = scenarios::publish(&url, 32, 5_000).expect("publish");
    assert!(published.per_sec > 0.0 && published.mb_per_sec > 0.0);

    // Large payloads too: 8 KiB frames straddle the 64 KiB write and 256 KiB read buffers.
    for size in [32, 8 * 1024] {
        let received = scenarios::subscribe(&url, size, 3_000).expect("subscribe");
        assert!(received.per_sec > 0.0, "size {size}");
    }

    let (rate, latency) = scenarios::request(&url, 200).expect("request");
    assert!(rate.per_sec > 0.0);
    assert!(latency.p50_us > 0.0 && latency.p50_us <= latency.p99_us);

    let busy = scenarios::latency(&url, 100, None).expect("latency");
    assert!(busy.p50_us > 0.0 && busy.p50_us <= busy.p99_us);
    let idle = scenarios::latency(&url, 3, Some(Duration::from_millis(5))).expect("idle");
    assert!(idle.p50_us > 0.0);
}

#[test]
fn messages_arrive_intact_and_in_order() {
    let server = NatsServer::start();
    let mut connection = Connection::connect(&server.url()).expect("connect");
    connection.subscribe(b"raw.echo", 7).expect("sub");
    assert_eq!(connection.flush().expect("flush"), 0);
    for i in 0..1_000u32 {
        let payload = i.to_string().repeat(i as usize % 50);
        connection
            .publish(b"raw.echo", Some(b"raw.reply"), payload.as_bytes())
            .expect("pub");
    }
    for i in 0..1_000u32 {
        let msg = connection.next_msg().expect("message");
        assert_eq!(
            msg.payload,
            i.to_string().repeat(i as usize % 50).as_bytes()
        );
        assert_eq!(msg.reply, Some(&b"raw.reply"[..]));
    }
    // Messages that come back before the PONG are counted and consumed by the flush.
    for _ in 0..10 {
        connection.publish(b"raw.echo", None, b"x").expect("pub");
    }
    assert_eq!(connection.flush().expect("flush"), 10);

    connection.publish(b"raw.echo", None, b"last").expect("pub");
    let msg = connection.next_msg().expect("message");
    assert_eq!(msg.subject, b"raw.echo");
    assert_eq!(msg.sid, 7);
    assert_eq!(msg.reply, None);
    assert_eq!(msg.payload, b"last");
}

#[test]
fn a_dead_server_is_an_error() {
    let mut server = NatsServer::start();
    let url = server.url();
    let mut connection = Connection::connect(&url).expect("connect");
    connection
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    server.kill();
    let err = connection.flush().expect_err("the server is gone");
    assert!(
        matches!(err, RawError::Closed | RawError::Io(_)),
        "unexpected {err}"
    );
    assert!(Connection::connect(&url).is_err());
}
