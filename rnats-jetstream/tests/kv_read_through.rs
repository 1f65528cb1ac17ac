//! `history()` and `keys()` end once they delivered what was pending when their consumer was
//! created, also when that went away (purged, aged out) before it could be delivered: then
//! no last message says "done", and the consumer's info has to.
//!
//! To open that window on demand, the client talks to the server through a gate that holds
//! back the client's first subscription after it is armed: the ordered consumer exists, its
//! entries counted as pending, but nothing can be delivered until the gate opens.
#![cfg(feature = "kv")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use futures_util::TryStreamExt;
use rnats_jetstream::Context;
use rnats_jetstream::kv::{self, Store};
use rnats_jetstream::stream::StorageType;
use rnats_test_server::NatsServer;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

/// How long any single wait in these tests may take before the test fails.
const WAIT: Duration = Duration::from_secs(20);

/// A one-connection TCP relay that, once armed, stops forwarding the client's bytes at the
/// first `SUB` after a consumer create request, until told to go on.
struct SubGate {
    url: String,
    arm: mpsc::UnboundedSender<Armed>,
}

/// What an armed gate reports to and hears from the test.
struct Armed {
    held: oneshot::Sender<()>,
    open: oneshot::Receiver<()>,
}

impl SubGate {
    async fn start(server_url: &str) -> SubGate {
        let upstream = server_url.trim_start_matches("nats://").to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("nats://{}", listener.local_addr().unwrap());
        let (arm, armed) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let (client, _) = listener.accept().await.unwrap();
            let server = TcpStream::connect(upstream).await.unwrap();
            let (client_read, mut client_write) = client.into_split();
            let (mut server_read, server_write) = server.into_split();
            tokio::spawn(async move {
                let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
            });
            relay_client_ops(BufReader::new(client_read), server_write, armed).await;
        });
        SubGate { url, arm }
    }

    /// Arms the gate; the receiver fires once a `SUB` is held, and sending on the sender
    /// lets it through.
    fn arm(&self) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        let (held, on_hold) = oneshot::channel();
        let (open, on_open) = oneshot::channel();
        self.arm
            .send(Armed {
                held,
                open: on_open,
            })
            .unwrap();
        (on_hold, open)
    }
}

/// Forwards the client's protocol operations one at a time (a `PUB`/`HPUB` with its payload),
/// holding the first `SUB` that follows a consumer create request once armed.
async fn relay_client_ops(
    mut client: BufReader<tokio::net::tcp::OwnedReadHalf>,
    mut server: tokio::net::tcp::OwnedWriteHalf,
    mut armed: mpsc::UnboundedReceiver<Armed>,
) {
    let mut waiting: Option<Armed> = None;
    let mut created = false;
    loop {
        let mut op = Vec::new();
        if client.read_until(b'\n', &mut op).await.unwrap_or(0) == 0 {
            return;
        }
        let line = String::from_utf8_lossy(&op).into_owned();
        let mut words = line.split_whitespace();
        match words.next() {
            Some("PUB") | Some("HPUB") => {
                let words: Vec<&str> = words.collect();
                created |= words[0].starts_with("$JS.API.CONSUMER.CREATE.");
                let size: usize = words[words.len() - 1].parse().unwrap();
                let mut payload = vec![0; size + 2];
                client.read_exact(&mut payload).await.unwrap();
                op.extend_from_slice(&payload);
            }
            Some("SUB") => {
                while let Ok(next) = armed.try_recv() {
                    waiting = Some(next);
                }
                if let Some(Armed { held, open }) = waiting.take_if(|_| created) {
                    let _ = held.send(());
                    let _ = open.await;
                }
            }
            _ => {}
        }
        if server.write_all(&op).await.is_err() {
            return;
        }
    }
}

/// A server, a bucket `gone` holding one entry, a JetStream context on a direct connection
/// and a store handle on a connection through a [`SubGate`].
async fn setup() -> (NatsServer, Context, Store, SubGate) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let admin = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    let store = admin
        .create_key_value(kv::Config {
            bucket: "gone".to_owned(),
            history: 5,
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();
    store.put("key", "value".into()).await.unwrap();
    let gate = SubGate::start(&server.url()).await;
    let client = rnats_core::connect(gate.url.as_str()).await.unwrap();
    let gated = rnats_jetstream::new(client)
        .get_key_value("gone")
        .await
        .unwrap();
    (server, admin, gated, gate)
}

#[tokio::test]
async fn keys_end_when_the_pending_entry_is_purged_before_delivery() {
    let (_server, admin, store, gate) = setup().await;
    let (held, open) = gate.arm();
    let keys = tokio::spawn(async move {
        store
            .keys()
            .await
            .unwrap()
            .try_collect::<Vec<String>>()
            .await
    });
    tokio::time::timeout(WAIT, held).await.unwrap().unwrap();
    admin
        .get_stream("KV_gone")
        .await
        .unwrap()
        .purge()
        .await
        .unwrap();
    open.send(()).unwrap();

    let keys = tokio::time::timeout(WAIT, keys)
        .await
        .expect("keys() did not end")
        .unwrap()
        .unwrap();
    assert!(keys.is_empty(), "{keys:?}");
}

#[tokio::test]
async fn history_ends_when_the_pending_entry_is_purged_before_delivery() {
    let (_server, admin, store, gate) = setup().await;
    let (held, open) = gate.arm();
    let history = tokio::spawn(async move {
        store
            .history("key")
            .await
            .unwrap()
            .try_collect::<Vec<kv::Entry>>()
            .await
    });
    tokio::time::timeout(WAIT, held).await.unwrap().unwrap();
    admin
        .get_stream("KV_gone")
        .await
        .unwrap()
        .purge()
        .await
        .unwrap();
    open.send(()).unwrap();

    let history = tokio::time::timeout(WAIT, history)
        .await
        .expect("history() did not end")
        .unwrap()
        .unwrap();
    assert!(history.is_empty(), "{history:?}");
}
