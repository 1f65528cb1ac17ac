//! The socket under a blocking connection (plain TCP or TLS over TCP with rustls' sync
//! API), and dialing it: TCP connect, then the sans-IO [`Handshake`] driven over
//! `std::net::TcpStream`.
//!
//! A [`Conn`] is shared: one thread at a time reads (the reader role), any thread writes.
//! Plain TCP reads and writes through two handles of one socket, so neither direction
//! waits for the other. Under TLS the rustls state sits behind a mutex taken for the
//! record work only, never across a blocking socket call; one thread writes at a time (the
//! writer rule in `write_side.rs`), so records leave in order.

use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, BytesMut};
use rnats_proto::{ConnectInfo, Parser, ServerInfo};
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use rustls_pki_types::ServerName;

use super::executor::block_on;
use crate::connect_info::{connect_info, prove};
use crate::error::{ConnectCause, ConnectError};
use crate::floor::frames::{Frames, IOVECS};
use crate::floor::handshake::{Handshake, Output, Traffic};
use crate::floor::sync::lock;
use crate::floor::tunnel::{self, Tunnel};
use crate::options::ConnectOptions;
use crate::proxy::{Proxy, ProxyError};
use crate::server_addr::ServerAddr;

/// The longest one socket write waits for room: writers with a deadline (`write_frames`)
/// look at the clock this often while a server takes nothing.
pub(super) const WRITE_SLICE: Duration = Duration::from_millis(10);

/// One connection's socket.
pub(super) struct Conn {
    read: TcpStream,
    write: TcpStream,
    tls: Option<Tls>,
    /// `ConnectOptions::write_timeout`: how long a write may find no room before it fails.
    write_timeout: Option<Duration>,
    #[cfg(test)]
    pub(super) stall: Stall,
}

/// How far [`Conn::write_frames`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Written {
    All,
    /// Stopped at its deadline, with the rest left.
    Stopped,
}

/// The rustls state of a TLS connection, and the records it encrypted that the socket has
/// not taken yet: they leave ahead of anything else, whoever writes next.
struct Tls {
    conn: Mutex<ClientConnection>,
    unsent: Mutex<BytesMut>,
}

/// A connection the server accepted, with the bytes it sent after its PONG.
pub(super) struct Dialed {
    pub(super) conn: Arc<Conn>,
    pub(super) read_buf: BytesMut,
    pub(super) parser: Parser,
    pub(super) info: ServerInfo,
    /// What the handshake read and wrote, for the statistics.
    pub(super) traffic: Traffic,
}

impl Conn {
    /// Reads once (blocking up to the read timeout), appending plaintext to `buf`; `None`
    /// at the end of the stream. Under TLS a read may yield no plaintext (`Some(0)`).
    pub(super) fn read_into(
        &self,
        buf: &mut BytesMut,
        scratch: &mut [u8],
    ) -> io::Result<Option<usize>> {
        let n = (&self.read).read(scratch)?;
        if n == 0 {
            return Ok(None);
        }
        let Some(tls) = &self.tls else {
            buf.extend_from_slice(&scratch[..n]);
            return Ok(Some(n));
        };
        let mut tls = lock(&tls.conn);
        let mut records = &scratch[..n];
        let before = buf.len();
        while !records.is_empty() {
            tls.read_tls(&mut records)?;
            let state = tls
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            let plain = state.plaintext_bytes_to_read();
            if plain > 0 {
                let len = buf.len();
                buf.resize(len + plain, 0);
                tls.reader().read_exact(&mut buf[len..])?;
            }
            if state.peer_has_closed() && plain == 0 {
                return Ok(None);
            }
        }
        // Records rustls wants to send in answer (a key update, say) leave with the next
        // write: only the writing thread writes the socket.
        Ok(Some(buf.len() - before))
    }

    /// Writes all of `frames`, or up to `until`: past it (checked between socket writes,
    /// each of which waits at most [`WRITE_SLICE`] for room) it stops and leaves the rest
    /// in `frames`, for the next writer. With a write timeout, a socket that takes no byte
    /// for that long fails the write (`TimedOut`, "write stalled"), which ends the link.
    /// Over plain TCP one vectored write takes many frames, large payloads by reference;
    /// under TLS a round of slices is encrypted under the lock and written without it, so
    /// a reader processing records never waits for the socket to take a large write
    /// (records not written yet wait in the connection for the next call, ahead of
    /// anything else).
    pub(super) fn write_frames(
        &self,
        frames: &mut Frames,
        until: Option<Instant>,
    ) -> io::Result<Written> {
        let mut unsent = self.tls.as_ref().map(|tls| lock(&tls.unsent));
        // The clock is read from the second write on: most batches leave in one.
        let mut first = true;
        // When the socket first had no room since it last took a byte.
        let mut refused_since: Option<Instant> = None;
        loop {
            let encrypted = unsent.as_deref().is_some_and(|unsent| !unsent.is_empty());
            if frames.is_empty() && !encrypted {
                return Ok(Written::All);
            }
            if !first && until.is_some_and(|until| Instant::now() >= until) {
                return Ok(Written::Stopped);
            }
            first = false;
            let written = match (&self.tls, unsent.as_deref_mut()) {
                (Some(tls), Some(unsent)) => {
                    if unsent.is_empty() {
                        let mut slices = [IoSlice::new(&[]); IOVECS];
                        let count = frames.io_slices(&mut slices);
                        let len = encrypt(&tls.conn, &slices[..count], unsent)?;
                        frames.advance(len);
                    }
                    self.send(|mut socket| socket.write(unsent))
                }
                _ => {
                    let mut slices = [IoSlice::new(&[]); IOVECS];
                    let count = frames.io_slices(&mut slices);
                    self.send(|mut socket| socket.write_vectored(&slices[..count]))
                }
            };
            match written {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    refused_since = None;
                    match unsent.as_deref_mut() {
                        Some(unsent) => unsent.advance(n),
                        None => frames.advance(n),
                    }
                }
                // No room within the slice: try again, unless `until` has passed or the
                // socket has taken nothing for the write timeout.
                Err(e) if is_timeout(&e) => {
                    if let Some(timeout) = self.write_timeout {
                        let now = Instant::now();
                        let since = *refused_since.get_or_insert(now);
                        let stalled = now.saturating_duration_since(since);
                        if stalled >= timeout {
                            return Err(io::Error::new(
                                io::ErrorKind::TimedOut,
                                format!("write stalled: the socket took no byte for {stalled:.1?}"),
                            ));
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// One write to the socket (in tests, held up while the connection's [`Stall`] is on).
    fn send(&self, write: impl FnOnce(&TcpStream) -> io::Result<usize>) -> io::Result<usize> {
        #[cfg(test)]
        self.stall.wait(self.write.write_timeout()?)?;
        write(&self.write)
    }

    /// Waits (up to the read timeout) until bytes can be read, without taking them: whether
    /// there are any (`Ok(false)`: the end of the stream, which a read will report).
    pub(super) fn wait_readable(&self) -> io::Result<bool> {
        self.read.peek(&mut [0; 1]).map(|n| n > 0)
    }

    /// Sets how long one read may block.
    pub(super) fn set_read_timeout(&self, timeout: Duration) -> io::Result<()> {
        self.read
            .set_read_timeout(Some(timeout.max(Duration::from_millis(1))))
    }

    /// Ends the connection: blocked reads and writes on it return at once.
    pub(super) fn shutdown(&self) {
        #[cfg(test)]
        self.stall.shut();
        let _ = self.read.shutdown(Shutdown::Both);
    }
}

/// Encrypts `slices` into `records` under the TLS lock; returns the plaintext bytes taken.
fn encrypt(
    tls: &Mutex<ClientConnection>,
    slices: &[IoSlice<'_>],
    records: &mut BytesMut,
) -> io::Result<usize> {
    let len: usize = slices.iter().map(|slice| slice.len()).sum();
    let mut tls = lock(tls);
    for slice in slices {
        tls.writer().write_all(slice)?;
    }
    let mut out = records.writer();
    while tls.wants_write() {
        tls.write_tls(&mut out)?;
    }
    Ok(len)
}

/// Connects to `addr` and completes the handshake within the connection timeout; a TLS
/// certificate must name `tls_name` (the attempt's, see `Attempt::tls_name`).
pub(super) fn dial(
    addr: &ServerAddr,
    tls_name: &str,
    options: &ConnectOptions,
) -> Result<Dialed, ConnectError> {
    if addr.is_websocket() {
        return Err(ConnectCause::WebSocket(
            "the blocking client does not support WebSocket".to_owned(),
        )
        .into());
    }
    let dialer = Dialer {
        addr,
        tls_name,
        options,
        socket_addr: addr.socket_addr(),
        deadline: super::time::saturating_deadline(options.connection_timeout),
    };
    let tcp = match options.proxy_to_use()? {
        None => {
            open_socket(&dialer.socket_addr, dialer.deadline).map_err(|e| dialer.io_error(e))?
        }
        Some(proxy) => dialer.through_proxy(proxy)?,
    };
    tcp.set_nodelay(true).map_err(|e| dialer.io_error(e))?;
    let mut stream = Stream::Tcp(tcp);
    if options.tls.first {
        stream = stream.upgrade(tls_name, options.tls.client_config()?, dialer.deadline)?;
    }
    let (stream, handshake) = dialer.handshake(stream)?;
    let (mut read_buf, parser, info, traffic) = handshake.finish()?;
    let conn = stream
        .into_conn(&mut read_buf, options.write_timeout)
        .map_err(|e| dialer.io_error(e))?;
    Ok(Dialed {
        conn: Arc::new(conn),
        read_buf,
        parser,
        info,
        traffic,
    })
}

/// One connection attempt: the blocking driver of the sans-IO [`Handshake`].
struct Dialer<'a> {
    addr: &'a ServerAddr,
    tls_name: &'a str,
    options: &'a ConnectOptions,
    socket_addr: String,
    deadline: Instant,
}

impl Dialer<'_> {
    /// Runs the handshake over `stream` (which it may upgrade to TLS) until the server's
    /// PONG.
    fn handshake(&self, mut stream: Stream) -> Result<(Stream, Handshake), ConnectError> {
        let tls_wanted = self.options.tls.required || self.addr.tls_required();
        let mut handshake = Handshake::new(
            tls_wanted,
            !stream.is_tls(),
            self.addr.host(),
            self.options.read_buffer_capacity,
        );
        let mut chunk = vec![0; 4096];
        loop {
            let left = self
                .deadline
                .checked_duration_since(Instant::now())
                .filter(|left| !left.is_zero())
                .ok_or_else(|| self.timed_out())?;
            stream.set_timeouts(left).map_err(|e| self.io_error(e))?;
            match handshake.poll_output()? {
                Output::Read => {
                    let n = stream
                        .read_within(&mut chunk, self.deadline)
                        .map_err(|e| self.read_error(stream.is_tls(), e))?;
                    if n == 0 {
                        return Err(ConnectCause::ClosedByServer.into());
                    }
                    handshake.handle_read(&chunk[..n]);
                }
                Output::Write(bytes) => {
                    stream.write_all(&bytes).map_err(|e| self.io_error(e))?;
                    stream.flush().map_err(|e| self.io_error(e))?;
                }
                Output::UpgradeTls => {
                    let config = self.options.tls.client_config()?;
                    stream = stream.upgrade(self.tls_name, config, self.deadline)?;
                    handshake.handle_tls_upgraded();
                }
                Output::SendConnect => {
                    let connect = self.connect_info(&handshake, stream.is_tls())?;
                    handshake.handle_connect_info(&connect);
                }
                Output::Done => return Ok((stream, handshake)),
            }
        }
    }

    /// Connects to `proxy` and opens a tunnel through it to the server (see
    /// `floor::tunnel`): the socket it returns reaches the server, with nothing of the
    /// server's read yet.
    fn through_proxy(&self, proxy: &Proxy) -> Result<TcpStream, ConnectError> {
        // A socket error on the way: the connect's deadline passing, or the proxy's fault
        // (`reaching` it, or once connected).
        let failed = |source: io::Error, reaching: bool| -> ConnectError {
            if is_timeout(&source) {
                return self.timed_out();
            }
            let proxy = proxy.authority();
            match reaching {
                true => ProxyError::Unreachable { proxy, source },
                false => ProxyError::Io { proxy, source },
            }
            .into()
        };
        let tcp = open_socket(&proxy.authority(), self.deadline).map_err(|e| failed(e, true))?;
        let host = if proxy.resolves_names() {
            self.addr.url_host()
        } else {
            // `socks5://`: this side resolves the name for the proxy.
            let addrs = (self.addr.host(), self.addr.port())
                .to_socket_addrs()
                .map_err(|e| self.io_error(e))?
                .collect();
            tunnel::resolved_target(addrs, self.addr.url_host())
        };
        let mut tunnel = Tunnel::new(proxy, host, self.addr.port())?;
        let failed = |source: io::Error| failed(source, false);
        // The longest answer read at once: a SOCKS5 reply's bound name and port.
        let mut chunk = [0; 257];
        loop {
            let left = self
                .deadline
                .checked_duration_since(Instant::now())
                .filter(|left| !left.is_zero())
                .ok_or_else(|| self.timed_out())?;
            tcp.set_read_timeout(Some(left)).map_err(failed)?;
            tcp.set_write_timeout(Some(left)).map_err(failed)?;
            match tunnel.poll_output()? {
                tunnel::Output::Write(bytes) => (&tcp).write_all(&bytes).map_err(failed)?,
                tunnel::Output::Read(room) => {
                    let room = room.min(chunk.len());
                    let n = (&tcp).read(&mut chunk[..room]).map_err(failed)?;
                    if n == 0 {
                        return Err(ProxyError::Closed.into());
                    }
                    tunnel.handle_read(&chunk[..n])?;
                }
                tunnel::Output::Done => return Ok(tcp),
            }
        }
    }

    /// The CONNECT body for the INFO the handshake holds.
    fn connect_info(&self, handshake: &Handshake, tls: bool) -> Result<ConnectInfo, ConnectError> {
        let info = handshake
            .server_info()
            .ok_or(ConnectCause::UnexpectedOp("CONNECT"))?;
        // Credentials callbacks are futures; the blocking client runs them here.
        let proof = block_on(prove(self.options, info))?;
        Ok(connect_info(proof, self.addr, self.options, info, tls))
    }

    fn timed_out(&self) -> ConnectError {
        ConnectCause::TimedOut {
            addr: self.socket_addr.clone(),
            timeout: self.options.connection_timeout,
        }
        .into()
    }

    fn io_error(&self, source: io::Error) -> ConnectError {
        if is_timeout(&source) {
            return self.timed_out();
        }
        ConnectCause::Io {
            addr: self.socket_addr.clone(),
            source,
        }
        .into()
    }

    /// Over TLS a read error is most often the server refusing us (a missing client
    /// certificate, say), not an unreachable server.
    fn read_error(&self, tls: bool, source: io::Error) -> ConnectError {
        if tls && !is_timeout(&source) {
            return ConnectCause::Tls(format!("the TLS connection failed: {source}")).into();
        }
        self.io_error(source)
    }
}

fn is_timeout(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Resolves `socket_addr` and connects to the first address that answers, in random order
/// (ADR-11), within the deadline.
fn open_socket(socket_addr: &str, deadline: Instant) -> io::Result<TcpStream> {
    let mut addrs: Vec<SocketAddr> = socket_addr.to_socket_addrs()?.collect();
    crate::floor::backoff::shuffle(&mut addrs);
    let mut last_error = None;
    for addr in addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "connect timed out"));
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(stream) => return Ok(stream),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")))
}

/// The stream during the handshake.
enum Stream {
    Tcp(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Tcp(tcp) => tcp,
            Stream::Tls(tls) => &tls.sock,
        }
    }

    fn set_timeouts(&self, timeout: Duration) -> io::Result<()> {
        self.tcp().set_read_timeout(Some(timeout))?;
        self.tcp().set_write_timeout(Some(timeout))
    }

    /// Runs the TLS handshake, checking the certificate against `host`.
    fn upgrade(
        self,
        host: &str,
        config: Arc<ClientConfig>,
        deadline: Instant,
    ) -> Result<Stream, ConnectError> {
        let Stream::Tcp(mut tcp) = self else {
            return Ok(self);
        };
        let tls_error = |reason: String| ConnectError::from(ConnectCause::Tls(reason));
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| tls_error(format!("{host:?} is not a valid TLS server name: {e}")))?;
        let mut conn = ClientConnection::new(config, name)
            .map_err(|e| tls_error(format!("TLS setup for {host} failed: {e}")))?;
        // Not `complete_io`: it reads on while a record is incomplete, so a server sending
        // one a byte at a time would hold the handshake past the deadline. Each read here
        // gets what is left of it.
        while conn.is_handshaking() || conn.wants_write() {
            match step_tls(&mut conn, &mut tcp, deadline) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(tls_error(format!(
                        "{host} closed the connection during the TLS handshake"
                    )));
                }
                Err(e) if is_timeout(&e) => {
                    return Err(tls_error(format!("TLS handshake with {host} timed out")));
                }
                Err(e) => {
                    return Err(tls_error(format!("TLS handshake with {host} failed: {e}")));
                }
            }
        }
        Ok(Stream::Tls(Box::new(StreamOwned::new(conn, tcp))))
    }

    /// Reads plaintext into `buf`, giving up at `deadline`: under TLS, records are read
    /// one socket read at a time, each under what is left of the deadline (see
    /// [`step_tls`]). `Ok(0)` at the end of the stream.
    fn read_within(&mut self, buf: &mut [u8], deadline: Instant) -> io::Result<usize> {
        let tls = match self {
            Stream::Tcp(tcp) => return tcp.read(buf),
            Stream::Tls(tls) => tls,
        };
        loop {
            match tls.conn.reader().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                read => return read,
            }
            if !step_tls(&mut tls.conn, &mut tls.sock, deadline)? {
                return Ok(0);
            }
        }
    }

    /// The shared [`Conn`] for the accepted connection; plaintext rustls still holds goes
    /// to `read_buf`.
    fn into_conn(
        self,
        read_buf: &mut BytesMut,
        write_timeout: Option<Duration>,
    ) -> io::Result<Conn> {
        match self {
            Stream::Tcp(tcp) => {
                tcp.set_write_timeout(Some(WRITE_SLICE))?;
                Ok(Conn {
                    read: tcp.try_clone()?,
                    write: tcp,
                    tls: None,
                    write_timeout,
                    #[cfg(test)]
                    stall: Stall::default(),
                })
            }
            Stream::Tls(tls) => {
                let StreamOwned { mut conn, sock } = *tls;
                sock.set_write_timeout(Some(WRITE_SLICE))?;
                let mut chunk = [0; 4096];
                loop {
                    match conn.reader().read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => read_buf.extend_from_slice(&chunk[..n]),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) => return Err(e),
                    }
                }
                // Writes go out whole; the socket is the bound, not rustls' buffer.
                conn.set_buffer_limit(None);
                Ok(Conn {
                    read: sock.try_clone()?,
                    write: sock,
                    tls: Some(Tls {
                        conn: Mutex::new(conn),
                        unsent: Mutex::new(BytesMut::new()),
                    }),
                    write_timeout,
                    #[cfg(test)]
                    stall: Stall::default(),
                })
            }
        }
    }
}

/// One step of TLS I/O under `deadline`: writes what rustls has to send, else reads the
/// socket once (under what is left of the deadline) and processes what came. False at
/// the end of the stream; a `TimedOut` error past the deadline.
fn step_tls(
    conn: &mut ClientConnection,
    tcp: &mut TcpStream,
    deadline: Instant,
) -> io::Result<bool> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::ErrorKind::TimedOut.into());
    }
    if conn.wants_write() {
        tcp.set_write_timeout(Some(left))?;
        conn.write_tls(tcp)?;
        return Ok(true);
    }
    tcp.set_read_timeout(Some(left))?;
    if conn.read_tls(tcp)? == 0 {
        return Ok(false);
    }
    conn.process_new_packets()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(true)
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => tcp.write(buf),
            Stream::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(tcp) => tcp.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}

/// Test-only: writes that wait as on a socket whose peer reads nothing, until the
/// connection is shut. (Filling a real socket does not stay full: the kernel grows its
/// buffers and finds a little room as it waits.)
#[cfg(test)]
#[derive(Default)]
pub(super) struct Stall {
    state: Mutex<StallState>,
    changed: std::sync::Condvar,
}

#[cfg(test)]
#[derive(Default)]
struct StallState {
    /// Writes wait.
    stalled: bool,
    /// Stalled writes wait past the socket's write timeout too, until released.
    held: bool,
    /// The connection was shut: writes fail.
    shut: bool,
    /// Writes that came to the gate while it was stalled.
    entered: usize,
}

#[cfg(test)]
impl Stall {
    /// Writes wait from now on.
    pub(super) fn start(&self) {
        lock(&self.state).stalled = true;
    }

    /// Writes wait from now on, and none gives up at the socket's write timeout until
    /// [`Stall::release`].
    pub(super) fn hold(&self) {
        let mut state = lock(&self.state);
        state.stalled = true;
        state.held = true;
    }

    /// Stalled writes give up at the socket's write timeout again.
    pub(super) fn release(&self) {
        lock(&self.state).held = false;
        self.changed.notify_all();
    }

    /// Writes go on.
    pub(super) fn end(&self) {
        lock(&self.state).stalled = false;
        self.changed.notify_all();
    }

    /// Waits up to `timeout` until `writes` writes have come to the stalled gate; whether
    /// they did.
    pub(super) fn wait_entered(&self, writes: usize, timeout: Duration) -> bool {
        let state = lock(&self.state);
        let (state, _) = self
            .changed
            .wait_timeout_while(state, timeout, |state| state.entered < writes)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.entered >= writes
    }

    /// Waits while writes are stalled, up to the socket's write timeout as a socket would
    /// (then `WouldBlock`); an error once the connection is shut.
    fn wait(&self, timeout: Option<Duration>) -> io::Result<()> {
        let mut state = lock(&self.state);
        if state.stalled && !state.shut {
            state.entered += 1;
            self.changed.notify_all();
            state = match (state.held, timeout) {
                (false, Some(timeout)) => {
                    self.changed
                        .wait_timeout(state, timeout)
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .0
                }
                _ => self
                    .changed
                    .wait_while(state, |state| {
                        state.stalled && !state.shut && (state.held || timeout.is_none())
                    })
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            };
        }
        match (state.shut, state.stalled) {
            (true, _) => Err(io::ErrorKind::BrokenPipe.into()),
            (false, true) => Err(io::ErrorKind::WouldBlock.into()),
            (false, false) => Ok(()),
        }
    }

    fn shut(&self) {
        lock(&self.state).shut = true;
        self.changed.notify_all();
    }
}
