//! Connections over a transport the application makes (`ConnectOptions::transport`), on the
//! tokio backend, against real nats-servers: a TCP stream the test dials, an in-memory pipe,
//! and TLS layered over the application's stream.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use rnats_core::{ConnectOptions, ConnectionEvent, ServerAddr};
use rnats_test_server::{NatsServer, TestCa};

#[tokio::test]
async fn a_stream_the_application_dials_is_used_for_every_attempt() {
    let mut server = NatsServer::start();
    let dials = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&dials);
    let client = quick()
        .transport(move |addr: ServerAddr| {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::net::TcpStream::connect((addr.host().to_owned(), addr.port()))
        })
        .connect(server.url())
        .await
        .unwrap();
    assert_eq!(dials.load(Ordering::SeqCst), 1);
    round_trip(&client).await;
    let mut events = client.events();
    let mut sub = client.subscribe("own").await.unwrap();
    client.flush().await.unwrap();
    server.kill();
    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    assert!(
        dials.load(Ordering::SeqCst) >= 2,
        "the reconnect dialed elsewhere"
    );
    client.publish("own", "again".into()).await.unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("again"));
}

#[tokio::test]
async fn an_in_memory_pipe_carries_the_connection() {
    let server = NatsServer::start();
    let client = ConnectOptions::new()
        .transport(|addr: ServerAddr| async move {
            // The client gets one end of a pipe; a task copies the other end to the server.
            let (ours, theirs) = tokio::io::duplex(64 * 1024);
            let mut tcp =
                tokio::net::TcpStream::connect((addr.host().to_owned(), addr.port())).await?;
            tokio::spawn(async move {
                let mut theirs = theirs;
                let _ = tokio::io::copy_bidirectional(&mut theirs, &mut tcp).await;
            });
            Ok(ours)
        })
        .connect(server.url())
        .await
        .unwrap();
    round_trip(&client).await;
    let mut sub = client.subscribe("piped").await.unwrap();
    for i in 0..1000 {
        client
            .publish("piped", format!("{i}").into())
            .await
            .unwrap();
    }
    client.flush().await.unwrap();
    for i in 0..1000 {
        assert_eq!(next_payload(&mut sub).await, Bytes::from(format!("{i}")));
    }
}

#[tokio::test]
async fn tls_is_layered_over_the_applications_stream() {
    let dir = ScratchDir::new();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let client = ConnectOptions::new()
        .add_root_certificates(files.ca.clone())
        .transport(|addr: ServerAddr| {
            tokio::net::TcpStream::connect((addr.host().to_owned(), addr.port()))
        })
        .connect(format!("tls://localhost:{}", server.port()))
        .await
        .unwrap();
    assert!(client.server_info().tls_required);
    round_trip(&client).await;
}

#[tokio::test]
async fn a_failing_transport_is_a_connect_error() {
    let error = ConnectOptions::new()
        .transport(|_: ServerAddr| async {
            Err::<tokio::net::TcpStream, _>(std::io::Error::other("no tunnel today"))
        })
        .connect("nats://127.0.0.1:4222")
        .await
        .unwrap_err();
    assert_eq!(error.kind(), rnats_core::ConnectErrorKind::Io);
    assert!(error.to_string().contains("no tunnel today"), "{error}");
}
