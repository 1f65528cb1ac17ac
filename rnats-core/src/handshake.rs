//! Opening a connection: TCP connect (then TLS and the WebSocket upgrade for `wss://`, or
//! the upgrade alone for `ws://`), INFO, CONNECT, and the PING/PONG that confirms the server
//! accepted us (ADR-40). Runs before the engine starts, so every failure here is a
//! [`ConnectError`] returned from `connect()`.

use std::io;

use bytes::BytesMut;
use rnats_proto::{ConnectInfo, Parser, ParserLimits, ServerError, ServerInfo, ServerOp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::auth::Proof;
use crate::error::{ConnectCause, ConnectError};
use crate::options::ConnectOptions;
use crate::server_addr::ServerAddr;
use crate::tls;
use crate::transport::Transport;
use crate::websocket;

/// A connection the server has accepted, with whatever it sent after its PONG still unread.
#[derive(Debug)]
pub(crate) struct Established {
    pub(crate) stream: Transport,
    pub(crate) read_buf: BytesMut,
    pub(crate) parser: Parser,
    pub(crate) info: ServerInfo,
}

/// What the handshake is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    ExpectInfo,
    ExpectPong,
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
        let under = if tls_wanted {
            let config = options.tls.client_config()?;
            Transport::Tls(Box::new(tls::upgrade(tcp, addr.host(), config).await?))
        } else {
            Transport::Tcp(tcp)
        };
        Transport::WebSocket(Box::new(websocket::upgrade(under, addr).await?))
    } else if options.tls.first {
        let config = options.tls.client_config()?;
        Transport::Tls(Box::new(tls::upgrade(tcp, addr.host(), config).await?))
    } else {
        Transport::Tcp(tcp)
    };

    let mut read_buf = BytesMut::with_capacity(options.read_buffer_capacity);
    // INFO lines grow with a cluster's connect_urls; MSG control lines stay far below this.
    let limits = ParserLimits {
        max_control_line: 64 * 1024,
        ..ParserLimits::default()
    };
    let mut parser = Parser::new(limits);
    let mut info = None;
    let mut step = Step::ExpectInfo;
    loop {
        let op = next_op(&mut stream, &mut read_buf, &mut parser)
            .await
            .map_err(|e| match e {
                // Over TLS a read error is most often the server refusing us (a missing
                // client certificate, say), not an unreachable server.
                ReadError::Io(source) if stream.is_tls() => {
                    ConnectCause::Tls(format!("the TLS connection failed: {source}")).into()
                }
                ReadError::Io(source) => io_error(source).into(),
                ReadError::Connect(e) => e,
            })?;
        match (step, op) {
            (Step::ExpectInfo, ServerOp::Info(server_info)) => {
                parser.set_max_payload(effective_max_payload(&server_info));
                if let Transport::Tcp(tcp) = stream {
                    stream = match (server_info.tls_required, tls_wanted) {
                        (false, false) => Transport::Tcp(tcp),
                        (false, true) if !server_info.tls_available => {
                            return Err(ConnectCause::Tls(format!(
                                "TLS is required but {} does not offer it",
                                addr.host()
                            ))
                            .into());
                        }
                        // The server waits for the TLS handshake right after its INFO.
                        _ => {
                            let config = options.tls.client_config()?;
                            Transport::Tls(Box::new(tls::upgrade(tcp, addr.host(), config).await?))
                        }
                    };
                }
                let mut out = BytesMut::new();
                let tls = stream.is_tls();
                let connect = connect_info(addr, options, &server_info, tls).await?;
                rnats_proto::encode_connect(&mut out, &connect);
                out.extend_from_slice(rnats_proto::PING);
                write(&mut stream, &out).await.map_err(io_error)?;
                info = Some(*server_info);
                step = Step::ExpectPong;
            }
            (Step::ExpectPong, ServerOp::Pong) => break,
            (Step::ExpectPong, ServerOp::Ok) => {}
            (Step::ExpectPong, ServerOp::Info(server_info)) => info = Some(*server_info),
            (Step::ExpectPong, ServerOp::Ping) => {
                write(&mut stream, rnats_proto::PONG)
                    .await
                    .map_err(io_error)?;
            }
            (_, ServerOp::Err(ServerError::AuthorizationViolation)) => {
                return Err(ConnectCause::AuthorizationViolation.into());
            }
            (_, ServerOp::Err(e)) => return Err(ConnectCause::Server(e).into()),
            (_, op) => return Err(ConnectCause::UnexpectedOp(op_name(&op)).into()),
        }
    }
    let info = info.ok_or_else(|| ConnectError::from(ConnectCause::UnexpectedOp("PONG")))?;
    Ok(Established {
        stream,
        read_buf,
        parser,
        info,
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
    crate::reconnect::shuffle(&mut addrs);
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

/// The largest message the server may send us; servers that leave `max_payload` out get the
/// protocol's default of 1 MiB.
pub(crate) fn effective_max_payload(info: &ServerInfo) -> usize {
    if info.max_payload == 0 {
        1024 * 1024
    } else {
        info.max_payload
    }
}

enum ReadError {
    Io(std::io::Error),
    Connect(ConnectError),
}

async fn next_op(
    stream: &mut Transport,
    buf: &mut BytesMut,
    parser: &mut Parser,
) -> Result<ServerOp, ReadError> {
    loop {
        if let Some(op) = parser
            .decode(buf)
            .map_err(|e| ReadError::Connect(e.into()))?
        {
            return Ok(op);
        }
        if buf.capacity() - buf.len() < 1024 {
            buf.reserve(4096);
        }
        let n = stream.read_buf(buf).await.map_err(ReadError::Io)?;
        if n == 0 {
            return Err(ReadError::Connect(ConnectCause::ClosedByServer.into()));
        }
    }
}

async fn connect_info(
    addr: &ServerAddr,
    options: &ConnectOptions,
    info: &ServerInfo,
    tls: bool,
) -> Result<ConnectInfo, ConnectError> {
    let proof = match &options.credentials {
        Some(credentials) => credentials.prove(&info.nonce).await?,
        None => Proof::default(),
    };
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
    Ok(ConnectInfo {
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
    })
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
