//! Connection options.

use std::fmt;
use std::future::Future;
#[cfg(feature = "nkeys")]
use std::io;
use std::net::SocketAddr;
#[cfg(feature = "nkeys")]
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "nkeys")]
use crate::auth::Secret;
use crate::auth::{Auth, AuthError, Credentials, SignedAuth};
use crate::connector::{AsyncStream, Connector};
use crate::events::{Event, EventCallback};
use crate::floor::plan::ReconnectPolicy;
use crate::floor::server_pool::{ReconnectToServer, Server};
use crate::proxy::{InvalidProxyUrl, Proxy, ProxyError};
use crate::tls::TlsOptions;
#[cfg(feature = "websockets")]
use crate::websocket_headers::WebSocketHeaders;
use rnats_proto::ServerInfo;

/// How to connect: credentials, timeouts and buffer sizes. Build with the setters, then call
/// [`ConnectOptions::connect`].
///
/// ```no_run
/// # async fn run() -> Result<(), rnats_core::ConnectError> {
/// let client = rnats_core::ConnectOptions::new()
///     .name("billing")
///     .user_and_password("alice".into(), "s3cret".into())
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
    pub(crate) write_timeout: Option<Duration>,
    pub(crate) linger: Option<Linger>,
    pub(crate) send_buffer_size: Option<usize>,
    pub(crate) recv_buffer_size: Option<usize>,
    pub(crate) reconnect: ReconnectPolicy,
    pub(crate) credentials: Option<Credentials>,
    pub(crate) tls: TlsOptions,
    pub(crate) event_callback: Option<EventCallback>,
    pub(crate) skip_subject_validation: bool,
    pub(crate) local_address: Option<SocketAddr>,
    pub(crate) connector: Option<Connector>,
    pub(crate) proxy: Option<Result<Proxy, InvalidProxyUrl>>,
    #[cfg(feature = "websockets")]
    pub(crate) websocket_headers: WebSocketHeaders,
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
            write_timeout: None,
            linger: None,
            send_buffer_size: None,
            recv_buffer_size: None,
            reconnect: ReconnectPolicy::default(),
            credentials: None,
            tls: TlsOptions::default(),
            event_callback: None,
            skip_subject_validation: false,
            local_address: None,
            connector: None,
            proxy: None,
            #[cfg(feature = "websockets")]
            websocket_headers: WebSocketHeaders::None,
        }
    }
}

impl ConnectOptions {
    /// Default options.
    pub fn new() -> ConnectOptions {
        ConnectOptions::default()
    }

    /// Options authenticating with a token.
    pub fn with_token(token: String) -> ConnectOptions {
        ConnectOptions::new().token(token)
    }

    /// Options authenticating with a user name and password.
    pub fn with_user_and_password(user: String, password: String) -> ConnectOptions {
        ConnectOptions::new().user_and_password(user, password)
    }

    #[cfg(feature = "nkeys")]
    #[cfg_attr(docsrs, doc(cfg(feature = "nkeys")))]
    /// Options authenticating as an nkey user.
    pub fn with_nkey(seed: String) -> ConnectOptions {
        ConnectOptions::new().nkey(seed)
    }

    #[cfg(feature = "nkeys")]
    #[cfg_attr(docsrs, doc(cfg(feature = "nkeys")))]
    /// Options authenticating with a `.creds` file, read now and again at every connect; see
    /// [`ConnectOptions::credentials_file`].
    pub async fn with_credentials_file(path: impl AsRef<Path>) -> io::Result<ConnectOptions> {
        ConnectOptions::new().credentials_file(path).await
    }

    #[cfg(feature = "nkeys")]
    #[cfg_attr(docsrs, doc(cfg(feature = "nkeys")))]
    /// Options authenticating with the text of a `.creds` file.
    pub fn with_credentials(creds: &str) -> io::Result<ConnectOptions> {
        ConnectOptions::new().credentials(creds)
    }

    /// Options authenticating through `callback`, awaited at every connect with the server's
    /// nonce (empty when it sent none). Its [`Auth`] may carry a JWT, a public nkey with the
    /// nonce's raw signature, a user name and password, or a token.
    pub fn with_auth_callback<F, Fut>(callback: F) -> ConnectOptions
    where
        F: Fn(Vec<u8>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Auth, AuthError>> + Send + Sync + 'static,
    {
        let mut options = ConnectOptions::new();
        options.credentials = Some(Credentials::from_async_callback(callback));
        options
    }

    #[cfg(feature = "nkeys")]
    #[cfg_attr(docsrs, doc(cfg(feature = "nkeys")))]
    /// Options authenticating with a user JWT whose nonce signature `sign` makes (it gets the
    /// nonce's bytes and returns the raw ed25519 signature).
    pub fn with_jwt<F, Fut>(jwt: String, sign: F) -> ConnectOptions
    where
        F: Fn(Vec<u8>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<u8>, AuthError>> + Send + Sync + 'static,
    {
        ConnectOptions::new().jwt(jwt, sign)
    }

    #[cfg(feature = "nkeys")]
    #[cfg_attr(docsrs, doc(cfg(feature = "nkeys")))]
    /// Authenticates with a user JWT whose nonce signature `sign` makes; see
    /// [`ConnectOptions::with_jwt`].
    pub fn jwt<F, Fut>(mut self, jwt: String, sign: F) -> ConnectOptions
    where
        F: Fn(Vec<u8>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<u8>, AuthError>> + Send + Sync + 'static,
    {
        self.credentials = Some(Credentials::from_jwt_callback(jwt, sign));
        self
    }

    /// Calls `callback` with every connection event, one at a time and in order, starting
    /// with the first `Connected`. A callback that falls far behind (more than 256 events)
    /// misses the oldest ones. [`Client::events`](crate::Client::events) is the stream form with rnats' detail.
    ///
    /// A [blocking client](crate::blocking) runs the callback on a thread of its own
    /// (`rnats-blocking-events`, started only when a callback is set), polling each future
    /// to completion before the next event without a tokio runtime: a future that needs one
    /// (tokio timers, `tokio::spawn`) cannot run there.
    pub fn event_callback<F, Fut>(mut self, callback: F) -> ConnectOptions
    where
        F: Fn(Event) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + Sync + 'static,
    {
        self.event_callback = Some(EventCallback::new(callback));
        self
    }

    /// Skips the subject checks on publish except the one that keeps the protocol intact:
    /// a subject with white space (or CR/LF) is still refused, since it would break the
    /// framing. Subscribe subjects are always checked.
    pub fn skip_subject_validation(mut self, skip: bool) -> ConnectOptions {
        self.skip_subject_validation = skip;
        self
    }

    /// Connects through `connect` instead of a TCP connection of rnats' own: it gets the
    /// server address of each attempt (the first connect and every reconnect) and returns a
    /// byte stream to that server, which the client then speaks NATS over. TLS (a `tls://`
    /// address, [`require_tls`](Self::require_tls), a server that requires it) and the
    /// WebSocket upgrade (`ws://`, `wss://`) are layered over the stream as they would be
    /// over TCP; a stream that is already encrypted goes with a `nats://` address. The
    /// socket options (buffer sizes, local address) are then the function's business.
    ///
    /// For the async client only, on tokio and on the `runtime-neutral` backend; the
    /// [blocking client](crate::blocking) ignores it. A `futures-io` stream goes through
    /// [`connector::from_futures_io`](crate::connector::from_futures_io).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), rnats_core::ConnectError> {
    /// let client = rnats_core::ConnectOptions::new()
    ///     .transport(|addr: rnats_core::ServerAddr| async move {
    ///         // A tunnel, a proxy, a socket made with special options...
    ///         tokio::net::TcpStream::connect((addr.host().to_owned(), addr.port())).await
    ///     })
    ///     .connect("nats://127.0.0.1:4222")
    ///     .await?;
    /// # drop(client); Ok(()) }
    /// ```
    pub fn transport<F, Fut, S>(mut self, connect: F) -> ConnectOptions
    where
        F: Fn(crate::ServerAddr) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::io::Result<S>> + Send + 'static,
        S: AsyncStream,
    {
        self.connector = Some(Connector::new(connect));
        self
    }

    /// Connects to every server through a proxy: `socks5://[user:password@]host[:port]`,
    /// `socks5h://...` (the proxy resolves the servers' names) or
    /// `http://[user:password@]host[:port]` (an HTTP proxy that tunnels with `CONNECT`); see
    /// [`Proxy`](crate::proxy::Proxy). The first connect, every reconnect and the servers a
    /// cluster advertises all go through it. TLS and the WebSocket upgrade go on top of the
    /// tunnel as on a direct connection, and the server's certificate must name the server,
    /// not the proxy. The socket options (buffer sizes, local address) apply to the
    /// connection to the proxy, which counts towards the connection timeout.
    ///
    /// A URL that does not parse fails `connect` with [`ConnectErrorKind::ServerParse`]
    /// and a [`ProxyError::InvalidUrl`] cause, before any connection is tried. Failures
    /// through the proxy (unreachable, credentials refused, the tunnel refused) are
    /// [`ConnectCause::Proxy`](crate::ConnectCause::Proxy). Works on tokio, on the
    /// `runtime-neutral` backend and in the [blocking client](crate::blocking); not with a
    /// [`transport`](Self::transport) function, which opens its own connections (connect
    /// then fails with [`ProxyError::WithTransport`]).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), rnats_core::ConnectError> {
    /// let client = rnats_core::ConnectOptions::new()
    ///     .proxy("socks5h://alice:s3cret@127.0.0.1:1080")
    ///     .connect("nats://nats.internal:4222")
    ///     .await?;
    /// # drop(client); Ok(()) }
    /// ```
    ///
    /// [`ConnectErrorKind::ServerParse`]: crate::ConnectErrorKind::ServerParse
    /// [`ProxyError::InvalidUrl`]: crate::proxy::ProxyError::InvalidUrl
    /// [`ProxyError::WithTransport`]: crate::proxy::ProxyError::WithTransport
    pub fn proxy(mut self, url: impl AsRef<str>) -> ConnectOptions {
        self.proxy = Some(Proxy::parse(url.as_ref()));
        self
    }

    /// The proxy to connect through, if any; an error if its URL did not parse or a
    /// transport function would bypass it.
    pub(crate) fn proxy_to_use(&self) -> Result<Option<&Proxy>, ProxyError> {
        match &self.proxy {
            None => Ok(None),
            Some(Err(invalid)) => Err(invalid.clone().into()),
            Some(Ok(_)) if self.connector.is_some() => Err(ProxyError::WithTransport),
            Some(Ok(proxy)) => Ok(Some(proxy)),
        }
    }

    /// Binds the client's socket to this local address before connecting (port 0: any).
    pub fn local_address(mut self, address: SocketAddr) -> ConnectOptions {
        self.local_address = Some(address);
        self
    }

    /// async-nats' command channel capacity. rnats has no command channel (publishes are
    /// encoded straight into the write queue), so this sets the write queue's limit instead,
    /// counting 1 KiB per slot: `client_capacity(2048)` is a 2 MiB limit.
    pub fn client_capacity(self, capacity: usize) -> ConnectOptions {
        self.write_buffer_limit(capacity.saturating_mul(1024))
    }

    /// The client name the server shows in monitoring.
    pub fn name<T: ToString>(mut self, name: T) -> Self {
        self.name = Some(name.to_string());
        self
    }

    /// Authenticates with a token.
    pub fn token(mut self, token: String) -> Self {
        self.token = Some(token);
        self
    }

    /// Authenticates with a user name and password.
    pub fn user_and_password(mut self, user: String, password: String) -> Self {
        self.user_and_password = Some((user, password));
        self
    }

    #[cfg(feature = "nkeys")]
    #[cfg_attr(docsrs, doc(cfg(feature = "nkeys")))]
    /// Authenticates as a plain nkey user: `seed` (`SU...`) signs the server's nonce. A
    /// malformed seed fails the connect with [`ConnectErrorKind::Authentication`].
    ///
    /// [`ConnectErrorKind::Authentication`]: crate::ConnectErrorKind::Authentication
    pub fn nkey(mut self, seed: String) -> Self {
        self.credentials = Some(Credentials::NKey {
            seed: Secret::new(seed),
        });
        self
    }

    #[cfg(feature = "nkeys")]
    #[cfg_attr(docsrs, doc(cfg(feature = "nkeys")))]
    /// Authenticates with a user JWT and the seed that signs the server's nonce.
    pub fn jwt_and_seed(mut self, jwt: impl Into<String>, seed: impl Into<String>) -> Self {
        self.credentials = Some(Credentials::Jwt {
            jwt: jwt.into(),
            seed: Secret::new(seed),
        });
        self
    }

    #[cfg(feature = "nkeys")]
    #[cfg_attr(docsrs, doc(cfg(feature = "nkeys")))]
    /// Authenticates with the text of a `.creds` file (user JWT and seed). Text that is not
    /// a valid credentials file is an `InvalidData` error whose source is the [`AuthError`].
    pub fn credentials(mut self, creds: &str) -> io::Result<Self> {
        self.credentials = Some(Credentials::from_creds(creds).map_err(auth_io_error)?);
        Ok(self)
    }

    #[cfg(feature = "nkeys")]
    #[cfg_attr(docsrs, doc(cfg(feature = "nkeys")))]
    /// Authenticates with a `.creds` file. It is read now, so a missing or malformed file
    /// fails here (an `io::Error` whose inner value is the [`AuthError`]), and read again at
    /// every connect and reconnect, so a user JWT replaced on disk before it expires is the
    /// one the next connection presents, without a restart. async-nats reads the file once.
    ///
    /// Replace the file atomically (write a new file, then rename it over the old one), so
    /// that a reconnect never reads half of it. A file that cannot be read or parsed at a
    /// reconnect fails that attempt (a [`ConnectionEvent::ReconnectFailed`] naming the
    /// problem, and a `ClientError` to the event callback) and the client goes on trying. To
    /// read the file once, as async-nats does (a secret deleted after start-up, say), pass
    /// its text to [`credentials`](Self::credentials) instead.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), rnats_core::Error> {
    /// let client = rnats_core::ConnectOptions::new()
    ///     .credentials_file("/run/secrets/app.creds")
    ///     .await?
    ///     .connect("nats://127.0.0.1:4222")
    ///     .await?;
    /// // A job rotates /run/secrets/app.creds; the next reconnect signs in with the new JWT.
    /// # drop(client); Ok(()) }
    /// ```
    ///
    /// [`ConnectionEvent::ReconnectFailed`]: crate::ConnectionEvent::ReconnectFailed
    pub async fn credentials_file(mut self, path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        load_creds_file(path).await.map_err(auth_io_error)?;
        // Made absolute now (no I/O), so a later change of working directory does not move
        // the file the reconnects read.
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        self.credentials = Some(Credentials::CredsFile(path));
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

    /// Refuses servers that do not offer TLS (also implied by `tls://` and `wss://` URLs).
    /// Servers that require TLS get it whatever this says. For a `ws://` URL it turns the
    /// connection into `wss://`: TLS first, then the WebSocket upgrade.
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

    /// Trusts the CA certificates in this PEM file instead of the operating system's
    /// certificate store, which is what TLS connections trust by default (as in async-nats).
    /// Call it again to trust several files; [`add_web_pki_roots`](Self::add_web_pki_roots)
    /// adds the web PKI roots on top. Server host names are always verified. The file is read
    /// at every connect and reconnect, so a CA renewed on disk is trusted from then on.
    pub fn add_root_certificates(mut self, pem_file: PathBuf) -> Self {
        self.tls.root_files.push(pem_file);
        self
    }

    /// Presents this certificate chain and private key (PEM files) for mutual TLS. The files
    /// are read at every connect and reconnect, so a certificate renewed on disk is presented
    /// from the next reconnect on (an attempt that finds the two files mismatched, halfway
    /// through a renewal, fails, and the next one reads them again).
    pub fn add_client_certificate(mut self, cert: PathBuf, key: PathBuf) -> Self {
        self.tls.client_cert = Some((cert, key));
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
    pub fn custom_inbox_prefix<T: ToString>(mut self, prefix: T) -> Self {
        self.inbox_prefix = prefix.to_string();
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

    /// Default timeout for [`Client::request`](crate::Client::request); `None` waits forever (default 10 s).
    ///
    /// The connection's own task keeps the time for every request on the client's shared
    /// inbox, on the runtime the client was connected on: that runtime must keep running
    /// for requests to time out, as it must for their replies to arrive.
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long [`Client::drain`](crate::Client::drain) waits for the server before closing anyway (default 30 s).
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Bytes read from the socket at once (default 64 KiB). Larger values help bursts of
    /// small messages; smaller ones save memory per connection. Takes a `u16` as async-nats
    /// does; [`ConnectOptions::read_buffer_size`] takes more.
    pub fn read_buffer_capacity(self, bytes: u16) -> Self {
        self.read_buffer_size(usize::from(bytes))
    }

    /// Bytes read from the socket at once, without `read_buffer_capacity`'s 64 KiB cap.
    pub fn read_buffer_size(mut self, bytes: usize) -> Self {
        self.read_buffer_capacity = bytes.max(512);
        self
    }

    /// Messages a subscription's queue holds before it counts as a slow consumer (default
    /// 65,536). Its subscriber takes the queue in batches: those it has taken and not yet
    /// handed out are no longer counted.
    pub fn subscription_capacity(mut self, messages: usize) -> Self {
        self.subscription_capacity = messages.max(1);
        self
    }

    /// Bytes a subscription's queue holds before it counts as a slow consumer (default 64 MiB),
    /// counted as [`ConnectOptions::subscription_capacity`] counts messages. An empty queue
    /// takes one message however large.
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

    /// Ends a connection whose socket takes none of the bytes waiting for it for `timeout`
    /// (at least 100 ms), and reconnects as after any lost link (off by default, as in
    /// async-nats). A server that stops reading (a frozen process, a network path that
    /// drops everything) is otherwise found by keepalive PINGs alone, two or three
    /// [`ping_interval`](Self::ping_interval)s later (2-3 minutes by default), while
    /// publishers wait for room; nats.go's `FlusherTimeout` with `ReconnectOnFlusherError`
    /// is a similar policy (one minute by default there).
    ///
    /// The clock runs only while the client has bytes the socket has no room for, and
    /// restarts whenever the socket takes some: a link ends between `timeout` and twice
    /// that after it last took bytes (the blocking client: `timeout` after). Room comes
    /// back in pieces (the kernel reports it once about a third of the socket's send
    /// buffer has gone, a megabyte or more on a fast path; TLS and WebSocket pass bytes on
    /// in up to 64 KiB and 512 KiB), so choose a timeout in which the slowest link you
    /// expect moves a few megabytes. The `Disconnected` event's reason starts with
    /// `write stalled`. See docs/faults.md.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = Some(timeout.max(Duration::from_millis(100)));
        self
    }
}

impl ConnectOptions {
    /// Holds publishes for up to `delay` (or until `max_bytes` are queued) so they leave in
    /// fewer, larger writes. Off by default: the default policy already batches under load
    /// (whatever queues while a write is in flight goes out in the next one) and sends at once
    /// when idle. Linger trades latency for fewer syscalls; `flush()` and requests are never
    /// held back by it, and take what lingers with them: a publisher that flushes after its
    /// publishes (or makes requests) sends each publish with the flush in one write, and,
    /// in `#[tokio::main]`, without waking the connection's task (its own timer, armed at
    /// most once a `delay`, covers publishes that are not flushed). See `docs/performance.md`
    /// for measurements.
    pub fn linger(mut self, delay: Duration, max_bytes: usize) -> Self {
        self.linger = (!delay.is_zero()).then_some(Linger {
            delay,
            max_bytes: max_bytes.max(1),
        });
        self
    }

    /// Reconnect attempts after a lost connection before the client closes for good. Each
    /// attempt tries one server of the pool. `None` and `0` mean no limit (the default), as
    /// in async-nats; [`ConnectOptions::no_reconnect`] turns reconnecting off.
    pub fn max_reconnects<T: Into<Option<usize>>>(mut self, attempts: T) -> Self {
        self.reconnect.max_reconnects = attempts.into().filter(|n| *n != 0);
        self
    }

    /// Never reconnect: a lost connection closes the client.
    pub fn no_reconnect(mut self) -> Self {
        self.reconnect.max_reconnects = Some(0);
        self
    }

    /// How long to wait before each connection attempt, given its number since the last
    /// connection (1 for the first attempt after a disconnect, which waits too if this says
    /// so), as in async-nats; the first connect's attempts ask it too. It is also the wait
    /// before a server the `reconnect_to_server_callback` chose without a delay of its own.
    ///
    /// Without it, rnats tries the whole pool at once after a disconnect, then waits before
    /// each later pass: 100 ms doubling up to 5 s, plus up to 50% random jitter, so a fleet
    /// of clients does not reconnect in lockstep. After a link lost within 2 s of coming up
    /// (a server that takes the handshake and drops the connection at once), the waits go on
    /// from where they were when it was made, so such a server is dialled with the backoff,
    /// not as fast as handshakes go; a `force_reconnect` or a lame duck move is followed by
    /// an attempt at once whatever the link's age. This callback, when set, is asked instead,
    /// with the attempts numbered from 1 after every connect, as in async-nats.
    pub fn reconnect_delay_callback(
        mut self,
        delay: impl Fn(usize) -> Duration + Send + Sync + 'static,
    ) -> Self {
        self.reconnect.delay = Some(Arc::new(delay));
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

    /// Lets `callback` pick the server (and the wait) for each reconnect attempt: it gets the
    /// pool as it is (with each server's failed attempts and last error) and the last INFO,
    /// and returns a server of the pool, or `None` for the usual round robin. A server not in
    /// the pool is reported as `ClientError::ServerNotInPool` and the round robin is used.
    ///
    /// A [blocking client](crate::blocking) runs the future on its background thread, which
    /// waits for it (without a tokio runtime) before the attempt.
    pub fn reconnect_to_server_callback<F, Fut>(mut self, callback: F) -> ConnectOptions
    where
        F: Fn(Vec<Server>, ServerInfo) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<ReconnectToServer>> + Send + Sync + 'static,
    {
        self.reconnect.choose_server = Some(Arc::new(move |servers, info| {
            Box::pin(callback(servers, info))
        }));
        self
    }

    /// Try servers in the order given instead of shuffling them.
    pub fn retain_servers_order(mut self) -> Self {
        self.reconnect.retain_servers_order = true;
        self
    }

    /// Stop reconnecting, and close the client, when a server refuses the login on two
    /// attempts in a row with the same error (a user removed or revoked, a password
    /// changed): nats.go's default, where async-nats, and rnats without this, keep dialling
    /// for ever. The event callback is told with a `ClientError::Other` naming the server
    /// and the error, then the client closes. A refusal followed by a connect, or by another
    /// error, starts the count again.
    pub fn close_on_repeated_auth_error(mut self) -> Self {
        self.reconnect.close_on_repeated_auth_error = true;
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
        let mut f = f.debug_struct("ConnectOptions");
        f.field("name", &self.name)
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
            .field("write_timeout", &self.write_timeout)
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
            .field("transport", &self.connector)
            .field("proxy", &self.proxy);
        #[cfg(feature = "websockets")]
        f.field("websocket_headers", &self.websocket_headers);
        f.finish()
    }
}

#[cfg(feature = "nkeys")]
/// A credentials problem as the `io::Error` async-nats' credential loaders return.
/// The [`AuthError`] (which names the file) stays reachable as the error's inner value.
fn auth_io_error(error: AuthError) -> io::Error {
    let kind = match &error {
        AuthError::Io { source, .. } => source.kind(),
        _ => io::ErrorKind::InvalidData,
    };
    io::Error::new(kind, error)
}

#[cfg(feature = "websockets")]
#[cfg_attr(docsrs, doc(cfg(feature = "websockets")))]
impl ConnectOptions {
    /// Sends these HTTP headers with the WebSocket upgrade request of every connect
    /// (`ws://`, `wss://`; other connections ignore them): a session cookie or an
    /// `Authorization` header for a proxy in front of the server, or the cookies nats-server
    /// takes credentials from (`websocket { jwt_cookie, user_cookie, pass_cookie,
    /// token_cookie }`) when CONNECT carries none. Replaces
    /// [`websocket_headers_callback`](Self::websocket_headers_callback).
    ///
    /// A name given several values goes out once, its values joined with `, ` (`; ` for
    /// `Cookie`). The headers the WebSocket handshake itself sets (`Host`, `Upgrade`,
    /// `Connection`, `Sec-WebSocket-Key`, `Sec-WebSocket-Version`, ...) cannot be
    /// replaced: a connect with one of them fails with a WebSocket error naming it.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), rnats_core::Error> {
    /// use rnats_core::http::{HeaderMap, HeaderValue, header};
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer abc123"));
    /// let client = rnats_core::ConnectOptions::new()
    ///     .websocket_headers(headers)
    ///     .connect("wss://nats.example.com:443")
    ///     .await?;
    /// # drop(client); Ok(()) }
    /// ```
    pub fn websocket_headers(mut self, headers: http::HeaderMap) -> ConnectOptions {
        self.websocket_headers = WebSocketHeaders::Static(headers);
        self
    }

    /// Sends the HTTP headers `callback` makes with the WebSocket upgrade request; it is
    /// awaited before every connect and reconnect, so a short-lived token is fresh each time
    /// (nats.go's `WebSocketConnectionHeadersHandler`). An error from it fails that attempt
    /// (the first connect's error is [`ConnectErrorKind::Authentication`]; a reconnect goes
    /// on trying). Replaces [`websocket_headers`](Self::websocket_headers); the same rules
    /// for repeated and reserved names apply.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), rnats_core::Error> {
    /// use rnats_core::http::{HeaderMap, HeaderValue, header};
    ///
    /// # async fn fresh_token() -> String { String::new() }
    /// let client = rnats_core::ConnectOptions::new()
    ///     .websocket_headers_callback(|| async {
    ///         let token = fresh_token().await;
    ///         let mut headers = HeaderMap::new();
    ///         let value = HeaderValue::try_from(format!("Bearer {token}"))
    ///             .map_err(rnats_core::AuthError::new)?;
    ///         headers.insert(header::AUTHORIZATION, value);
    ///         Ok(headers)
    ///     })
    ///     .connect("wss://nats.example.com:443")
    ///     .await?;
    /// # drop(client); Ok(()) }
    /// ```
    ///
    /// [`ConnectErrorKind::Authentication`]: crate::ConnectErrorKind::Authentication
    pub fn websocket_headers_callback<F, Fut>(mut self, callback: F) -> ConnectOptions
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<http::HeaderMap, AuthError>> + Send + Sync + 'static,
    {
        self.websocket_headers = WebSocketHeaders::from_callback(callback);
        self
    }
}

impl ConnectOptions {
    /// Also trusts the web PKI roots: Mozilla's root program, compiled into rnats (the
    /// `webpki-roots` crate), so the same on every machine. They are added to whatever else
    /// is trusted: the operating system's store by default, or the files given to
    /// [`add_root_certificates`](Self::add_root_certificates). Useful where the system store
    /// is missing or incomplete, such as minimal container images.
    pub fn add_web_pki_roots(mut self) -> Self {
        self.tls.web_pki_roots = true;
        self
    }
}

/// Reads and parses a `.creds` file, on a thread where blocking is fine when a runtime is at
/// hand (on the calling thread with none: the blocking client's).
#[cfg(feature = "nkeys")]
pub(crate) async fn load_creds_file(path: &Path) -> Result<Credentials, AuthError> {
    let owned = path.to_path_buf();
    match crate::rt::Rt::current() {
        Ok(rt) => rt
            .unblock(move || Credentials::from_creds_file(&owned))
            .await
            .map_err(|source| AuthError::Io {
                path: path.to_path_buf(),
                source,
            })?,
        Err(_) => Credentials::from_creds_file(path),
    }
}
