//! The TCP proxy in front of a real nats-server: pass-through, cut, stall and refuse.

mod common;

use common::{Raw, SILENCE, is_timeout};
use rnats_test_server::{NatsServer, Proxy};

/// Reads the greeting through the proxy and completes a PING/PONG round trip.
fn handshake(raw: &mut Raw) -> serde_json::Value {
    let info = raw.info();
    raw.send("CONNECT {\"verbose\":false,\"protocol\":1}\r\nPING\r\n");
    assert_eq!(raw.line(), "PONG");
    info
}

#[test]
fn the_proxy_passes_the_protocol_through_both_ways() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    assert_eq!(proxy.url(), format!("nats://127.0.0.1:{}", proxy.port()));
    assert_eq!(proxy.connections(), 0);

    let mut raw = Raw::connect(proxy.port());
    let info = handshake(&mut raw);
    assert_eq!(info["port"], u64::from(server.port()));
    assert_eq!(proxy.connections(), 1);
}

#[test]
fn a_plain_host_port_upstream_works_too() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&format!("127.0.0.1:{}", server.port())).unwrap();
    handshake(&mut Raw::connect(proxy.port()));
}

#[test]
fn cut_closes_live_connections_and_later_ones_still_work() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let mut first = Raw::connect(proxy.port());
    let mut second = Raw::connect(proxy.port());
    handshake(&mut first);
    handshake(&mut second);
    assert_eq!(proxy.connections(), 2);

    proxy.cut();
    assert_eq!(proxy.connections(), 0);
    assert_eq!(first.try_line().unwrap(), None);
    assert_eq!(second.try_line().unwrap(), None);

    let mut third = Raw::connect(proxy.port());
    handshake(&mut third);
    assert_eq!(proxy.connections(), 1);
}

#[test]
fn a_stalled_link_holds_bytes_until_resumed() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let mut raw = Raw::connect(proxy.port());
    handshake(&mut raw);

    proxy.stall();
    raw.send("PING\r\n");
    let silent = raw.line_within(SILENCE).unwrap_err();
    assert!(is_timeout(&silent), "{silent}");
    assert_eq!(proxy.connections(), 1);

    proxy.resume();
    assert_eq!(raw.line(), "PONG");
}

#[test]
fn connections_made_while_stalled_are_stalled_too() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    proxy.stall();
    let mut raw = Raw::connect(proxy.port());
    let silent = raw.line_within(SILENCE).unwrap_err();
    assert!(is_timeout(&silent), "{silent}");

    proxy.resume();
    handshake(&mut raw);
}

#[test]
fn cut_while_stalled_drops_held_bytes_and_closes() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let mut raw = Raw::connect(proxy.port());
    handshake(&mut raw);

    proxy.stall();
    raw.send("PING\r\n");
    proxy.cut();
    // The client may see the reset of its unread PING rather than a clean end of stream.
    match raw.try_line() {
        Ok(None) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("expected the connection to end, got {other:?}"),
    }
    proxy.resume();
    handshake(&mut Raw::connect(proxy.port()));
}

#[test]
fn refused_connections_are_closed_at_once() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let mut live = Raw::connect(proxy.port());
    handshake(&mut live);

    proxy.refuse(true);
    let mut refused = Raw::connect(proxy.port());
    assert_eq!(refused.try_line().unwrap(), None);
    // The connection made before is left alone.
    live.send("PING\r\n");
    assert_eq!(live.line(), "PONG");

    proxy.refuse(false);
    handshake(&mut Raw::connect(proxy.port()));
}

#[test]
fn the_end_of_the_upstream_reaches_the_client() {
    let mut server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let mut raw = Raw::connect(proxy.port());
    handshake(&mut raw);

    server.kill();
    assert_eq!(raw.try_line().unwrap(), None);
}

#[test]
fn an_unreachable_upstream_closes_the_client_connection() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    drop(server);
    let mut raw = Raw::connect(proxy.port());
    assert_eq!(raw.try_line().unwrap(), None);
    assert_eq!(proxy.connections(), 0);
}

#[test]
fn dropping_the_proxy_closes_stalled_connections() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let mut raw = Raw::connect(proxy.port());
    handshake(&mut raw);
    proxy.stall();
    raw.send("PING\r\n");

    drop(proxy);
    match raw.try_line() {
        Ok(None) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("expected the connection to end, got {other:?}"),
    }
}
