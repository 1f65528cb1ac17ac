//! Connection options.

use std::fmt;
use std::time::Duration;

use crate::Client;
use crate::error::ConnectError;

/// How to connect: credentials, timeouts and buffer sizes. Build with the setters, then call
/// [`ConnectOptions::connect`].
///
/// ```no_run
/// # async fn run() -> Result<(), rnats::ConnectError> {
/// let client = rnats::ConnectOptions::new()
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
    pub(crate) read_buffer_capacity: usize,
    pub(crate) subscription_capacity: usize,
    pub(crate) subscription_capacity_bytes: usize,
    pub(crate) write_buffer_limit: usize,
    pub(crate) linger: Option<Linger>,
    pub(crate) send_buffer_size: Option<usize>,
    pub(crate) recv_buffer_size: Option<usize>,
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
            read_buffer_capacity: 64 * 1024,
            subscription_capacity: 64 * 1024,
            subscription_capacity_bytes: 64 * 1024 * 1024,
            write_buffer_limit: 128 * 1024,
            linger: None,
            send_buffer_size: None,
            recv_buffer_size: None,
        }
    }
}

impl ConnectOptions {
    /// Default options.
    pub fn new() -> ConnectOptions {
        ConnectOptions::default()
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
            .field("user", &self.user_and_password.as_ref().map(|(u, _)| u))
            .field("no_echo", &self.no_echo)
            .field("inbox_prefix", &self.inbox_prefix)
            .field("ping_interval", &self.ping_interval)
            .field("max_pings_outstanding", &self.max_pings_outstanding)
            .field("connection_timeout", &self.connection_timeout)
            .field("request_timeout", &self.request_timeout)
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
            .finish()
    }
}
