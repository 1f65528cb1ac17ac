//! The nats-py peer runs against a real server and fails loudly when its script fails.

use rnats_test_server::{NatsServer, TestServerError, run_nats_py};

const ROUND_TRIP: &str = r#"
import asyncio, os, sys
import nats

async def main():
    nc = await nats.connect(os.environ["NATS_URL"])
    sub = await nc.subscribe(sys.argv[1])
    await nc.publish(sys.argv[1], sys.argv[2].encode())
    msg = await sub.next_msg(timeout=5)
    print(msg.data.decode())
    await nc.close()

asyncio.run(main())
"#;

#[test]
fn nats_py_round_trips_through_the_server() {
    let server = NatsServer::start();
    let out = run_nats_py(
        &server.url(),
        ROUND_TRIP,
        &["peer.check", "hello from python"],
    )
    .expect("nats-py script");
    assert_eq!(out.trim(), "hello from python");
}

#[test]
fn a_failing_script_is_an_error_with_its_stderr() {
    let server = NatsServer::start();
    let err = run_nats_py(&server.url(), "import sys; sys.exit('boom')", &[]).unwrap_err();
    match err {
        TestServerError::Peer { message } => assert!(message.contains("boom"), "{message}"),
        other => panic!("unexpected error {other:?}"),
    }
}
