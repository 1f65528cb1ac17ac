//! A blocking client whose server stops reading: every thread blocked writing to it is
//! freed once the link is found stale. Here, not in `tests/`: a socket that takes nothing
//! more with nobody writing (as a write that just fit leaves it) is the connection's
//! test-only [`Stall`](super::conn::Stall); a real one finds a little room as it waits.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use super::Client;
use crate::error::FlushCause;
use crate::events::ConnectionEvent;
use crate::options::ConnectOptions;

const INFO: &[u8] =
    b"INFO {\"server_id\":\"stops-reading\",\"version\":\"2.15.1\",\"max_payload\":1048576}\r\n";
/// Bounds each wait so a regression fails the test instead of hanging it.
const WAIT: Duration = Duration::from_secs(20);

/// A server that takes one connection, answers its handshake, and reads nothing after it,
/// so the client's keepalive PINGs go unanswered: the link is stale at the third tick.
struct StopsReading {
    client: Client,
    /// The server sends a PING on the first message and closes on the end of the channel.
    ping: mpsc::Sender<()>,
    thread: thread::JoinHandle<()>,
}

impl StopsReading {
    fn start() -> StopsReading {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (ping, ping_rx) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            // One connection: the reconnects after it are refused.
            drop(listener);
            socket.write_all(INFO).unwrap();
            read_until(&mut socket, b"PING\r\n");
            socket.write_all(b"PONG\r\n").unwrap();
            if ping_rx.recv().is_ok() {
                socket.write_all(b"PING\r\n").unwrap();
                // Holds the connection until the test is done.
                let _ = ping_rx.recv();
            }
        });
        let client = ConnectOptions::new()
            .ping_interval(Duration::from_millis(200))
            .max_pings_outstanding(2)
            .connect_blocking(addr.to_string())
            .unwrap();
        StopsReading {
            client,
            ping,
            thread,
        }
    }

    /// From now on the client's writes wait, as on a socket that takes nothing more.
    fn stall(&self) {
        let conn = self.client.inner().core().conn.clone().expect("connected");
        conn.stall.start();
    }

    fn finish(self) {
        drop(self.ping);
        drop(self.client);
        self.thread.join().unwrap();
    }
}

/// Reads from `socket` until `end` has come.
fn read_until(socket: &mut TcpStream, end: &[u8]) {
    let mut seen = Vec::new();
    let mut chunk = [0; 4096];
    while !seen.windows(end.len()).any(|window| window == end) {
        let n = socket.read(&mut chunk).expect("the client's handshake");
        assert_ne!(n, 0, "the client left during its handshake");
        seen.extend_from_slice(&chunk[..n]);
    }
}

/// Waits for the link to be dropped as stale.
fn wait_for_stale(events: &mut super::Events) {
    let mut seen = Vec::new();
    loop {
        match events.next_timeout(WAIT) {
            Ok(Some(ConnectionEvent::Disconnected { reason })) => {
                assert_eq!(reason, "stale connection", "after {seen:?}");
                return;
            }
            Ok(Some(event)) => seen.push(event),
            Ok(None) => panic!("the events ended after {seen:?}"),
            Err(timed_out) => panic!("the link was not found stale: {timed_out}; {seen:?}"),
        }
    }
}

#[test]
fn the_background_thread_never_blocks_writing_its_pong_or_pings() {
    let server = StopsReading::start();
    let mut events = server.client.events();
    server.stall();
    // A PING the client owes a PONG for: the background thread, which reads it (nobody
    // else reads), must not write that PONG itself, nor its keepalive PINGs, or nothing
    // counts them unanswered.
    server.ping.send(()).unwrap();
    wait_for_stale(&mut events);
    server.finish();
}

#[test]
fn a_flush_blocked_writing_fails_once_the_link_is_stale() {
    let server = StopsReading::start();
    let mut events = server.client.events();
    server.stall();
    // The flushing thread writes its PING itself and waits in that write until the
    // background thread finds the link stale and shuts it.
    let error = server.client.flush().unwrap_err();
    wait_for_stale(&mut events);
    assert_eq!(error.cause(), Some(&FlushCause::Disconnected), "{error}");
    server.finish();
}
