//! The NATS handshake as a sans-IO state machine (ADR-40): bytes the server sent go in
//! through [`Handshake::handle_read`], and [`Handshake::poll_output`] says what the driver
//! must do next (read, write these bytes, upgrade to TLS, send CONNECT, or stop: done). The
//! tokio client drives it in `dial.rs`, the blocking client in `blocking/conn.rs`.
//!
//! ```text
//!  ExpectInfo ──INFO──▶ [UpgradeTls] ──▶ SendConnect ──CONNECT+PING──▶ ExpectPong ──PONG──▶ Done
//! ```

use bytes::{Bytes, BytesMut};
use rnats_proto::{ConnectInfo, Parser, ParserLimits, ServerError, ServerInfo, ServerOp};

use crate::error::{ConnectCause, ConnectError};

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
                Step::Done => {
                    // nats-server 2.12+ answers CONNECT with an INFO of its own (the account the
                    // user is bound to) right behind the PONG: when it came in the same read,
                    // the connection starts out knowing it. One still on its way is taken in by
                    // the driver like any later INFO.
                    if !self.read_buf.starts_with(b"INFO") {
                        return Ok(Output::Done);
                    }
                    match self.parser.decode(&mut self.read_buf)? {
                        Some(ServerOp::Info(info)) => self.info = Some(*info),
                        Some(op) => return Err(ConnectCause::UnexpectedOp(op_name(&op)).into()),
                        None => return Ok(Output::Done),
                    }
                }
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

/// The name of a server operation, for errors.
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

    fn connect_body() -> ConnectInfo {
        ConnectInfo {
            lang: "rust".to_owned(),
            headers: true,
            ..ConnectInfo::default()
        }
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

    /// A handshake that has sent its CONNECT and PING.
    fn expecting_pong() -> Handshake {
        let mut hs = Handshake::new(false, true, "localhost", 1024);
        hs.handle_read(b"INFO {\"server_id\":\"a\"}\r\n");
        assert_eq!(hs.poll_output().unwrap(), Output::SendConnect);
        hs.handle_connect_info(&connect_body());
        assert!(matches!(hs.poll_output().unwrap(), Output::Write(_)));
        hs
    }

    #[test]
    fn the_info_that_answers_connect_behind_the_pong_is_taken_in() {
        let answer = br#"INFO {"server_id":"a","connect_info":true,"remote_account":"SYS","acc_is_sys":true}"#;
        let mut hs = expecting_pong();
        let mut read = b"PONG\r\n".to_vec();
        read.extend_from_slice(answer);
        read.extend_from_slice(b"\r\nPING\r\n");
        hs.handle_read(&read);
        assert_eq!(hs.poll_output().unwrap(), Output::Done);
        let (rest, _, info, _) = hs.finish().unwrap();
        assert!(info.connect_info && info.is_system_account);
        assert_eq!(info.remote_account.as_deref(), Some("SYS"));
        // What follows it is the driver's.
        assert_eq!(&rest[..], b"PING\r\n");

        // Half of it in this read: the handshake ends with the first INFO, and the parser it
        // hands over finishes the second once the rest comes.
        let mut hs = expecting_pong();
        let mut read = b"PONG\r\n".to_vec();
        read.extend_from_slice(&answer[..20]);
        hs.handle_read(&read);
        assert_eq!(hs.poll_output().unwrap(), Output::Done);
        let (mut rest, mut parser, info, _) = hs.finish().unwrap();
        assert!(!info.connect_info);
        rest.extend_from_slice(&answer[20..]);
        rest.extend_from_slice(b"\r\n");
        let Some(ServerOp::Info(later)) = parser.decode(&mut rest).unwrap() else {
            panic!("the INFO expected")
        };
        assert!(later.is_system_account);
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

    #[test]
    fn server_refusals_keep_their_kind_and_their_error() {
        use crate::error::ConnectErrorKind;
        let refused = |text: &str| {
            let mut hs = Handshake::new(false, true, "h", 64);
            hs.handle_read(b"INFO {}\r\n");
            assert_eq!(hs.poll_output().unwrap(), Output::SendConnect);
            hs.handle_connect_info(&connect_body());
            assert!(matches!(hs.poll_output().unwrap(), Output::Write(_)));
            hs.handle_read(format!("-ERR '{text}'\r\n").as_bytes());
            hs.poll_output().unwrap_err()
        };
        for (text, error, kind) in [
            (
                "maximum connections exceeded",
                ServerError::MaxConnectionsExceeded,
                ConnectErrorKind::Io,
            ),
            (
                "maximum account active connections exceeded",
                ServerError::MaxAccountConnectionsExceeded,
                ConnectErrorKind::Io,
            ),
            (
                "User Authentication Revoked",
                ServerError::AuthenticationRevoked,
                ConnectErrorKind::AuthorizationViolation,
            ),
            (
                "Account Authentication Expired",
                ServerError::AccountAuthenticationExpired,
                ConnectErrorKind::AuthorizationViolation,
            ),
            (
                "User Authentication Expired",
                ServerError::AuthenticationExpired,
                ConnectErrorKind::AuthorizationViolation,
            ),
        ] {
            let err = refused(text);
            assert!(
                matches!(err.cause(), Some(ConnectCause::Server(e)) if *e == error),
                "{text}: {err}"
            );
            assert_eq!(err.kind(), kind, "{text}");
        }
    }
}
