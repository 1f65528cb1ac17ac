//! A blocking client whose server stops reading: every thread blocked writing to it is
//! freed once the link is found stale. Here, not in `tests/`: a socket that takes nothing
//! more with nobody writing (as a write that just fit leaves it) is the connection's
//! test-only [`Stall`](super::conn::Stall); a real one finds a little room as it waits.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;

use super::Client;
use super::conn::Conn;
use crate::error::{FlushCause, RequestCause};
use crate::events::ConnectionEvent;
use crate::options::ConnectOptions;
use crate::request_builder::Request;

const INFO: &[u8] =
    b"INFO {\"server_id\":\"stops-reading\",\"version\":\"2.15.1\",\"max_payload\":1048576}\r\n";
/// Bounds each wait so a regression fails the test instead of hanging it.
const WAIT: Duration = Duration::from_secs(20);

/// A server that takes one connection, answers its handshake, and reads nothing after it
/// (so the client's keepalive PINGs go unanswered) until the test says.
struct StopsReading {
    client: Client,
    say: mpsc::Sender<Say>,
    /// What the server read when told to read.
    read: mpsc::Receiver<Vec<u8>>,
    thread: thread::JoinHandle<()>,
}

/// What the test tells the server to do.
enum Say {
    /// Send a PING.
    Ping,
    /// Read until these bytes have come, and hand over what came.
    ReadUntil(&'static [u8]),
}

impl StopsReading {
    /// With a keepalive PING every `ping_interval`: the link is stale at the third tick.
    fn start(ping_interval: Duration) -> StopsReading {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (say, said) = mpsc::channel();
        let (read_tx, read) = mpsc::channel();
        let thread = thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            // One connection: the reconnects after it are refused.
            drop(listener);
            socket.write_all(INFO).unwrap();
            read_until(&mut socket, b"PING\r\n");
            socket.write_all(b"PONG\r\n").unwrap();
            // Until the test is done.
            for say in said {
                match say {
                    Say::Ping => socket.write_all(b"PING\r\n").unwrap(),
                    Say::ReadUntil(end) => read_tx.send(read_until(&mut socket, end)).unwrap(),
                }
            }
        });
        // A close waits for its writes this long: far past what any test needs.
        let client = ConnectOptions::new()
            .connection_timeout(Duration::from_secs(60))
            .ping_interval(ping_interval)
            .max_pings_outstanding(2)
            .connect_blocking(addr.to_string())
            .unwrap();
        StopsReading {
            client,
            say,
            read,
            thread,
        }
    }

    /// The client's connection.
    fn conn(&self) -> Arc<Conn> {
        self.client.inner().core().conn.clone().expect("connected")
    }

    fn finish(self) {
        drop(self.say);
        drop(self.client);
        self.thread.join().unwrap();
    }
}

/// Reads from `socket` until `end` has come; returns what came.
fn read_until(socket: &mut TcpStream, end: &[u8]) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut chunk = [0; 4096];
    while !seen.windows(end.len()).any(|window| window == end) {
        let n = socket.read(&mut chunk).expect("what the client sent");
        assert_ne!(n, 0, "the client left");
        seen.extend_from_slice(&chunk[..n]);
    }
    seen
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
    let server = StopsReading::start(Duration::from_millis(200));
    let mut events = server.client.events();
    server.conn().stall.start();
    // A PING the client owes a PONG for: the background thread, which reads it (nobody
    // else reads), must not write that PONG itself, nor its keepalive PINGs, or nothing
    // counts them unanswered.
    server.say.send(Say::Ping).unwrap();
    wait_for_stale(&mut events);
    server.finish();
}

#[test]
fn a_flush_blocked_writing_fails_once_the_link_is_stale() {
    let server = StopsReading::start(Duration::from_millis(200));
    let mut events = server.client.events();
    server.conn().stall.start();
    // The flushing thread hands its PING to the flusher thread, which waits in that write
    // until the background thread finds the link stale and shuts it.
    let error = server.client.flush().unwrap_err();
    wait_for_stale(&mut events);
    assert_eq!(error.cause(), Some(&FlushCause::Disconnected), "{error}");
    server.finish();
}

#[test]
fn a_request_times_out_on_time_while_the_socket_takes_nothing_and_keeps_its_place() {
    // No keepalive within the test: only the request's own timeout can end its wait.
    let server = StopsReading::start(Duration::from_secs(3600));
    let conn = server.conn();
    conn.stall.start();
    let client = server.client.clone();
    let (done, outcome) = mpsc::channel();
    thread::spawn(move || {
        let request = Request::new()
            .payload("first".into())
            .timeout(Some(Duration::from_millis(300)));
        let _ = done.send(client.send_request("service", request));
    });
    // The caller writes its request for a slice, hands the rest to the flusher thread, and
    // waits for its reply until its own deadline.
    let error = match outcome.recv_timeout(WAIT) {
        Ok(result) => result.unwrap_err(),
        Err(_) => panic!("the request was still held after {WAIT:?}"),
    };
    assert!(
        matches!(error.cause(), Some(RequestCause::TimedOut(_))),
        "{error}"
    );
    // What comes after it leaves after it, once the socket takes bytes again.
    server.client.publish("after", "second".into()).unwrap();
    conn.stall.end();
    server.say.send(Say::ReadUntil(b"second\r\n")).unwrap();
    let read = String::from_utf8(server.read.recv_timeout(WAIT).unwrap()).unwrap();
    let request = read.find("PUB service").expect("the request was written");
    let after = read.find("PUB after").expect("the publish was written");
    assert!(request < after, "out of order: {read:?}");
    server.finish();
}

#[test]
fn records_encrypted_before_a_hand_off_leave_first_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let files = rnats_test_server::TestCa::new()
        .write_to(dir.path())
        .unwrap();
    let server = rnats_test_server::NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let client = ConnectOptions::new()
        .add_root_certificates(files.ca.clone())
        .connect_blocking(format!("tls://localhost:{}", server.port()))
        .unwrap();
    let mut sub = client.subscribe("tls.>").unwrap();
    client.flush().unwrap();
    let conn = client.inner().core().conn.clone().expect("connected");
    conn.stall.start();
    // The request's frame is encrypted, then the socket takes nothing: its records wait
    // in the connection while the flusher thread holds the writer's role.
    let request = Request::new()
        .payload("first".into())
        .timeout(Some(Duration::from_millis(300)));
    let error = client.send_request("tls.service", request).unwrap_err();
    assert!(
        matches!(error.cause(), Some(RequestCause::TimedOut(_))),
        "{error}"
    );
    client.publish("tls.after", "second".into()).unwrap();
    conn.stall.end();
    // The server decrypts both, in order: the records were not lost, cut or reordered.
    for (subject, payload) in [("tls.service", "first"), ("tls.after", "second")] {
        let message = sub.next_timeout(WAIT).unwrap().expect("a message");
        assert_eq!(
            (message.subject.as_str(), &message.payload[..]),
            (subject, payload.as_bytes())
        );
    }
}

#[test]
fn a_batch_handed_over_while_closing_is_written_by_the_close() {
    let server = StopsReading::start(Duration::from_secs(3600));
    let conn = server.conn();
    let inner = Arc::clone(server.client.inner_arc());
    // The request's caller waits in its first write, past its slice, until released.
    conn.stall.hold();
    let requester = server.client.clone();
    let request = thread::spawn(move || {
        let request = Request::new()
            .payload("first".into())
            .timeout(Some(Duration::from_secs(60)));
        requester.send_request("service", request)
    });
    assert!(
        conn.stall.wait_entered(1, WAIT),
        "the request was not written"
    );
    // The close refuses the queue; the flusher thread ends (its handle on the client goes)
    // while the caller still holds the writer's role.
    let threads = Arc::strong_count(&inner);
    let closer = server.client.clone();
    let close = thread::spawn(move || closer.close());
    rnats_test_server::wait_until(WAIT, || Arc::strong_count(&inner) < threads);
    // The caller's slice is over: it hands its batch over, and the close, with nobody else
    // left to, writes it.
    conn.stall.release();
    assert!(
        conn.stall.wait_entered(3, WAIT),
        "nobody took the batch handed over"
    );
    conn.stall.end();
    server.say.send(Say::ReadUntil(b"first\r\n")).unwrap();
    let read = String::from_utf8(server.read.recv_timeout(WAIT).unwrap()).unwrap();
    assert!(read.contains("PUB service"), "{read:?}");
    close.join().unwrap();
    let _ = request.join().unwrap();
    drop(inner);
    server.finish();
}

#[test]
fn a_planned_move_does_not_hold_its_caller_on_a_socket_that_takes_nothing() {
    // The move's deadline, the connection timeout, is a minute: far past the test's wait.
    let server = StopsReading::start(Duration::from_secs(3600));
    let conn = server.conn();
    conn.stall.start();
    let mover = server.client.clone();
    let (done, moved) = mpsc::channel();
    thread::spawn(move || {
        let _ = done.send(mover.force_reconnect());
    });
    // The old link's batch (the move's last PING) cannot leave: the caller hands it to the
    // flusher thread after a slice, which gives the old link up at the move's deadline.
    let moved = moved.recv_timeout(WAIT).expect("the move held its caller");
    assert!(moved.is_ok(), "{moved:?}");
    conn.stall.end();
    server.finish();
}
