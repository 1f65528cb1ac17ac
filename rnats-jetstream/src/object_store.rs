//! The Object Store (ADR-20): buckets of named objects of any size, kept in a JetStream
//! stream `OBJ_<bucket>`. An object's data is cut into chunks (128 KiB by default) published
//! to `$O.<bucket>.C.<nuid>`, a fresh NUID per version; its metadata, an [`ObjectInfo`] with
//! the SHA-256 digest of the data, goes to `$O.<bucket>.M.<base64url(name)>` with a rollup
//! header, so the stream keeps only the latest metadata of each name. Buckets interchange
//! with every other NATS client's Object Store.
//!
//! Memory stays bounded however large an object is: [`ObjectStore::put`] keeps a small window
//! of chunks in flight (their acks pipelined, or as one fast-ingest batch in a bucket made
//! with [`Config::fast_ingest`]), and an [`Object`] being read pulls a few chunks at a time.
//! [`ObjectStore::get_range`] reads part of an object (an HTTP range request, say),
//! receiving only the chunks that hold it.
//!
//! ```no_run
//! # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
//! use rnats_jetstream::object_store::Config;
//! use tokio::io::AsyncReadExt;
//!
//! let bucket = jetstream
//!     .create_object_store(Config {
//!         bucket: "files".to_string(),
//!         ..Default::default()
//!     })
//!     .await?;
//! let mut file = tokio::fs::File::open("report.pdf").await?;
//! let info = bucket.put("report.pdf", &mut file).await?;
//! println!("stored {} bytes in {} chunks", info.size, info.chunks);
//!
//! let mut object = bucket.get("report.pdf").await?;
//! let mut data = Vec::new();
//! object.read_to_end(&mut data).await?; // fails if the digest does not match
//! # Ok(()) }
//! ```

pub(crate) mod bucket;
mod chunks;
mod convenience;
pub(crate) mod errors;
pub(crate) mod info;
pub(crate) mod link;
pub(crate) mod metadata;
pub(crate) mod object;
mod progress;
pub(crate) mod put;
pub(crate) mod range;
pub(crate) mod watch;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use bytes::Bytes;
use rnats_core::HeaderMap;
use rnats_core::header::NATS_ROLLUP;

use self::errors::{delete_error, direct_info_error, leader_info_error, seal_error};
use crate::context::Context;
use crate::stream::{Info as StreamInfo, Stream};

pub use self::bucket::{Config, ObjectStoreNames, ObjectStoreStatus, ObjectStores};
pub use self::chunks::Chunks;
pub use self::errors::{
    AddLinkError, AddLinkErrorKind, CreateObjectStoreError, CreateObjectStoreErrorKind,
    DeleteError, DeleteErrorKind, DeleteObjectStore, DeleteObjectStoreKind, GetError, GetErrorKind,
    InfoError, InfoErrorKind, ListError, ListErrorKind, ListerError, ListerErrorKind,
    ObjectStoreError, ObjectStoreErrorKind, PutError, PutErrorKind, ReadError, ReadErrorKind,
    SealError, SealErrorKind, StatusError, UpdateMetadataError, UpdateMetadataErrorKind,
    UpdateObjectStoreError, UpdateObjectStoreErrorKind, WatchError, WatchErrorKind, WatcherError,
    WatcherErrorKind, server_error,
};
pub use self::info::{
    AsObjectInfo, ObjectInfo, ObjectLink, ObjectMetadata, ObjectOptions, UpdateMetadata,
};
pub use self::object::Object;
pub use self::progress::Progress;
pub use self::range::RangeNotSatisfiable;
pub use self::watch::{List, Watch, WatchOptions};

/// The chunk size when the metadata names none (ADR-20).
pub(crate) const DEFAULT_CHUNK_SIZE: usize = 128 * 1024;

/// The rollup of the meta subject: each new metadata replaces the old.
pub(crate) const ROLLUP_SUBJECT: &str = "sub";

/// A bucket of objects: a handle to put, get, list, watch, link and delete them. Cheap to
/// clone.
#[derive(Debug, Clone)]
pub struct ObjectStore {
    pub(crate) name: String,
    pub(crate) stream: Stream<StreamInfo>,
}

impl ObjectStore {
    /// The bucket's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The metadata of the object `object_name` (deleted ones included, with `deleted` set).
    /// Its [`modified`](ObjectInfo::modified) is when the server stored this metadata.
    pub async fn info<T: AsRef<str>>(&self, object_name: T) -> Result<ObjectInfo, InfoError> {
        let object_name = object_name.as_ref();
        if !is_valid_object_name(object_name) {
            return Err(InfoError::new(InfoErrorKind::InvalidName));
        }
        let subject = self.meta_subject(object_name);
        let message = if self.stream.info.config.allow_direct {
            self.stream
                .direct_get_last_for_subject(subject)
                .await
                .map_err(direct_info_error)?
        } else {
            self.stream
                .get_last_raw_message_by_subject(&subject)
                .await
                .map_err(leader_info_error)?
        };
        ObjectInfo::from_stored(&message.payload, message.time)
            .map_err(|error| InfoError::with_source(InfoErrorKind::Other, error))
    }

    /// Deletes the object `object_name`: its metadata becomes a deletion marker and its
    /// chunks are purged.
    pub async fn delete<T: AsRef<str>>(&self, object_name: T) -> Result<(), DeleteError> {
        let info = deletion_marker(self.info(object_name).await.map_err(delete_error)?);
        self.publish_meta(&info)
            .await
            .map_err(|error| DeleteError::with_source(DeleteErrorKind::Metadata, error))?;
        self.purge_chunks(&info.nuid)
            .await
            .map_err(|error| DeleteError::with_source(DeleteErrorKind::Chunks, error))?;
        Ok(())
    }

    /// Seals the bucket: from now on it refuses puts, deletes and purges, and it cannot be
    /// unsealed.
    pub async fn seal(&mut self) -> Result<(), SealError> {
        let info = self
            .stream
            .info()
            .await
            .map_err(|error| SealError::with_source(SealErrorKind::Info, error))?;
        let mut config = info.config.clone();
        config.sealed = true;
        let info = self
            .stream
            .context
            .update_stream(&config)
            .await
            .map_err(seal_error)?;
        self.stream.info = info;
        Ok(())
    }

    /// The bucket's configuration and usage (an rnats addition, as nats.go's `Status`).
    pub async fn status(&self) -> Result<ObjectStoreStatus, StatusError> {
        let info = self.stream.get_info().await?;
        Ok(ObjectStoreStatus::new(self.name.clone(), info))
    }

    /// `$O.<bucket>.M.<base64url(name)>`.
    fn meta_subject(&self, object_name: &str) -> String {
        format!("$O.{}.M.{}", self.name, encode_object_name(object_name))
    }

    /// `$O.<bucket>.C.<nuid>`.
    fn chunk_subject(&self, nuid: &str) -> String {
        format!("$O.{}.C.{}", self.name, nuid)
    }

    /// Stores `info` on its meta subject, replacing the metadata there, and waits for the ack.
    async fn publish_meta(&self, info: &ObjectInfo) -> Result<(), rnats_core::Error> {
        let payload = serde_json::to_vec(info)?;
        let mut headers = HeaderMap::new();
        headers.insert(NATS_ROLLUP, ROLLUP_SUBJECT);
        self.context()
            .publish_with_headers(self.meta_subject(&info.name), headers, Bytes::from(payload))
            .await?
            .await?;
        Ok(())
    }

    /// Purges the chunks of the object version `nuid`.
    async fn purge_chunks(&self, nuid: &str) -> Result<(), crate::stream::PurgeError> {
        self.stream
            .purge()
            .filter(self.chunk_subject(nuid))
            .await
            .map(drop)
    }

    fn context(&self) -> &Context {
        &self.stream.context
    }
}

/// The deletion marker that replaces the metadata `info`: deleted, with no size, chunks or
/// digest, as a new version. Its NUID stays, to find the chunks to purge.
pub(crate) fn deletion_marker(info: ObjectInfo) -> ObjectInfo {
    ObjectInfo {
        deleted: true,
        size: 0,
        chunks: 0,
        digest: None,
        modified: Some(rnats_core::datetime::now()),
        ..info
    }
}

/// Whether `name` may name a bucket: letters, digits, `-` and `_` (ADR-20).
pub(crate) fn is_valid_bucket_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `name` may name an object: any non-empty text, as it travels base64-encoded.
pub(crate) fn is_valid_object_name(name: &str) -> bool {
    !name.is_empty()
}

/// An object name as its meta subject's last token: base64url with padding, as nats.go.
pub(crate) fn encode_object_name(name: &str) -> String {
    URL_SAFE.encode(name)
}

/// `SHA-256=<base64url>`, the digest form of ADR-20.
pub(crate) fn format_digest(hash: &[u8]) -> String {
    format!("SHA-256={}", URL_SAFE.encode(hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_names_are_letters_digits_dashes_and_underscores() {
        assert!(is_valid_bucket_name("my-files_2"));
        for bad in ["", "a.b", "a b", "a*", "a>", "ä"] {
            assert!(!is_valid_bucket_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn object_names_are_encoded_as_nats_go_encodes_them() {
        assert_eq!(encode_object_name("a/b.txt"), "YS9iLnR4dA==");
        assert_eq!(encode_object_name("??>"), "Pz8-");
    }

    #[test]
    fn a_deletion_marker_keeps_the_name_and_nuid_and_drops_the_data() {
        let mut sent = put::Sent::default();
        sent.count(b"data");
        let info = sent.into_info(ObjectMetadata::from("a"), "b".into(), "n".into(), 4);
        let marker = deletion_marker(info.clone());
        assert!(marker.deleted);
        assert_eq!((marker.size, marker.chunks, marker.digest), (0, 0, None));
        assert_eq!(
            (marker.name, marker.bucket, marker.nuid),
            (info.name, info.bucket, info.nuid)
        );
    }

    #[test]
    fn the_digest_of_nothing_is_the_reference_form() {
        use sha2::Digest;
        let hash = sha2::Sha256::digest(b"");
        assert_eq!(
            format_digest(&hash),
            "SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU="
        );
    }
}
