//! Connecting through a SOCKS5 or HTTP CONNECT proxy (`ConnectOptions::proxy`) against real
//! nats-servers, with a proxy written here: pub/sub/request through it, proxy credentials
//! taken and refused, refusals as typed errors, reconnects through it again, TLS over the
//! tunnel, and the blocking client and the runtime-neutral backend going through it too.
//!
//! The test proxy writes its answer and the server's first bytes (the INFO) in one write,
//! so a client that read past the proxy's answer would lose the INFO and never connect.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::proxy::ProxyError;
use rnats_core::{ConnectCause, ConnectError, ConnectErrorKind, ConnectOptions, ConnectionEvent};
use rnats_test_server::{NatsServer, TestCa};

/// `alice:s3cret`, as HTTP Basic sends it.
const ALICE_BASIC: &str = "YWxpY2U6czNjcmV0";

/// What the test proxy speaks and demands.
#[derive(Clone)]
enum Mode {
    /// SOCKS5, with RFC 1929 `alice`/`s3cret` required if `login`.
    Socks { login: bool },
    /// HTTP CONNECT, with `Proxy-Authorization: Basic` for `alice`/`s3cret` required if
    /// `login`; `refuse` answers every request with that status line instead.
    Http {
        login: bool,
        refuse: Option<&'static str>,
    },
}

/// A SOCKS5 or HTTP CONNECT proxy on 127.0.0.1 that forwards to 127.0.0.1 whatever host it
/// is asked for (it records what it was asked), counts the tunnels it opened, and can cut
/// them all.
struct TestProxy {
    port: u16,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    /// The server sends first (NATS' INFO): its first bytes go out with the answer. Not
    /// so for WebSocket, where the client speaks first.
    server_first: bool,
    /// Tunnels opened to a server.
    tunnels: AtomicUsize,
    /// The `host:port` of each tunnel, as the client asked for it.
    targets: Mutex<Vec<String>>,
    /// Both ends of every tunnel, for `cut`.
    sockets: Mutex<Vec<TcpStream>>,
}

impl TestProxy {
    fn start(mode: Mode) -> TestProxy {
        TestProxy::start_with(mode, true)
    }

    fn start_with(mode: Mode, server_first: bool) -> TestProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            server_first,
            ..Shared::default()
        });
        let accepting = shared.clone();
        // Lives as long as the test process: the listener is never closed.
        thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let (mode, shared) = (mode.clone(), accepting.clone());
                thread::spawn(move || {
                    // A client that gives up or is refused ends its connection here.
                    let _ = serve(client, &mode, &shared);
                });
            }
        });
        TestProxy { port, shared }
    }

    fn url(&self, scheme: &str, login: &str) -> String {
        format!("{scheme}://{login}127.0.0.1:{}", self.port)
    }

    fn tunnels(&self) -> usize {
        self.shared.tunnels.load(Ordering::SeqCst)
    }

    fn targets(&self) -> Vec<String> {
        self.shared.targets.lock().unwrap().clone()
    }

    /// Closes every tunnel, as a proxy that restarts would.
    fn cut(&self) {
        for socket in self.shared.sockets.lock().unwrap().drain(..) {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }
}

/// One client of the proxy: its handshake, then bytes both ways until either side ends.
fn serve(mut client: TcpStream, mode: &Mode, shared: &Shared) -> io::Result<()> {
    let (target, port) = match mode {
        Mode::Socks { login } => socks_handshake(&mut client, *login)?,
        Mode::Http { login, refuse } => {
            let Some(target) = http_handshake(&mut client, *login, *refuse)? else {
                return Ok(());
            };
            target
        }
    };
    let upstream = match TcpStream::connect(("127.0.0.1", port)) {
        Ok(upstream) => upstream,
        Err(_) => {
            // The server is down: SOCKS5 "connection refused", HTTP "bad gateway".
            let refusal: &[u8] = match mode {
                Mode::Socks { .. } => b"\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00",
                Mode::Http { .. } => b"HTTP/1.1 502 Bad Gateway\r\n\r\n",
            };
            return client.write_all(refusal);
        }
    };
    // The answer goes out with the server's first bytes behind it, in one write.
    let mut answer = match mode {
        Mode::Socks { .. } => b"\x05\x00\x00\x01\x7f\x00\x00\x01\x00\x00".to_vec(),
        Mode::Http { .. } => b"HTTP/1.1 200 Connection established\r\n\r\n".to_vec(),
    };
    if shared.server_first {
        let mut first = [0; 4096];
        let n = (&upstream).read(&mut first)?;
        answer.extend_from_slice(&first[..n]);
    }
    shared
        .targets
        .lock()
        .unwrap()
        .push(format!("{target}:{port}"));
    shared.tunnels.fetch_add(1, Ordering::SeqCst);
    shared
        .sockets
        .lock()
        .unwrap()
        .extend([client.try_clone()?, upstream.try_clone()?]);
    client.write_all(&answer)?;
    let (up_read, client_write) = (upstream.try_clone()?, client.try_clone()?);
    thread::spawn(move || pump(up_read, client_write));
    pump(client, upstream);
    Ok(())
}

/// Copies `from` to `to` until `from` ends, then ends `to`'s sending half.
fn pump(mut from: TcpStream, mut to: TcpStream) {
    let _ = io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Write);
}

/// The server side of SOCKS5 (RFC 1928, 1929): the host (a name or an address) and port
/// asked for.
fn socks_handshake(client: &mut TcpStream, login: bool) -> io::Result<(String, u16)> {
    let mut head = [0; 2];
    client.read_exact(&mut head)?;
    let mut methods = vec![0; usize::from(head[1])];
    client.read_exact(&mut methods)?;
    let wanted = if login { 2 } else { 0 };
    if !methods.contains(&wanted) {
        client.write_all(&[5, 0xFF])?;
        return Err(io::Error::other("no acceptable method"));
    }
    client.write_all(&[5, wanted])?;
    if login {
        let mut version_len = [0; 2];
        client.read_exact(&mut version_len)?;
        let mut user = vec![0; usize::from(version_len[1])];
        client.read_exact(&mut user)?;
        let mut len = [0; 1];
        client.read_exact(&mut len)?;
        let mut password = vec![0; usize::from(len[0])];
        client.read_exact(&mut password)?;
        if (user.as_slice(), password.as_slice()) != (b"alice", b"s3cret") {
            client.write_all(&[1, 1])?;
            return Err(io::Error::other("bad login"));
        }
        client.write_all(&[1, 0])?;
    }
    let mut request = [0; 4];
    client.read_exact(&mut request)?;
    let host = match request[3] {
        1 => {
            let mut ip = [0; 4];
            client.read_exact(&mut ip)?;
            std::net::Ipv4Addr::from(ip).to_string()
        }
        4 => {
            let mut ip = [0; 16];
            client.read_exact(&mut ip)?;
            format!("[{}]", std::net::Ipv6Addr::from(ip))
        }
        _ => {
            let mut len = [0; 1];
            client.read_exact(&mut len)?;
            let mut name = vec![0; usize::from(len[0])];
            client.read_exact(&mut name)?;
            String::from_utf8(name).map_err(io::Error::other)?
        }
    };
    let mut port = [0; 2];
    client.read_exact(&mut port)?;
    Ok((host, u16::from_be_bytes(port)))
}

/// The server side of HTTP CONNECT: the host and port asked for, or `None` once refused.
fn http_handshake(
    client: &mut TcpStream,
    login: bool,
    refuse: Option<&'static str>,
) -> io::Result<Option<(String, u16)>> {
    let mut request = Vec::new();
    let mut byte = [0; 1];
    while !request.ends_with(b"\r\n\r\n") {
        client.read_exact(&mut byte)?;
        request.push(byte[0]);
    }
    let request = String::from_utf8(request).map_err(io::Error::other)?;
    if let Some(status) = refuse {
        client.write_all(format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n").as_bytes())?;
        return Ok(None);
    }
    let authorized = request.contains(&format!("\r\nProxy-Authorization: Basic {ALICE_BASIC}\r\n"));
    if login && !authorized {
        client.write_all(
            b"HTTP/1.1 407 Proxy Authentication Required\r\n\
              Proxy-Authenticate: Basic realm=\"test\"\r\n\r\n",
        )?;
        return Ok(None);
    }
    let authority = request
        .strip_prefix("CONNECT ")
        .and_then(|rest| rest.split(' ').next())
        .ok_or_else(|| io::Error::other("not a CONNECT"))?;
    let (host, port) = authority
        .rsplit_once(':')
        .ok_or_else(|| io::Error::other("no port"))?;
    Ok(Some((
        host.to_owned(),
        port.parse().map_err(io::Error::other)?,
    )))
}

/// The proxy error behind a failed connect.
fn proxy_error(error: &ConnectError) -> &ProxyError {
    match error.cause() {
        Some(ConnectCause::Proxy(proxy)) => proxy,
        other => panic!("not a proxy error: {other:?} ({error})"),
    }
}

/// Connects to `url` through `proxy` (`scheme`) with a wrong password, then with no login:
/// refused and required, both as `Io` (the next attempt may be let in).
async fn refuses_wrong_and_missing_logins(proxy: &TestProxy, scheme: &str, url: String) {
    let wrong = ConnectOptions::new().proxy(proxy.url(scheme, "alice:guess@"));
    let error = connect_err(wrong, url.clone()).await;
    assert!(
        matches!(proxy_error(&error), ProxyError::AuthRefused),
        "{scheme}: {error}"
    );
    assert_eq!(error.kind(), ConnectErrorKind::Io);
    let none = ConnectOptions::new().proxy(proxy.url(scheme, ""));
    let error = connect_err(none, url).await;
    assert!(
        matches!(proxy_error(&error), ProxyError::AuthRequired),
        "{scheme}: {error}"
    );
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn socks5h_carries_pub_sub_and_requests_and_gives_the_proxy_the_name() {
    let server = NatsServer::start();
    let proxy = TestProxy::start(Mode::Socks { login: false });
    let client = ConnectOptions::new()
        .proxy(proxy.url("socks5h", ""))
        .connect(format!("nats://localhost:{}", server.port()))
        .await
        .unwrap();
    round_trip(&client).await;
    assert_eq!(proxy.tunnels(), 1);
    assert_eq!(proxy.targets(), [format!("localhost:{}", server.port())]);
}

#[tokio::test]
async fn socks5_with_a_login_resolves_here_and_refuses_a_wrong_one() {
    let server = NatsServer::start();
    let proxy = TestProxy::start(Mode::Socks { login: true });
    let url = format!("nats://localhost:{}", server.port());
    let client = ConnectOptions::new()
        .proxy(proxy.url("socks5", "alice:s3cret@"))
        .connect(url.clone())
        .await
        .unwrap();
    round_trip(&client).await;
    assert_eq!(proxy.tunnels(), 1);
    // `socks5://` asks the proxy for an address this side resolved, not for the name.
    let target = &proxy.targets()[0];
    assert!(target.parse::<SocketAddr>().is_ok(), "{target}");

    refuses_wrong_and_missing_logins(&proxy, "socks5", url).await;
    assert_eq!(proxy.tunnels(), 1);
}

#[tokio::test]
async fn http_connect_with_basic_auth_carries_the_connection() {
    let server = NatsServer::start();
    let proxy = TestProxy::start(Mode::Http {
        login: true,
        refuse: None,
    });
    let url = format!("nats://localhost:{}", server.port());
    let client = ConnectOptions::new()
        .proxy(proxy.url("http", "alice:s3cret@"))
        .connect(url.clone())
        .await
        .unwrap();
    round_trip(&client).await;
    assert_eq!(proxy.targets(), [format!("localhost:{}", server.port())]);

    refuses_wrong_and_missing_logins(&proxy, "http", url).await;
    assert_eq!(proxy.tunnels(), 1);
}

#[tokio::test]
async fn an_http_proxy_that_refuses_the_tunnel_gives_its_status() {
    let server = NatsServer::start();
    let proxy = TestProxy::start(Mode::Http {
        login: false,
        refuse: Some("403 Forbidden"),
    });
    let options = ConnectOptions::new().proxy(proxy.url("http", ""));
    let error = connect_err(options, server.url()).await;
    match proxy_error(&error) {
        ProxyError::HttpStatus { status, reason } => {
            assert_eq!((*status, reason.as_str()), (403, "Forbidden"));
        }
        other => panic!("{other:?}"),
    }
    let proxy = TestProxy::start(Mode::Http {
        login: false,
        refuse: Some("407 Proxy Authentication Required"),
    });
    let options = ConnectOptions::new().proxy(proxy.url("http", "alice:s3cret@"));
    let error = connect_err(options, server.url()).await;
    assert!(
        matches!(proxy_error(&error), ProxyError::AuthRefused),
        "{error}"
    );
}

#[tokio::test]
async fn an_unreachable_proxy_and_a_bad_proxy_url_are_typed() {
    let server = NatsServer::start();
    let options = ConnectOptions::new().proxy(format!("socks5://127.0.0.1:{}", closed_port()));
    let error = connect_err(options, server.url()).await;
    assert!(
        matches!(proxy_error(&error), ProxyError::Unreachable { .. }),
        "{error}"
    );

    let options = ConnectOptions::new().proxy("ftp://alice:s3cret@127.0.0.1:21");
    let error = connect_err(options, server.url()).await;
    assert_eq!(error.kind(), ConnectErrorKind::ServerParse);
    assert!(
        matches!(proxy_error(&error), ProxyError::InvalidUrl { .. }),
        "{error}"
    );
    assert!(!error.to_string().contains("s3cret"), "{error}");

    let with_transport = ConnectOptions::new()
        .proxy(format!("socks5://127.0.0.1:{}", closed_port()))
        .transport(|addr: rnats_core::ServerAddr| async move {
            tokio::net::TcpStream::connect((addr.host().to_owned(), addr.port())).await
        });
    let error = connect_err(with_transport, server.url()).await;
    assert!(
        matches!(proxy_error(&error), ProxyError::WithTransport),
        "{error}"
    );
}

#[tokio::test]
async fn reconnects_after_a_server_restart_go_through_the_proxy() {
    let mut server = NatsServer::start();
    let proxy = TestProxy::start(Mode::Socks { login: false });
    let client = quick()
        .proxy(proxy.url("socks5h", ""))
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("kept").await.unwrap();
    client.flush().await.unwrap();

    server.kill();
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    assert_eq!(proxy.tunnels(), 2);

    // And when the proxy drops the tunnel.
    proxy.cut();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    assert_eq!(proxy.tunnels(), 3);
    client.publish("kept", "after".into()).await.unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("after"));
}

#[tokio::test]
async fn tls_goes_over_the_tunnel_and_checks_the_servers_name() {
    let dir = ScratchDir::new();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    let proxy = TestProxy::start(Mode::Http {
        login: false,
        refuse: None,
    });
    // The certificate names `localhost`, not the proxy's 127.0.0.1.
    let client = ConnectOptions::new()
        .add_root_certificates(files.ca.clone())
        .proxy(proxy.url("http", ""))
        .connect(format!("tls://localhost:{}", server.port()))
        .await
        .unwrap();
    assert!(client.server_info().tls_required);
    round_trip(&client).await;
    assert_eq!(proxy.tunnels(), 1);
}

#[tokio::test]
async fn websocket_goes_over_the_tunnel() {
    let server = NatsServer::builder().websocket().spawn().unwrap();
    let proxy = TestProxy::start_with(Mode::Socks { login: false }, false);
    let ws_port = server.websocket_port().unwrap();
    let client = ConnectOptions::new()
        .proxy(proxy.url("socks5h", ""))
        .connect(format!("ws://localhost:{ws_port}"))
        .await
        .unwrap();
    round_trip(&client).await;
    assert_eq!(proxy.targets(), [format!("localhost:{ws_port}")]);
}

#[test]
fn the_blocking_client_goes_through_the_proxy_and_back_after_a_cut() {
    let server = NatsServer::start();
    let proxy = TestProxy::start(Mode::Http {
        login: true,
        refuse: None,
    });
    let client = ConnectOptions::new()
        .reconnect_delay_callback(|_| std::time::Duration::from_millis(20))
        .proxy(proxy.url("http", "alice:s3cret@"))
        .connect_blocking(server.url())
        .unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("through").unwrap();
    client.flush().unwrap();
    client.publish("through", "one".into()).unwrap();
    let message = sub.next_timeout(WAIT).unwrap().unwrap();
    assert_eq!(message.payload, Bytes::from("one"));
    assert_eq!(proxy.tunnels(), 1);

    proxy.cut();
    wait_for_blocking(&mut events, |e| *e == ConnectionEvent::Reconnected);
    assert_eq!(proxy.tunnels(), 2);
    client.publish("through", "two".into()).unwrap();
    let message = sub.next_timeout(WAIT).unwrap().unwrap();
    assert_eq!(message.payload, Bytes::from("two"));

    let wrong = ConnectOptions::new()
        .proxy(proxy.url("http", "alice:guess@"))
        .connect_blocking(server.url());
    let Err(error) = wrong else {
        panic!("a refused login connected");
    };
    assert!(
        matches!(proxy_error(&error), ProxyError::AuthRefused),
        "{error}"
    );
}

#[cfg(feature = "runtime-neutral")]
#[test]
fn the_runtime_neutral_backend_goes_through_the_proxy() {
    let server = NatsServer::start();
    let proxy = TestProxy::start(Mode::Socks { login: true });
    assert!(tokio::runtime::Handle::try_current().is_err());
    smol::block_on(async {
        let client = ConnectOptions::new()
            .proxy(proxy.url("socks5h", "alice:s3cret@"))
            .connect(server.url())
            .await
            .unwrap();
        let mut sub = client.subscribe("neutral").await.unwrap();
        client.flush().await.unwrap();
        client.publish("neutral", "hi".into()).await.unwrap();
        let message = smol::future::or(async { sub.next().await }, async {
            smol::Timer::after(WAIT).await;
            None
        })
        .await
        .expect("no message");
        assert_eq!(message.payload, Bytes::from("hi"));
    });
    assert_eq!(proxy.tunnels(), 1);
}

/// A proxy that takes the connection and never answers: its connections, kept open.
fn silent_proxy() -> (SocketAddr, Arc<Mutex<Vec<TcpStream>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&held);
    thread::spawn(move || {
        for client in listener.incoming().flatten() {
            keep.lock().unwrap().push(client);
        }
    });
    (addr, held)
}

#[tokio::test]
async fn a_proxy_that_never_answers_is_bounded_by_the_connection_timeout() {
    let server = NatsServer::start();
    let (addr, held) = silent_proxy();
    for scheme in ["socks5h", "http"] {
        let options = ConnectOptions::new()
            .proxy(format!("{scheme}://{addr}"))
            .connection_timeout(std::time::Duration::from_millis(300));
        let error = connect_err(options, server.url()).await;
        assert_eq!(
            error.kind(),
            ConnectErrorKind::TimedOut,
            "{scheme}: {error}"
        );
    }
    assert_eq!(held.lock().unwrap().len(), 2, "both reached the proxy");

    let blocking = ConnectOptions::new()
        .proxy(format!("http://{addr}"))
        .connection_timeout(std::time::Duration::from_millis(300))
        .connect_blocking(server.url());
    let Err(error) = blocking else {
        panic!("connected through a proxy that never answered");
    };
    assert_eq!(error.kind(), ConnectErrorKind::TimedOut, "{error}");
}
