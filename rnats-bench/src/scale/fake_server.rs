//! A stand-in server for the servers-announced axis: it speaks just enough of the protocol
//! for a client to connect, flush and get its own messages back (INFO, CONNECT, PING/PONG,
//! SUB, and PUB delivered as MSG to a subscription on exactly that subject; no wildcards,
//! no headers), and announces as many cluster members in `connect_urls` as it is told.
//!
//! A real cluster of thousands of servers cannot run on one machine, and nats-server only
//! fills `connect_urls` from live routes. What the axis measures is the client's handling of
//! a large INFO (parsing it, merging the URLs into its server pool), which depends only on
//! the bytes of that INFO: this server sends the bytes a cluster of that size would. The
//! announced addresses (in 10.0.0.0/8) are never dialled: the client stays connected here.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

/// A fake server accepting one client on 127.0.0.1.
#[derive(Debug)]
pub struct FakeServer {
    port: u16,
    /// The accepted client's socket, for [`FakeServer::announce`]; writes are serialised
    /// with the PONGs the serving thread sends.
    client: Arc<Mutex<Option<TcpStream>>>,
}

impl FakeServer {
    /// Listens on an ephemeral port of 127.0.0.1; the first client to connect gets an INFO
    /// announcing `servers` cluster members.
    pub fn start(servers: usize) -> io::Result<FakeServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let client = Arc::new(Mutex::new(None));
        let shared = Arc::clone(&client);
        thread::spawn(move || {
            if let Ok((stream, _)) = listener.accept() {
                let _ = serve(stream, port, servers, &shared);
            }
        });
        Ok(FakeServer { port, client })
    }

    /// The URL to connect to.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Sends the connected client an INFO update announcing `servers` members, all different
    /// from those of earlier announcements with another `generation`.
    pub fn announce(&self, servers: usize, generation: usize) -> io::Result<()> {
        let line = info_line(self.port, servers, generation);
        let mut guard = self
            .client
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?;
        let stream = guard
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "no client yet"))?;
        stream.write_all(line.as_bytes())
    }
}

/// The INFO line a server on `port` sends in a cluster that announces `servers` members.
pub fn info_line(port: u16, servers: usize, generation: usize) -> String {
    let mut urls = String::with_capacity(servers * 20);
    for i in 0..servers {
        if i > 0 {
            urls.push(',');
        }
        // Distinct per member and per generation: 10.g.x.y:4222.
        let (g, x, y) = (generation % 256, (i / 256) % 256, i % 256);
        let port = 4222 + i / 65_536;
        urls.push_str(&format!("\"10.{g}.{x}.{y}:{port}\""));
    }
    format!(
        "INFO {{\"server_id\":\"FAKE\",\"server_name\":\"fake\",\"version\":\"2.10.0\",\
         \"proto\":1,\"go\":\"go1.22\",\"host\":\"127.0.0.1\",\"port\":{port},\
         \"headers\":true,\"max_payload\":1048576,\"client_id\":1,\
         \"client_ip\":\"127.0.0.1\",\"connect_urls\":[{urls}]}}\r\n"
    )
}

/// Sends the INFO, then answers PINGs and echoes publishes to subscribers until the client
/// goes away.
fn serve(
    stream: TcpStream,
    port: u16,
    servers: usize,
    client: &Mutex<Option<TcpStream>>,
) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    writer.write_all(info_line(port, servers, 0).as_bytes())?;
    *client.lock().map_err(|_| io::Error::other("poisoned"))? = Some(writer);
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    // Subject to sid, for the subscriptions the client made.
    let mut sids: HashMap<String, String> = HashMap::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let reply = match command(&line) {
            Command::Ping => b"PONG\r\n".to_vec(),
            Command::Sub { subject, sid } => {
                sids.insert(subject.to_owned(), sid.to_owned());
                continue;
            }
            Command::Payload { subject, bytes } => {
                let mut payload = vec![0; bytes + 2];
                reader.read_exact(&mut payload)?;
                let Some(sid) = subject.and_then(|s| sids.get(s).map(|sid| (s, sid))) else {
                    continue;
                };
                let (subject, sid) = sid;
                let mut msg = format!("MSG {subject} {sid} {bytes}\r\n").into_bytes();
                msg.extend_from_slice(&payload);
                msg
            }
            Command::Other => continue,
        };
        let mut guard = client.lock().map_err(|_| io::Error::other("poisoned"))?;
        if let Some(stream) = guard.as_mut() {
            stream.write_all(&reply)?;
        }
    }
}

/// What the fake server does with one line from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command<'a> {
    /// Answer with PONG.
    Ping,
    /// Remember the subscription.
    Sub { subject: &'a str, sid: &'a str },
    /// A PUB or HPUB: read this many bytes of payload (plus CRLF), and deliver them if the
    /// subject is a PUB's that someone subscribed to (an HPUB's is not delivered).
    Payload {
        subject: Option<&'a str>,
        bytes: usize,
    },
    /// Anything else (CONNECT, UNSUB, PONG): nothing to do.
    Other,
}

fn command(line: &str) -> Command<'_> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some(verb) = words.first() else {
        return Command::Other;
    };
    match verb.to_ascii_uppercase().as_str() {
        "PING" => Command::Ping,
        "SUB" if words.len() >= 3 => Command::Sub {
            subject: words[1],
            sid: words[words.len() - 1],
        },
        verb @ ("PUB" | "HPUB") => match words.last().and_then(|n| n.parse().ok()) {
            Some(bytes) if words.len() >= 3 => Command::Payload {
                subject: (verb == "PUB").then_some(words[1]),
                bytes,
            },
            _ => Command::Other,
        },
        _ => Command::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_announces_distinct_members_per_generation() {
        let first = info_line(4000, 3, 0);
        assert!(first.starts_with("INFO {") && first.ends_with("}\r\n"));
        assert!(
            first.contains(
                "\"connect_urls\":[\"10.0.0.0:4222\",\"10.0.0.1:4222\",\"10.0.0.2:4222\"]"
            )
        );
        let second = info_line(4000, 3, 1);
        assert!(second.contains("\"10.1.0.2:4222\""));
        let json = &first["INFO ".len()..first.len() - 2];
        let parsed: serde_json::Value = serde_json::from_str(json).expect("valid JSON");
        assert_eq!(parsed["connect_urls"].as_array().map(Vec::len), Some(3));
        assert!(info_line(4000, 0, 0).contains("\"connect_urls\":[]"));
    }

    #[test]
    fn reads_commands() {
        assert_eq!(command("PING\r\n"), Command::Ping);
        assert_eq!(command("ping\r\n"), Command::Ping);
        let publish = |subject, bytes| Command::Payload { subject, bytes };
        assert_eq!(command("PUB a.b 5\r\n"), publish(Some("a.b"), 5));
        assert_eq!(command("PUB a.b _INBOX.x 12\r\n"), publish(Some("a.b"), 12));
        assert_eq!(command("HPUB a.b 10 22\r\n"), publish(None, 22));
        assert_eq!(command("CONNECT {}\r\n"), Command::Other);
        assert_eq!(
            command("SUB a 1\r\n"),
            Command::Sub {
                subject: "a",
                sid: "1"
            }
        );
        assert_eq!(command("\r\n"), Command::Other);
    }

    #[test]
    fn a_client_connects_and_gets_pongs_and_updates() {
        let server = FakeServer::start(2).unwrap();
        let address = server.url().trim_start_matches("nats://").to_owned();
        let stream = TcpStream::connect(address).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.contains("10.0.0.1:4222"));
        let mut writer = stream;
        writer
            .write_all(b"CONNECT {}\r\nPUB x 3\r\nabc\r\nSUB y 7\r\nPUB y 2\r\nhi\r\nPING\r\n")
            .unwrap();
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert_eq!(line, "MSG y 7 2\r\n");
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert_eq!(line, "hi\r\n");
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert_eq!(line, "PONG\r\n");
        server.announce(2, 7).unwrap();
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert!(line.contains("10.7.0.1:4222"));
    }
}
