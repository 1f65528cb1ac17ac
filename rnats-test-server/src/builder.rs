//! Options for one test server, turned into a command line by [`ServerBuilder::spawn`].

use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::error::TestServerError;
use crate::server::{Launch, NatsServer};
use crate::tls::{TlsFiles, server_tls_block};
use crate::venv;
use crate::websocket::{self, Websocket, WebsocketConf};

/// Environment variable naming the `nats-server` binary to run instead of the one on `PATH`.
const BIN_ENV: &str = "NATS_SERVER_BIN";

/// Environment variable with server feature flags (ADR-53) to turn on in every test server,
/// comma-separated (`RNATS_TEST_FEATURE_FLAGS=js_ack_fc_v2`): CI runs the JetStream tests once
/// with the server's defaults and once with the flags the server is expected to turn on next.
pub const FEATURE_FLAGS_ENV: &str = "RNATS_TEST_FEATURE_FLAGS";

/// How long [`ServerBuilder::spawn`] waits for the readiness log line by default.
const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(10);

/// Options for a test server; [`ServerBuilder::spawn`] starts it.
///
/// Building is pure data: files are only written and processes only started by `spawn`.
#[derive(Debug, Clone)]
pub struct ServerBuilder {
    binary: Option<PathBuf>,
    jetstream: bool,
    config_text: Option<String>,
    config_file: Option<PathBuf>,
    args: Vec<String>,
    port: Option<u16>,
    auth: Option<Auth>,
    max_payload: Option<usize>,
    tls: Option<Tls>,
    nkey_users: Vec<String>,
    websocket: Option<Websocket>,
    monitoring: bool,
    feature_flags: Vec<String>,
    ready_timeout: Duration,
}

/// Server-side TLS settings, rendered as a `tls` block.
#[derive(Debug, Clone)]
struct Tls {
    files: TlsFiles,
    verify_clients: bool,
    handshake_first: bool,
}

/// Client authentication passed on the command line.
#[derive(Debug, Clone)]
enum Auth {
    Token(String),
    UserPassword { user: String, password: String },
}

impl ServerBuilder {
    /// Default options: no JetStream, no auth, any free port.
    pub fn new() -> Self {
        Self {
            binary: None,
            jetstream: false,
            config_text: None,
            config_file: None,
            args: Vec::new(),
            port: None,
            auth: None,
            max_payload: None,
            tls: None,
            nkey_users: Vec::new(),
            websocket: None,
            monitoring: false,
            feature_flags: feature_flags_from_env(),
            ready_timeout: DEFAULT_READY_TIMEOUT,
        }
    }

    /// Turns on a server feature flag (ADR-53), such as `js_ack_fc_v2`, in a
    /// `feature_flags` block. Flags named in `RNATS_TEST_FEATURE_FLAGS` are on already.
    pub fn feature_flag(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !self.feature_flags.contains(&name) {
            self.feature_flags.push(name);
        }
        self
    }

    /// The feature flags this server will have on.
    pub fn feature_flags(&self) -> &[String] {
        &self.feature_flags
    }

    /// Enables JetStream with a store directory that lives as long as the server handle
    /// (it survives [`NatsServer::restart`]).
    pub fn jetstream(mut self, on: bool) -> Self {
        self.jetstream = on;
        self
    }

    /// Whether [`jetstream`](Self::jetstream) is on.
    pub(crate) fn has_jetstream(&self) -> bool {
        self.jetstream
    }

    /// Configuration file text, written to a temporary file and passed with `-c`.
    ///
    /// Command-line options set by this builder (address, port, auth, JetStream) take
    /// precedence over the same settings in the text. Do not set `log_file`: readiness is
    /// read from stderr.
    pub fn config(mut self, text: impl Into<String>) -> Self {
        self.config_text = Some(text.into());
        self
    }

    /// An existing configuration file. If [`config`](Self::config) text or another option
    /// that needs a generated file ([`max_payload`](Self::max_payload), [`tls`](Self::tls),
    /// [`nkey_users`](Self::nkey_users)) is also set, the generated file includes this one.
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.config_file = Some(path.into());
        self
    }

    /// One extra command-line argument, appended after the generated ones.
    pub fn arg(mut self, a: impl Into<String>) -> Self {
        self.args.push(a.into());
        self
    }

    /// A fixed client port instead of one chosen by the server (`-p -1`).
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }

    /// Requires this token from clients (`--auth`); replaces user/password auth.
    pub fn token(mut self, t: impl Into<String>) -> Self {
        self.auth = Some(Auth::Token(t.into()));
        self
    }

    /// Requires this user and password from clients (`--user`/`--pass`); replaces token auth.
    pub fn user_password(mut self, u: impl Into<String>, p: impl Into<String>) -> Self {
        self.auth = Some(Auth::UserPassword {
            user: u.into(),
            password: p.into(),
        });
        self
    }

    /// The largest message payload the server accepts, announced in INFO as `max_payload`.
    ///
    /// `nats-server` has no flag for it, so it goes into the generated configuration file.
    pub fn max_payload(mut self, n: usize) -> Self {
        self.max_payload = Some(n);
        self
    }

    /// Serves clients over TLS with the server certificate, key and CA of `files` (see
    /// [`TestCa::write_to`](crate::TestCa::write_to)), through a generated block:
    ///
    /// ```text
    /// tls {
    ///   cert_file: "<server_cert>"
    ///   key_file: "<server_key>"
    ///   ca_file: "<ca>"
    ///   verify: <verify_clients>
    ///   handshake_first: <handshake_first>
    /// }
    /// ```
    ///
    /// With `verify_clients` the server requires a client certificate signed by the CA.
    /// With `handshake_first` the server expects the TLS handshake straight away and sends
    /// nothing in plain text; otherwise it first sends a plain `INFO` with
    /// `"tls_required":true`. The block comes after [`config`](Self::config) text, so it
    /// wins over a `tls` block there. The files must outlive the server.
    pub fn tls(mut self, files: &TlsFiles, verify_clients: bool, handshake_first: bool) -> Self {
        self.tls = Some(Tls {
            files: files.clone(),
            verify_clients,
            handshake_first,
        });
        self
    }

    /// Requires clients to authenticate as one of these nkey users (public keys `U...`,
    /// e.g. from [`nkey_user`](crate::nkey_user)) by signing the `INFO` nonce:
    ///
    /// ```text
    /// authorization {
    ///   users = [
    ///     { nkey: "U..." }
    ///   ]
    /// }
    /// ```
    ///
    /// Do not combine with [`token`](Self::token) or
    /// [`user_password`](Self::user_password), nor with an `authorization` block in
    /// [`config`](Self::config) text.
    pub fn nkey_users<S: AsRef<str>>(mut self, public_keys: &[S]) -> Self {
        self.nkey_users = public_keys.iter().map(|k| k.as_ref().to_owned()).collect();
        self
    }

    /// Also serves clients over WebSocket, in plain text (`ws://`), on a free loopback port
    /// that [`NatsServer::websocket_url`] tells; a restart keeps the port:
    ///
    /// ```text
    /// websocket {
    ///   listen: "127.0.0.1:-1"
    ///   no_tls: true
    /// }
    /// ```
    ///
    /// The block goes into a file of its own that the generated configuration includes, so
    /// do not put a `websocket` block in [`config`](Self::config) text as well. Replaces
    /// [`websocket_tls`](Self::websocket_tls).
    pub fn websocket(mut self) -> Self {
        self.websocket = Some(Websocket { tls: None });
        self
    }

    /// Also serves clients over secure WebSocket (`wss://`) with the server certificate and
    /// key of `files`, like [`websocket`](Self::websocket) otherwise:
    ///
    /// ```text
    /// websocket {
    ///   listen: "127.0.0.1:-1"
    ///   tls {
    ///     cert_file: "<server_cert>"
    ///     key_file: "<server_key>"
    ///   }
    /// }
    /// ```
    ///
    /// Independent of [`tls`](Self::tls), which secures the NATS client port. The files
    /// must outlive the server.
    pub fn websocket_tls(mut self, files: &TlsFiles) -> Self {
        self.websocket = Some(Websocket {
            tls: Some(files.clone()),
        });
        self
    }

    /// Also serves the HTTP monitoring endpoints (`/varz`, `/routez`, `/gatewayz`, `/leafz`,
    /// `/jsz`, ...) on a free loopback port (`-m PORT`, on the `-a 127.0.0.1` host), which
    /// [`NatsServer::monitoring_port`] tells and [`NatsServer::monitor`] reads; a restart
    /// keeps the port.
    pub fn monitoring(mut self) -> Self {
        self.monitoring = true;
        self
    }

    /// The `nats-server` binary to run, instead of `$NATS_SERVER_BIN` or `nats-server` (from
    /// `PATH`, else from the virtual environment `scripts/ensure-nats-server` installs into).
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Self {
        self.binary = Some(path.into());
        self
    }

    /// How long to wait for the server to log readiness (default 10 s).
    pub fn ready_timeout(mut self, timeout: Duration) -> Self {
        self.ready_timeout = timeout;
        self
    }

    /// Starts the server and returns once it logs that it is ready for clients.
    pub fn spawn(self) -> Result<NatsServer, TestServerError> {
        NatsServer::launch(self.prepare_launch()?, self.port)
    }

    /// Appends configuration text after whatever [`config`](Self::config) (or an earlier
    /// call) set, e.g. to add accounts to a [`Cluster`](crate::Cluster) node whose cluster
    /// block is already there.
    pub fn append_config(mut self, text: &str) -> Self {
        let mut merged = self.config_text.take().unwrap_or_default();
        merged.push('\n');
        merged.push_str(text);
        self.config_text = Some(merged);
        self
    }

    /// Writes the files the server needs and assembles its command line, minus `-p`.
    fn prepare_launch(&self) -> Result<Launch, TestServerError> {
        let program = match &self.binary {
            Some(path) => path.clone().into_os_string(),
            None => std::env::var_os(BIN_ENV).unwrap_or_else(|| venv::program("nats-server")),
        };
        // Loopback only, whatever a config file says: the flag wins over `listen`.
        let mut args: Vec<OsString> = vec!["-a".into(), "127.0.0.1".into()];

        let mut config_dir = None;
        let mut websocket_conf = None;
        if self.needs_generated_config() {
            let dir = tempfile::Builder::new()
                .prefix("rnats-test-config-")
                .tempdir()?;
            let path = dir.path().join("nats-server.conf");
            fs::write(&path, self.generated_config(dir.path())?)?;
            args.extend(["-c".into(), path.into_os_string()]);
            websocket_conf = self.websocket.clone().map(|websocket| WebsocketConf {
                path: dir.path().join(websocket::FILE_NAME),
                websocket,
            });
            config_dir = Some(dir);
        } else if let Some(file) = &self.config_file {
            args.extend(["-c".into(), file.clone().into_os_string()]);
        }

        let mut store_dir = None;
        if self.jetstream {
            let dir = tempfile::Builder::new()
                .prefix("rnats-test-js-")
                .tempdir()?;
            args.extend([
                "-js".into(),
                "--store_dir".into(),
                dir.path().as_os_str().to_owned(),
            ]);
            store_dir = Some(dir);
        }

        match &self.auth {
            Some(Auth::Token(token)) => args.extend(["--auth".into(), token.into()]),
            Some(Auth::UserPassword { user, password }) => args.extend([
                "--user".into(),
                user.into(),
                "--pass".into(),
                password.into(),
            ]),
            None => {}
        }
        let monitoring_port = if self.monitoring {
            let port = crate::free_port();
            args.extend(["-m".into(), port.to_string().into()]);
            Some(port)
        } else {
            None
        };
        args.extend(self.args.iter().map(OsString::from));

        Ok(Launch {
            monitoring_port,
            program,
            args,
            ready_timeout: self.ready_timeout,
            websocket: websocket_conf,
            _config_dir: config_dir,
            store_dir,
        })
    }

    /// Whether some option can only be passed through a generated configuration file.
    fn needs_generated_config(&self) -> bool {
        self.config_text.is_some()
            || self.max_payload.is_some()
            || self.tls.is_some()
            || !self.nkey_users.is_empty()
            || self.websocket.is_some()
            || !self.feature_flags.is_empty()
    }

    /// The text of the configuration file generated in `dir`.
    fn generated_config(&self, dir: &Path) -> Result<String, TestServerError> {
        let mut text = String::new();
        if let Some(file) = &self.config_file {
            // nats-server joins include paths onto the including file's directory, even
            // absolute ones, so climb to the root from the temp dir and descend again.
            let file = std::path::absolute(file)?;
            text.push_str(&format!("include '{}'\n", include_path(dir, &file)?));
        }
        if let Some(user_text) = &self.config_text {
            text.push_str(user_text);
            text.push('\n');
        }
        if let Some(n) = self.max_payload {
            text.push_str(&format!("max_payload: {n}\n"));
        }
        if let Some(tls) = &self.tls {
            text.push_str(&server_tls_block(
                &tls.files,
                tls.verify_clients,
                tls.handshake_first,
            ));
        }
        if !self.nkey_users.is_empty() {
            text.push_str("authorization {\n  users = [\n");
            for key in &self.nkey_users {
                text.push_str(&format!("    {{ nkey: {} }}\n", quote(key)));
            }
            text.push_str("  ]\n}\n");
        }
        if !self.feature_flags.is_empty() {
            text.push_str("feature_flags {\n");
            for flag in &self.feature_flags {
                text.push_str(&format!("  {}: true\n", quote(flag)));
            }
            text.push_str("}\n");
        }
        if self.websocket.is_some() {
            // Written (and rewritten on restart) by `WebsocketConf`, beside this file.
            text.push_str(&format!("include {}\n", quote(websocket::FILE_NAME)));
        }
        Ok(text)
    }
}

impl Default for ServerBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// The feature flags named in [`FEATURE_FLAGS_ENV`], blanks and empty names left out.
fn feature_flags_from_env() -> Vec<String> {
    std::env::var(FEATURE_FLAGS_ENV)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|flag| !flag.is_empty())
        .map(String::from)
        .collect()
}

/// `path` as a double-quoted configuration string.
pub(crate) fn quote_path(path: &Path) -> String {
    quote(&path.to_string_lossy())
}

/// `s` as a double-quoted configuration string; the config lexer takes JSON-style escapes.
pub(crate) fn quote(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// `file` as a path relative to `dir`, going up to the root and back down.
///
/// nats-server resolves includes lexically, so `..` never follows symlinks here.
fn include_path(dir: &Path, file: &Path) -> Result<String, TestServerError> {
    let dir = std::path::absolute(dir)?;
    let depth = dir
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count();
    let below_root: PathBuf = file
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    Ok(format!("{}{}", "../".repeat(depth), below_root.display()))
}
