//! Opening a tunnel through a proxy as a sans-IO state machine: what the driver must write,
//! how much it may read, and what the proxy's answers mean. SOCKS5 (RFC 1928) with the
//! user name and password method (RFC 1929), and HTTP `CONNECT` (RFC 9110, 9.3.6) with Basic
//! proxy authorisation. The async client drives it in `dial.rs`, the blocking client in
//! `blocking/conn.rs`, both over the TCP connection to the proxy, before anything else.
//!
//! Hand-written rather than taken from a crate: the client needs one handshake for three
//! drivers (tokio, runtime-neutral, blocking), and the SOCKS crates do their I/O inside
//! (`tokio-socks` over tokio's traits only, `socks` over `std::net` only). The HTTP answer
//! is parsed by `httparse`.
//!
//! The machine never lets the driver read past the end of the proxy's answer: the server
//! may speak first (a NATS server sends INFO at once), and its bytes must stay in the
//! socket for whatever reads next (the NATS handshake, or TLS under it), so that the tunnel
//! is a plain TCP socket to all above it. SOCKS5 answers have known lengths; an HTTP answer
//! ends at an empty line, so it is read a few bytes at a time, never more than could still
//! belong to that end (see [`Tunnel::poll_output`]).
//!
//! ```text
//!  SOCKS5: SendGreeting ─▶ ExpectMethod ─(user/password)─▶ SendLogin ─▶ ExpectLoginStatus
//!                              └──────────(none)───────┬──────────────────────┘
//!                                                 SendRequest ─▶ ExpectReply ─▶ Done
//!  HTTP:   SendConnect ─▶ ExpectAnswer ─▶ Done
//! ```

use core::net::{IpAddr, SocketAddr};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use url::Host;

use crate::proxy::{Login, Protocol, Proxy, ProxyError};

/// The longest HTTP answer header block read before giving up.
pub(crate) const MAX_HTTP_ANSWER: usize = 8 * 1024;

/// The most header lines an HTTP answer may have.
const MAX_HTTP_HEADERS: usize = 64;

const SOCKS_VERSION: u8 = 5;
const METHOD_NONE: u8 = 0;
const METHOD_LOGIN: u8 = 2;
const NO_ACCEPTABLE_METHOD: u8 = 0xFF;
const COMMAND_CONNECT: u8 = 1;
const ATYP_V4: u8 = 1;
const ATYP_NAME: u8 = 3;
const ATYP_V6: u8 = 4;
/// The start of a SOCKS5 reply: version, reply code, reserved, address type, and the
/// address's first byte (a name's length).
const REPLY_HEAD: usize = 5;

/// What the machine waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The SOCKS5 greeting (the methods offered) is to be written.
    SendGreeting,
    /// The method the SOCKS5 proxy chose: two bytes.
    ExpectMethod,
    /// The RFC 1929 user name and password are to be written.
    SendLogin,
    /// Their status: two bytes.
    ExpectLoginStatus,
    /// The SOCKS5 CONNECT request is to be written.
    SendRequest,
    /// The reply's head, then (`head_read`) the rest of its bound address.
    ExpectReply { head_read: bool },
    /// The HTTP `CONNECT` request is to be written.
    SendConnect,
    /// The HTTP answer's status line and headers, up to the empty line.
    ExpectAnswer,
    /// The tunnel is open.
    Done,
}

/// What the driver must do next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Output {
    /// Write (and flush) these bytes.
    Write(Vec<u8>),
    /// Read at most this many bytes (at least one) and pass them to [`Tunnel::handle_read`];
    /// the end of the stream is [`ProxyError::Closed`].
    Read(usize),
    /// The tunnel is open: the stream now reaches the server.
    Done,
}

/// The handshake with one proxy for one connection.
#[derive(Debug)]
pub(crate) struct Tunnel {
    step: Step,
    /// The proxy's login, if its URL has one.
    login: Option<Login>,
    /// The server as the proxy is asked for it: a name, or an address.
    host: Host<String>,
    port: u16,
    /// The answer read so far for the current step.
    answer: Vec<u8>,
    /// How many bytes the current step's answer has in all, once known.
    answer_len: usize,
}

impl Tunnel {
    /// A handshake with `proxy` for a tunnel to `host:port` (a name for the proxy to
    /// resolve, or an address).
    pub(crate) fn new(proxy: &Proxy, host: Host<String>, port: u16) -> Result<Tunnel, ProxyError> {
        let step = match proxy.protocol() {
            Protocol::Socks5 | Protocol::Socks5h => {
                if let Host::Domain(name) = &host
                    && name.len() > 255
                {
                    return Err(ProxyError::HostTooLong { len: name.len() });
                }
                Step::SendGreeting
            }
            Protocol::Http => Step::SendConnect,
        };
        Ok(Tunnel {
            step,
            login: proxy.login().cloned(),
            host,
            port,
            answer: Vec::new(),
            answer_len: 0,
        })
    }

    /// What the driver must do next; an error when the proxy refused or answered nonsense.
    pub(crate) fn poll_output(&mut self) -> Result<Output, ProxyError> {
        Ok(match self.step {
            Step::SendGreeting => {
                self.expect(Step::ExpectMethod, 2);
                match self.login {
                    Some(_) => Output::Write(vec![SOCKS_VERSION, 2, METHOD_NONE, METHOD_LOGIN]),
                    None => Output::Write(vec![SOCKS_VERSION, 1, METHOD_NONE]),
                }
            }
            Step::SendLogin => {
                self.expect(Step::ExpectLoginStatus, 2);
                Output::Write(self.login_bytes())
            }
            Step::SendRequest => {
                self.expect(Step::ExpectReply { head_read: false }, REPLY_HEAD);
                Output::Write(self.request_bytes())
            }
            Step::SendConnect => {
                self.expect(Step::ExpectAnswer, 0);
                Output::Write(self.connect_bytes())
            }
            Step::ExpectAnswer => Output::Read(http_room(&self.answer)),
            Step::ExpectMethod | Step::ExpectLoginStatus | Step::ExpectReply { .. } => {
                Output::Read(self.answer_len - self.answer.len())
            }
            Step::Done => Output::Done,
        })
    }

    /// Takes bytes the proxy sent (no more than the last [`Output::Read`] allowed).
    pub(crate) fn handle_read(&mut self, bytes: &[u8]) -> Result<(), ProxyError> {
        self.answer.extend_from_slice(bytes);
        match self.step {
            Step::ExpectAnswer => self.handle_http_answer(),
            _ if self.answer.len() < self.answer_len => Ok(()),
            Step::ExpectMethod => self.handle_method(),
            Step::ExpectLoginStatus => {
                // RFC 1929: any status but 0 is a failure. The version byte (1) is not
                // checked: some proxies send 5 there.
                if self.answer[1] != 0 {
                    return Err(ProxyError::AuthRefused);
                }
                self.step = Step::SendRequest;
                Ok(())
            }
            Step::ExpectReply { head_read: false } => self.handle_reply_head(),
            Step::ExpectReply { head_read: true } => {
                self.step = Step::Done;
                Ok(())
            }
            Step::SendGreeting
            | Step::SendLogin
            | Step::SendRequest
            | Step::SendConnect
            | Step::Done => Err(ProxyError::Malformed("bytes the proxy was not asked for")),
        }
    }

    /// Moves to `step`, which waits for an answer of `len` bytes.
    fn expect(&mut self, step: Step, len: usize) {
        self.step = step;
        self.answer.clear();
        self.answer_len = len;
    }

    fn handle_method(&mut self) -> Result<(), ProxyError> {
        if self.answer[0] != SOCKS_VERSION {
            return Err(ProxyError::Malformed("not a SOCKS5 answer"));
        }
        self.step = match (self.answer[1], &self.login) {
            (METHOD_NONE, _) => Step::SendRequest,
            (METHOD_LOGIN, Some(_)) => Step::SendLogin,
            (NO_ACCEPTABLE_METHOD, None) => return Err(ProxyError::AuthRequired),
            (NO_ACCEPTABLE_METHOD, Some(_)) => return Err(ProxyError::NoAcceptableAuth),
            _ => return Err(ProxyError::Malformed("a method that was not offered")),
        };
        Ok(())
    }

    /// The reply's first bytes: refused, or how long the rest (the bound address) is.
    fn handle_reply_head(&mut self) -> Result<(), ProxyError> {
        let [version, code, _reserved, atyp, first] = self.answer[..REPLY_HEAD] else {
            return Err(ProxyError::Malformed("a short SOCKS5 reply"));
        };
        if version != SOCKS_VERSION {
            return Err(ProxyError::Malformed("not a SOCKS5 reply"));
        }
        if code != 0 {
            return Err(ProxyError::SocksRefused {
                code,
                reason: socks_reason(code),
            });
        }
        // The bound address and its port, less the one byte of it already read.
        let rest = match atyp {
            ATYP_V4 => 4 + 2 - 1,
            ATYP_V6 => 16 + 2 - 1,
            ATYP_NAME => usize::from(first) + 2,
            _ => return Err(ProxyError::Malformed("an unknown SOCKS5 address type")),
        };
        self.expect(Step::ExpectReply { head_read: true }, rest);
        Ok(())
    }

    fn handle_http_answer(&mut self) -> Result<(), ProxyError> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HTTP_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let parsed = response.parse(&self.answer).map_err(|error| match error {
            httparse::Error::TooManyHeaders => ProxyError::Malformed("over 64 header lines"),
            _ => ProxyError::Malformed("not an HTTP answer"),
        })?;
        let end = match parsed {
            httparse::Status::Partial if self.answer.len() >= MAX_HTTP_ANSWER => {
                return Err(ProxyError::AnswerTooLong {
                    limit: MAX_HTTP_ANSWER,
                });
            }
            httparse::Status::Partial => return Ok(()),
            httparse::Status::Complete(end) => end,
        };
        // Bytes after the answer would be the server's, lost to it: `http_room` keeps every
        // read short of them, and this says so loudly should it ever not.
        if end != self.answer.len() {
            return Err(ProxyError::Malformed("bytes after the HTTP answer"));
        }
        let status = response.code.unwrap_or_default();
        match (status, &self.login) {
            (200..=299, _) => {
                self.step = Step::Done;
                Ok(())
            }
            (407, None) => Err(ProxyError::AuthRequired),
            (407, Some(_)) => Err(ProxyError::AuthRefused),
            _ => Err(ProxyError::HttpStatus {
                status,
                reason: response.reason.unwrap_or_default().to_owned(),
            }),
        }
    }

    /// RFC 1929: version 1, then the user name and the password, each after its length.
    fn login_bytes(&self) -> Vec<u8> {
        let (user, password) = match &self.login {
            Some(login) => (login.user.as_bytes(), login.password.as_bytes()),
            None => (&[][..], &[][..]),
        };
        let mut bytes = vec![1];
        for part in [user, password] {
            // `Proxy` refuses longer ones when it parses the URL.
            bytes.push(u8::try_from(part.len()).unwrap_or(u8::MAX));
            bytes.extend_from_slice(&part[..part.len().min(255)]);
        }
        bytes
    }

    /// RFC 1928: CONNECT to the server's address or name, and its port.
    fn request_bytes(&self) -> Vec<u8> {
        let mut bytes = vec![SOCKS_VERSION, COMMAND_CONNECT, 0];
        match &self.host {
            Host::Ipv4(ip) => {
                bytes.push(ATYP_V4);
                bytes.extend_from_slice(&ip.octets());
            }
            Host::Ipv6(ip) => {
                bytes.push(ATYP_V6);
                bytes.extend_from_slice(&ip.octets());
            }
            Host::Domain(name) => {
                bytes.push(ATYP_NAME);
                // `Tunnel::new` refuses longer names.
                bytes.push(u8::try_from(name.len()).unwrap_or(u8::MAX));
                bytes.extend_from_slice(name.as_bytes());
            }
        }
        bytes.extend_from_slice(&self.port.to_be_bytes());
        bytes
    }

    /// `CONNECT host:port`, with Basic authorisation when there is a login.
    fn connect_bytes(&self) -> Vec<u8> {
        // `Host`'s `Display` puts an IPv6 address in brackets, as an authority has it.
        let authority = format!("{}:{}", self.host, self.port);
        let mut request = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
        if let Some(login) = &self.login {
            let token = STANDARD.encode(format!("{}:{}", login.user, login.password));
            request.push_str(&format!("Proxy-Authorization: Basic {token}\r\n"));
        }
        request.push_str("\r\n");
        request.into_bytes()
    }
}

/// The host a `socks5://` proxy (one that is given addresses, not names) is asked to connect
/// to: one of the server's resolved `addrs` at random (ADR-11), or `name` when there are none.
pub(crate) fn resolved_target(mut addrs: Vec<SocketAddr>, name: Host) -> Host {
    crate::floor::backoff::shuffle(&mut addrs);
    match addrs.first().map(SocketAddr::ip) {
        Some(IpAddr::V4(ip)) => Host::Ipv4(ip),
        Some(IpAddr::V6(ip)) => Host::Ipv6(ip),
        None => name,
    }
}

/// How many bytes may be read of an HTTP answer that has `answer` so far without reading
/// past its end: the header block ends with an empty line (`\r\n\r\n`, or, from a lenient
/// proxy, any of the other ends `httparse` takes: `\n\n`, `\r\n\n`, `\n\r\n`), so as
/// long as `answer` ends with the first `k` bytes of an end, no more than the rest of that
/// end may come before it can be complete.
fn http_room(answer: &[u8]) -> usize {
    let room = |end: &&[u8]| {
        let matched = (1..end.len())
            .rev()
            .find(|&k| answer.ends_with(&end[..k]))
            .unwrap_or(0);
        end.len() - matched
    };
    let ends: [&[u8]; 4] = [b"\r\n\r\n", b"\n\n", b"\r\n\n", b"\n\r\n"];
    ends.iter().map(room).min().unwrap_or(1)
}

/// RFC 1928's name for a reply code.
fn socks_reason(code: u8) -> &'static str {
    match code {
        1 => "general SOCKS server failure",
        2 => "connection not allowed by ruleset",
        3 => "network unreachable",
        4 => "host unreachable",
        5 => "connection refused",
        6 => "TTL expired",
        7 => "command not supported",
        8 => "address type not supported",
        _ => "unassigned reply code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy(url: &str) -> Proxy {
        url.parse().unwrap()
    }

    fn name(host: &str) -> Host<String> {
        Host::Domain(host.to_owned())
    }

    /// Plays the proxy's side: checks each write against `script`'s expected bytes, answers
    /// each read from the script's answers (as far as the machine's room allows, in as many
    /// reads as it takes), and checks that the bytes after the answer (`INFO`) stay unread.
    fn run(tunnel: &mut Tunnel, script: &[(&[u8], &[u8])]) -> Result<(), ProxyError> {
        let mut script = script.iter();
        let mut pending: Vec<u8> = Vec::new();
        loop {
            match tunnel.poll_output()? {
                Output::Write(bytes) => {
                    let (expected, answer) = script.next().expect("a write the script expects");
                    assert_eq!(bytes, *expected, "{}", String::from_utf8_lossy(&bytes));
                    pending.extend_from_slice(answer);
                }
                Output::Read(room) => {
                    assert!(room > 0);
                    if pending.is_empty() {
                        return Err(ProxyError::Closed);
                    }
                    let n = room.min(pending.len());
                    let chunk: Vec<u8> = pending.drain(..n).collect();
                    tunnel.handle_read(&chunk)?;
                }
                Output::Done => {
                    assert!(script.next().is_none(), "writes the machine skipped");
                    // Whatever the proxy sent after its answer is still unread.
                    assert_eq!(pending, b"INFO", "read past the proxy's answer");
                    return Ok(());
                }
            }
        }
    }

    #[test]
    fn socks5_without_login_asks_for_the_name() {
        let mut tunnel = Tunnel::new(&proxy("socks5h://p:1080"), name("nats.local"), 4222).unwrap();
        let request: &[u8] = b"\x05\x01\x00\x03\x0anats.local\x10\x7e";
        let reply: &[u8] = b"\x05\x00\x00\x01\x7f\x00\x00\x01\x04\x38INFO";
        run(
            &mut tunnel,
            &[(b"\x05\x01\x00", b"\x05\x00"), (request, reply)],
        )
        .unwrap();
    }

    #[test]
    fn socks5_with_login_sends_it_and_asks_for_an_address() {
        let mut tunnel = Tunnel::new(
            &proxy("socks5://al:pw@p"),
            Host::Ipv4([10, 0, 0, 2].into()),
            4222,
        )
        .unwrap();
        // A reply bound to a name, then to an IPv6 address: the lengths follow the type.
        let reply: &[u8] = b"\x05\x00\x00\x03\x01x\x00\x01INFO";
        run(
            &mut tunnel,
            &[
                (b"\x05\x02\x00\x02", b"\x05\x02"),
                (b"\x01\x02al\x02pw", b"\x01\x00"),
                (b"\x05\x01\x00\x01\x0a\x00\x00\x02\x10\x7e", reply),
            ],
        )
        .unwrap();
        let mut tunnel = Tunnel::new(
            &proxy("socks5://p"),
            Host::Ipv6([0, 0, 0, 0, 0, 0, 0, 1].into()),
            1,
        )
        .unwrap();
        let mut request = b"\x05\x01\x00\x04".to_vec();
        request.extend_from_slice(&[0; 15]);
        request.extend_from_slice(b"\x01\x00\x01");
        let mut reply = b"\x05\x00\x00\x04".to_vec();
        reply.extend_from_slice(&[0; 18]);
        reply.extend_from_slice(b"INFO");
        run(
            &mut tunnel,
            &[(b"\x05\x01\x00", b"\x05\x00"), (&request, &reply)],
        )
        .unwrap();
    }

    #[test]
    fn socks5_refusals_are_typed() {
        let refused_login = run(
            &mut Tunnel::new(&proxy("socks5://al:bad@p"), name("n"), 1).unwrap(),
            &[
                (b"\x05\x02\x00\x02", b"\x05\x02"),
                (b"\x01\x02al\x03bad", b"\x01\x01"),
            ],
        );
        assert!(matches!(refused_login, Err(ProxyError::AuthRefused)));
        let wants_login = run(
            &mut Tunnel::new(&proxy("socks5://p"), name("n"), 1).unwrap(),
            &[(b"\x05\x01\x00", b"\x05\xff")],
        );
        assert!(matches!(wants_login, Err(ProxyError::AuthRequired)));
        let no_method = run(
            &mut Tunnel::new(&proxy("socks5://a:b@p"), name("n"), 1).unwrap(),
            &[(b"\x05\x02\x00\x02", b"\x05\xff")],
        );
        assert!(matches!(no_method, Err(ProxyError::NoAcceptableAuth)));
        let refused = run(
            &mut Tunnel::new(&proxy("socks5h://p"), name("n"), 1).unwrap(),
            &[
                (b"\x05\x01\x00", b"\x05\x00"),
                (b"\x05\x01\x00\x03\x01n\x00\x01", b"\x05\x05\x00\x01\x00"),
            ],
        );
        assert!(matches!(
            refused,
            Err(ProxyError::SocksRefused {
                code: 5,
                reason: "connection refused"
            })
        ));
        let not_socks = run(
            &mut Tunnel::new(&proxy("socks5://p"), name("n"), 1).unwrap(),
            &[(b"\x05\x01\x00", b"HT")],
        );
        assert!(matches!(not_socks, Err(ProxyError::Malformed(_))));
        let long = name(&"n".repeat(256));
        assert!(matches!(
            Tunnel::new(&proxy("socks5h://p"), long, 1),
            Err(ProxyError::HostTooLong { len: 256 })
        ));
    }

    #[test]
    fn http_connect_reads_exactly_the_answer() {
        let mut tunnel =
            Tunnel::new(&proxy("http://al:pw@p:3128"), name("nats.local"), 4222).unwrap();
        let request: &[u8] = b"CONNECT nats.local:4222 HTTP/1.1\r\nHost: nats.local:4222\r\n\
            Proxy-Authorization: Basic YWw6cHc=\r\n\r\n";
        let answer: &[u8] = b"HTTP/1.1 200 Connection established\r\nVia: test\r\n\r\nINFO";
        run(&mut tunnel, &[(request, answer)]).unwrap();
        // Bare line feeds, and an IPv6 server in brackets.
        let mut tunnel = Tunnel::new(
            &proxy("http://p"),
            Host::Ipv6([0, 0, 0, 0, 0, 0, 0, 1].into()),
            1,
        )
        .unwrap();
        let request: &[u8] = b"CONNECT [::1]:1 HTTP/1.1\r\nHost: [::1]:1\r\n\r\n";
        run(&mut tunnel, &[(request, b"HTTP/1.0 200 OK\n\nINFO")]).unwrap();
        // The mixed ends httparse takes as well.
        for answer in [
            &b"HTTP/1.1 200 OK\n\r\nINFO"[..],
            b"HTTP/1.1 200 OK\r\n\nINFO",
        ] {
            let mut tunnel = Tunnel::new(&proxy("http://p"), name("n"), 1).unwrap();
            let request: &[u8] = b"CONNECT n:1 HTTP/1.1\r\nHost: n:1\r\n\r\n";
            run(&mut tunnel, &[(request, answer)]).unwrap();
        }
    }

    #[test]
    fn http_refusals_are_typed() {
        let answer = |tunnel: &mut Tunnel, text: &[u8]| {
            let request = tunnel.poll_output();
            assert!(matches!(request, Ok(Output::Write(_))), "{request:?}");
            run_from(tunnel, text)
        };
        let forbidden = answer(
            &mut Tunnel::new(&proxy("http://p"), name("n"), 1).unwrap(),
            b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n",
        );
        assert!(matches!(
            forbidden,
            Err(ProxyError::HttpStatus { status: 403, ref reason }) if reason == "Forbidden"
        ));
        let mut tunnel = Tunnel::new(&proxy("http://p"), name("n"), 1).unwrap();
        let required = answer(
            &mut tunnel,
            b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n",
        );
        assert!(matches!(required, Err(ProxyError::AuthRequired)));
        let refused = answer(
            &mut Tunnel::new(&proxy("http://a:b@p"), name("n"), 1).unwrap(),
            b"HTTP/1.1 407 Nope\r\n\r\n",
        );
        assert!(matches!(refused, Err(ProxyError::AuthRefused)));
        let nonsense = answer(
            &mut Tunnel::new(&proxy("http://p"), name("n"), 1).unwrap(),
            b"\x05\x00garbage\r\n\r\n",
        );
        assert!(matches!(nonsense, Err(ProxyError::Malformed(_))));
        let endless = "HTTP/1.1 200 OK\r\nX-Pad: ".to_owned() + &"y".repeat(10_000);
        let too_long = answer(
            &mut Tunnel::new(&proxy("http://p"), name("n"), 1).unwrap(),
            endless.as_bytes(),
        );
        assert!(
            matches!(too_long, Err(ProxyError::AnswerTooLong { .. })),
            "{too_long:?}"
        );
    }

    /// Feeds `answer` to a machine that waits for the proxy's answer, as the proxy would
    /// send it, in the reads the machine allows.
    fn run_from(tunnel: &mut Tunnel, answer: &[u8]) -> Result<(), ProxyError> {
        let mut pending = answer.to_vec();
        loop {
            match tunnel.poll_output()? {
                Output::Read(room) if !pending.is_empty() => {
                    let chunk: Vec<u8> = pending.drain(..room.min(pending.len())).collect();
                    tunnel.handle_read(&chunk)?;
                }
                Output::Read(_) => return Err(ProxyError::Closed),
                Output::Write(_) => panic!("a write after the request"),
                Output::Done => return Ok(()),
            }
        }
    }

    #[test]
    fn the_http_room_never_reaches_past_an_end() {
        assert_eq!(http_room(b""), 2);
        assert_eq!(http_room(b"HTTP/1.1 200 OK"), 2);
        assert_eq!(http_room(b"HTTP/1.1 200 OK\r"), 2);
        assert_eq!(http_room(b"HTTP/1.1 200 OK\r\n"), 1);
        assert_eq!(http_room(b"HTTP/1.1 200 OK\r\n\r"), 1);
        assert_eq!(http_room(b"HTTP/1.1 200 OK\n"), 1);
        assert_eq!(http_room(b"HTTP/1.1 200 OK\n\r"), 1);
    }
}
