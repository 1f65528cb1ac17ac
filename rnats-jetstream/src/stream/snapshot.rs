//! Snapshots and restores of whole streams: the server's own backup format (an s2-compressed
//! archive of the stream's store and, unless left out, its consumers), moved in chunks, as
//! natscli's `stream backup` and `stream restore` and jsm.go's `SnapshotToDirectory` and
//! `RestoreSnapshotFromDirectory` move it. An rnats extension: async-nats has no snapshot API.
//!
//! Snapshot: `$JS.API.STREAM.SNAPSHOT.<stream>` names an inbox and answers with the stream's
//! configuration and state; the server then sends the data to the inbox in chunks, each with
//! a reply subject to ack. The server keeps at most a window of unacked bytes in flight, and
//! gives up (`408 No Flow Response`) when no ack comes for about five seconds. An empty
//! message ends the data; a status of 400 or more in it means the snapshot failed.
//!
//! Restore: `$JS.API.STREAM.RESTORE.<stream>` with the configuration and state answers with a
//! subject to send the data to, each chunk a request the server acks with an empty reply; an
//! empty chunk ends the upload and is answered with the restored stream's info, or an error.
//! The server waits about five seconds for each next chunk.
//!
//! A backup directory is natscli's: `backup.json` (`{"config": .., "state": ..}`) and
//! `stream.tar.s2` (the data), so natscli, jsm.go and `rnats stream restore` read what
//! [`Snapshot::to_directory`] writes, and [`Context::restore_stream_from_directory`] reads
//! what they write.

use std::fmt;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::{Stream as FuturesStream, StreamExt};
use rnats_core::error::Error;
use rnats_core::{Client, Request, RequestErrorKind as CoreRequestErrorKind, StatusCode};
use rnats_core::{Subscriber, runtime};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::{Config, Info, State, Stream};
use crate::context::{Context, RequestError, RequestErrorKind};
use crate::errors::ErrorCode;
use crate::response::Response;

/// The file of a backup directory with the stream's configuration and state (natscli's name).
pub const BACKUP_METADATA_FILE: &str = "backup.json";
/// The file of a backup directory with the snapshot's data (natscli's name).
pub const BACKUP_DATA_FILE: &str = "stream.tar.s2";

/// How long a snapshot waits for its next chunk unless told otherwise.
const DEFAULT_CHUNK_TIMEOUT: Duration = Duration::from_secs(60);
/// Bytes per restore chunk, as natscli and jsm.go send them.
const RESTORE_CHUNK_SIZE: usize = 128 * 1024;
/// How long a restore waits for the ack of a chunk, and for the answer to the last one (the
/// server restores the stream before it answers that).
const RESTORE_TIMEOUT: Duration = Duration::from_secs(60);

/// A snapshot to start: the options of `$JS.API.STREAM.SNAPSHOT`, from [`Stream::snapshot`].
#[derive(Debug, Clone)]
pub struct SnapshotBuilder {
    context: Context,
    stream: String,
    no_consumers: bool,
    check: bool,
    chunk_size: Option<u32>,
    window_size: Option<u32>,
    timeout: Duration,
}

/// The body of `$JS.API.STREAM.SNAPSHOT.<stream>`.
#[derive(Serialize)]
struct SnapshotRequest<'a> {
    deliver_subject: &'a str,
    #[serde(skip_serializing_if = "is_false")]
    no_consumers: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    chunk_size: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window_size: Option<u32>,
    #[serde(skip_serializing_if = "is_false")]
    jsck: bool,
}

/// What the server answers a snapshot request with, before the data: kept as the server
/// wrote it for `backup.json` (fields rnats does not model survive a backup), and read typed.
#[derive(Serialize, Deserialize)]
struct RawMetadata {
    config: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<serde_json::Value>,
}

impl SnapshotBuilder {
    pub(crate) fn new(context: Context, stream: String) -> SnapshotBuilder {
        SnapshotBuilder {
            context,
            stream,
            no_consumers: false,
            check: false,
            chunk_size: None,
            window_size: None,
            timeout: DEFAULT_CHUNK_TIMEOUT,
        }
    }

    /// Leaves the stream's consumers out of the snapshot (they are in it by default); a
    /// restore of it has no consumers.
    pub fn no_consumers(mut self, no_consumers: bool) -> SnapshotBuilder {
        self.no_consumers = no_consumers;
        self
    }

    /// Has the server check the stream's messages before it takes the snapshot (`jsck`).
    pub fn check(mut self, check: bool) -> SnapshotBuilder {
        self.check = check;
        self
    }

    /// Bytes per chunk the server sends; it takes 1 KiB to 1 MiB (128 KiB when not set) and
    /// clamps other values into that range.
    pub fn chunk_size(mut self, bytes: u32) -> SnapshotBuilder {
        self.chunk_size = Some(bytes);
        self
    }

    /// Unacked bytes the server sends before it waits for acks; it takes 1 KiB to 32 MiB
    /// (8 MiB when not set).
    pub fn window_size(mut self, bytes: u32) -> SnapshotBuilder {
        self.window_size = Some(bytes);
        self
    }

    /// How long to wait for each next chunk before the snapshot fails with
    /// [`SnapshotErrorKind::TimedOut`] (60 s when not set).
    pub fn timeout(mut self, timeout: Duration) -> SnapshotBuilder {
        self.timeout = timeout;
        self
    }

    /// Asks the server for the snapshot: once it has answered, the [`Snapshot`] holds the
    /// stream's configuration and state, and its data follows as the snapshot is read.
    pub async fn start(self) -> Result<Snapshot, SnapshotError> {
        let client = self.context.client();
        let inbox = client.new_inbox();
        // Subscribed before the request goes out on the same connection, so the server
        // finds the interest it looks for before it sends the first chunk.
        let chunks = client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| SnapshotError::with_source(SnapshotErrorKind::Request, e))?;
        let request = SnapshotRequest {
            deliver_subject: &inbox,
            no_consumers: self.no_consumers,
            chunk_size: self.chunk_size,
            window_size: self.window_size,
            jsck: self.check,
        };
        let answer: Response<RawMetadata> = self
            .context
            .request(format!("STREAM.SNAPSHOT.{}", self.stream), &request)
            .await
            .map_err(|e| {
                request_failed(e, SnapshotErrorKind::TimedOut, SnapshotErrorKind::Request)
            })?;
        let answer = answer.into_result().map_err(|error| {
            let kind = match error.error_code() {
                ErrorCode::STREAM_NOT_FOUND => SnapshotErrorKind::NotFound,
                _ => SnapshotErrorKind::JetStream(error.clone()),
            };
            SnapshotError::with_source(kind, error)
        })?;
        let unreadable = |e| SnapshotError::with_source(SnapshotErrorKind::Other, e);
        let config = Config::deserialize(&answer.config).map_err(unreadable)?;
        let state = State::deserialize(answer.state.as_ref().unwrap_or(&serde_json::Value::Null))
            .map_err(unreadable)?;
        let backup_json = serde_json::to_vec_pretty(&answer).map_err(unreadable)?;
        let transfer = Transfer {
            client,
            chunks,
            timeout: self.timeout,
            ended: false,
        };
        Ok(Snapshot {
            config,
            state,
            backup_json: Bytes::from(backup_json),
            chunks: transfer.into_stream(),
        })
    }
}

/// A stream's snapshot as it arrives: the configuration and state the server answered with,
/// and the data as a [`futures_util::Stream`] of chunks, each acked to the server as it is
/// taken, so the server sends no faster than the reader reads (up to its window ahead).
///
/// The server waits about five seconds for an ack before it gives up with `408 No Flow
/// Response` ([`SnapshotErrorKind::Failed`]), so read steadily. Dropping the snapshot
/// unsubscribes, and the server stops sending.
pub struct Snapshot {
    config: Config,
    state: State,
    backup_json: Bytes,
    chunks: BoxStream<'static, Result<Bytes, SnapshotError>>,
}

impl Snapshot {
    /// The stream's configuration, as the server answered the snapshot request.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The stream's state when the snapshot was taken.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The contents of a backup directory's `backup.json` for this snapshot: the
    /// configuration and state exactly as the server sent them (fields rnats does not know
    /// included), as indented JSON `{"config": .., "state": ..}`, which natscli and
    /// [`Context::restore_stream_from_directory`] read. For writing a backup directory
    /// yourself, say with a progress bar; [`Snapshot::to_directory`] writes this too.
    pub fn backup_json(&self) -> Bytes {
        self.backup_json.clone()
    }

    /// Writes the rest of the data to `writer` and flushes it; the bytes written. An error
    /// from `writer` is [`SnapshotErrorKind::Write`] with the `io::Error` as its source.
    pub async fn write_to<W>(&mut self, writer: &mut W) -> Result<u64, SnapshotError>
    where
        W: AsyncWrite + Unpin + ?Sized,
    {
        let mut written = 0u64;
        while let Some(chunk) = self.chunks.next().await {
            let chunk = chunk?;
            writer.write_all(&chunk).await.map_err(write_failed)?;
            written += chunk.len() as u64;
        }
        writer.flush().await.map_err(write_failed)?;
        Ok(written)
    }

    /// Writes the snapshot into the directory `path` (made if missing, readable by its owner
    /// only on Unix) as natscli does: the data into `stream.tar.s2`, then, once it is all
    /// there, the configuration and state into `backup.json`, so a directory with a
    /// `backup.json` holds a whole backup. The bytes of data written.
    ///
    /// ```no_run
    /// # async fn run(stream: rnats_jetstream::stream::Stream) -> Result<(), rnats_core::Error> {
    /// let bytes = stream.snapshot().start().await?.to_directory("backups/orders").await?;
    /// println!("{bytes} bytes backed up");
    /// # Ok(()) }
    /// ```
    pub async fn to_directory(mut self, path: impl AsRef<Path>) -> Result<u64, SnapshotError> {
        let dir = path.as_ref();
        make_private_dir(dir).map_err(write_failed)?;
        // An older backup's metadata would vouch for data this one may not finish writing.
        match std::fs::remove_file(dir.join(BACKUP_METADATA_FILE)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(write_failed(e)),
            _ => {}
        }
        let mut data = runtime::create_file(&dir.join(BACKUP_DATA_FILE))
            .await
            .map_err(write_failed)?;
        let written = self.write_to(&mut data).await?;
        data.shutdown().await.map_err(write_failed)?;
        // On disk before the metadata that vouches for it.
        let data_path = dir.join(BACKUP_DATA_FILE);
        runtime::unblock(move || std::fs::File::open(data_path)?.sync_all())
            .await
            .and_then(|synced| synced)
            .map_err(write_failed)?;
        let mut file = runtime::create_file(&dir.join(BACKUP_METADATA_FILE))
            .await
            .map_err(write_failed)?;
        file.write_all(&self.backup_json)
            .await
            .map_err(write_failed)?;
        file.shutdown().await.map_err(write_failed)?;
        Ok(written)
    }
}

impl FuturesStream for Snapshot {
    type Item = Result<Bytes, SnapshotError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.chunks.poll_next_unpin(cx)
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("stream", &self.config.name)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// The receiving end of a snapshot's data: the inbox subscription and how to ack.
struct Transfer {
    client: Client,
    chunks: Subscriber,
    timeout: Duration,
    ended: bool,
}

impl Transfer {
    fn into_stream(self) -> BoxStream<'static, Result<Bytes, SnapshotError>> {
        futures_util::stream::unfold(self, |mut transfer| async move {
            let chunk = transfer.next_chunk().await?;
            Some((chunk, transfer))
        })
        // Fused: polled again after its end it says `None` again rather than panicking.
        .fuse()
        .boxed()
    }

    /// The next chunk, acked; `None` once the data has ended (or failed).
    async fn next_chunk(&mut self) -> Option<Result<Bytes, SnapshotError>> {
        if self.ended {
            return None;
        }
        let message = match runtime::timeout(self.timeout, self.chunks.next()).await {
            Ok(Some(message)) => message,
            Ok(None) => return self.fail(SnapshotError::new(SnapshotErrorKind::Closed)),
            Err(elapsed) => {
                return self.fail(SnapshotError::with_source(
                    SnapshotErrorKind::TimedOut,
                    elapsed,
                ));
            }
        };
        if message.payload.is_empty() {
            self.ended = true;
            return match message.status {
                Some(status) if status.as_u16() >= 400 => {
                    let description = message.description.unwrap_or_default();
                    Some(Err(SnapshotError::new(SnapshotErrorKind::Failed(
                        status,
                        description,
                    ))))
                }
                _ => None,
            };
        }
        if let Some(reply) = message.reply
            && let Err(e) = self.client.publish(reply, Bytes::new()).await
        {
            return self.fail(SnapshotError::with_source(SnapshotErrorKind::Request, e));
        }
        Some(Ok(message.payload))
    }

    fn fail(&mut self, error: SnapshotError) -> Option<Result<Bytes, SnapshotError>> {
        self.ended = true;
        Some(Err(error))
    }
}

impl<I> Stream<I> {
    /// A snapshot of the stream, its consumers included unless told otherwise: the server's
    /// backup format, to keep as bytes and give to [`Context::restore_stream`] later, on this
    /// server or another. Set the options on the builder, then `start()` it. Older servers
    /// refuse to snapshot a memory stream. An rnats extension.
    ///
    /// ```no_run
    /// # async fn run(stream: rnats_jetstream::stream::Stream) -> Result<(), rnats_core::Error> {
    /// use futures_util::TryStreamExt;
    /// let mut snapshot = stream.snapshot().no_consumers(true).start().await?;
    /// println!("{} messages", snapshot.state().messages);
    /// let mut data = Vec::new();
    /// while let Some(chunk) = snapshot.try_next().await? {
    ///     data.extend_from_slice(&chunk);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn snapshot(&self) -> SnapshotBuilder {
        SnapshotBuilder::new(self.context.clone(), self.name.clone())
    }
}

/// The body of `$JS.API.STREAM.RESTORE.<stream>`.
#[derive(Serialize)]
struct RestoreRequest {
    config: Config,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<State>,
}

/// What the server answers a restore request with: where to send the data.
#[derive(Deserialize)]
struct RestoreAnswer {
    deliver_subject: String,
}

impl Context {
    /// Restores a stream from a snapshot's data (see [`Stream::snapshot`]): creates the stream
    /// `config` describes, with the messages and consumers in `data`, and returns its info. No
    /// stream of that name may exist ([`RestoreErrorKind::AlreadyExists`]). `state` is the
    /// snapshot's ([`Snapshot::state`]), sent with the configuration as natscli sends it;
    /// `None` sends none. `data` is read and sent 128 KiB at a time, each chunk acked by the
    /// server before the next is read; the server waits about five seconds for each next
    /// chunk, so `data` should not stall. The configuration may differ from the snapshot's
    /// (say, in placement or replicas), but not in the name. An rnats extension.
    ///
    /// ```no_run
    /// # async fn run(js: rnats_jetstream::Context, stream: rnats_jetstream::stream::Stream) -> Result<(), rnats_core::Error> {
    /// let mut snapshot = stream.snapshot().start().await?;
    /// let mut data = Vec::new();
    /// snapshot.write_to(&mut data).await?;
    /// let (config, state) = (snapshot.config().clone(), snapshot.state().clone());
    /// js.delete_stream(&config.name).await?;
    /// let info = js.restore_stream(config, Some(state), &data[..]).await?;
    /// println!("restored {} messages", info.state.messages);
    /// # Ok(()) }
    /// ```
    pub async fn restore_stream<R>(
        &self,
        config: Config,
        state: Option<State>,
        data: R,
    ) -> Result<Info, RestoreError>
    where
        R: AsyncRead + Unpin,
    {
        let name = config.name.clone();
        self.restore_with(&name, &RestoreRequest { config, state }, data)
            .await
    }

    /// [`Context::restore_stream`] with the configuration and state as JSON, sent as given:
    /// what a newer server writes into a backup and this version has no field for is kept
    /// (`backup.json`'s `config` and `state`, edited as the caller likes). An rnats
    /// extension.
    pub async fn restore_stream_json<R>(
        &self,
        config: serde_json::Value,
        state: Option<serde_json::Value>,
        data: R,
    ) -> Result<Info, RestoreError>
    where
        R: AsyncRead + Unpin,
    {
        let Some(name) = config.get("name").and_then(|n| n.as_str()) else {
            return Err(RestoreError::with_source(
                RestoreErrorKind::InvalidBackup,
                "the configuration names no stream",
            ));
        };
        let name = name.to_owned();
        self.restore_with(&name, &RawMetadata { config, state }, data)
            .await
    }

    /// Restores the stream backed up in the directory `path` in natscli's format (as
    /// [`Snapshot::to_directory`] writes it): the configuration and state from `backup.json`,
    /// sent as the file has them, and the data from `stream.tar.s2`. See
    /// [`Context::restore_stream`]. An rnats extension.
    ///
    /// ```no_run
    /// # async fn run(js: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
    /// let info = js.restore_stream_from_directory("backups/orders").await?;
    /// println!("restored {}", info.config.name);
    /// # Ok(()) }
    /// ```
    pub async fn restore_stream_from_directory(
        &self,
        path: impl AsRef<Path>,
    ) -> Result<Info, RestoreError> {
        let dir = path.as_ref();
        let read_failed = |e| RestoreError::with_source(RestoreErrorKind::Read, e);
        let mut text = Vec::new();
        runtime::open_file(&dir.join(BACKUP_METADATA_FILE))
            .await
            .map_err(read_failed)?
            .read_to_end(&mut text)
            .await
            .map_err(read_failed)?;
        let metadata: RawMetadata = serde_json::from_slice(&text)
            .map_err(|e| RestoreError::with_source(RestoreErrorKind::InvalidBackup, e))?;
        let Some(name) = metadata.config.get("name").and_then(|n| n.as_str()) else {
            return Err(RestoreError::with_source(
                RestoreErrorKind::InvalidBackup,
                "the backup's configuration names no stream",
            ));
        };
        let name = name.to_owned();
        let data = runtime::open_file(&dir.join(BACKUP_DATA_FILE))
            .await
            .map_err(read_failed)?;
        self.restore_with(&name, &metadata, data).await
    }

    /// Sends the restore `request` for stream `name`, then `data`; the restored stream's info.
    async fn restore_with<R>(
        &self,
        name: &str,
        request: &impl Serialize,
        mut data: R,
    ) -> Result<Info, RestoreError>
    where
        R: AsyncRead + Unpin,
    {
        if !crate::is_valid_name(name) {
            return Err(RestoreError::new(RestoreErrorKind::InvalidStreamName));
        }
        let answer: Response<RestoreAnswer> = self
            .request(format!("STREAM.RESTORE.{name}"), request)
            .await
            .map_err(|e| {
                request_failed(e, RestoreErrorKind::TimedOut, RestoreErrorKind::Request)
            })?;
        let deliver = answer.into_result().map_err(refused)?.deliver_subject;
        let client = self.client();
        let mut buffer = vec![0u8; RESTORE_CHUNK_SIZE];
        loop {
            let n = read_full(&mut data, &mut buffer)
                .await
                .map_err(|e| RestoreError::with_source(RestoreErrorKind::Read, e))?;
            if n == 0 {
                break;
            }
            let ack = send_chunk(&client, &deliver, Bytes::copy_from_slice(&buffer[..n])).await?;
            if !ack.is_empty() {
                return Err(refusal_in(&ack));
            }
        }
        let done = send_chunk(&client, &deliver, Bytes::new()).await?;
        let info: Response<Info> = serde_json::from_slice(&done)
            .map_err(|e| RestoreError::with_source(RestoreErrorKind::Other, e))?;
        info.into_result().map_err(refused)
    }
}

/// Sends one restore chunk (empty: the end) and waits for the server's reply to it.
async fn send_chunk(client: &Client, deliver: &str, chunk: Bytes) -> Result<Bytes, RestoreError> {
    let request = Request::new().payload(chunk).timeout(Some(RESTORE_TIMEOUT));
    match client.send_request(deliver.to_owned(), request).await {
        Ok(reply) => Ok(reply.payload),
        Err(e) => {
            let kind = match e.kind() {
                CoreRequestErrorKind::TimedOut => RestoreErrorKind::TimedOut,
                _ => RestoreErrorKind::Request,
            };
            Err(RestoreError::with_source(kind, e))
        }
    }
}

/// A server's non-empty reply to a restore chunk: its error, or what it said.
fn refusal_in(reply: &[u8]) -> RestoreError {
    match serde_json::from_slice::<Response<serde::de::IgnoredAny>>(reply) {
        Ok(Response::Err { error }) => refused(error),
        _ => RestoreError::with_source(
            RestoreErrorKind::Other,
            format!(
                "unexpected reply to a restore chunk: {}",
                String::from_utf8_lossy(reply)
            ),
        ),
    }
}

/// The server's refusal of a restore as its error.
fn refused(error: crate::Error) -> RestoreError {
    let kind = match error.error_code() {
        ErrorCode::STREAM_NAME_EXIST_RESTORE_FAILED | ErrorCode::STREAM_NAME_EXIST => {
            RestoreErrorKind::AlreadyExists
        }
        _ => RestoreErrorKind::JetStream(error.clone()),
    };
    RestoreError::with_source(kind, error)
}

/// Reads until `buffer` is full or `data` ends; the bytes read.
async fn read_full<R: AsyncRead + Unpin>(
    data: &mut R,
    buffer: &mut [u8],
) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match data.read(&mut buffer[filled..]).await? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Makes the backup directory, readable by its owner only as natscli makes it (the backup
/// holds every message of the stream). A quick call, made in place.
fn make_private_dir(path: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

/// A failed API request as a snapshot or restore error: timeouts keep their kind.
fn request_failed<K>(error: RequestError, timed_out: K, request: K) -> Error<K>
where
    K: Clone + fmt::Debug + fmt::Display + PartialEq,
{
    match error.kind() {
        RequestErrorKind::TimedOut => Error::with_source(timed_out, error),
        _ => Error::with_source(request, error),
    }
}

fn write_failed(error: std::io::Error) -> SnapshotError {
    SnapshotError::with_source(SnapshotErrorKind::Write, error)
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// The kinds of [`SnapshotError`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SnapshotErrorKind {
    /// The stream does not exist (the server's error is the source).
    NotFound,
    /// The server refused the snapshot, with this error (an older server refuses a memory
    /// stream with 10064, for one).
    JetStream(crate::Error),
    /// No answer to the request, or no next chunk, within the timeout.
    TimedOut,
    /// The server ended the data with this status and description: `408 No Flow Response`
    /// when acks came too slowly, `408 No Interest`, or `500` when the snapshot failed.
    Failed(StatusCode, String),
    /// The subscription for the data ended before the data did (the client was closed).
    Closed,
    /// The request, the subscription or an ack could not be sent; the source says why.
    Request,
    /// Writing the data (or the backup directory) failed; the `io::Error` is the source.
    Write,
    /// Anything else, e.g. metadata that could not be encoded.
    Other,
}

impl fmt::Display for SnapshotErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound => f.write_str("stream not found"),
            Self::JetStream(error) => write!(f, "JetStream error: {error}"),
            Self::TimedOut => f.write_str("timed out"),
            Self::Failed(status, description) => {
                write!(
                    f,
                    "the server ended the snapshot with {status} {description}"
                )
            }
            Self::Closed => f.write_str("the snapshot's subscription ended before its data"),
            Self::Request => f.write_str("request failed"),
            Self::Write => f.write_str("writing the snapshot failed"),
            Self::Other => f.write_str("snapshot failed"),
        }
    }
}

/// Why a stream snapshot failed.
pub type SnapshotError = Error<SnapshotErrorKind>;

/// The kinds of [`RestoreError`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RestoreErrorKind {
    /// A stream of that name exists; remove it first (the server's error is the source).
    AlreadyExists,
    /// The server refused the restore, with this error: an invalid configuration, or data
    /// that is not a snapshot (10062), for example.
    JetStream(crate::Error),
    /// The configuration's name is empty or has characters stream names cannot have.
    InvalidStreamName,
    /// No answer to the request, to a chunk, or to the last chunk, within the timeout.
    TimedOut,
    /// A request could not be made, or nobody answered one (the server gave up waiting for
    /// the next chunk); the source says why.
    Request,
    /// Reading the data (or the backup directory) failed; the `io::Error` is the source.
    Read,
    /// The backup directory's `backup.json` is not a backup's metadata.
    InvalidBackup,
    /// Anything else, e.g. an answer that could not be parsed.
    Other,
}

impl fmt::Display for RestoreErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyExists => f.write_str("a stream of that name exists"),
            Self::JetStream(error) => write!(f, "JetStream error: {error}"),
            Self::InvalidStreamName => f.write_str("invalid stream name"),
            Self::TimedOut => f.write_str("timed out"),
            Self::Request => f.write_str("request failed"),
            Self::Read => f.write_str("reading the backup failed"),
            Self::InvalidBackup => f.write_str("not a stream backup"),
            Self::Other => f.write_str("restore failed"),
        }
    }
}

/// Why a stream restore failed.
pub type RestoreError = Error<RestoreErrorKind>;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_snapshot_request_sends_only_the_options_set() {
        let mut request = SnapshotRequest {
            deliver_subject: "_INBOX.a",
            no_consumers: false,
            chunk_size: None,
            window_size: None,
            jsck: false,
        };
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"deliver_subject":"_INBOX.a"}"#
        );
        request.no_consumers = true;
        request.chunk_size = Some(1024);
        request.window_size = Some(4096);
        request.jsck = true;
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"deliver_subject":"_INBOX.a","no_consumers":true,"chunk_size":1024,"window_size":4096,"jsck":true}"#
        );
    }

    #[test]
    fn a_restore_request_without_state_sends_none() {
        let request = RestoreRequest {
            config: Config::from("ORDERS".to_owned()),
            state: None,
        };
        let json: serde_json::Value = serde_json::to_value(&request).unwrap();
        assert_eq!(json["config"]["name"], "ORDERS");
        assert!(json.get("state").is_none(), "{json}");
    }

    #[test]
    fn a_chunk_reply_with_an_error_is_the_servers_refusal() {
        let reply =
            br#"{"error":{"code":500,"err_code":10062,"description":"restore failed: EOF"}}"#;
        let error = refusal_in(reply);
        match error.kind() {
            RestoreErrorKind::JetStream(refusal) => {
                assert_eq!(refusal.error_code(), ErrorCode::STREAM_RESTORE);
                assert_eq!(refusal.description(), Some("restore failed: EOF"));
            }
            other => panic!("{other:?}"),
        }
        let taken = br#"{"error":{"code":400,"err_code":10130,"description":"stream name already in use, cannot restore"}}"#;
        assert_eq!(refusal_in(taken).kind(), RestoreErrorKind::AlreadyExists);
        assert_eq!(refusal_in(b"+OK?").kind(), RestoreErrorKind::Other);
    }
}
