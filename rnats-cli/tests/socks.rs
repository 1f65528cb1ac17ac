//! `--socks-proxy`, `NATS_SOCKS_PROXY` and a context's `socks_proxy`: the CLI reaches a real
//! nats-server through a SOCKS5 proxy written here (the test sees what it was asked for).

mod common;

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Rnats;
use rnats_test_server::NatsServer;

/// A SOCKS5 proxy on loopback (RFC 1928 CONNECT, and RFC 1929 user and password when
/// `login` is given), relaying to wherever it is asked; `targets` lists the `host:port`
/// of every CONNECT, as asked (a name stays a name).
struct Proxy {
    url: String,
    targets: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start(login: Option<(&'static str, &'static str)>) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("socks5://{}", listener.local_addr().expect("address"));
        let targets = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&targets);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let seen = Arc::clone(&seen);
                std::thread::spawn(move || {
                    let _ = relay(client, login, &seen);
                });
            }
        });
        Proxy { url, targets }
    }

    fn targets(&self) -> Vec<String> {
        self.targets.lock().expect("lock").clone()
    }
}

fn read_bytes(stream: &mut TcpStream, n: usize) -> io::Result<Vec<u8>> {
    let mut bytes = vec![0; n];
    stream.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// One proxied connection: the greeting, the login if one is required, the CONNECT, then
/// bytes both ways until either side closes.
fn relay(
    mut client: TcpStream,
    login: Option<(&str, &str)>,
    seen: &Mutex<Vec<String>>,
) -> io::Result<()> {
    let greeting = read_bytes(&mut client, 2)?;
    let methods = read_bytes(&mut client, usize::from(greeting[1]))?;
    match login {
        None => client.write_all(&[5, 0])?,
        Some((user, password)) => {
            if !methods.contains(&2) {
                return client.write_all(&[5, 0xff]);
            }
            client.write_all(&[5, 2])?;
            let version_and_len = read_bytes(&mut client, 2)?;
            let given_user = read_bytes(&mut client, usize::from(version_and_len[1]))?;
            let len = read_bytes(&mut client, 1)?;
            let given_password = read_bytes(&mut client, usize::from(len[0]))?;
            if given_user != user.as_bytes() || given_password != password.as_bytes() {
                return client.write_all(&[1, 1]);
            }
            client.write_all(&[1, 0])?;
        }
    }
    let request = read_bytes(&mut client, 4)?;
    let host = match request[3] {
        1 => read_bytes(&mut client, 4)?
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join("."),
        3 => {
            let len = read_bytes(&mut client, 1)?;
            String::from_utf8_lossy(&read_bytes(&mut client, usize::from(len[0]))?).into_owned()
        }
        _ => return client.write_all(&[5, 8, 0, 1, 0, 0, 0, 0, 0, 0]),
    };
    let port = read_bytes(&mut client, 2)?;
    let port = u16::from_be_bytes([port[0], port[1]]);
    seen.lock().expect("lock").push(format!("{host}:{port}"));
    let mut server = TcpStream::connect((host.as_str(), port))?;
    client.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 0])?;
    let (mut server_in, mut client_out) = (server.try_clone()?, client.try_clone()?);
    let back = std::thread::spawn(move || {
        let _ = io::copy(&mut server_in, &mut client_out);
        let _ = client_out.shutdown(Shutdown::Write);
    });
    let _ = io::copy(&mut client, &mut server);
    let _ = server.shutdown(Shutdown::Write);
    let _ = back.join();
    Ok(())
}

/// Publishes `payload` with `args` and checks a subscriber connected directly got it.
fn published_through(rnats: &Rnats, server: &NatsServer, args: &[&str], payload: &str) {
    let direct = rnats::blocking::connect(server.url()).expect("connect");
    let mut sub = direct.subscribe("through.proxy").expect("subscribe");
    direct.flush().expect("flush");
    rnats.ok(&[args, &["pub", "through.proxy", payload][..]].concat());
    let message = sub
        .next_timeout(Duration::from_secs(20))
        .expect("the message came")
        .expect("still subscribed");
    assert_eq!(message.payload, payload.as_bytes());
}

#[test]
fn the_cli_reaches_the_server_through_a_socks5_proxy() {
    let server = NatsServer::start();
    let rnats = Rnats::new();
    // The server's name goes to the proxy, which resolves it.
    let url = format!("nats://localhost:{}", server.port());
    let proxy = Proxy::start(None);
    published_through(
        &rnats,
        &server,
        &["--socks-proxy", &proxy.url, "-s", &url],
        "by flag",
    );
    assert_eq!(proxy.targets(), [format!("localhost:{}", server.port())]);

    // The same from a natscli context's `socks_proxy`, and from `rnats context add`.
    let context = rnats.config_dir().join("proxied.json");
    std::fs::create_dir_all(rnats.config_dir()).expect("config dir");
    let text = format!(r#"{{"url": "{url}", "socks_proxy": "{}"}}"#, proxy.url);
    std::fs::write(&context, text).expect("context written");
    let path = context.display().to_string();
    published_through(&rnats, &server, &["--context", &path], "by context");
    rnats.ok(&[
        "context",
        "add",
        "saved",
        "-s",
        &url,
        "--socks-proxy",
        &proxy.url,
    ]);
    published_through(&rnats, &server, &["--context", "saved"], "by saved context");
    assert_eq!(proxy.targets().len(), 3, "{:?}", proxy.targets());

    // The blocking benchmarks go through it too (the library's blocking client takes the
    // same proxy), a bare host:port as natscli takes it.
    let bare = proxy.url.trim_start_matches("socks5://");
    rnats.ok(&[
        "--socks-proxy",
        bare,
        "-s",
        &url,
        "bench",
        "pub",
        "x",
        "--msgs",
        "10",
        "--blocking",
    ]);
    assert!(proxy.targets().len() > 3, "{:?}", proxy.targets());
}

#[test]
fn a_socks5_proxy_login_is_sent_and_a_wrong_one_refused() {
    let server = NatsServer::start();
    let rnats = Rnats::new();
    let url = server.url();
    let proxy = Proxy::start(Some(("me", "p@ss")));
    let address = proxy.url.trim_start_matches("socks5://");
    let with_login = format!("socks5://me:p%40ss@{address}");
    published_through(
        &rnats,
        &server,
        &["--socks-proxy", &with_login, "-s", &url],
        "logged in",
    );
    let wrong = format!("socks5://me:nope@{address}");
    let line = rnats.fails(&["--socks-proxy", &wrong, "-s", &url, "pub", "x", "y"]);
    assert!(line.contains("proxy refused the credentials"), "{line}");
    assert!(!line.contains("nope"), "{line}");
    let line = rnats.fails(&[
        "--socks-proxy",
        "http://proxy:3128",
        "-s",
        &url,
        "pub",
        "x",
        "y",
    ]);
    assert!(line.contains("socks5://"), "{line}");
}
