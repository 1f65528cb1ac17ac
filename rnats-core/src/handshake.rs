//! Opening a connection: TCP connect (then TLS and the WebSocket upgrade for `wss://`, or
//! the upgrade alone for `ws://`), INFO, CONNECT, and the PING/PONG that confirms the server
//! accepted us (ADR-40). Runs before the engine starts, so every failure here is a
//! [`ConnectError`] returned from `connect()`.
//!
//! The protocol part is the sans-IO [`Handshake`]: bytes the server sent go in through
//! [`Handshake::handle_read`], and [`Handshake::poll_output`] says what the driver must do
//! next (read, write these bytes, upgrade to TLS, send CONNECT, or stop: done). The tokio
//! driver is [`connect`] below; the blocking client (`blocking::dial`) drives the same
//! machine over a `std::net::TcpStream`.
//!
//! ```text
//!  ExpectInfo ──INFO──▶ [UpgradeTls] ──▶ SendConnect ──CONNECT+PING──▶ ExpectPong ──PONG──▶ Done
//! ```

use std::io;

use bytes::{Bytes, BytesMut};
use rnats_proto::{ConnectInfo, Parser, ParserLimits, ServerError, ServerInfo, ServerOp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::auth::Proof;
use crate::error::{ConnectCause, ConnectError};
use crate::options::ConnectOptions;
use crate::server_addr::ServerAddr;
use crate::tls;
use crate::transport::Transport;
#[cfg(feature = "websockets")]
use crate::websocket;

/// A connection the server has accepted, with whatever it sent after its PONG still unread.
#[derive(Debug)]
pub(crate) struct Established {
    pub(crate) stream: Transport,
    pub(crate) read_buf: BytesMut,
    pub(crate) parser: Parser,
    pub(crate) info: ServerInfo,
    /// What the handshake read and wrote, for the statistics.
    pub(crate) traffic: Traffic,
}

/// What the handshake is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The server's first INFO.
    ExpectInfo,
    /// The INFO asked for TLS (or we require it): the driver upgrades the stream, then calls
    /// [`Handshake::handle_tls_upgraded`].
    UpgradeTls,
    /// The driver builds the CONNECT body (credentials may sign the INFO's nonce) and hands
    /// it to [`Handshake::handle_connect_info`], which queues CONNECT and PING.
    SendConnect,
    /// CONNECT and PING are out; the PONG says the server accepted us.
    ExpectPong,
    /// Accepted.
    Done,
}

/// What the driver must do next.
#[derive(Debug, PartialEq)]
pub(crate) enum Output {
    /// Read from the stream and pass the bytes to [`Handshake::handle_read`] (end of stream:
    /// [`ConnectCause::ClosedByServer`]).
    Read,
    /// Write (and flush) these bytes.
    Write(Bytes),
    /// Upgrade the stream to TLS, then call [`Handshake::handle_tls_upgraded`].
    UpgradeTls,
    /// Build the CONNECT body for [`Handshake::server_info`] and pass it to
    /// [`Handshake::handle_connect_info`].
    SendConnect,
    /// The server accepted the connection: take the result with [`Handshake::finish`].
    Done,
}

/// The NATS handshake as a sans-IO state machine: no socket, no clock, no runtime.
#[derive(Debug)]
pub(crate) struct Handshake {
    step: Step,
    /// We want TLS (`tls://`, `require_tls`) whatever the server says.
    tls_wanted: bool,
    /// The stream is plain TCP and may still be upgraded after INFO (not TLS-first, not
    /// WebSocket, where TLS belongs to the layer under it).
    upgradable: bool,
    /// The server's name, for error messages.
    host: String,
    read_buf: BytesMut,
    parser: Parser,
    info: Option<ServerInfo>,
    out: BytesMut,
    traffic: Traffic,
}

/// Protocol bytes a handshake exchanged, for the client's statistics (async-nats counts
/// every byte of a connection, INFO and CONNECT included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Traffic {
    /// Bytes handed to [`Handshake::handle_read`], leftovers after the PONG included.
    pub(crate) read: u64,
    /// Bytes of the [`Output::Write`]s.
    pub(crate) written: u64,
}

impl Traffic {
    /// Adds these bytes to `statistics`.
    pub(crate) fn count_in(self, statistics: &crate::statistics::Statistics) {
        crate::statistics::Statistics::add(&statistics.in_bytes, self.read);
        crate::statistics::Statistics::add(&statistics.out_bytes, self.written);
    }
}

impl Handshake {
    /// A handshake about to read the INFO of `host`; see the fields for the flags.
    pub(crate) fn new(
        tls_wanted: bool,
        upgradable: bool,
        host: &str,
        read_capacity: usize,
    ) -> Handshake {
        // INFO lines have their own, much larger limit (they grow with a cluster's
        // connect_urls); MSG control lines stay far below this one.
        let limits = ParserLimits {
            max_control_line: 64 * 1024,
            ..ParserLimits::default()
        };
        Handshake {
            step: Step::ExpectInfo,
            tls_wanted,
            upgradable,
            host: host.to_owned(),
            read_buf: BytesMut::with_capacity(read_capacity),
            parser: Parser::new(limits),
            info: None,
            out: BytesMut::new(),
            traffic: Traffic::default(),
        }
    }

    /// What the handshake waits for now.
    #[cfg(test)]
    pub(crate) fn step(&self) -> Step {
        self.step
    }

    /// Bytes read from the server.
    pub(crate) fn handle_read(&mut self, bytes: &[u8]) {
        self.traffic.read += bytes.len() as u64;
        self.read_buf.extend_from_slice(bytes);
    }

    /// The stream is now TLS.
    pub(crate) fn handle_tls_upgraded(&mut self) {
        if self.step == Step::UpgradeTls {
            self.upgradable = false;
            self.step = Step::SendConnect;
        }
    }

    /// The CONNECT body to send: queues CONNECT and the PING whose PONG ends the handshake.
    pub(crate) fn handle_connect_info(&mut self, connect: &ConnectInfo) {
        if self.step == Step::SendConnect {
            rnats_proto::encode_connect(&mut self.out, connect);
            self.out.extend_from_slice(rnats_proto::PING);
            self.step = Step::ExpectPong;
        }
    }

    /// The latest INFO, once the first one is in.
    pub(crate) fn server_info(&self) -> Option<&ServerInfo> {
        self.info.as_ref()
    }

    /// What to do next; an error ends the handshake.
    pub(crate) fn poll_output(&mut self) -> Result<Output, ConnectError> {
        loop {
            if !self.out.is_empty() {
                self.traffic.written += self.out.len() as u64;
                return Ok(Output::Write(self.out.split().freeze()));
            }
            match self.step {
                Step::UpgradeTls => return Ok(Output::UpgradeTls),
                Step::SendConnect => return Ok(Output::SendConnect),
                Step::Done => return Ok(Output::Done),
                Step::ExpectInfo | Step::ExpectPong => {
                    let Some(op) = self.parser.decode(&mut self.read_buf)? else {
                        return Ok(Output::Read);
                    };
                    self.handle_op(op)?;
                }
            }
        }
    }

    /// The accepted connection's unread bytes, parser and INFO.
    pub(crate) fn finish(self) -> Result<(BytesMut, Parser, ServerInfo, Traffic), ConnectError> {
        match (self.step, self.info) {
            (Step::Done, Some(info)) => Ok((self.read_buf, self.parser, info, self.traffic)),
            _ => Err(ConnectCause::UnexpectedOp("PONG").into()),
        }
    }

    fn handle_op(&mut self, op: ServerOp) -> Result<(), ConnectError> {
        match (self.step, op) {
            (Step::ExpectInfo, ServerOp::Info(server_info)) => {
                self.parser.set_max_payload(inbound_limit(&server_info));
                self.step = if !self.upgradable {
                    Step::SendConnect
                } else {
                    match (server_info.tls_required, self.tls_wanted) {
                        (false, false) => Step::SendConnect,
                        (false, true) if !server_info.tls_available => {
                            return Err(ConnectCause::Tls(format!(
                                "TLS is required but {} does not offer it",
                                self.host
                            ))
                            .into());
                        }
                        // The server waits for the TLS handshake right after its INFO.
                        _ => Step::UpgradeTls,
                    }
                };
                self.info = Some(*server_info);
            }
            (Step::ExpectPong, ServerOp::Pong) => self.step = Step::Done,
            (Step::ExpectPong, ServerOp::Ok) => {}
            (Step::ExpectPong, ServerOp::Info(server_info)) => self.info = Some(*server_info),
            (Step::ExpectPong, ServerOp::Ping) => self.out.extend_from_slice(rnats_proto::PONG),
            (_, ServerOp::Err(ServerError::AuthorizationViolation)) => {
                return Err(ConnectCause::AuthorizationViolation.into());
            }
            (_, ServerOp::Err(e)) => return Err(ConnectCause::Server(e).into()),
            (_, op) => return Err(ConnectCause::UnexpectedOp(op_name(&op)).into()),
        }
        Ok(())
    }
}

/// Connects to `addr` and completes the handshake within the connection timeout.
pub(crate) async fn connect(
    addr: &ServerAddr,
    options: &ConnectOptions,
) -> Result<Established, ConnectError> {
    let socket_addr = addr.socket_addr();
    let timeout = options.connection_timeout;
    match tokio::time::timeout(timeout, handshake(&socket_addr, addr, options)).await {
        Ok(result) => result,
        Err(_) => Err(ConnectCause::TimedOut {
            addr: socket_addr,
            timeout,
        }
        .into()),
    }
}

/// The WebSocket (`ws://`, `wss://`) transport over `tcp`.
#[cfg(feature = "websockets")]
async fn websocket_under(
    tcp: TcpStream,
    addr: &ServerAddr,
    options: &ConnectOptions,
    tls_wanted: bool,
) -> Result<Transport, ConnectError> {
    let under = if tls_wanted {
        let config = options.tls.client_config()?;
        Transport::Tls(Box::new(tls::upgrade(tcp, addr.host(), config).await?))
    } else {
        Transport::Tcp(tcp)
    };
    Ok(Transport::WebSocket(Box::new(
        websocket::upgrade(under, addr).await?,
    )))
}

/// Without the `websockets` feature a WebSocket address is refused, as async-nats refuses it.
#[cfg(not(feature = "websockets"))]
async fn websocket_under(
    _tcp: TcpStream,
    addr: &ServerAddr,
    _options: &ConnectOptions,
    _tls_wanted: bool,
) -> Result<Transport, ConnectError> {
    Err(ConnectCause::WebSocket(format!(
        "{addr} is a WebSocket address, and rnats was built without its `websockets` feature"
    ))
    .into())
}

async fn handshake(
    socket_addr: &str,
    addr: &ServerAddr,
    options: &ConnectOptions,
) -> Result<Established, ConnectError> {
    let io_error = |source| ConnectCause::Io {
        addr: socket_addr.to_owned(),
        source,
    };
    let tcp = open_socket(socket_addr, options).await.map_err(io_error)?;
    tcp.set_nodelay(true).map_err(io_error)?;
    let tls_wanted = options.tls.required || addr.tls_required();
    let mut stream = if addr.is_websocket() {
        // Over WebSocket, TLS belongs to the connection under it (`wss://`), never to the
        // NATS protocol: the server's INFO does not ask for an upgrade.
        websocket_under(tcp, addr, options, tls_wanted).await?
    } else if options.tls.first {
        let config = options.tls.client_config()?;
        Transport::Tls(Box::new(tls::upgrade(tcp, addr.host(), config).await?))
    } else {
        Transport::Tcp(tcp)
    };

    let upgradable = matches!(stream, Transport::Tcp(_));
    let mut handshake = Handshake::new(
        tls_wanted,
        upgradable,
        addr.host(),
        options.read_buffer_capacity,
    );
    let mut chunk = vec![0; 4096];
    loop {
        match handshake.poll_output()? {
            Output::Read => {
                let n = stream.read(&mut chunk).await.map_err(|source| {
                    // Over TLS a read error is most often the server refusing us (a missing
                    // client certificate, say), not an unreachable server.
                    if stream.is_tls() {
                        ConnectError::from(ConnectCause::Tls(format!(
                            "the TLS connection failed: {source}"
                        )))
                    } else {
                        io_error(source).into()
                    }
                })?;
                if n == 0 {
                    return Err(ConnectCause::ClosedByServer.into());
                }
                handshake.handle_read(&chunk[..n]);
            }
            Output::Write(bytes) => write(&mut stream, &bytes).await.map_err(io_error)?,
            Output::UpgradeTls => {
                if let Transport::Tcp(tcp) = stream {
                    let config = options.tls.client_config()?;
                    stream =
                        Transport::Tls(Box::new(tls::upgrade(tcp, addr.host(), config).await?));
                }
                handshake.handle_tls_upgraded();
            }
            Output::SendConnect => {
                let connect = {
                    let info = handshake
                        .server_info()
                        .ok_or(ConnectCause::UnexpectedOp("CONNECT"))?;
                    let proof = prove(options, info).await?;
                    connect_info(proof, addr, options, info, stream.is_tls())
                };
                handshake.handle_connect_info(&connect);
            }
            Output::Done => break,
        }
    }
    let (read_buf, parser, info, traffic) = handshake.finish()?;
    Ok(Established {
        stream,
        read_buf,
        parser,
        info,
        traffic,
    })
}

/// Writes `bytes` and flushes them: TLS and WebSocket hold writes until flushed.
async fn write(stream: &mut Transport, bytes: &[u8]) -> io::Result<()> {
    stream.write_all(bytes).await?;
    stream.flush().await
}

/// Resolves `socket_addr` and connects to the first address that answers, applying the
/// socket buffer sizes and the local address from the options.
async fn open_socket(socket_addr: &str, options: &ConnectOptions) -> io::Result<TcpStream> {
    let mut last_error = None;
    // A name may resolve to several servers: try them all, in random order (ADR-11), so
    // that clients spread over them.
    let mut addrs: Vec<_> = tokio::net::lookup_host(socket_addr).await?.collect();
    crate::floor::backoff::shuffle(&mut addrs);
    for addr in addrs {
        if let Some(local) = options
            .local_address
            .filter(|l| l.is_ipv4() != addr.is_ipv4())
        {
            // This local address cannot reach that server address; another may match.
            last_error = Some(io::Error::new(
                io::ErrorKind::AddrNotAvailable,
                format!("local address {local} cannot connect to {addr}"),
            ));
            continue;
        }
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        if let Some(size) = options.send_buffer_size {
            socket.set_send_buffer_size(u32::try_from(size).unwrap_or(u32::MAX))?;
        }
        if let Some(size) = options.recv_buffer_size {
            socket.set_recv_buffer_size(u32::try_from(size).unwrap_or(u32::MAX))?;
        }
        if let Some(local) = options.local_address {
            socket.bind(local)?;
        }
        match socket.connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")))
}

/// nats-server's default `max_payload`, 1 MiB: what a client assumes before any INFO.
pub(crate) const DEFAULT_MAX_PAYLOAD: usize = 1024 * 1024;

/// The largest message the parser accepts from the server: the server's `max_payload` (1 MiB,
/// the protocol's default, when the INFO leaves it out), but never less than 64 MiB. The
/// server's own replies are not bound by `max_payload` (a stream's info with a page of 100,000
/// subjects is a few megabytes), and neither async-nats nor nats.go refuse them; the floor
/// still bounds what a lying peer can make the parser buffer.
pub(crate) fn inbound_limit(info: &ServerInfo) -> usize {
    const FLOOR: usize = 64 * 1024 * 1024;
    let max_payload = if info.max_payload == 0 {
        DEFAULT_MAX_PAYLOAD
    } else {
        info.max_payload
    };
    max_payload.max(FLOOR)
}

/// The credentials' answer to the server's nonce (the auth callback's, if one is set).
pub(crate) async fn prove(
    options: &ConnectOptions,
    info: &ServerInfo,
) -> Result<Proof, ConnectError> {
    match &options.credentials {
        Some(credentials) => Ok(credentials.prove(&info.nonce).await?),
        None => Ok(Proof::default()),
    }
}

/// The CONNECT body for `info`, with `proof` from [`prove`].
pub(crate) fn connect_info(
    proof: Proof,
    addr: &ServerAddr,
    options: &ConnectOptions,
    info: &ServerInfo,
    tls: bool,
) -> ConnectInfo {
    // Credentials in the URL win over those in the options, as in other NATS clients; an
    // auth callback's answer wins over both.
    let (user, pass) = match (
        proof.user_and_password,
        addr.user_and_password(),
        &options.user_and_password,
    ) {
        (Some((u, p)), _, _) | (None, Some((u, p)), _) => (Some(u), Some(p)),
        (None, None, Some((u, p))) => (Some(u.clone()), Some(p.clone())),
        (None, None, None) => (None, None),
    };
    let token = proof
        .token
        .or_else(|| addr.token())
        .or_else(|| options.token.clone());
    ConnectInfo {
        verbose: false,
        user_jwt: proof.jwt,
        nkey: proof.nkey,
        signature: proof.sig,
        pedantic: false,
        name: options.name.clone(),
        echo: !options.no_echo,
        lang: "rust".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        protocol: rnats_proto::Protocol::Dynamic,
        tls_required: tls,
        user,
        pass,
        auth_token: token,
        headers: info.headers,
        no_responders: info.headers,
    }
}

pub(crate) fn op_name(op: &ServerOp) -> &'static str {
    match op {
        ServerOp::Info(_) => "INFO",
        ServerOp::Msg(_) => "MSG",
        ServerOp::Ping => "PING",
        ServerOp::Pong => "PONG",
        ServerOp::Ok => "+OK",
        ServerOp::Err(_) => "-ERR",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without the `websockets` feature a `ws://` server is refused with a typed error once
    /// the TCP connection is up, instead of speaking NATS to a WebSocket endpoint.
    #[cfg(not(feature = "websockets"))]
    #[tokio::test]
    async fn a_websocket_address_needs_the_websockets_feature() {
        // The kernel completes the TCP handshake on a listening socket without `accept`.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let addr: ServerAddr = format!("ws://127.0.0.1:{port}").parse().unwrap();
        let Err(error) = connect(&addr, &ConnectOptions::new()).await else {
            panic!("a WebSocket address connected without the feature");
        };
        assert!(
            error
                .to_string()
                .contains("without its `websockets` feature"),
            "{error}"
        );
    }

    fn connect_body() -> ConnectInfo {
        connect_info(
            Proof::default(),
            &"nats://127.0.0.1:4222".parse().unwrap(),
            &ConnectOptions::new(),
            &ServerInfo::default(),
            false,
        )
    }

    #[test]
    fn info_then_connect_and_ping_then_pong_is_done_with_leftovers_kept() {
        let mut hs = Handshake::new(false, true, "localhost", 1024);
        assert_eq!(hs.poll_output().unwrap(), Output::Read);
        hs.handle_read(br#"INFO {"server_id":"a","max_payload":2048,"nonce":"n1"}"#);
        assert_eq!(hs.poll_output().unwrap(), Output::Read);
        hs.handle_read(b"\r\n");
        assert_eq!(hs.poll_output().unwrap(), Output::SendConnect);
        assert_eq!(hs.server_info().unwrap().nonce, "n1");
        hs.handle_connect_info(&connect_body());
        let Output::Write(bytes) = hs.poll_output().unwrap() else {
            panic!("CONNECT expected")
        };
        assert!(bytes.starts_with(b"CONNECT {"));
        assert!(bytes.ends_with(b"}\r\nPING\r\n"));
        assert_eq!(hs.step(), Step::ExpectPong);
        // A server PING during the handshake is answered; a PONG ends it.
        hs.handle_read(b"PING\r\n+OK\r\nPONG\r\nMSG a 1 0\r\n\r\n");
        assert_eq!(
            hs.poll_output().unwrap(),
            Output::Write(Bytes::from_static(b"PONG\r\n"))
        );
        assert_eq!(hs.poll_output().unwrap(), Output::Done);
        let (rest, _, info, traffic) = hs.finish().unwrap();
        assert_eq!(info.max_payload, 2048);
        assert_eq!(&rest[..], b"MSG a 1 0\r\n\r\n");
        // Every byte either way counts, the leftovers included.
        let info_len = br#"INFO {"server_id":"a","max_payload":2048,"nonce":"n1"}"#.len() + 2;
        let after = b"PING\r\n+OK\r\nPONG\r\nMSG a 1 0\r\n\r\n".len();
        assert_eq!(traffic.read, (info_len + after) as u64);
        assert_eq!(traffic.written, (bytes.len() + b"PONG\r\n".len()) as u64);
    }

    #[test]
    fn tls_is_asked_for_when_the_server_requires_it_or_we_do() {
        let mut hs = Handshake::new(false, true, "h", 64);
        hs.handle_read(b"INFO {\"tls_required\":true}\r\n");
        assert_eq!(hs.poll_output().unwrap(), Output::UpgradeTls);
        hs.handle_tls_upgraded();
        assert_eq!(hs.poll_output().unwrap(), Output::SendConnect);

        let mut hs = Handshake::new(true, true, "h", 64);
        hs.handle_read(b"INFO {\"tls_available\":true}\r\n");
        assert_eq!(hs.poll_output().unwrap(), Output::UpgradeTls);

        let mut hs = Handshake::new(true, true, "h", 64);
        hs.handle_read(b"INFO {}\r\n");
        let err = hs.poll_output().unwrap_err();
        assert!(matches!(err.cause(), Some(ConnectCause::Tls(_))));

        // TLS-first (or WebSocket): the stream is already what it will be.
        let mut hs = Handshake::new(true, false, "h", 64);
        hs.handle_read(b"INFO {\"tls_required\":true}\r\n");
        assert_eq!(hs.poll_output().unwrap(), Output::SendConnect);
    }

    #[test]
    fn errors_and_unexpected_ops_end_the_handshake() {
        let mut hs = Handshake::new(false, true, "h", 64);
        hs.handle_read(b"PONG\r\n");
        let err = hs.poll_output().unwrap_err();
        assert!(matches!(
            err.cause(),
            Some(ConnectCause::UnexpectedOp("PONG"))
        ));

        let mut hs = Handshake::new(false, true, "h", 64);
        hs.handle_read(b"INFO {}\r\n");
        assert_eq!(hs.poll_output().unwrap(), Output::SendConnect);
        hs.handle_connect_info(&connect_body());
        assert!(matches!(hs.poll_output().unwrap(), Output::Write(_)));
        hs.handle_read(b"-ERR 'Authorization Violation'\r\n");
        let err = hs.poll_output().unwrap_err();
        assert!(matches!(
            err.cause(),
            Some(ConnectCause::AuthorizationViolation)
        ));
    }
}
