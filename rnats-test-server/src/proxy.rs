//! A loopback TCP proxy that a test can cut, stall or make refuse connections, to play a
//! broken network between a client and a server.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use crate::error::TestServerError;

/// Bytes read from one side before they are written to the other.
const PUMP_BUFFER: usize = 16 * 1024;

/// A TCP proxy on `127.0.0.1` in front of one upstream address, run on plain threads.
///
/// Every accepted connection gets its own upstream connection and two pump threads, one per
/// direction. The test steers the link as a whole:
///
/// - [`cut`](Self::cut) closes every live connection, as a dropped link or a crashed peer
///   would; later connections are accepted as usual.
/// - [`stall`](Self::stall) stops forwarding in both directions while every socket stays
///   open, as a black-holed route would. Each pump holds at most one read's worth of bytes;
///   the rest waits in kernel buffers and then in the sender's, so a busy writer is
///   eventually blocked, as over a real dead link.
/// - [`resume`](Self::resume) forwards again, *including* the bytes held while stalled,
///   in order: from the endpoints' point of view the link was slow, not lossy (TCP would
///   have retransmitted). Use [`cut`](Self::cut) while stalled to lose them instead.
/// - [`refuse`](Self::refuse) closes new connections as soon as they are accepted.
/// - [`inject`](Self::inject) sends every client bytes of the test's own, as if the server
///   had sent them (an INFO no single test server would send, say).
///
/// When one side closes its sending half, the proxy closes the same half towards the
/// other side; the connection is gone once both directions have ended.
///
/// Dropping the proxy closes the listener and every connection and joins all its threads.
#[derive(Debug)]
pub struct Proxy {
    port: u16,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

/// State shared by the proxy handle, the accept thread and the pumps.
#[derive(Debug)]
struct Shared {
    upstream: Vec<SocketAddr>,
    /// What every pump checks before it writes; guarded together so that a pump waiting
    /// for `resume` cannot miss a wake-up from `cut` or drop.
    gate: Mutex<Gate>,
    /// Signalled whenever `gate` changes.
    gate_changed: Condvar,
    /// Live connections by id.
    links: Mutex<HashMap<u64, Arc<Link>>>,
    next_id: AtomicU64,
    /// Pump threads, pruned of finished ones as new connections come in.
    pumps: Mutex<Vec<JoinHandle<()>>>,
}

/// The knobs that apply to every connection at once.
#[derive(Debug, Default)]
struct Gate {
    stalled: bool,
    refusing: bool,
    stopping: bool,
}

/// One proxied connection: the accepted client socket and its upstream socket.
#[derive(Debug)]
struct Link {
    client: TcpStream,
    upstream: TcpStream,
    /// Held for each write towards the client, so an injected frame never lands inside a
    /// forwarded chunk.
    to_client: Mutex<()>,
    /// Set under the gate lock, so a stalled pump re-checks it on wake-up.
    closed: AtomicBool,
    /// Pumps still running; the last one to end forgets the link.
    pumps_left: AtomicUsize,
}

/// Which way a pump moves bytes.
#[derive(Debug, Clone, Copy)]
enum Direction {
    ToUpstream,
    ToClient,
}

impl Proxy {
    /// Listens on a free port of `127.0.0.1` and forwards every connection to `upstream`,
    /// given as `host:port` or as a `nats://host:port` URL (so a server's
    /// [`url`](crate::NatsServer::url) will do).
    ///
    /// The upstream address is resolved once, here; it is connected to for each accepted
    /// connection, and a connection whose upstream cannot be reached is closed.
    pub fn start(upstream: &str) -> Result<Proxy, TestServerError> {
        let host_port = upstream.strip_prefix("nats://").unwrap_or(upstream);
        let addrs: Vec<SocketAddr> = host_port.to_socket_addrs()?.collect();
        if addrs.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("upstream {upstream:?} resolves to no address"),
            )
            .into());
        }
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared {
            upstream: addrs,
            gate: Mutex::new(Gate::default()),
            gate_changed: Condvar::new(),
            links: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            pumps: Mutex::new(Vec::new()),
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("proxy-accept-{port}"))
                .spawn(move || accept_loop(&listener, &shared))?
        };
        Ok(Proxy {
            port,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// The URL clients connect to, `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The proxy's port on `127.0.0.1`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Closes every live connection now, in both directions, on both sides. New
    /// connections are still accepted (unless [`refuse`](Self::refuse) says otherwise).
    ///
    /// On return [`connections`](Self::connections) no longer counts them.
    pub fn cut(&self) {
        let links: Vec<Arc<Link>> = lock(&self.shared.links).drain().map(|(_, l)| l).collect();
        for link in &links {
            self.shared.close(link);
        }
    }

    /// Stops forwarding bytes in both directions while keeping every socket open; new
    /// connections are accepted and stalled too. Undone by [`resume`](Self::resume).
    pub fn stall(&self) {
        lock(&self.shared.gate).stalled = true;
    }

    /// Forwards again after [`stall`](Self::stall), starting with the bytes held
    /// meanwhile.
    pub fn resume(&self) {
        lock(&self.shared.gate).stalled = false;
        self.shared.gate_changed.notify_all();
    }

    /// While `on`, closes new connections as soon as they are accepted, without
    /// connecting upstream; live connections are left alone.
    pub fn refuse(&self, on: bool) {
        lock(&self.shared.gate).refusing = on;
    }

    /// Writes `bytes` to every live client connection, as if the server had sent them.
    ///
    /// They land between two chunks the proxy forwards, not necessarily between two
    /// protocol frames: inject while the server has nothing in flight to the client (right
    /// after a flush, say).
    pub fn inject(&self, bytes: &[u8]) -> Result<(), TestServerError> {
        let links: Vec<Arc<Link>> = lock(&self.shared.links).values().cloned().collect();
        for link in links {
            let _turn = lock(&link.to_client);
            (&link.client).write_all(bytes)?;
        }
        Ok(())
    }

    /// How many accepted connections are still open.
    pub fn connections(&self) -> usize {
        lock(&self.shared.links).len()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        lock(&self.shared.gate).stopping = true;
        // `accept` has no timeout: wake it with a connection it will see and drop.
        let _ = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        // No connection can be added any more; close the rest and wait for their pumps.
        self.cut();
        let pumps = std::mem::take(&mut *lock(&self.shared.pumps));
        for pump in pumps {
            let _ = pump.join();
        }
    }
}

impl Shared {
    /// Shuts both sockets of `link` down in both directions, which wakes its pumps
    /// whether they are blocked in a read or waiting out a stall.
    fn close(&self, link: &Link) {
        // Under the gate lock, so a pump cannot check the flag and then miss the wake-up.
        let _gate = lock(&self.gate);
        link.closed.store(true, Ordering::SeqCst);
        // Errors mean the socket is already disconnected.
        let _ = link.client.shutdown(Shutdown::Both);
        let _ = link.upstream.shutdown(Shutdown::Both);
        self.gate_changed.notify_all();
    }
}

impl Link {
    /// The sockets a pump reads from and writes to.
    fn ends(&self, direction: Direction) -> (&TcpStream, &TcpStream) {
        match direction {
            Direction::ToUpstream => (&self.client, &self.upstream),
            Direction::ToClient => (&self.upstream, &self.client),
        }
    }
}

/// Accepts until the proxy is dropped, handing each connection to two pumps.
fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    loop {
        let accepted = listener.accept();
        let (refusing, stopping) = {
            let gate = lock(&shared.gate);
            (gate.refusing, gate.stopping)
        };
        if stopping {
            return;
        }
        // A failed accept (e.g. the peer reset it already) only loses that connection.
        let Ok((client, _)) = accepted else { continue };
        if refusing {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        }
        // Nothing to report a failure to: the client just sees its connection closed.
        let _ = open_link(client, shared);
    }
}

/// Connects upstream for `client` and starts both pumps. Dropping `client` on error closes
/// it.
fn open_link(client: TcpStream, shared: &Arc<Shared>) -> io::Result<()> {
    let upstream = TcpStream::connect(&shared.upstream[..])?;
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let link = Arc::new(Link {
        client,
        upstream,
        to_client: Mutex::new(()),
        closed: AtomicBool::new(false),
        pumps_left: AtomicUsize::new(2),
    });
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    lock(&shared.links).insert(id, Arc::clone(&link));

    let mut pumps = lock(&shared.pumps);
    pumps.retain(|p| !p.is_finished());
    for direction in [Direction::ToUpstream, Direction::ToClient] {
        let (pump_shared, pump_link) = (Arc::clone(shared), Arc::clone(&link));
        let spawned = std::thread::Builder::new()
            .name(format!("proxy-pump-{id}"))
            .spawn(move || {
                pump(&pump_shared, &pump_link, direction);
                if pump_link.pumps_left.fetch_sub(1, Ordering::SeqCst) == 1 {
                    lock(&pump_shared.links).remove(&id);
                }
            });
        match spawned {
            Ok(handle) => pumps.push(handle),
            Err(e) => {
                // The pump that may have started ends on its own once the link is closed.
                lock(&shared.links).remove(&id);
                shared.close(&link);
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Moves bytes one way until either side ends, waiting out stalls between a read and the
/// matching write.
fn pump(shared: &Shared, link: &Link, direction: Direction) {
    let (mut from, mut to) = link.ends(direction);
    let mut buf = vec![0; PUMP_BUFFER];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => {
                // Pass the half-close on; the other direction keeps going until it ends.
                let _ = to.shutdown(Shutdown::Write);
                return;
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if !wait_open(shared, link) {
            return;
        }
        let written = match direction {
            Direction::ToClient => {
                let _turn = lock(&link.to_client);
                to.write_all(&buf[..n])
            }
            Direction::ToUpstream => to.write_all(&buf[..n]),
        };
        if written.is_err() {
            break;
        }
    }
    // A reset or failed write on either side ends the whole connection.
    shared.close(link);
}

/// Blocks while the proxy is stalled; false once the link was closed meanwhile.
fn wait_open(shared: &Shared, link: &Link) -> bool {
    let gate = shared
        .gate_changed
        .wait_while(lock(&shared.gate), |gate| {
            gate.stalled && !link.closed.load(Ordering::SeqCst)
        })
        .unwrap_or_else(PoisonError::into_inner);
    drop(gate);
    !link.closed.load(Ordering::SeqCst)
}

/// Locks `mutex`, ignoring poisoning: the guarded state stays consistent across a panic.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
