//! Just enough of the client protocol to read a server's `INFO` lines.

use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::TestServerError;

/// A client connection that only reads `INFO` (and answers `PING`).
pub(crate) struct InfoStream {
    reader: BufReader<TcpStream>,
    deadline: Instant,
}

impl InfoStream {
    /// Connects to `127.0.0.1:port`; every read must complete before `deadline`.
    pub(crate) fn connect(port: u16, deadline: Instant) -> Result<Self, TestServerError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let stream = TcpStream::connect_timeout(&addr, remaining(deadline)?)?;
        Ok(Self {
            reader: BufReader::new(stream),
            deadline,
        })
    }

    /// Sends `CONNECT` with `protocol: 1` so that the server pushes `INFO` again whenever
    /// its cluster topology (`connect_urls`) changes.
    ///
    /// The `PING` matters: the server only sends those updates after its first `PONG` to a
    /// client, and when writing that `PONG` it re-sends `INFO` if the topology changed since
    /// the greeting, so no change falls between the greeting and the subscription.
    pub(crate) fn subscribe_to_updates(&mut self) -> Result<(), TestServerError> {
        let stream = self.reader.get_mut();
        stream.write_all(
            b"CONNECT {\"verbose\":false,\"pedantic\":false,\"protocol\":1}\r\nPING\r\n",
        )?;
        stream.flush()?;
        Ok(())
    }

    /// Reads lines until the next `INFO` and returns its JSON body.
    pub(crate) fn next_info(&mut self) -> Result<Value, TestServerError> {
        let mut line = String::new();
        loop {
            line.clear();
            self.reader
                .get_ref()
                .set_read_timeout(Some(remaining(self.deadline)?))?;
            if self.reader.read_line(&mut line)? == 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
            }
            let trimmed = line.trim_end();
            if let Some(body) = trimmed.strip_prefix("INFO ") {
                return serde_json::from_str(body).map_err(|_| TestServerError::Protocol {
                    line: trimmed.to_owned(),
                });
            }
            match trimmed {
                "PING" => self.reader.get_mut().write_all(b"PONG\r\n")?,
                "PONG" | "+OK" => {}
                _ => {
                    return Err(TestServerError::Protocol {
                        line: trimmed.to_owned(),
                    });
                }
            }
        }
    }
}

/// Connects to `127.0.0.1:port` and returns the body of the greeting `INFO`.
pub(crate) fn read_info(port: u16, timeout: Duration) -> Result<Value, TestServerError> {
    InfoStream::connect(port, Instant::now() + timeout)?.next_info()
}

/// The `connect_urls` of an `INFO` body (empty if absent).
pub(crate) fn connect_urls(info: &Value) -> Vec<String> {
    info.get("connect_urls")
        .and_then(Value::as_array)
        .map(|urls| {
            urls.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Time left until `deadline`, or a timeout error once it has passed.
fn remaining(deadline: Instant) -> Result<Duration, TestServerError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into())
    } else {
        Ok(left)
    }
}
