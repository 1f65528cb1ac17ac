//! Putting an object: the data is read from any `AsyncRead` into chunks of the chunk size,
//! published with their acks pipelined (a bounded window), hashed on the way, and then the
//! metadata is stored; the chunks of the object it replaces are purged last (ADR-20).
//!
//! A bucket made with [`Config::fast_ingest`](super::Config::fast_ingest) (its stream allows
//! batch publishing, ADR-50) on a server that has it takes the chunks as one fast-ingest
//! batch instead, acknowledged every few chunks, with the metadata as the batch's commit, as
//! nats.js 3.4 does for buckets it opens with `allowBatched`. Any other bucket gets the
//! pipelined upload.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use rnats_core::HeaderMap;
use rnats_core::header::NATS_ROLLUP;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::errors::{InfoError, InfoErrorKind, PutError, PutErrorKind};
use super::info::{ObjectInfo, ObjectMetadata, ObjectOptions};
use super::progress::Progress;
use super::{DEFAULT_CHUNK_SIZE, ObjectStore, ROLLUP_SUBJECT, format_digest, is_valid_object_name};
use crate::fast_ingest::{EndedEarly, FastIngest, FastIngestError, FastIngestErrorKind};
use crate::features::Feature;
use crate::publish::{PublishAckFuture, PublishMessage};

/// Chunk bytes whose ack may be outstanding at once: enough to keep the link busy, few
/// enough that a put of any size holds only a few MiB.
const PUT_WINDOW_BYTES: usize = 4 * 1024 * 1024;

/// Flow acks of half a [`PUT_WINDOW_BYTES`] each that a fast-ingest put may owe: a flow ack
/// frees a whole window at once, so one more than two keeps at least the pipelined upload's
/// window in flight between acks (4 to 6 MiB).
const FAST_ACKS_OWED: u16 = 3;

impl ObjectStore {
    /// Stores the data `data` yields as the object `meta` names (a `&str` name, or
    /// [`ObjectMetadata`]), replacing any object of that name. Memory stays bounded by a few
    /// chunks however large the object is.
    ///
    /// ```no_run
    /// # async fn run(bucket: rnats_jetstream::object_store::ObjectStore) -> Result<(), rnats_core::Error> {
    /// let mut data: &[u8] = b"hello";
    /// let info = bucket.put("greeting", &mut data).await?;
    /// assert_eq!(info.size, 5);
    /// # Ok(()) }
    /// ```
    pub async fn put<T>(
        &self,
        meta: T,
        data: &mut (impl AsyncRead + Unpin),
    ) -> Result<ObjectInfo, PutError>
    where
        ObjectMetadata: From<T>,
    {
        self.put_with_progress(meta, data, |_| {}).await
    }

    /// Like [`ObjectStore::put`], calling `progress` after each chunk the server acked.
    ///
    /// ```no_run
    /// # async fn run(bucket: rnats_jetstream::object_store::ObjectStore) -> Result<(), rnats_core::Error> {
    /// let mut file = tokio::fs::File::open("backup.tar").await?;
    /// bucket
    ///     .put_with_progress("backup.tar", &mut file, |p| eprint!("\r{} bytes", p.bytes))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn put_with_progress<T>(
        &self,
        meta: T,
        data: &mut (impl AsyncRead + Unpin),
        mut progress: impl FnMut(Progress),
    ) -> Result<ObjectInfo, PutError>
    where
        ObjectMetadata: From<T>,
    {
        let meta = ObjectMetadata::from(meta);
        if !is_valid_object_name(&meta.name) {
            return Err(PutError::new(PutErrorKind::InvalidName));
        }
        let chunk_size = put_chunk_size(&meta, self.stream.context.client.max_payload());
        let replaced = replaced_version(self.info(&meta.name).await)?;

        let nuid = rnats_core::id::next();
        let upload = if self.uses_fast_ingest() {
            self.send_chunks_fast(&nuid, chunk_size, data, &mut progress)
                .await
        } else {
            self.send_chunks(&nuid, chunk_size, data, &mut progress)
                .await
                .map(|sent| (sent, None))
        };
        let (sent, batch) = match upload {
            Ok(upload) => upload,
            Err(error) => {
                // Leave no orphaned chunks behind; the put's own error is what matters.
                let _ = self.purge_chunks(&nuid).await;
                return Err(error);
            }
        };

        let info = sent.into_info(meta, self.name.clone(), nuid, chunk_size);
        let stored = match batch {
            Some(batch) => self.commit_meta(batch, &info, &mut progress).await,
            None => self
                .publish_meta(&info)
                .await
                .map_err(|error| PutError::with_source(PutErrorKind::PublishMetadata, error)),
        };
        if let Err(error) = stored {
            let _ = self.purge_chunks(&info.nuid).await;
            return Err(error);
        }
        if let Some(nuid) = replaced_chunks(replaced) {
            self.purge_chunks(&nuid)
                .await
                .map_err(|error| PutError::with_source(PutErrorKind::PurgeOldChunks, error))?;
        }
        Ok(info)
    }

    /// Whether puts go over fast ingest: the bucket's stream allows batch publishing (as
    /// last fetched) and the server has it.
    fn uses_fast_ingest(&self) -> bool {
        self.stream.info.config.allow_batch_publish
            && self.context().has_capability(Feature::BatchPublish)
    }

    /// Reads `data` to its end in chunks of `chunk_size` and publishes them under `nuid`,
    /// with at most [`PUT_WINDOW_BYTES`] of them unacked.
    async fn send_chunks(
        &self,
        nuid: &str,
        chunk_size: usize,
        data: &mut (impl AsyncRead + Unpin),
        progress: &mut impl FnMut(Progress),
    ) -> Result<Sent, PutError> {
        let subject = self.chunk_subject(nuid);
        let window = put_window(chunk_size);
        let mut acks: VecDeque<(PublishAckFuture, usize)> = VecDeque::with_capacity(window);
        let mut sent = Sent::default();
        let mut acked = Progress {
            bytes: 0,
            chunks: 0,
            total: None,
        };
        let result = async {
            while let Some(chunk) = sent.next_chunk(data, chunk_size).await? {
                if acks.len() == window
                    && let Some((ack, len)) = acks.pop_front()
                {
                    wait_ack(ack, len, &mut acked, progress).await?;
                }
                let len = chunk.len();
                let ack = self
                    .context()
                    .publish(subject.clone(), chunk)
                    .await
                    .map_err(|error| PutError::with_source(PutErrorKind::PublishChunks, error))?;
                acks.push_back((ack, len));
            }
            while let Some((ack, len)) = acks.pop_front() {
                wait_ack(ack, len, &mut acked, progress).await?;
            }
            Ok::<_, PutError>(())
        }
        .await;
        if let Err(error) = result {
            // Chunks still in flight must land (or fail) before the caller purges: a purge
            // that overtook them would leave them behind.
            for (ack, _) in acks {
                let _ = ack.await;
            }
            return Err(error);
        }
        Ok(sent)
    }
}

impl ObjectStore {
    /// Reads `data` to its end in chunks of `chunk_size` and publishes them under `nuid` as
    /// one fast-ingest batch, left open for the metadata to commit. No batch is started for
    /// an empty object. A flow window is half [`PUT_WINDOW_BYTES`] of chunks, and
    /// [`FAST_ACKS_OWED`] of them may be owed.
    async fn send_chunks_fast(
        &self,
        nuid: &str,
        chunk_size: usize,
        data: &mut (impl AsyncRead + Unpin),
        progress: &mut impl FnMut(Progress),
    ) -> Result<(Sent, Option<FastUpload>), PutError> {
        let subject = self.chunk_subject(nuid);
        let flow = (PUT_WINDOW_BYTES / chunk_size / 2).clamp(1, 500) as u16;
        let mut upload: Option<FastUpload> = None;
        let mut sent = Sent::default();
        let result = async {
            while let Some(chunk) = sent.next_chunk(data, chunk_size).await? {
                let upload = match &mut upload {
                    Some(upload) => upload,
                    None => upload.insert(FastUpload::new(
                        self.context()
                            .fast_ingest()
                            .max_flow(flow)
                            .max_outstanding_acks(FAST_ACKS_OWED)
                            .start()
                            .await
                            .map_err(chunk_error)?,
                    )),
                };
                upload.send(&subject, chunk, progress).await?;
            }
            Ok::<_, PutError>(())
        }
        .await;
        if let Err(error) = result {
            if let Some(upload) = upload {
                // End the batch on the server so that no chunk lands after the caller's
                // purge; a batch the server already ended answers at once.
                let _ = upload.batch.finish().await;
            }
            return Err(error);
        }
        Ok((sent, upload))
    }

    /// Stores `info` as the commit of the batch that carried its chunks, replacing the
    /// metadata there.
    async fn commit_meta(
        &self,
        upload: FastUpload,
        info: &ObjectInfo,
        progress: &mut impl FnMut(Progress),
    ) -> Result<(), PutError> {
        let payload = serde_json::to_vec(info)
            .map_err(|error| PutError::with_source(PutErrorKind::PublishMetadata, error))?;
        let mut headers = HeaderMap::new();
        headers.insert(NATS_ROLLUP, ROLLUP_SUBJECT);
        let message = PublishMessage::build()
            .headers(headers)
            .payload(Bytes::from(payload));
        let FastUpload {
            batch,
            unreported,
            mut acked,
        } = upload;
        batch
            .commit_message(self.meta_subject(&info.name), message)
            .await
            .map_err(|error| commit_error(error, info.chunks))?;
        // The final ack covers every chunk.
        for len in unreported {
            acked.bytes += len as u64;
            acked.chunks += 1;
            progress(acked);
        }
        Ok(())
    }
}

/// The chunks of a put going out as a fast-ingest batch, with what is left to report.
struct FastUpload {
    batch: FastIngest,
    /// The sizes of the chunks sent but not yet reported acked, oldest first: at most two
    /// flow windows.
    unreported: VecDeque<usize>,
    acked: Progress,
}

impl FastUpload {
    fn new(batch: FastIngest) -> FastUpload {
        FastUpload {
            batch,
            unreported: VecDeque::new(),
            acked: Progress {
                bytes: 0,
                chunks: 0,
                total: None,
            },
        }
    }

    /// Sends one chunk (waiting only when the server is behind) and reports the chunks the
    /// server acknowledged meanwhile.
    async fn send(
        &mut self,
        subject: &str,
        chunk: Bytes,
        progress: &mut impl FnMut(Progress),
    ) -> Result<(), PutError> {
        let len = chunk.len();
        let ack = self
            .batch
            .publish(subject, chunk)
            .await
            .map_err(chunk_error)?;
        self.unreported.push_back(len);
        while (self.acked.chunks as u64) < ack.ack_sequence {
            let Some(len) = self.unreported.pop_front() else {
                break;
            };
            self.acked.bytes += len as u64;
            self.acked.chunks += 1;
            progress(self.acked);
        }
        Ok(())
    }
}

/// A failed commit of a fast-ingest put as a put error: a chunk's fault when the server
/// ended the batch at one of the `chunks` chunks (a full bucket, say), whose refusal only
/// comes back by the time of the commit, and the metadata's otherwise.
fn commit_error(error: FastIngestError, chunks: usize) -> PutError {
    let at_chunk = std::error::Error::source(&error)
        .and_then(|source| source.downcast_ref::<EndedEarly>())
        .and_then(|ended| ended.rejected.as_ref())
        .is_some_and(|rejected| rejected.batch_sequence <= chunks as u64);
    let kind = match error.kind() {
        FastIngestErrorKind::TimedOut => PutErrorKind::TimedOut,
        _ if at_chunk => PutErrorKind::PublishChunks,
        _ => PutErrorKind::PublishMetadata,
    };
    PutError::with_source(kind, error)
}

/// A failed chunk of a fast-ingest put as a put error.
fn chunk_error(error: FastIngestError) -> PutError {
    let kind = match error.kind() {
        FastIngestErrorKind::TimedOut => PutErrorKind::TimedOut,
        _ => PutErrorKind::PublishChunks,
    };
    PutError::with_source(kind, error)
}

/// The chunk size of a put of `meta`: the one it names (the default when it names none, or
/// zero), cut to the server's `max_payload`. For the async and blocking puts alike.
pub(crate) fn put_chunk_size(meta: &ObjectMetadata, max_payload: usize) -> usize {
    let chunk_size = match meta.chunk_size {
        Some(size) if size > 0 => size,
        _ => DEFAULT_CHUNK_SIZE,
    };
    // No chunk larger than the server takes, as nats.js does: room is made for a whole
    // chunk before reading (a `usize::MAX` chunk size would not fit in memory), and a
    // larger one could never be stored. Before the server's word (zero), its hard ceiling.
    let max_payload = match max_payload {
        0 => MAX_PAYLOAD_CEILING,
        max => max,
    };
    chunk_size.min(max_payload)
}

/// How many chunks of `chunk_size` a pipelined put may have unacked: a
/// [`PUT_WINDOW_BYTES`] of them, 2 to 256.
pub(crate) fn put_window(chunk_size: usize) -> usize {
    (PUT_WINDOW_BYTES / chunk_size).clamp(2, 256)
}

/// The version a put replaces, from `found`, the lookup of its name: its chunks go once the
/// new metadata is in. Not knowing it would orphan its chunks, so only "not found" lets the
/// put go on.
pub(crate) fn replaced_version(
    found: Result<ObjectInfo, InfoError>,
) -> Result<Option<ObjectInfo>, PutError> {
    match found {
        Ok(info) => Ok(Some(info)),
        Err(error) if error.kind() == InfoErrorKind::NotFound => Ok(None),
        Err(error) => {
            let kind = match error.kind() {
                InfoErrorKind::TimedOut => PutErrorKind::TimedOut,
                _ => PutErrorKind::Other,
            };
            Err(PutError::with_source(kind, error))
        }
    }
}

/// The NUID whose chunks a put purges once its metadata is in: the replaced version's, if
/// it has one.
pub(crate) fn replaced_chunks(replaced: Option<ObjectInfo>) -> Option<String> {
    replaced.map(|old| old.nuid).filter(|nuid| !nuid.is_empty())
}

/// What a put's chunks came to, counted as they are read: the size, the chunk count and
/// the SHA-256 of the data. For the async and blocking puts alike.
#[derive(Default)]
pub(crate) struct Sent {
    size: usize,
    chunks: usize,
    hash: Sha256,
}

impl Sent {
    /// Counts in `chunk`, the next chunk of the data.
    pub(crate) fn count(&mut self, chunk: &[u8]) {
        self.hash.update(chunk);
        self.size += chunk.len();
        self.chunks += 1;
    }

    /// The metadata of the object whose chunks were all sent, under `nuid` in `bucket`, cut
    /// at `chunk_size`.
    pub(crate) fn into_info(
        self,
        meta: ObjectMetadata,
        bucket: String,
        nuid: String,
        chunk_size: usize,
    ) -> ObjectInfo {
        ObjectInfo {
            name: meta.name,
            description: meta.description,
            metadata: meta.metadata,
            headers: meta.headers,
            options: Some(ObjectOptions {
                link: None,
                max_chunk_size: Some(chunk_size),
            }),
            bucket,
            nuid,
            size: self.size,
            chunks: self.chunks,
            modified: Some(rnats_core::datetime::now()),
            digest: Some(format_digest(&self.hash.finalize())),
            deleted: false,
        }
    }

    /// Reads the next chunk of `data` and counts it in; `None` at the end of `data`.
    async fn next_chunk(
        &mut self,
        data: &mut (impl AsyncRead + Unpin),
        chunk_size: usize,
    ) -> Result<Option<Bytes>, PutError> {
        let chunk = read_chunk(data, chunk_size)
            .await
            .map_err(|error| PutError::with_source(PutErrorKind::ReadChunks, error))?;
        if chunk.is_empty() {
            return Ok(None);
        }
        let chunk = chunk.freeze();
        self.count(&chunk);
        Ok(Some(chunk))
    }
}

/// The most a nats-server's `max_payload` may be set to.
const MAX_PAYLOAD_CEILING: usize = 64 << 20;

/// Waits for one chunk's ack and reports the progress it makes.
async fn wait_ack(
    ack: PublishAckFuture,
    len: usize,
    acked: &mut Progress,
    progress: &mut impl FnMut(Progress),
) -> Result<(), PutError> {
    ack.await
        .map_err(|error| PutError::with_source(PutErrorKind::PublishChunks, error))?;
    acked.bytes += len as u64;
    acked.chunks += 1;
    progress(*acked);
    Ok(())
}

/// Reads up to `chunk_size` bytes, fewer only at the end of `data`: readers that return a
/// little at a time (sockets, pipes) still make full chunks.
async fn read_chunk(
    data: &mut (impl AsyncRead + Unpin),
    chunk_size: usize,
) -> std::io::Result<BytesMut> {
    let mut chunk = BytesMut::with_capacity(chunk_size);
    while chunk.len() < chunk_size {
        // `take` keeps `read_buf` within the chunk even if the buffer has spare capacity.
        let limit = (chunk_size - chunk.len()) as u64;
        if (&mut *data).take(limit).read_buf(&mut chunk).await? == 0 {
            break;
        }
    }
    Ok(chunk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(chunk_size: Option<usize>) -> ObjectMetadata {
        ObjectMetadata {
            name: "a".to_owned(),
            chunk_size,
            ..Default::default()
        }
    }

    /// The metadata of a put under `nuid`.
    fn stored(nuid: &str) -> ObjectInfo {
        Sent::default().into_info(meta(None), "b".to_owned(), nuid.to_owned(), 1)
    }

    #[test]
    fn the_chunk_size_is_the_named_one_or_the_default_within_max_payload() {
        assert_eq!(put_chunk_size(&meta(None), 1 << 20), DEFAULT_CHUNK_SIZE);
        assert_eq!(put_chunk_size(&meta(Some(0)), 1 << 20), DEFAULT_CHUNK_SIZE);
        assert_eq!(put_chunk_size(&meta(Some(1000)), 1 << 20), 1000);
        assert_eq!(put_chunk_size(&meta(Some(2 << 20)), 1 << 20), 1 << 20);
        // Before the server's INFO, the ceiling of any server.
        assert_eq!(
            put_chunk_size(&meta(Some(usize::MAX)), 0),
            MAX_PAYLOAD_CEILING
        );
    }

    #[test]
    fn the_window_holds_a_few_mib_of_chunks_within_its_bounds() {
        assert_eq!(put_window(DEFAULT_CHUNK_SIZE), 32);
        assert_eq!(put_window(1), 256);
        assert_eq!(put_window(MAX_PAYLOAD_CEILING), 2);
    }

    #[test]
    fn only_a_missing_object_lets_a_put_go_on_without_a_replaced_version() {
        let replaced = replaced_version(Ok(stored("old"))).unwrap();
        assert_eq!(replaced_chunks(replaced), Some("old".to_owned()));
        let missing = replaced_version(Err(InfoError::new(InfoErrorKind::NotFound))).unwrap();
        assert_eq!(replaced_chunks(missing), None);
        let timed_out = replaced_version(Err(InfoError::new(InfoErrorKind::TimedOut)));
        assert_eq!(timed_out.unwrap_err().kind(), PutErrorKind::TimedOut);
        let other = replaced_version(Err(InfoError::new(InfoErrorKind::Other)));
        assert_eq!(other.unwrap_err().kind(), PutErrorKind::Other);
    }

    #[test]
    fn a_replaced_version_without_a_nuid_has_no_chunks_to_purge() {
        assert_eq!(replaced_chunks(Some(stored(""))), None);
    }

    #[test]
    fn the_sent_chunks_make_the_size_count_and_digest_of_the_whole() {
        let mut sent = Sent::default();
        sent.count(b"hel");
        sent.count(b"lo");
        let info = sent.into_info(meta(None), "b".to_owned(), "n".to_owned(), 3);
        assert_eq!((info.size, info.chunks), (5, 2));
        let whole = format_digest(&Sha256::digest(b"hello"));
        assert_eq!(info.digest, Some(whole));
        assert_eq!(info.options.unwrap().max_chunk_size, Some(3));
        assert_eq!((info.bucket.as_str(), info.nuid.as_str()), ("b", "n"));
        assert!(!info.deleted);
    }
}
