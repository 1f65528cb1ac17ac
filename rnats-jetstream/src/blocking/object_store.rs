//! The Object Store (ADR-20) from a blocking [`Context`]: buckets of named objects of any
//! size, laid out exactly as the async [`ObjectStore`](crate::object_store::ObjectStore)
//! and nats.go lay them out, so each reads what the others wrote. A bucket `b` is the
//! stream `OBJ_b`; an object's data is cut into chunks (128 KiB by default) on
//! `$O.b.C.<nuid>`, a fresh NUID per version, and its [`ObjectInfo`] (with the SHA-256
//! digest of the data) goes to `$O.b.M.<base64url(name)>` with a subject rollup.
//!
//! Buckets are made, found and deleted on the [`Context`]; an [`ObjectStore`] handle puts,
//! deletes, renames, links and seals. [`ObjectStore::get`] returns an [`Object`], a
//! [`std::io::Read`] that checks the digest at the end; [`List`] and [`Watch`] read the
//! metadata (in `object_store/read.rs`). The async module's types serve here:
//! [`Config`], [`ObjectMetadata`], [`ObjectInfo`], [`UpdateMetadata`], the errors.
//!
//! ```no_run
//! # fn run(jetstream: rnats_jetstream::blocking::Context) -> Result<(), rnats_core::Error> {
//! use std::io::Read;
//! use rnats_jetstream::object_store::Config;
//!
//! let bucket = jetstream.create_object_store(Config {
//!     bucket: "files".to_string(),
//!     ..Default::default()
//! })?;
//! let info = bucket.put_file("report.pdf", "report.pdf")?;
//! println!("stored {} bytes in {} chunks", info.size, info.chunks);
//! let mut data = Vec::new();
//! bucket.get("report.pdf")?.read_to_end(&mut data)?; // fails if the digest does not match
//! # Ok(()) }
//! ```

mod range;
mod read;

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use rnats_core::blocking::Subscriber;
use rnats_core::header::{HeaderMap, NATS_ROLLUP};

use super::context::Context;
use super::list::StreamNames;
use super::stream::Stream;
use crate::object_store::bucket::{
    check_new_bucket, checked_bucket, create_error, get_or_create_error, stream_name,
};
use crate::object_store::errors::{
    delete_error, direct_info_error, leader_info_error, seal_error, update_metadata_error,
};
use crate::object_store::link::{bucket_link, link_info, may_link_over, object_link};
use crate::object_store::metadata::{check_update, may_rename_over, updated_info};
use crate::object_store::put::{
    Sent, put_chunk_size, put_window, replaced_chunks, replaced_version,
};
use crate::object_store::{
    AddLinkError, AddLinkErrorKind, AsObjectInfo, Config, CreateObjectStoreError, DeleteError,
    DeleteErrorKind, DeleteObjectStore, InfoError, InfoErrorKind, ObjectInfo, ObjectLink,
    ObjectMetadata, ObjectStoreError, ObjectStoreErrorKind, ObjectStoreStatus, PutError,
    PutErrorKind, ROLLUP_SUBJECT, SealError, SealErrorKind, StatusError, UpdateMetadata,
    UpdateMetadataError, UpdateMetadataErrorKind, deletion_marker, encode_object_name,
    is_valid_object_name,
};
use crate::stream::{PurgeError, PurgeRequest};
use crate::stream_errors::StreamsError;

pub use self::read::{List, Object, Watch};

impl Context {
    /// Creates the bucket `config` describes (its stream `OBJ_<bucket>`), or returns it if
    /// it exists with the same configuration.
    ///
    /// A bucket made with [`Config::fast_ingest`] works here too: the blocking
    /// [`ObjectStore::put`] always uses the pipelined upload.
    pub fn create_object_store(
        &self,
        config: Config,
    ) -> Result<ObjectStore, CreateObjectStoreError> {
        check_new_bucket(&config)?;
        let stream = self
            .create_stream(config.stream_config())
            .map_err(create_error)?;
        Ok(ObjectStore::new(config.bucket, stream))
    }

    /// The bucket `config` names if it exists, its configuration left as it is; otherwise
    /// a new one as `config` describes. Callers racing to create it all get it.
    pub fn get_or_create_object_store(
        &self,
        config: Config,
    ) -> Result<ObjectStore, CreateObjectStoreError> {
        check_new_bucket(&config)?;
        let stream = self
            .get_or_create_stream(config.stream_config())
            .map_err(get_or_create_error)?;
        Ok(ObjectStore::new(config.bucket, stream))
    }

    /// The bucket `bucket`. A missing one fails with [`ObjectStoreErrorKind::GetStore`],
    /// whose source has the server's `STREAM_NOT_FOUND`.
    pub fn get_object_store<T: AsRef<str>>(
        &self,
        bucket: T,
    ) -> Result<ObjectStore, ObjectStoreError> {
        let bucket = checked_bucket(bucket.as_ref())?;
        let stream = self
            .get_stream(stream_name(bucket))
            .map_err(|e| ObjectStoreError::with_source(ObjectStoreErrorKind::GetStore, e))?;
        Ok(ObjectStore::new(bucket.to_owned(), stream))
    }

    /// Deletes the bucket `bucket` with all its objects.
    pub fn delete_object_store<T: AsRef<str>>(&self, bucket: T) -> Result<(), DeleteObjectStore> {
        let bucket = checked_bucket(bucket.as_ref())?;
        self.delete_stream(stream_name(bucket))
            .map_err(|e| ObjectStoreError::with_source(ObjectStoreErrorKind::GetStore, e))?;
        Ok(())
    }

    /// The names of the account's buckets, fetched page by page as they are read.
    pub fn object_store_names(&self) -> ObjectStoreNames {
        ObjectStoreNames {
            names: self.stream_names_for_subject("$O.*.C.>"),
        }
    }
}

/// The names of the account's buckets; from [`Context::object_store_names`].
#[derive(Debug)]
pub struct ObjectStoreNames {
    names: StreamNames,
}

impl Iterator for ObjectStoreNames {
    type Item = Result<String, StreamsError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.names.next()? {
                Ok(name) => match name.strip_prefix("OBJ_") {
                    Some(bucket) => return Some(Ok(bucket.to_owned())),
                    None => continue,
                },
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

/// A bucket of objects: put, get, list, watch, link and delete them. Cheap to clone.
///
/// Every call waits at most the context's timeout for each reply (a put: for each chunk's
/// ack; a read: for each chunk), except [`Watch`], which waits for the next change as long
/// as it takes.
///
/// ```no_run
/// # fn run(bucket: rnats_jetstream::blocking::ObjectStore) -> Result<(), rnats_core::Error> {
/// bucket.put_bytes("motd.txt", "hello".into())?;
/// assert_eq!(bucket.get_bytes("motd.txt")?, "hello");
/// for info in bucket.list()? {
///     let info = info?;
///     println!("{}: {} bytes", info.name, info.size);
/// }
/// bucket.delete("motd.txt")?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ObjectStore {
    name: String,
    stream: Stream,
}

impl ObjectStore {
    fn new(name: String, stream: Stream) -> ObjectStore {
        ObjectStore { name, stream }
    }

    /// The bucket's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The stream behind the bucket (`OBJ_<bucket>`), with its info as last fetched.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The metadata of the object `object_name` (deleted ones included, with `deleted`
    /// set); a missing one fails with [`InfoErrorKind::NotFound`]. Its
    /// [`modified`](ObjectInfo::modified) is when the server stored this metadata.
    pub fn info<T: AsRef<str>>(&self, object_name: T) -> Result<ObjectInfo, InfoError> {
        let object_name = object_name.as_ref();
        if !is_valid_object_name(object_name) {
            return Err(InfoError::new(InfoErrorKind::InvalidName));
        }
        let subject = self.meta_subject(object_name);
        let message = if self.stream.info.config.allow_direct {
            self.stream
                .direct_get_last_for_subject(&subject)
                .map_err(direct_info_error)?
        } else {
            self.stream
                .get_last_raw_message_by_subject(&subject)
                .map_err(leader_info_error)?
        };
        ObjectInfo::from_stored(&message.payload, message.time)
            .map_err(|error| InfoError::with_source(InfoErrorKind::Other, error))
    }

    /// Stores what `data` yields, to its end, as the object `meta` names (a `&str` name,
    /// or [`ObjectMetadata`] with a description, a chunk size, ...), replacing any object
    /// of that name; the chunks of the replaced one are purged once the new metadata is
    /// in. Chunk acks are pipelined, a few MiB of chunks in flight at most, so memory
    /// stays bounded however large the object is.
    ///
    /// ```no_run
    /// # fn run(bucket: rnats_jetstream::blocking::ObjectStore) -> Result<(), rnats_core::Error> {
    /// let mut data: &[u8] = b"hello";
    /// let info = bucket.put("greeting", &mut data)?;
    /// assert_eq!((info.size, info.chunks), (5, 1));
    /// # Ok(()) }
    /// ```
    pub fn put<T>(&self, meta: T, data: &mut impl Read) -> Result<ObjectInfo, PutError>
    where
        ObjectMetadata: From<T>,
    {
        let meta = ObjectMetadata::from(meta);
        if !is_valid_object_name(&meta.name) {
            return Err(PutError::new(PutErrorKind::InvalidName));
        }
        let chunk_size = put_chunk_size(&meta, self.context().client.max_payload());
        let replaced = replaced_version(self.info(&meta.name))?;

        let nuid = rnats_core::id::next();
        let sent = match self.send_chunks(&nuid, chunk_size, data) {
            Ok(sent) => sent,
            Err(error) => {
                // Leave no orphaned chunks behind; the put's own error is what matters.
                let _ = self.purge_chunks(&nuid);
                return Err(error);
            }
        };
        let info = sent.into_info(meta, self.name.clone(), nuid, chunk_size);
        if let Err(error) = self.publish_meta(&info) {
            let _ = self.purge_chunks(&info.nuid);
            return Err(PutError::with_source(PutErrorKind::PublishMetadata, error));
        }
        if let Some(nuid) = replaced_chunks(replaced) {
            self.purge_chunks(&nuid)
                .map_err(|error| PutError::with_source(PutErrorKind::PurgeOldChunks, error))?;
        }
        Ok(info)
    }

    /// Stores `data` as the object `meta` names.
    pub fn put_bytes<T>(&self, meta: T, data: Bytes) -> Result<ObjectInfo, PutError>
    where
        ObjectMetadata: From<T>,
    {
        let mut reader: &[u8] = &data;
        self.put(meta, &mut reader)
    }

    /// Stores the file at `path` as the object `meta` names, streaming it in chunks. A
    /// file that cannot be opened is [`PutErrorKind::ReadChunks`].
    pub fn put_file<T>(&self, meta: T, path: impl AsRef<Path>) -> Result<ObjectInfo, PutError>
    where
        ObjectMetadata: From<T>,
    {
        let mut file = std::fs::File::open(path.as_ref())
            .map_err(|e| PutError::with_source(PutErrorKind::ReadChunks, e))?;
        self.put(meta, &mut file)
    }

    /// Deletes the object `object_name`: its metadata becomes a deletion marker
    /// (`deleted: true`, no size, chunks or digest) and its chunks are purged.
    pub fn delete<T: AsRef<str>>(&self, object_name: T) -> Result<(), DeleteError> {
        let info = deletion_marker(self.info(object_name).map_err(delete_error)?);
        self.publish_meta(&info)
            .map_err(|error| DeleteError::with_source(DeleteErrorKind::Metadata, error))?;
        self.purge_chunks(&info.nuid)
            .map_err(|error| DeleteError::with_source(DeleteErrorKind::Chunks, error))?;
        Ok(())
    }

    /// Replaces the name, description, metadata and headers of the object `object`; a new
    /// name renames it (and fails if a live object has that name). The data stays where
    /// it is.
    pub fn update_metadata<A: AsRef<str>>(
        &self,
        object: A,
        metadata: UpdateMetadata,
    ) -> Result<ObjectInfo, UpdateMetadataError> {
        let info = self.info(object.as_ref()).map_err(update_metadata_error)?;
        let renamed = check_update(&info, &metadata)?;
        if renamed {
            may_rename_over(self.info(&metadata.name))?;
        }
        let old_name = info.name.clone();
        let info = updated_info(info, metadata);
        self.publish_meta(&info).map_err(|error| {
            UpdateMetadataError::with_source(UpdateMetadataErrorKind::PublishMetadata, error)
        })?;
        // The new name is stored first, so a failure here leaves the object reachable.
        if renamed {
            self.purge_subject(self.meta_subject(&old_name))
                .map_err(|error| {
                    UpdateMetadataError::with_source(UpdateMetadataErrorKind::Purge, error)
                })?;
        }
        Ok(info)
    }

    /// Adds `name`, a link to the object `object` (an [`ObjectInfo`] or an [`Object`], from
    /// this bucket or another), which [`ObjectStore::get`] follows. An existing link of
    /// that name is replaced; an existing object is not.
    pub fn add_link<T, O>(&self, name: T, object: O) -> Result<ObjectInfo, AddLinkError>
    where
        T: ToString,
        O: AsObjectInfo,
    {
        let name = name.to_string();
        let object = object.as_info();
        let link = object_link(&name, object)?;
        self.store_link(name, link)
    }

    /// Adds `name`, a link to the whole bucket `bucket`. An existing link of that name is
    /// replaced; an existing object is not.
    pub fn add_bucket_link<T: ToString, U: ToString>(
        &self,
        name: T,
        bucket: U,
    ) -> Result<ObjectInfo, AddLinkError> {
        let name = name.to_string();
        let link = bucket_link(&name, bucket.to_string())?;
        self.store_link(name, link)
    }

    /// Seals the bucket: from now on it refuses puts, deletes and purges, and it cannot be
    /// unsealed.
    pub fn seal(&mut self) -> Result<(), SealError> {
        let mut config = self
            .stream
            .info()
            .map_err(|error| SealError::with_source(SealErrorKind::Info, error))?
            .config
            .clone();
        config.sealed = true;
        let info = self.context().update_stream(&config).map_err(seal_error)?;
        self.stream.info = info;
        Ok(())
    }

    /// The bucket's configuration and usage, fetched from the server.
    pub fn status(&self) -> Result<ObjectStoreStatus, StatusError> {
        let info = self.stream.get_info()?;
        Ok(ObjectStoreStatus::new(self.name.clone(), info))
    }

    fn context(&self) -> &Context {
        &self.stream.context
    }

    /// `$O.<bucket>.M.<base64url(name)>`.
    fn meta_subject(&self, object_name: &str) -> String {
        format!("$O.{}.M.{}", self.name, encode_object_name(object_name))
    }

    /// `$O.<bucket>.C.<nuid>`.
    fn chunk_subject(&self, nuid: &str) -> String {
        format!("$O.{}.C.{}", self.name, nuid)
    }

    /// Reads `data` to its end in chunks of `chunk_size` and publishes them under `nuid`,
    /// with at most a [`put_window`] of them unacked. The acks come back to an inbox of
    /// the put's own, in any order; counting them is enough, as each chunk gets one.
    fn send_chunks(
        &self,
        nuid: &str,
        chunk_size: usize,
        data: &mut impl Read,
    ) -> Result<Sent, PutError> {
        let client = &self.context().client;
        let inbox = client.new_inbox();
        let acks = client
            .subscribe(inbox.as_str())
            .map_err(|e| PutError::with_source(PutErrorKind::PublishChunks, e))?;
        let mut upload = Upload {
            acks,
            owed: 0,
            timeout: self.context().ack_timeout(),
        };
        let subject = self.chunk_subject(nuid);
        let window = put_window(chunk_size);
        let mut sent = Sent::default();
        let result = (|| {
            while let Some(chunk) = next_chunk(&mut sent, data, chunk_size)? {
                if upload.owed == window {
                    upload.wait_ack()?;
                }
                client
                    .publish_with_reply(subject.as_str(), inbox.as_str(), chunk)
                    .map_err(|e| PutError::with_source(PutErrorKind::PublishChunks, e))?;
                upload.owed += 1;
            }
            while upload.owed > 0 {
                upload.wait_ack()?;
            }
            Ok(())
        })();
        if let Err(error) = result {
            // Chunks still in flight must land (or fail) before the caller purges: a purge
            // that overtook them would leave them behind. Each wait is bounded.
            while upload.owed > 0 {
                let owed = upload.owed;
                let _ = upload.wait_ack();
                if upload.owed == owed {
                    break;
                }
            }
            return Err(error);
        }
        Ok(sent)
    }

    /// Stores `info` on its meta subject, replacing the metadata there, and waits for the
    /// ack.
    fn publish_meta(&self, info: &ObjectInfo) -> Result<(), rnats_core::Error> {
        let payload = serde_json::to_vec(info)?;
        let mut headers = HeaderMap::new();
        headers.insert(NATS_ROLLUP, ROLLUP_SUBJECT);
        self.context().publish_with_headers(
            self.meta_subject(&info.name),
            headers,
            Bytes::from(payload),
        )?;
        Ok(())
    }

    /// Purges the chunks of the object version `nuid`.
    fn purge_chunks(&self, nuid: &str) -> Result<(), PurgeError> {
        self.purge_subject(self.chunk_subject(nuid))
    }

    fn purge_subject(&self, subject: String) -> Result<(), PurgeError> {
        self.stream
            .purge_with(PurgeRequest {
                filter: Some(subject),
                ..Default::default()
            })
            .map(drop)
    }

    /// Stores the link `name` unless a live object (not a link) has that name.
    fn store_link(&self, name: String, link: ObjectLink) -> Result<ObjectInfo, AddLinkError> {
        may_link_over(self.info(&name))?;
        let info = link_info(name, self.name.clone(), link);
        self.publish_meta(&info)
            .map_err(|error| AddLinkError::with_source(AddLinkErrorKind::PublishMetadata, error))?;
        Ok(info)
    }
}

/// The acks a put still waits for, on the put's own inbox.
struct Upload {
    acks: Subscriber,
    /// Chunks published whose ack has not come.
    owed: usize,
    timeout: Duration,
}

impl Upload {
    /// Waits up to the timeout for one chunk's ack.
    fn wait_ack(&mut self) -> Result<(), PutError> {
        let reply = match self.acks.next_timeout(self.timeout) {
            Ok(Some(reply)) => reply,
            Ok(None) => {
                return Err(PutError::with_source(
                    PutErrorKind::PublishChunks,
                    "the client closed",
                ));
            }
            Err(timed_out) => return Err(PutError::with_source(PutErrorKind::TimedOut, timed_out)),
        };
        // Counted before it is read: a refused chunk is answered all the same.
        self.owed -= 1;
        crate::publish::finish(Ok(reply))
            .map_err(|e| PutError::with_source(PutErrorKind::PublishChunks, e))?;
        Ok(())
    }
}

/// Reads the next chunk of `data`, `chunk_size` bytes unless `data` ends first, and counts
/// it into `sent`; `None` at the end of `data`.
fn next_chunk(
    sent: &mut Sent,
    data: &mut impl Read,
    chunk_size: usize,
) -> Result<Option<Bytes>, PutError> {
    let mut chunk = Vec::with_capacity(chunk_size);
    // `read_to_end` of a `take` fills the chunk from readers that return a little at a time
    // (sockets, pipes), and retries interrupted reads.
    data.by_ref()
        .take(chunk_size as u64)
        .read_to_end(&mut chunk)
        .map_err(|error| PutError::with_source(PutErrorKind::ReadChunks, error))?;
    if chunk.is_empty() {
        return Ok(None);
    }
    sent.count(&chunk);
    Ok(Some(Bytes::from(chunk)))
}
