//! Helpers shared by the integration tests. Each test binary uses a different subset.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::{Client, ConnectError, ConnectOptions, ConnectionEvent, Events, Subscriber};

/// How long any single wait in a test may take before the test fails instead of hanging.
pub const WAIT: Duration = Duration::from_secs(20);

/// Publishes `frames` (`PUB` lines and their payloads, as written) to the server on `port`
/// from a raw socket, as another client might, whatever the subject rules say, and returns
/// once the server has taken them all: the PONG to a PING behind them has come back.
pub fn publish_raw(port: u16, frames: &str) {
    use std::io::{Read, Write};
    let mut raw = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let all = format!("CONNECT {{\"verbose\":false}}\r\n{frames}PING\r\n");
    raw.write_all(all.as_bytes()).unwrap();
    // The INFO, then the PONG.
    let mut seen = Vec::new();
    let mut chunk = [0; 4096];
    while !seen.ends_with(b"PONG\r\n") {
        let n = raw.read(&mut chunk).unwrap();
        assert!(n > 0, "the server closed the raw connection");
        seen.extend_from_slice(&chunk[..n]);
    }
}

/// Options that retry quickly, so tests do not sit in reconnect backoff.
pub fn quick() -> ConnectOptions {
    ConnectOptions::new().reconnect_delay_callback(|_| Duration::from_millis(20))
}

/// Waits for the first event matching `want`, skipping others.
pub async fn wait_for(
    events: &mut Events,
    mut want: impl FnMut(&ConnectionEvent) -> bool,
) -> ConnectionEvent {
    tokio::time::timeout(WAIT, async {
        loop {
            let event = events.next().await.expect("events ended");
            if want(&event) {
                return event;
            }
        }
    })
    .await
    .expect("event did not come")
}

/// The blocking client's [`wait_for`]: the first event matching `want`, skipping others,
/// within [`WAIT`] for the whole wait (failed attempts come as events too, so a bound on
/// each event alone would never run out).
pub fn wait_for_blocking(
    events: &mut rnats_core::blocking::Events,
    mut want: impl FnMut(&ConnectionEvent) -> bool,
) -> ConnectionEvent {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match events.next_timeout(left) {
            Ok(Some(event)) if want(&event) => return event,
            Ok(Some(_)) => {}
            other => panic!("the event did not come: {other:?}"),
        }
    }
}

/// The payload of the next message, failing the test instead of hanging.
pub async fn next_payload(sub: &mut Subscriber) -> Bytes {
    tokio::time::timeout(WAIT, sub.next())
        .await
        .expect("timed out")
        .expect("ended")
        .payload
}

/// The `ConnectError` of a connect that must fail, within a bound.
pub async fn connect_err(options: ConnectOptions, url: String) -> ConnectError {
    let result = tokio::time::timeout(WAIT, options.connect(url))
        .await
        .expect("a refused connect must not hang");
    match result {
        Ok(_) => panic!("connected although it should have failed"),
        Err(err) => err,
    }
}

/// Proves the connection is usable: a subscription gets a publish, and a request to a
/// responder on the same connection gets its reply.
pub async fn round_trip(client: &Client) {
    let inbox = client.new_inbox();
    let (echo, service_subject) = (format!("{inbox}.echo"), format!("{inbox}.service"));
    let mut sub = client.subscribe(echo.clone()).await.unwrap();
    let mut service = client.subscribe(service_subject.clone()).await.unwrap();
    client.flush().await.unwrap();

    client.publish(echo, "ping".into()).await.unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("ping"));

    let responder = client.clone();
    let task = tokio::spawn(async move {
        let request = service.next().await.expect("service subscription ended");
        let mut body = b"re:".to_vec();
        body.extend_from_slice(&request.payload);
        responder
            .publish(request.reply.expect("a reply subject"), body.into())
            .await
            .unwrap();
    });
    let reply = client.request(service_subject, "hi".into()).await.unwrap();
    assert_eq!(reply.payload, Bytes::from("re:hi"));
    tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
}

/// A scratch directory removed on drop (`tempfile` is not a dev-dependency of rnats).
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    pub fn new() -> ScratchDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "rnats-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        ScratchDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fake server (a real nats-server never does this) that takes every connection through
/// the handshake (INFO; the client's CONNECT and PING; PONG) and closes it at once, as a
/// server whose account is over a limit, or a proxy in front of a dying one, may. Sends the
/// moment each connection was accepted; runs until the test process ends.
pub fn closing_server() -> (String, std::sync::mpsc::Receiver<std::time::Instant>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("nats://{}", listener.local_addr().unwrap());
    let (accepted, times) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            if accepted.send(std::time::Instant::now()).is_err() {
                return;
            }
            let info = b"INFO {\"server_id\":\"closing\",\"version\":\"2.15.1\",\"max_payload\":1048576}\r\n";
            if socket.write_all(info).is_err() {
                continue;
            }
            let mut reader = BufReader::new(socket.try_clone().unwrap());
            let mut line = String::new();
            while matches!(reader.read_line(&mut line), Ok(n) if n > 0) && !line.starts_with("PING")
            {
                line.clear();
            }
            let _ = socket.write_all(b"PONG\r\n");
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
    });
    (url, times)
}

/// Checks the connections a [`closing_server`] accepted, as the default backoff spaces
/// them: each link lasted no time, so the tries go on counting from the first connect's,
/// and the four reconnects wait at least 100, 200, 400 and 800 ms (the waits before the
/// second to fifth tries, less their jitter); without backoff they come as fast as
/// handshakes go.
pub fn assert_backed_off(times: &std::sync::mpsc::Receiver<std::time::Instant>) {
    let accepted: Vec<_> = (0..5).map(|_| times.recv_timeout(WAIT).unwrap()).collect();
    let gaps: Vec<Duration> = accepted.windows(2).map(|w| w[1] - w[0]).collect();
    for (gap, floor) in gaps.iter().zip([100, 200, 400, 800]) {
        assert!(
            *gap >= Duration::from_millis(floor),
            "reconnects to a server that closes every link at once {gaps:?} apart"
        );
    }
}

/// Publishes 16 KiB fillers from `publisher` until a publish fails or the task is aborted:
/// against a server that stops reading, it fills the socket and then waits for room.
pub fn publish_filler(publisher: Client) -> tokio::task::JoinHandle<()> {
    let payload = Bytes::from(vec![b'x'; 16 * 1024]);
    tokio::spawn(async move { while publisher.publish("filler", payload.clone()).await.is_ok() {} })
}

/// Waits for `events` to tell of a link ended by its write timeout, `timeout`: a
/// `write stalled` disconnect, no sooner than the timeout after `stalled` (when the server
/// stopped reading) and well inside the (default, one minute) ping interval. Returns how
/// long after the stall it came.
pub async fn wait_for_write_stall(
    events: &mut Events,
    stalled: std::time::Instant,
    timeout: Duration,
) -> Duration {
    let event = wait_for(events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    let took = stalled.elapsed();
    assert!(event.to_string().contains("write stalled"), "{event}");
    assert!(took >= timeout, "ended after {took:?}, before its timeout");
    assert!(took < Duration::from_secs(10), "ended only after {took:?}");
    took
}

/// The write timeout at work: `proxy` stalls (stops reading) under a publisher on `client`,
/// whose write timeout is `timeout`, and the link must end with `write stalled`, no sooner
/// than the timeout and well inside the (default, one minute) ping interval. Then the proxy
/// forwards again, its stalled links cut, and the client reconnects. Returns how long after
/// the stall the link ended.
pub async fn a_stall_ends_the_link(
    client: &Client,
    proxy: &rnats_test_server::Proxy,
    timeout: Duration,
) -> Duration {
    let mut events = client.events();
    proxy.stall();
    let stalled = std::time::Instant::now();
    let publishing = publish_filler(client.clone());
    let took = wait_for_write_stall(&mut events, stalled, timeout).await;
    publishing.abort();
    proxy.cut();
    proxy.resume();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    took
}
