//! A raw client-protocol connection shared by the fixture tests.

#![allow(dead_code, unreachable_pub)]

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// How long a read may take before a test gives up on something that should arrive.
pub const PATIENCE: Duration = Duration::from_secs(5);

/// How long a test waits to conclude that nothing arrives.
pub const SILENCE: Duration = Duration::from_millis(300);

/// A plain TCP connection reading whole protocol lines.
///
/// Once the greeting has been read with [`Raw::info`], later `INFO` lines (the server sends
/// one after `CONNECT`, and more on topology changes) are skipped by the line readers.
pub struct Raw {
    reader: BufReader<TcpStream>,
    greeted: bool,
}

impl Raw {
    /// Connects to `127.0.0.1:port` with a read timeout of [`PATIENCE`].
    pub fn connect(port: u16) -> Raw {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(PATIENCE))
            .expect("set a read timeout");
        Raw {
            reader: BufReader::new(stream),
            greeted: false,
        }
    }

    /// The next line without its CRLF; panics on EOF or timeout.
    pub fn line(&mut self) -> String {
        match self.try_line() {
            Ok(Some(line)) => line,
            Ok(None) => panic!("connection closed while a line was expected"),
            Err(e) => panic!("no line: {e}"),
        }
    }

    /// The next line, `None` at EOF.
    pub fn try_line(&mut self) -> io::Result<Option<String>> {
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line)? == 0 {
                return Ok(None);
            }
            if !(self.greeted && line.starts_with("INFO ")) {
                return Ok(Some(line.trim_end().to_owned()));
            }
        }
    }

    /// The next line within `timeout`, or the timeout error.
    pub fn line_within(&mut self, timeout: Duration) -> io::Result<Option<String>> {
        self.reader.get_ref().set_read_timeout(Some(timeout))?;
        let line = self.try_line();
        self.reader.get_ref().set_read_timeout(Some(PATIENCE))?;
        line
    }

    /// Reads the greeting and returns its JSON body.
    pub fn info(&mut self) -> serde_json::Value {
        let line = self.line();
        self.greeted = true;
        let body = line
            .strip_prefix("INFO ")
            .unwrap_or_else(|| panic!("not INFO: {line}"));
        serde_json::from_str(body).expect("INFO json")
    }

    /// Writes `text` as is.
    pub fn send(&mut self, text: &str) {
        let stream = self.reader.get_mut();
        stream.write_all(text.as_bytes()).expect("send");
        stream.flush().expect("flush");
    }
}

/// Whether `e` is what a read timeout gives.
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}
