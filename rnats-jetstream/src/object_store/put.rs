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

use super::errors::{InfoErrorKind, PutError, PutErrorKind};
use super::info::{ObjectInfo, ObjectMetadata, ObjectOptions};
use super::progress::Progress;
use super::{DEFAULT_CHUNK_SIZE, ObjectStore, ROLLUP_SUBJECT, format_digest, is_valid_object_name};
use crate::fast_ingest::{EndedEarly, FastIngest, FastIngestError, FastIngestErrorKind};
use crate::features::Feature;
use crate::publish::{PublishAckFuture, PublishMessage};

/// Chunk bytes whose ack may be outstanding at once: enough to keep the link busy, few
/// enough that a put of any size holds only a few MiB.
pub(crate) const PUT_WINDOW_BYTES: usize = 4 * 1024 * 1024;

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
        let chunk_size = match meta.chunk_size {
            Some(size) if size > 0 => size,
            _ => DEFAULT_CHUNK_SIZE,
        };
        // No chunk larger than the server takes, as nats.js does: room is made for a whole
        // chunk before reading (a `usize::MAX` chunk size would not fit in memory), and a
        // larger one could never be stored. Before the server's word (zero), its hard
        // ceiling of 64 MiB.
        let max_payload = match self.stream.context.client.max_payload() {
            0 => MAX_PAYLOAD_CEILING,
            max => max,
        };
        let chunk_size = chunk_size.min(max_payload);
        let replaced = self.replaced_version(&meta.name).await?;

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

        let info = put_info(
            meta,
            self.name.clone(),
            nuid,
            chunk_size,
            sent.size,
            sent.chunks,
            sent.hash,
        );
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
        if let Some(replaced) = replaced.filter(|old| !old.nuid.is_empty()) {
            self.purge_chunks(&replaced.nuid)
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

    /// The version a put of `name` replaces, whose chunks go once the new metadata is in.
    /// Not knowing it would orphan its chunks, so only "not found" lets the put go on.
    async fn replaced_version(&self, name: &str) -> Result<Option<ObjectInfo>, PutError> {
        match self.info(name).await {
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
        let window = (PUT_WINDOW_BYTES / chunk_size).clamp(2, 256);
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

/// The metadata of an object whose chunks are all stored: `size` bytes in `chunks` chunks
/// of at most `chunk_size` under `nuid`, hashed into `hash`. For the async and blocking puts
/// alike.
pub(crate) fn put_info(
    meta: ObjectMetadata,
    bucket: String,
    nuid: String,
    chunk_size: usize,
    size: usize,
    chunks: usize,
    hash: Sha256,
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
        size,
        chunks,
        modified: Some(rnats_core::datetime::now()),
        digest: Some(format_digest(&hash.finalize())),
        deleted: false,
    }
}

/// What a put's chunks came to, counted as they are read.
#[derive(Default)]
struct Sent {
    size: usize,
    chunks: usize,
    hash: Sha256,
}

impl Sent {
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
        self.hash.update(&chunk);
        self.size += chunk.len();
        self.chunks += 1;
        Ok(Some(chunk))
    }
}

/// The most a nats-server's `max_payload` may be set to.
pub(crate) const MAX_PAYLOAD_CEILING: usize = 64 << 20;

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
