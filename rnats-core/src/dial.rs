//! Opening a connection for the tokio client: TCP connect (then TLS and the WebSocket upgrade
//! for `wss://`, or the upgrade alone for `ws://`), then the floor's [`Handshake`] driven over
//! the stream: INFO, CONNECT, and the PING/PONG that confirms the server accepted us
//! (ADR-40). Runs before the engine starts, so every failure here is a [`ConnectError`]
//! returned from `connect()`.

use std::io;
use std::net::SocketAddr;

use bytes::BytesMut;
use rnats_proto::{Parser, ServerInfo};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::connect_info::{connect_info, prove};
use crate::error::{ConnectCause, ConnectError};
use crate::floor::handshake::{Handshake, Output, Traffic};
use crate::floor::tunnel::{self, Tunnel};
use crate::options::ConnectOptions;
use crate::proxy::{Proxy, ProxyError};
use crate::rt::{Rt, SocketSettings, Tcp};
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

impl ServerAddr {
    /// Resolves the host to socket addresses.
    pub async fn socket_addrs(&self) -> io::Result<impl Iterator<Item = SocketAddr> + '_> {
        let rt = Rt::current().map_err(io::Error::other)?;
        Ok(rt.lookup(self.host(), self.port()).await?.into_iter())
    }
}

/// Connects to `addr` on `rt` and completes the handshake within the connection timeout;
/// a TLS certificate must name `tls_name` (the attempt's, see `Attempt::tls_name`).
pub(crate) async fn connect(
    rt: Rt,
    addr: &ServerAddr,
    tls_name: &str,
    options: &ConnectOptions,
) -> Result<Established, ConnectError> {
    let socket_addr = addr.socket_addr();
    let timeout = options.connection_timeout;
    match rt
        .timeout(
            timeout,
            handshake(rt, &socket_addr, addr, tls_name, options),
        )
        .await
    {
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
    rt: Rt,
    under: Transport,
    addr: &ServerAddr,
    tls_name: &str,
    options: &ConnectOptions,
    tls_wanted: bool,
) -> Result<Transport, ConnectError> {
    let under = if tls_wanted {
        let config = options.tls.client_config_off_runtime(rt).await?;
        Transport::Tls(Box::new(tls::upgrade(under, tls_name, config).await?))
    } else {
        under
    };
    // Asked for at every attempt: a callback's token is fresh for each reconnect.
    let headers = options.websocket_headers.resolve().await?;
    Ok(Transport::WebSocket(Box::new(
        websocket::upgrade(under, addr, &headers).await?,
    )))
}

/// Without the `websockets` feature a WebSocket address is refused, as async-nats refuses it.
#[cfg(not(feature = "websockets"))]
async fn websocket_under(
    _rt: Rt,
    _under: Transport,
    addr: &ServerAddr,
    _tls_name: &str,
    _options: &ConnectOptions,
    _tls_wanted: bool,
) -> Result<Transport, ConnectError> {
    Err(ConnectCause::WebSocket(format!(
        "{addr} is a WebSocket address, and rnats was built without its `websockets` feature"
    ))
    .into())
}

async fn handshake(
    rt: Rt,
    socket_addr: &str,
    addr: &ServerAddr,
    tls_name: &str,
    options: &ConnectOptions,
) -> Result<Established, ConnectError> {
    let io_error = |source| ConnectCause::Io {
        addr: socket_addr.to_owned(),
        source,
    };
    let proxy = options.proxy_to_use()?;
    let under = match &options.connector {
        // The application's own stream: TLS and WebSocket still go over it as asked.
        Some(connector) => Transport::Stream(connector.dial(addr.clone()).await.map_err(io_error)?),
        None => {
            let tcp = match proxy {
                None => open_socket(rt, addr.host(), addr.port(), options)
                    .await
                    .map_err(io_error)?,
                // The tunnel is a plain TCP socket to all above it (see `floor::tunnel`).
                Some(proxy) => through_proxy(rt, proxy, addr, options).await?,
            };
            match tcp {
                Tcp::Tokio(tcp) => Transport::Tcp(tcp),
                #[cfg(feature = "runtime-neutral")]
                Tcp::Neutral(tcp) => Transport::Neutral(tcp),
            }
        }
    };
    let tls_wanted = options.tls.required || addr.tls_required();
    let mut stream = if addr.is_websocket() {
        // Over WebSocket, TLS belongs to the connection under it (`wss://`), never to the
        // NATS protocol: the server's INFO does not ask for an upgrade.
        websocket_under(rt, under, addr, tls_name, options, tls_wanted).await?
    } else if options.tls.first {
        let config = options.tls.client_config_off_runtime(rt).await?;
        Transport::Tls(Box::new(tls::upgrade(under, tls_name, config).await?))
    } else {
        under
    };

    let upgradable = stream.is_plain();
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
                if upgradable {
                    let config = options.tls.client_config_off_runtime(rt).await?;
                    stream =
                        Transport::Tls(Box::new(tls::upgrade(stream, tls_name, config).await?));
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

/// Connects to `proxy` and opens a tunnel through it to the server at `addr`.
async fn through_proxy(
    rt: Rt,
    proxy: &Proxy,
    addr: &ServerAddr,
    options: &ConnectOptions,
) -> Result<Tcp, ConnectError> {
    let mut tcp = open_socket(rt, &proxy.host(), proxy.port(), options)
        .await
        .map_err(|source| ProxyError::Unreachable {
            proxy: proxy.authority(),
            source,
        })?;
    let host = if proxy.resolves_names() {
        addr.url_host()
    } else {
        // `socks5://`: this side resolves the name for the proxy.
        let addrs = rt
            .lookup(addr.host(), addr.port())
            .await
            .map_err(|source| ConnectCause::Io {
                addr: addr.socket_addr(),
                source,
            })?;
        tunnel::resolved_target(addrs, addr.url_host())
    };
    let tunnel = Tunnel::new(proxy, host, addr.port())?;
    let failed = |source| ProxyError::Io {
        proxy: proxy.authority(),
        source,
    };
    match &mut tcp {
        Tcp::Tokio(stream) => open_tunnel(stream, tunnel, failed).await?,
        #[cfg(feature = "runtime-neutral")]
        Tcp::Neutral(stream) => open_tunnel(stream, tunnel, failed).await?,
    }
    Ok(tcp)
}

/// Drives `tunnel` over `stream`, the connection to the proxy, until it is open; a socket
/// error becomes `failed(error)`.
async fn open_tunnel<S>(
    stream: &mut S,
    mut tunnel: Tunnel,
    failed: impl Fn(io::Error) -> ProxyError,
) -> Result<(), ProxyError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // The longest answer read at once: a SOCKS5 reply's bound name and port.
    let mut chunk = [0; 257];
    loop {
        match tunnel.poll_output()? {
            tunnel::Output::Write(bytes) => {
                stream.write_all(&bytes).await.map_err(&failed)?;
                stream.flush().await.map_err(&failed)?;
            }
            tunnel::Output::Read(room) => {
                let room = room.min(chunk.len());
                let n = stream.read(&mut chunk[..room]).await.map_err(&failed)?;
                if n == 0 {
                    return Err(ProxyError::Closed);
                }
                tunnel.handle_read(&chunk[..n])?;
            }
            tunnel::Output::Done => return Ok(()),
        }
    }
}

/// Resolves `host` and connects to the first of its addresses that answers on `port`,
/// applying the socket buffer sizes and the local address from the options.
async fn open_socket(rt: Rt, host: &str, port: u16, options: &ConnectOptions) -> io::Result<Tcp> {
    let mut last_error = None;
    // A name may resolve to several servers: try them all, in random order (ADR-11), so
    // that clients spread over them.
    let mut addrs = rt.lookup(host, port).await?;
    crate::floor::backoff::shuffle(&mut addrs);
    let settings = SocketSettings {
        send_buffer: options.send_buffer_size,
        recv_buffer: options.recv_buffer_size,
        local: options.local_address,
    };
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
        match rt.connect_tcp(addr, settings).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")))
}

#[cfg(all(test, not(feature = "websockets")))]
mod tests {
    use super::*;

    /// Without the `websockets` feature a `ws://` server is refused with a typed error once
    /// the TCP connection is up, instead of speaking NATS to a WebSocket endpoint.
    #[tokio::test]
    async fn a_websocket_address_needs_the_websockets_feature() {
        // The kernel completes the TCP handshake on a listening socket without `accept`.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let addr: ServerAddr = format!("ws://127.0.0.1:{port}").parse().unwrap();
        let Err(error) = connect(Rt::Tokio, &addr, &ConnectOptions::new()).await else {
            panic!("a WebSocket address connected without the feature");
        };
        assert!(
            error
                .to_string()
                .contains("without its `websockets` feature"),
            "{error}"
        );
    }
}
