//! The websocket listener of a test server, in a configuration file of its own.
//!
//! nats-server has no command-line flag for the websocket port, so the `websocket` block
//! lives in a separate file that the generated configuration includes. The first start asks
//! for any free port; a restart rewrites the file with the port the first start got, so
//! clients reconnect to the same `ws://` address.

use std::fs;
use std::path::PathBuf;

use crate::builder::{quote, quote_path};
use crate::tls::TlsFiles;

/// Logged once the websocket listener is bound: `ws://` or `wss://`, host, `:` and port.
pub(crate) const WEBSOCKET_LISTENING: &str = "Listening for websocket clients on ";

/// File name of the websocket block, next to the generated configuration.
pub(crate) const FILE_NAME: &str = "websocket.conf";

/// What the websocket listener serves: plain `ws://`, or `wss://` with these files.
#[derive(Debug, Clone)]
pub(crate) struct Websocket {
    pub(crate) tls: Option<TlsFiles>,
}

/// The websocket block's file, rewritten for each start.
#[derive(Debug)]
pub(crate) struct WebsocketConf {
    pub(crate) path: PathBuf,
    pub(crate) websocket: Websocket,
}

impl WebsocketConf {
    /// Writes the block for `port`, or for any free port (`-1`) when `None`.
    pub(crate) fn write(&self, port: Option<u16>) -> std::io::Result<()> {
        fs::write(&self.path, self.websocket.block(port))
    }
}

impl Websocket {
    /// The `websocket { ... }` block, listening on loopback only.
    pub(crate) fn block(&self, port: Option<u16>) -> String {
        let port = port.map_or_else(|| "-1".to_owned(), |p| p.to_string());
        let listen = quote(&format!("127.0.0.1:{port}"));
        match &self.tls {
            None => format!("websocket {{\n  listen: {listen}\n  no_tls: true\n}}\n"),
            Some(files) => format!(
                "websocket {{\n  listen: {listen}\n  tls {{\n    cert_file: {}\n    key_file: {}\n  }}\n}}\n",
                quote_path(&files.server_cert),
                quote_path(&files.server_key),
            ),
        }
    }
}

/// The port in a [`WEBSOCKET_LISTENING`] log line, if `line` is one.
pub(crate) fn listening_port(line: &str) -> Option<u16> {
    let (_, url) = line.split_once(WEBSOCKET_LISTENING)?;
    url.rsplit_once(':')?.1.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_read_from_the_listening_line() {
        let line = "[1] 2026/01/01 00:00:00.000000 [INF] Listening for websocket clients on ws://127.0.0.1:39231";
        assert_eq!(listening_port(line), Some(39231));
        let line = "[INF] Listening for websocket clients on wss://127.0.0.1:443";
        assert_eq!(listening_port(line), Some(443));
        assert_eq!(
            listening_port("[INF] Listening for client connections on 127.0.0.1:4222"),
            None
        );
    }

    #[test]
    fn the_block_listens_on_loopback_with_or_without_tls() {
        let plain = Websocket { tls: None }.block(None);
        assert!(plain.contains("listen: \"127.0.0.1:-1\"") && plain.contains("no_tls: true"));
        let files = TlsFiles {
            ca: "ca.pem".into(),
            server_cert: "cert.pem".into(),
            server_key: "key.pem".into(),
            client_cert: "c.pem".into(),
            client_key: "k.pem".into(),
        };
        let secure = Websocket { tls: Some(files) }.block(Some(8443));
        assert!(secure.contains("listen: \"127.0.0.1:8443\""));
        assert!(secure.contains("cert_file: \"cert.pem\"") && !secure.contains("no_tls"));
    }
}
