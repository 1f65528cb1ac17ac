//! Connection options.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::Client;
use crate::auth::{AuthError, Credentials, Secret, SignedAuth};
use crate::error::ConnectError;
use crate::tls::TlsOptions;

/// How to connect: credentials, timeouts and buffer sizes. Build with the setters, then call
/// [`ConnectOptions::connect`].
///
/// ```no_run
/// # async fn run() -> Result<(), rnats_core::ConnectError> {
/// let client = rnats_core::ConnectOptions::new()
///     .name("billing")
///     .user_and_password("alice", "s3cret")
///     .connect("nats://127.0.0.1:4222")
///     .await?;
/// # drop(client); Ok(()) }
/// ```
#[derive(Clone)]
pub struct ConnectOptions {
    pub(crate) name: Option<String>,
    pub(crate) token: Option<String>,
    pub(crate) user_and_password: Option<(String, String)>,
    pub(crate) no_echo: bool,
    pub(crate) inbox_prefix: String,
    pub(crate) ping_interval: Duration,
    pub(crate) max_pings_outstanding: u32,
    pub(crate) connection_timeout: Duration,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) drain_timeout: Duration,
    pub(crate) read_buffer_capacity: usize,
    pub(crate) subscription_capacity: usize,
    pub(crate) subscription_capacity_bytes: usize,
    pub(crate) write_buffer_limit: usize,
    pub(crate) linger: Option<Linger>,
    pub(crate) send_buffer_size: Option<usize>,
    pub(crate) recv_buffer_size: Option<usize>,
    pub(crate) reconnect: ReconnectPolicy,
    pub(crate) credentials: Option<Credentials>,
    pub(crate) tls: TlsOptions,
}

/// When and how to reconnect; see the reconnect setters on [`ConnectOptions`].
#[derive(Clone)]
pub(crate) struct ReconnectPolicy {
    /// Attempts after a disconnect before giving up; `None`: never give up, `Some(0)`: never
    /// reconnect.
    pub(crate) max_reconnects: Option<usize>,
    /// Delay before a pass over the server pool, by pass number (the first pass is at once).
    pub(crate) delay: Arc<dyn Fn(usize) -> Duration + Send + Sync>,
    /// Bytes of publishes kept while disconnected.
    pub(crate) buffer_size: usize,
    pub(crate) retry_on_initial_connect: bool,
    pub(crate) retain_servers_order: bool,
    pub(crate) ignore_discovered_servers: bool,
    pub(crate) fail_requests_on_disconnect: bool,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            max_reconnects: None,
            delay: Arc::new(crate::reconnect::default_delay),
            buffer_size: 8 * 1024 * 1024,
            retry_on_initial_connect: false,
            retain_servers_order: false,
            ignore_discovered_servers: false,
            fail_requests_on_disconnect: false,
        }
    }
}

/// The opt-in batching policy for bulk publishers; see [`ConnectOptions::linger`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Linger {
    pub(crate) delay: Duration,
    pub(crate) max_bytes: usize,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            name: None,
            token: None,
            user_and_password: None,
            no_echo: false,
            inbox_prefix: "_INBOX".to_owned(),
            ping_interval: Duration::from_secs(60),
            max_pings_outstanding: 2,
            connection_timeout: Duration::from_secs(5),
            request_timeout: Some(Duration::from_secs(10)),
            drain_timeout: Duration::from_secs(30),
            read_buffer_capacity: 64 * 1024,
            subscription_capacity: 64 * 1024,
            subscription_capacity_bytes: 64 * 1024 * 1024,
            write_buffer_limit: 128 * 1024,
            linger: None,
            send_buffer_size: None,
            recv_buffer_size: None,
            reconnect: ReconnectPolicy::default(),
            credentials: None,
            tls: TlsOptions::default(),
        }
    }
}

impl ConnectOptions {
    /// Default options.
    pub fn new() -> ConnectOptions {
        ConnectOptions::default()
    }

    /// Options authenticating with a token (as in async-nats).
    pub fn with_token(token: impl Into<String>) -> ConnectOptions {
        ConnectOptions::new().token(token)
    }

    /// Options authenticating with a user name and password (as in async-nats).
    pub fn with_user_and_password(
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> ConnectOptions {
        ConnectOptions::new().user_and_password(user, password)
    }

    /// Options authenticating as an nkey user (as in async-nats).
    pub fn with_nkey(seed: impl Into<String>) -> ConnectOptions {
        ConnectOptions::new().nkey(seed)
    }

    /// Options authenticating with a `.creds` file (as in async-nats).
    pub async fn with_credentials_file(
        path: impl AsRef<Path>,
    ) -> Result<ConnectOptions, ConnectError> {
        ConnectOptions::new().credentials_file(path).await
    }

    /// Connects to `url` (`nats://[user:pass@]host[:port]`) with these options.
    pub async fn connect(self, url: impl AsRef<str>) -> Result<Client, ConnectError> {
        Client::connect_with(url.as_ref(), self).await
    }

    /// The client name the server shows in monitoring.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Authenticates with a token.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Authenticates with a user name and password.
    pub fn user_and_password(
        mut self,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        self.user_and_password = Some((user.into(), password.into()));
        self
    }

    /// Authenticates as a plain nkey user: `seed` (`SU...`) signs the server's nonce. A
    /// malformed seed fails the connect with [`ConnectError::Auth`].
    pub fn nkey(mut self, seed: impl Into<String>) -> Self {
        self.credentials = Some(Credentials::NKey {
            seed: Secret::new(seed),
        });
        self
    }

    /// Authenticates with a user JWT and the seed that signs the server's nonce.
    pub fn jwt_and_seed(mut self, jwt: impl Into<String>, seed: impl Into<String>) -> Self {
        self.credentials = Some(Credentials::Jwt {
            jwt: jwt.into(),
            seed: Secret::new(seed),
        });
        self
    }

    /// Authenticates with the text of a `.creds` file (user JWT and seed).
    pub fn credentials(mut self, creds: &str) -> Result<Self, ConnectError> {
        self.credentials = Some(Credentials::from_creds(creds)?);
        Ok(self)
    }

    /// Authenticates with a `.creds` file, read now.
    pub async fn credentials_file(mut self, path: impl AsRef<Path>) -> Result<Self, ConnectError> {
        let path = path.as_ref().to_owned();
        let read = tokio::task::spawn_blocking(move || Credentials::from_creds_file(&path));
        let credentials = read
            .await
            .map_err(|e| AuthError::Callback(e.to_string()))??;
        self.credentials = Some(credentials);
        Ok(self)
    }

    /// Authenticates with credentials made at each connect: `sign` gets the server's nonce and
    /// returns the JWT and/or public nkey and the nonce signature. For credentials that rotate
    /// or live in a key store.
    pub fn auth_callback(
        mut self,
        sign: impl Fn(&[u8]) -> Result<SignedAuth, AuthError> + Send + Sync + 'static,
    ) -> Self {
        self.credentials = Some(Credentials::from_callback(sign));
        self
    }

    /// Refuses servers that do not offer TLS (also implied by `tls://` URLs). Servers that
    /// require TLS get it whatever this says.
    pub fn require_tls(mut self, required: bool) -> Self {
        self.tls.required = required;
        self
    }

    /// Starts TLS before the server's INFO, for servers configured with `handshake_first`.
    pub fn tls_first(mut self) -> Self {
        self.tls.first = true;
        self.tls.required = true;
        self
    }

    /// Trusts the CA certificates in this PEM file, in addition to the built-in web PKI roots.
    /// Server host names are always verified.
    pub fn add_root_certificates(mut self, pem_file: impl Into<PathBuf>) -> Self {
        self.tls.root_files.push(pem_file.into());
        self
    }

    /// Presents this certificate chain and private key (PEM files) for mutual TLS.
    pub fn add_client_certificate(
        mut self,
        cert: impl Into<PathBuf>,
        key: impl Into<PathBuf>,
    ) -> Self {
        self.tls.client_cert = Some((cert.into(), key.into()));
        self
    }

    /// Uses this rustls configuration as it is, instead of one built from the TLS options
    /// (roots, client certificate). `require_tls` and `tls_first` still apply.
    pub fn tls_client_config(mut self, config: rustls::ClientConfig) -> Self {
        self.tls.config = Some(Arc::new(config));
        self
    }

    /// Asks the server not to deliver this connection's own publishes back to it.
    pub fn no_echo(mut self) -> Self {
        self.no_echo = true;
        self
    }

    /// Prefix for inbox subjects (default `_INBOX`), for accounts whose permissions need one.
    pub fn custom_inbox_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.inbox_prefix = prefix.into();
        self
    }

    /// How often to PING the server to check the connection is alive (default 60 s).
    pub fn ping_interval(mut self, interval: Duration) -> Self {
        self.ping_interval = interval;
        self
    }

    /// Unanswered PINGs after which the connection is declared stale (default 2).
    pub fn max_pings_outstanding(mut self, n: u32) -> Self {
        self.max_pings_outstanding = n.max(1);
        self
    }

    /// Time allowed to connect and complete the handshake (default 5 s).
    pub fn connection_timeout(mut self, timeout: Duration) -> Self {
        self.connection_timeout = timeout;
        self
    }

    /// Default timeout for [`Client::request`]; `None` waits forever (default 10 s).
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long [`Client::drain`] waits for the server before closing anyway (default 30 s).
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Bytes read from the socket at once (default 64 KiB). Larger values help bursts of
    /// small messages; smaller ones save memory per connection.
    pub fn read_buffer_capacity(mut self, bytes: usize) -> Self {
        self.read_buffer_capacity = bytes.max(512);
        self
    }

    /// Messages a subscription buffers before it counts as a slow consumer (default 65,536).
    pub fn subscription_capacity(mut self, messages: usize) -> Self {
        self.subscription_capacity = messages.max(1);
        self
    }

    /// Bytes a subscription buffers before it counts as a slow consumer (default 64 MiB).
    pub fn subscription_capacity_bytes(mut self, bytes: usize) -> Self {
        self.subscription_capacity_bytes = bytes.max(1);
        self
    }

    /// Bytes of unwritten frames after which `publish` waits for the socket (default 128 KiB:
    /// large enough that batches saturate the server, small enough to stay in cache).
    /// Up to twice this may be held: one batch being written and one being filled.
    pub fn write_buffer_limit(mut self, bytes: usize) -> Self {
        self.write_buffer_limit = bytes.max(1024);
        self
    }
}

impl ConnectOptions {
    /// Holds publishes for up to `delay` (or until `max_bytes` are queued) so they leave in
    /// fewer, larger writes. Off by default: the default policy already batches under load
    /// (whatever queues while a write is in flight goes out in the next one) and sends at once
    /// when idle. Linger trades latency for fewer syscalls; `flush()` and requests are never
    /// held back by it. See `docs/performance.md` for measurements.
    pub fn linger(mut self, delay: Duration, max_bytes: usize) -> Self {
        self.linger = (!delay.is_zero()).then_some(Linger {
            delay,
            max_bytes: max_bytes.max(1),
        });
        self
    }

    /// Reconnect attempts after a lost connection before the client closes for good (default:
    /// unlimited). Each attempt tries one server of the pool.
    pub fn max_reconnects(mut self, attempts: Option<usize>) -> Self {
        self.reconnect.max_reconnects = attempts;
        self
    }

    /// Never reconnect: a lost connection closes the client.
    pub fn no_reconnect(self) -> Self {
        self.max_reconnects(Some(0))
    }

    /// How long to wait before each pass over the server pool, given the pass number (1 for
    /// the first retry pass; the first pass after a disconnect runs at once). The default
    /// doubles from 100 ms up to 5 s and adds up to 50% random jitter, so a fleet of clients
    /// does not reconnect in lockstep.
    pub fn reconnect_delay_callback(
        mut self,
        delay: impl Fn(usize) -> Duration + Send + Sync + 'static,
    ) -> Self {
        self.reconnect.delay = Arc::new(delay);
        self
    }

    /// Bytes of publishes kept while disconnected and sent after reconnecting (default 8 MiB).
    /// Past it, `publish` fails with [`PublishError::ReconnectBufferFull`](crate::PublishError).
    pub fn reconnect_buffer_size(mut self, bytes: usize) -> Self {
        self.reconnect.buffer_size = bytes;
        self
    }

    /// If the first connect fails, return a client anyway and keep trying in the background,
    /// as after a disconnect (default: the first connect's error is returned).
    pub fn retry_on_initial_connect(mut self) -> Self {
        self.reconnect.retry_on_initial_connect = true;
        self
    }

    /// Try servers in the order given instead of shuffling them.
    pub fn retain_servers_order(mut self) -> Self {
        self.reconnect.retain_servers_order = true;
        self
    }

    /// Do not add the servers a cluster advertises (INFO `connect_urls`) to the pool.
    pub fn ignore_discovered_servers(mut self) -> Self {
        self.reconnect.ignore_discovered_servers = true;
        self
    }

    /// Fail requests in flight with [`RequestError::Disconnected`](crate::RequestError) when
    /// the connection is lost, instead of letting them wait for a reply until their timeout.
    pub fn fail_requests_on_disconnect(mut self) -> Self {
        self.reconnect.fail_requests_on_disconnect = true;
        self
    }

    /// Sets the socket's kernel send buffer (`SO_SNDBUF`); the OS default when unset.
    pub fn send_buffer_size(mut self, bytes: usize) -> Self {
        self.send_buffer_size = Some(bytes);
        self
    }

    /// Sets the socket's kernel receive buffer (`SO_RCVBUF`); the OS default when unset.
    pub fn recv_buffer_size(mut self, bytes: usize) -> Self {
        self.recv_buffer_size = Some(bytes);
        self
    }
}

/// Never prints credentials.
impl fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("name", &self.name)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("credentials", &self.credentials)
            .field("tls", &self.tls)
            .field("user", &self.user_and_password.as_ref().map(|(u, _)| u))
            .field("no_echo", &self.no_echo)
            .field("inbox_prefix", &self.inbox_prefix)
            .field("ping_interval", &self.ping_interval)
            .field("max_pings_outstanding", &self.max_pings_outstanding)
            .field("connection_timeout", &self.connection_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("drain_timeout", &self.drain_timeout)
            .field("read_buffer_capacity", &self.read_buffer_capacity)
            .field("subscription_capacity", &self.subscription_capacity)
            .field(
                "subscription_capacity_bytes",
                &self.subscription_capacity_bytes,
            )
            .field("write_buffer_limit", &self.write_buffer_limit)
            .field("linger", &self.linger)
            .field("send_buffer_size", &self.send_buffer_size)
            .field("recv_buffer_size", &self.recv_buffer_size)
            .field("max_reconnects", &self.reconnect.max_reconnects)
            .field("reconnect_buffer_size", &self.reconnect.buffer_size)
            .field(
                "retry_on_initial_connect",
                &self.reconnect.retry_on_initial_connect,
            )
            .field("retain_servers_order", &self.reconnect.retain_servers_order)
            .field(
                "ignore_discovered_servers",
                &self.reconnect.ignore_discovered_servers,
            )
            .field(
                "fail_requests_on_disconnect",
                &self.reconnect.fail_requests_on_disconnect,
            )
            .finish()
    }
}
