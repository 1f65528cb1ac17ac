//! WebSocket listeners: a real nats-server upgrades the connection and greets over it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use rnats_test_server::{Cluster, NatsServer, TestCa};

mod common;

use common::PATIENCE;

/// Upgrades a plain TCP connection to `127.0.0.1:port` to WebSocket and returns the payload
/// of the first message, which nats-server fills with its `INFO`.
fn websocket_greeting(port: u16) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(PATIENCE))?;
    write!(
        stream,
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )?;
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status)?;
    assert!(status.starts_with("HTTP/1.1 101"), "{status:?}");
    loop {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        if header == "\r\n" {
            break;
        }
    }
    let mut head = [0u8; 2];
    reader.read_exact(&mut head)?;
    assert_eq!(head[0], 0x82, "a final binary frame");
    let len = match head[1] & 0x7f {
        126 => {
            let mut ext = [0u8; 2];
            reader.read_exact(&mut ext)?;
            usize::from(u16::from_be_bytes(ext))
        }
        127 => panic!("an INFO larger than 64 KiB"),
        n => usize::from(n),
    };
    let mut payload = vec![0u8; len];
    reader.read_exact(&mut payload)?;
    String::from_utf8(payload).map_err(std::io::Error::other)
}

#[test]
fn a_websocket_server_greets_over_websocket_and_keeps_its_port_on_restart() {
    let mut server = NatsServer::builder().websocket().spawn().unwrap();
    let port = server.websocket_port().expect("a websocket port");
    assert_ne!(port, server.port());
    assert_eq!(
        server.websocket_url(),
        Some(format!("ws://127.0.0.1:{port}"))
    );
    assert!(websocket_greeting(port).unwrap().starts_with("INFO {"));

    server.restart().unwrap();
    assert_eq!(server.websocket_port(), Some(port));
    assert!(websocket_greeting(port).unwrap().starts_with("INFO {"));
}

#[test]
fn a_plain_server_has_no_websocket_listener() {
    let server = NatsServer::start();
    assert_eq!(server.websocket_port(), None);
    assert_eq!(server.websocket_url(), None);
}

#[test]
fn a_secure_websocket_server_announces_wss() {
    let dir = tempfile::tempdir().unwrap();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = NatsServer::builder().websocket_tls(&files).spawn().unwrap();
    let port = server.websocket_port().expect("a websocket port");
    assert_eq!(
        server.websocket_url(),
        Some(format!("wss://127.0.0.1:{port}"))
    );
    let line = server
        .wait_for_log("Listening for websocket clients on wss://", PATIENCE)
        .unwrap();
    assert!(line.ends_with(&format!(":{port}")), "{line}");
}

#[test]
fn a_cluster_can_serve_websocket_clients() {
    let cluster = Cluster::start_with(2, |node| node.websocket()).unwrap();
    let urls = cluster.websocket_urls();
    assert_eq!(urls.len(), 2);
    for node in cluster.nodes() {
        let port = node.websocket_port().unwrap();
        let greeting = websocket_greeting(port).unwrap();
        // A WebSocket client is told about the other node's WebSocket port.
        let other = cluster
            .nodes()
            .iter()
            .find(|n| n.port() != node.port())
            .unwrap();
        let other_ws = format!("127.0.0.1:{}", other.websocket_port().unwrap());
        assert!(greeting.contains(&other_ws), "{greeting}");
    }
}
