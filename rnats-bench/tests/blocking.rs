//! The blocking client's scenarios against a real nats-server: every scenario must move real
//! messages, so its column cannot silently measure nothing.

use std::time::Duration;

use rnats_bench::blocking;
use rnats_test_server::NatsServer;

#[test]
fn blocking_scenarios_run_against_a_server() {
    let server = NatsServer::start();
    let url = server.url();

    let published = blocking::publish(&url, 32, 5_000).expect("publish");
    assert!(published.per_sec > 0.0 && published.mb_per_sec > 0.0);

    for size in [32, 8 * 1024] {
        let received = blocking::subscribe(&url, size, 3_000).expect("subscribe");
        assert!(received.per_sec > 0.0, "size {size}");
    }

    let (rate, latency) = blocking::request(&url, 200).expect("request");
    assert!(rate.per_sec > 0.0);
    assert!(latency.p50_us > 0.0 && latency.p50_us <= latency.p99_us);

    let busy = blocking::latency(&url, 100, None).expect("latency");
    assert!(busy.p50_us > 0.0 && busy.p50_us <= busy.p99_us);
    let idle = blocking::latency(&url, 3, Some(Duration::from_millis(5))).expect("idle");
    assert!(idle.p50_us > 0.0);
}

#[test]
fn a_missing_server_is_an_error_not_a_hang() {
    let server = NatsServer::start();
    let url = server.url();
    drop(server);
    assert!(blocking::publish(&url, 32, 10).is_err());
}
