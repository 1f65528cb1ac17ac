//! Getting an object: [`ObjectStore::get`] follows links to the object with the data, and
//! [`Object`] reads that data as an `AsyncRead` (or, through [`Object::into_chunks`], as a
//! stream of its chunks), checking its size and SHA-256 digest against the metadata before
//! it reports the end. [`ObjectStore::get_range`] (in `range.rs`) makes
//! an [`Object`] that reads part of the data instead.
//!
//! The chunks come through an ordered pull consumer (ADR-17), a few at a time: the consumer's
//! `max_batch` caps each pull request at one window ([`GET_WINDOW_BYTES`]) of chunks, so the
//! reader holds little more than that whatever the object's size and however slowly the
//! caller reads. Being ordered, the consumer is recreated from the last chunk seen after a
//! gap, missed heartbeats or a reconnect, so no chunk goes missing silently.

use std::fmt;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, ReadBuf};

use super::ObjectStore;
use super::errors::{GetError, GetErrorKind, ReadError, ReadErrorKind, get_error};
use super::info::ObjectInfo;
use super::progress::Progress;
use crate::consumer::pull;
use crate::consumer::{DeliverPolicy, StreamErrorKind};
use crate::consumer_errors::{ConsumerError, ConsumerErrorKind};
use crate::stream::{Info as StreamInfo, Stream};

/// Chunk bytes a reader asks for per pull request; it asks again at half, so about 1.5 of
/// this is the most it holds.
const GET_WINDOW_BYTES: usize = 2 * 1024 * 1024;

/// Links followed at most, so that links made by hand into a cycle end.
pub(crate) const MAX_LINK_HOPS: usize = 8;

impl ObjectStore {
    /// The object `object_name`, to read as an `AsyncRead`; a link is followed to the
    /// object it points to (in this bucket or another).
    ///
    /// ```no_run
    /// # async fn run(bucket: rnats_jetstream::object_store::ObjectStore) -> Result<(), rnats_core::Error> {
    /// use tokio::io::AsyncReadExt;
    /// let mut object = bucket.get("greeting").await?;
    /// let mut text = String::new();
    /// object.read_to_string(&mut text).await?;
    /// # Ok(()) }
    /// ```
    pub async fn get<T: AsRef<str> + Send>(&self, object_name: T) -> Result<Object, GetError> {
        let (bucket, info) = self.resolve(object_name.as_ref()).await?;
        Ok(Object::new(info, bucket.stream))
    }

    /// The object `object_name` holding the data, with its bucket: a link is followed to the
    /// object it points to, in this bucket or another.
    pub(super) async fn resolve(
        &self,
        object_name: &str,
    ) -> Result<(ObjectStore, ObjectInfo), GetError> {
        let mut bucket = self.clone();
        let mut info = bucket.info(object_name).await.map_err(get_error)?;
        for _ in 0..MAX_LINK_HOPS {
            let Some(target) = link_target(&info)? else {
                return Ok((bucket, info));
            };
            if target.bucket != bucket.name {
                bucket = bucket
                    .context()
                    .get_object_store(&target.bucket)
                    .await
                    .map_err(|error| GetError::with_source(GetErrorKind::Other, error))?;
            }
            info = bucket.info(&target.name).await.map_err(get_error)?;
        }
        Err(too_many_links())
    }
}

/// The object a link leads to.
pub(crate) struct LinkTarget {
    /// The bucket it is in.
    pub(crate) bucket: String,
    /// Its name.
    pub(crate) name: String,
}

/// Where a get of `info` goes on to: nowhere (`None`) when `info` holds the data itself, the
/// object it links to when it is a link. A deleted object and a bucket link have no data.
/// For the async and blocking stores alike.
pub(crate) fn link_target(info: &ObjectInfo) -> Result<Option<LinkTarget>, GetError> {
    if info.deleted {
        return Err(GetError::new(GetErrorKind::NotFound));
    }
    let Some(link) = info.link() else {
        return Ok(None);
    };
    let Some(name) = link.name.clone() else {
        return Err(GetError::new(GetErrorKind::BucketLink));
    };
    Ok(Some(LinkTarget {
        bucket: link.bucket.clone(),
        name,
    }))
}

/// The error of a get that met more than [`MAX_LINK_HOPS`] links in a row.
pub(crate) fn too_many_links() -> GetError {
    GetError::with_source(GetErrorKind::Other, "too many links in a row")
}

/// An object's data, read as an [`AsyncRead`]; from [`ObjectStore::get`], or from
/// [`ObjectStore::get_range`] for part of it. [`Object::into_chunks`] takes the data as a
/// [`futures_util::Stream`] of its chunks instead.
///
/// The read that would report the end fails instead when the data's size or digest is not
/// what the metadata says: an [`std::io::ErrorKind::InvalidData`] error whose inner error is
/// a [`ReadError`] ([`ReadErrorKind::DigestMismatch`], ...). A range is checked for its
/// size only: the digest covers the whole object.
pub struct Object {
    /// The object's metadata.
    pub info: ObjectInfo,
    stream: Stream<StreamInfo>,
    state: ReadState,
    /// What is left of the chunk the caller is reading.
    buffered: Bytes,
    hash: Sha256,
    received: Progress,
    progress: Option<Box<dyn FnMut(Progress) + Send>>,
    /// The bytes to read, `start..end`, when only part of the object is read.
    span: Option<(u64, u64)>,
}

/// Where a read of the chunks is.
enum ReadState {
    /// Nothing asked yet.
    Idle,
    /// Creating the consumer; its chunk stream, and how many chunks it has.
    Starting(BoxFuture<'static, Result<Reader, ReadError>>),
    /// Receiving chunks (boxed: the consumer's state is large, and a read is mostly in this
    /// state, so one allocation per object costs nothing).
    Reading(Box<Reader>),
    /// Receiving the bytes of a range, cut out of the chunks that hold them.
    Slices(BoxStream<'static, Result<Bytes, ReadError>>),
    /// Every chunk was read and checked.
    Done,
    /// The read failed; every later read fails the same way.
    Failed(ReadErrorKind),
}

/// A consumer delivering one object's chunks (or, for a range, their headers). Dropping it
/// deletes the consumer (the ordered stream's own clean-up), once the read ends, fails or is
/// abandoned; `Object` has no `Drop` of its own, so callers can move fields (`object.info`)
/// out of it, as they can with async-nats.
pub(super) struct Reader {
    pub(super) messages: pull::Ordered,
    /// Chunks the consumer had to deliver when it was created.
    pub(super) pending: u64,
}

impl Object {
    pub(crate) fn new(info: ObjectInfo, stream: Stream<StreamInfo>) -> Object {
        let total = Some(info.size as u64);
        Object {
            info,
            stream,
            state: ReadState::Idle,
            buffered: Bytes::new(),
            hash: Sha256::new(),
            received: Progress {
                bytes: 0,
                chunks: 0,
                total,
            },
            progress: None,
            span: None,
        }
    }

    /// A reader of the bytes `start..end` of the object (`start < end <= info.size`, or
    /// `start == end` for nothing).
    pub(super) fn new_range(
        info: ObjectInfo,
        stream: Stream<StreamInfo>,
        start: u64,
        end: u64,
    ) -> Object {
        let mut object = Object::new(info, stream);
        object.received.total = Some(end - start);
        object.span = Some((start, end));
        object
    }

    /// The object's metadata.
    pub fn info(&self) -> &ObjectInfo {
        &self.info
    }

    /// Calls `progress` after each chunk received (an rnats addition). For a range, the
    /// bytes and the total count the range's bytes only.
    pub fn with_progress(mut self, progress: impl FnMut(Progress) + Send + 'static) -> Object {
        self.progress = Some(Box::new(progress));
        self
    }

    /// The next bytes of the data as they came, without a copy: a whole chunk (or a range's
    /// part of one), or what a read left of one; `None` at the end, once it was checked.
    pub(super) fn poll_bytes(
        &mut self,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Result<Option<Bytes>, ReadError>> {
        std::task::ready!(self.poll_fill(cx))?;
        // `poll_fill` leaves nothing buffered only at the checked end.
        let bytes = std::mem::take(&mut self.buffered);
        Poll::Ready(Ok((!bytes.is_empty()).then_some(bytes)))
    }

    /// Moves the read on until there are bytes to hand out, the end, or an error.
    fn poll_fill(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), ReadError>> {
        loop {
            if !self.buffered.is_empty() {
                return Poll::Ready(Ok(()));
            }
            match &mut self.state {
                ReadState::Idle if self.span.is_some() => {
                    self.state = match self.span {
                        Some((start, end)) if start < end => {
                            ReadState::Slices(super::range::slices(
                                self.stream.clone(),
                                self.info.clone(),
                                start,
                                end,
                            ))
                        }
                        _ => ReadState::Done,
                    };
                    if matches!(self.state, ReadState::Done) {
                        self.check_complete()?;
                    }
                }
                ReadState::Idle if self.info.chunks == 0 => {
                    self.state = ReadState::Done;
                    self.check_complete()?;
                }
                ReadState::Idle => {
                    self.state = ReadState::Starting(Box::pin(start_reader(
                        self.stream.clone(),
                        self.info.clone(),
                    )));
                }
                ReadState::Starting(future) => match future.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(reader)) if reader.pending == 0 => {
                        drop(reader);
                        return Poll::Ready(Err(
                            self.fail(ReadError::new(ReadErrorKind::ChunksMissing))
                        ));
                    }
                    Poll::Ready(Ok(reader)) => self.state = ReadState::Reading(Box::new(reader)),
                    Poll::Ready(Err(error)) => return Poll::Ready(Err(self.fail(error))),
                },
                ReadState::Reading(reader) => match reader.messages.poll_next_unpin(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(Ok(message))) => self.handle_chunk(message)?,
                    Poll::Ready(Some(Err(error))) => {
                        let error = ReadError::with_source(ReadErrorKind::Delivery, error);
                        return Poll::Ready(Err(self.fail(error)));
                    }
                    Poll::Ready(None) => {
                        let error = ReadError::with_source(
                            ReadErrorKind::Delivery,
                            "the chunk stream ended early",
                        );
                        return Poll::Ready(Err(self.fail(error)));
                    }
                },
                ReadState::Slices(slices) => match slices.poll_next_unpin(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(Ok(bytes))) => self.handle_slice(bytes)?,
                    Poll::Ready(Some(Err(error))) => return Poll::Ready(Err(self.fail(error))),
                    Poll::Ready(None) => {
                        self.state = ReadState::Done;
                        self.check_complete()?;
                    }
                },
                ReadState::Done => return Poll::Ready(Ok(())),
                ReadState::Failed(kind) => return Poll::Ready(Err(ReadError::new(*kind))),
            }
        }
    }

    /// Takes in one chunk: hashes and counts it, and after the last one checks the whole
    /// before the chunk is handed out.
    fn handle_chunk(&mut self, message: crate::message::Message) -> Result<(), ReadError> {
        let pending = match message.info() {
            Ok(info) => info.pending,
            Err(error) => {
                let error = ReadError::with_source(ReadErrorKind::Delivery, error);
                return Err(self.fail(error));
            }
        };
        let payload = message.message.payload;
        self.hash.update(&payload);
        self.received.bytes += payload.len() as u64;
        self.received.chunks += 1;
        // More than the metadata announced is an error at once, not after the last chunk: a
        // stream that keeps saying more are pending would otherwise be read (and, by
        // `get_bytes`, kept) for ever.
        if overruns(&self.info, self.received.bytes, self.received.chunks) {
            return Err(self.fail(ReadError::new(ReadErrorKind::SizeMismatch)));
        }
        if let Some(progress) = self.progress.as_mut() {
            progress(self.received);
        }
        if pending == 0 {
            // Dropping the reader deletes its consumer.
            self.state = ReadState::Done;
            self.check_complete()?;
        }
        self.buffered = payload;
        Ok(())
    }

    /// Takes in the part of one chunk that a range wants: counts it (no more than the range
    /// holds) and hands it out.
    fn handle_slice(&mut self, bytes: Bytes) -> Result<(), ReadError> {
        self.received.bytes += bytes.len() as u64;
        self.received.chunks += 1;
        if Some(self.received.bytes) > self.received.total {
            return Err(self.fail(ReadError::new(ReadErrorKind::SizeMismatch)));
        }
        if let Some(progress) = self.progress.as_mut() {
            progress(self.received);
        }
        self.buffered = bytes;
        Ok(())
    }

    /// Checks the data read against the metadata: chunk count, size, then digest; for a
    /// range, its size only.
    fn check_complete(&mut self) -> Result<(), ReadError> {
        if self.span.is_some() {
            if Some(self.received.bytes) != self.received.total {
                return Err(self.fail(ReadError::new(ReadErrorKind::SizeMismatch)));
            }
            return Ok(());
        }
        let hash = std::mem::take(&mut self.hash);
        check_whole(&self.info, self.received.bytes, self.received.chunks, hash)
            .map_err(|kind| self.fail(ReadError::new(kind)))
    }

    /// Ends the read with `error`: later reads fail with its kind.
    fn fail(&mut self, error: ReadError) -> ReadError {
        // Dropping a reader in the old state deletes its consumer.
        self.state = ReadState::Failed(error.kind());
        self.buffered = Bytes::new();
        error
    }
}

impl AsyncRead for Object {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        match this.poll_fill(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(error)) => Poll::Ready(Err(io_error(error))),
            Poll::Ready(Ok(())) => {
                let n = buf.remaining().min(this.buffered.len());
                buf.put_slice(&this.buffered.split_to(n));
                Poll::Ready(Ok(()))
            }
        }
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Object")
            .field("info", &self.info)
            .field("received", &self.received)
            .finish_non_exhaustive()
    }
}

/// How many chunks of `info` make one window of [`GET_WINDOW_BYTES`], 2 to 64: what a reader
/// asks for at once.
pub(super) fn chunk_window(info: &ObjectInfo) -> usize {
    let chunk_size = info
        .options
        .as_ref()
        .and_then(|options| options.max_chunk_size)
        .filter(|&size| size > 0)
        .unwrap_or_else(|| info.size.div_ceil(info.chunks.max(1)).max(1));
    (GET_WINDOW_BYTES / chunk_size).clamp(2, 64)
}

/// The subject `info`'s chunks are stored on.
pub(crate) fn chunk_subject(info: &ObjectInfo) -> String {
    format!("$O.{}.C.{}", info.bucket, info.nuid)
}

/// Creates the consumer of `info`'s chunks and starts pulling them, a window at a time.
async fn start_reader(stream: Stream<StreamInfo>, info: ObjectInfo) -> Result<Reader, ReadError> {
    let window = chunk_window(&info);
    open_reader(
        &stream,
        pull::OrderedConfig {
            description: Some("object store reader".to_owned()),
            filter_subject: chunk_subject(&info),
            deliver_policy: DeliverPolicy::All,
            // The ordered stream asks for at most this many chunks per pull request.
            max_batch: i64::try_from(window).unwrap_or(64),
            ..Default::default()
        },
    )
    .await
}

/// A reader's consumer that could not be made, as the read's error: timed out, or not.
pub(crate) fn reader_consumer_error(error: ConsumerError) -> ReadError {
    let kind = match error.kind() {
        ConsumerErrorKind::TimedOut => ReadErrorKind::TimedOut,
        _ => ReadErrorKind::Consumer,
    };
    ReadError::with_source(kind, error)
}

/// Creates an ordered consumer on the bucket's stream and starts pulling its messages.
pub(super) async fn open_reader(
    stream: &Stream<StreamInfo>,
    config: pull::OrderedConfig,
) -> Result<Reader, ReadError> {
    let consumer = stream
        .create_consumer(config)
        .await
        .map_err(reader_consumer_error)?;
    let pending = consumer.info.num_pending;
    let messages = consumer.messages().await.map_err(|error| {
        let kind = match error.kind() {
            StreamErrorKind::TimedOut => ReadErrorKind::TimedOut,
            _ => ReadErrorKind::Consumer,
        };
        ReadError::with_source(kind, error)
    })?;
    Ok(Reader { messages, pending })
}

/// Whether `bytes` in `chunks` chunks are already more than the metadata `info` announced.
/// For the async and blocking readers alike.
pub(crate) fn overruns(info: &ObjectInfo, bytes: u64, chunks: usize) -> bool {
    bytes > info.size as u64 || chunks > info.chunks
}

/// Checks the whole data of `info`, read as `bytes` in `chunks` chunks hashed into `hash`,
/// against its metadata: chunk count and size, then digest. For the async and blocking
/// readers alike.
pub(crate) fn check_whole(
    info: &ObjectInfo,
    bytes: u64,
    chunks: usize,
    hash: Sha256,
) -> Result<(), ReadErrorKind> {
    if bytes != info.size as u64 || chunks != info.chunks {
        return Err(ReadErrorKind::SizeMismatch);
    }
    let hash: [u8; 32] = hash.finalize().into();
    match info.digest.as_deref() {
        // Metadata without a digest (very old writers) has nothing to check against.
        None => Ok(()),
        Some(digest) if digest_matches(digest, &hash) => Ok(()),
        Some(_) => Err(ReadErrorKind::DigestMismatch),
    }
}

/// Whether `digest` (`SHA-256=<base64url>`, any case of the prefix, padded or not) is `hash`.
pub(crate) fn digest_matches(digest: &str, hash: &[u8; 32]) -> bool {
    let Some((algorithm, encoded)) = digest.split_once('=') else {
        return false;
    };
    if !algorithm.eq_ignore_ascii_case("SHA-256") {
        return false;
    }
    let decoded = URL_SAFE
        .decode(encoded)
        .or_else(|_| URL_SAFE_NO_PAD.decode(encoded));
    decoded.is_ok_and(|decoded| decoded == hash)
}

/// A read failure as the `io::Error` `AsyncRead` returns, the [`ReadError`] inside.
pub(crate) fn io_error(error: ReadError) -> std::io::Error {
    let kind = match error.kind() {
        ReadErrorKind::DigestMismatch
        | ReadErrorKind::SizeMismatch
        | ReadErrorKind::ChunksMissing => std::io::ErrorKind::InvalidData,
        // Kept visible through the `io::Error`, as async-nats keeps it.
        ReadErrorKind::TimedOut => std::io::ErrorKind::TimedOut,
        ReadErrorKind::Consumer | ReadErrorKind::Delivery => std::io::ErrorKind::Other,
    };
    std::io::Error::new(kind, error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object_store::deletion_marker;
    use crate::object_store::link::{bucket_link, link_info, object_link};
    use crate::object_store::put::Sent;

    /// A live object `name` in the bucket `b`.
    fn object(name: &str) -> ObjectInfo {
        Sent::default().into_info(name.into(), "b".to_owned(), "n".to_owned(), 1)
    }

    /// "hello" as it was put, in chunks "hel" and "lo".
    fn hello() -> ObjectInfo {
        let mut sent = Sent::default();
        sent.count(b"hel");
        sent.count(b"lo");
        sent.into_info("a".into(), "b".to_owned(), "n".to_owned(), 3)
    }

    fn hash_of(data: &[u8]) -> Sha256 {
        let mut hash = Sha256::new();
        hash.update(data);
        hash
    }

    #[test]
    fn a_whole_read_is_checked_for_size_then_digest() {
        let info = hello();
        assert_eq!(check_whole(&info, 5, 2, hash_of(b"hello")), Ok(()));
        let short = check_whole(&info, 4, 2, hash_of(b"hell"));
        assert_eq!(short, Err(ReadErrorKind::SizeMismatch));
        let one_chunk = check_whole(&info, 5, 1, hash_of(b"hello"));
        assert_eq!(one_chunk, Err(ReadErrorKind::SizeMismatch));
        let tampered = check_whole(&info, 5, 2, hash_of(b"jello"));
        assert_eq!(tampered, Err(ReadErrorKind::DigestMismatch));
        let unhashed = ObjectInfo {
            digest: None,
            ..info
        };
        assert_eq!(check_whole(&unhashed, 5, 2, hash_of(b"jello")), Ok(()));
    }

    #[test]
    fn more_bytes_or_chunks_than_announced_overrun_at_once() {
        let info = hello();
        assert!(!overruns(&info, 5, 2));
        assert!(overruns(&info, 6, 2));
        assert!(overruns(&info, 5, 3));
    }

    #[test]
    fn a_get_follows_a_link_to_its_object_and_stops_at_the_data() {
        assert!(link_target(&object("a")).unwrap().is_none());
        let link = object_link("l", &object("a")).unwrap();
        let target = link_target(&link_info("l".into(), "c".into(), link))
            .unwrap()
            .unwrap();
        assert_eq!((target.bucket.as_str(), target.name.as_str()), ("b", "a"));
    }

    #[test]
    fn a_get_of_a_deleted_object_or_a_bucket_link_finds_no_data() {
        let deleted = link_target(&deletion_marker(object("a"))).err().unwrap();
        assert_eq!(deleted.kind(), GetErrorKind::NotFound);
        let link = bucket_link("l", "c".into()).unwrap();
        let to_bucket = link_target(&link_info("l".into(), "b".into(), link))
            .err()
            .unwrap();
        assert_eq!(to_bucket.kind(), GetErrorKind::BucketLink);
    }

    #[test]
    fn digests_match_in_either_padding_and_prefix_case() {
        let hash: [u8; 32] = Sha256::digest(b"").into();
        assert!(digest_matches(
            "SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=",
            &hash
        ));
        assert!(digest_matches(
            "sha-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
            &hash
        ));
        assert!(!digest_matches(
            "SHA-256=57DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=",
            &hash
        ));
        assert!(!digest_matches("MD5=abc", &hash));
    }
}
