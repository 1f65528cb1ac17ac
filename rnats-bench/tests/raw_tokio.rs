//! The raw client on tokio against a real nats-server: its scenarios must move real messages
//! in both shapes the compare bench runs them in, so the floor it reports is a measurement.

use std::time::Duration;

use rnats_bench::raw::RawError;
use rnats_bench::raw::on_tokio::{self, TokioConnection};
use rnats_test_server::NatsServer;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn every_scenario(url: String) {
    let published = on_tokio::publish(&url, 32, 5_000).await.expect("publish");
    assert!(published.per_sec > 0.0 && published.mb_per_sec > 0.0);

    // 8 KiB frames straddle the 64 KiB writes and 256 KiB reads.
    for size in [32, 8 * 1024] {
        let received = on_tokio::subscribe(&url, size, 3_000)
            .await
            .expect("subscribe");
        assert!(received.per_sec > 0.0, "size {size}");
    }

    let (rate, latency) = on_tokio::request(&url, 200).await.expect("request");
    assert!(rate.per_sec > 0.0);
    assert!(latency.p50_us > 0.0 && latency.p50_us <= latency.p99_us);

    let busy = on_tokio::latency(&url, 100, None).await.expect("latency");
    assert!(busy.p50_us > 0.0 && busy.p50_us <= busy.p99_us);
    let idle = on_tokio::latency(&url, 3, Some(Duration::from_millis(5)))
        .await
        .expect("idle");
    assert!(idle.p50_us > 0.0);
}

#[test]
fn scenarios_run_in_block_on_and_in_a_task() {
    let server = NatsServer::start();
    let runtime = runtime();
    runtime.block_on(every_scenario(server.url()));
    let url = server.url();
    runtime
        .block_on(runtime.spawn(every_scenario(url)))
        .expect("the spawned scenarios");
}

#[test]
fn messages_arrive_intact_and_in_order() {
    let server = NatsServer::start();
    runtime().block_on(async {
        let mut connection = TokioConnection::connect(&server.url())
            .await
            .expect("connect");
        connection.subscribe(b"raw.echo", 7);
        assert_eq!(connection.flush().await.expect("flush"), 0);
        for i in 0..1_000u32 {
            let payload = i.to_string().repeat(i as usize % 50);
            connection
                .publish(b"raw.echo", Some(b"raw.reply"), payload.as_bytes())
                .await
                .expect("pub");
        }
        for i in 0..1_000u32 {
            let msg = connection.next_msg().await.expect("message");
            assert_eq!(
                msg.payload,
                i.to_string().repeat(i as usize % 50).as_bytes()
            );
            assert_eq!(msg.reply, Some(&b"raw.reply"[..]));
        }
        // Messages that come back before the PONG are counted and consumed by the flush.
        for _ in 0..10 {
            connection
                .publish(b"raw.echo", None, b"x")
                .await
                .expect("pub");
        }
        assert_eq!(connection.flush().await.expect("flush"), 10);

        connection
            .publish(b"raw.echo", None, b"last")
            .await
            .expect("pub");
        let msg = connection.next_msg().await.expect("message");
        assert_eq!(msg.subject, b"raw.echo");
        assert_eq!(msg.sid, 7);
        assert_eq!(msg.payload, b"last");
    });
}

#[test]
fn a_dead_server_is_an_error() {
    let mut server = NatsServer::start();
    let url = server.url();
    runtime().block_on(async {
        let mut connection = TokioConnection::connect(&url).await.expect("connect");
        server.kill();
        let err = connection.flush().await.expect_err("the server is gone");
        assert!(
            matches!(err, RawError::Closed | RawError::Io(_)),
            "unexpected {err}"
        );
        assert!(TokioConnection::connect(&url).await.is_err());
    });
}
