//! The Object Store's errors: one `Error<Kind>` per operation, with async-nats' kinds, and
//! [`server_error`] to reach the JetStream error behind any of them.

use std::fmt;

use rnats_core::error::Error;

use crate::consumer::{StreamError, StreamErrorKind};
use crate::consumer_errors::{ConsumerError, ConsumerErrorKind};
use crate::stream::{
    DirectGetError, DirectGetErrorKind, LastRawMessageError, LastRawMessageErrorKind,
};
use crate::stream_errors::{CreateStreamErrorKind, UpdateStreamError};

/// Declares a `Copy` kind enum with a doc line and a message per variant.
macro_rules! kinds {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self {
                    $(Self::$variant => $text,)*
                })
            }
        }
    };
}

kinds! {
    /// The kinds of [`InfoError`].
    InfoErrorKind {
        /// The object name is not valid.
        InvalidName => "invalid object name",
        /// No object of that name (or the bucket is gone).
        NotFound => "object not found",
        /// Anything else; the source says what.
        Other => "getting object info failed",
        /// No answer in time.
        TimedOut => "timed out",
    }
}

/// Why reading an object's info failed.
pub type InfoError = Error<InfoErrorKind>;

kinds! {
    /// The kinds of [`GetError`].
    GetErrorKind {
        /// The object name is not valid.
        InvalidName => "invalid object name",
        /// The consumer that reads the chunks could not be created.
        ConsumerCreate => "creating the consumer that reads the object failed",
        /// No object of that name, or it was deleted.
        NotFound => "object not found",
        /// The name is a link to a whole bucket, which has no data to read.
        BucketLink => "the object is a link to a bucket",
        /// Anything else; the source says what.
        Other => "getting the object failed",
        /// No answer in time.
        TimedOut => "timed out",
    }
}

/// Why getting an object failed.
pub type GetError = Error<GetErrorKind>;

kinds! {
    /// The kinds of [`DeleteError`].
    DeleteErrorKind {
        /// No answer in time.
        TimedOut => "timed out",
        /// No object of that name.
        NotFound => "object not found",
        /// The deletion marker could not be published.
        Metadata => "publishing the deletion marker failed",
        /// The object name is not valid.
        InvalidName => "invalid object name",
        /// The chunks could not be purged.
        Chunks => "purging the chunks failed",
        /// Anything else; the source says what.
        Other => "deleting the object failed",
    }
}

/// Why deleting an object failed.
pub type DeleteError = Error<DeleteErrorKind>;

kinds! {
    /// The kinds of [`PutError`].
    PutErrorKind {
        /// The object name is not valid (empty).
        InvalidName => "invalid object name",
        /// Reading the data to store failed.
        ReadChunks => "reading the data failed",
        /// A chunk could not be stored (a sealed or full bucket, a lost connection, ...).
        PublishChunks => "publishing a chunk failed",
        /// The object's metadata could not be stored.
        PublishMetadata => "publishing the metadata failed",
        /// The chunks of the object this one replaced could not be purged.
        PurgeOldChunks => "purging the replaced object's chunks failed",
        /// No answer in time.
        TimedOut => "timed out",
        /// Anything else; the source says what.
        Other => "putting the object failed",
    }
}

/// Why putting an object failed.
pub type PutError = Error<PutErrorKind>;

kinds! {
    /// The kinds of [`AddLinkError`].
    AddLinkErrorKind {
        /// The link's name is empty.
        EmptyName => "the link name is empty",
        /// The object linked to has no name.
        ObjectRequired => "a link needs an object to point to",
        /// The object linked to is deleted.
        Deleted => "cannot link to a deleted object",
        /// The object linked to is itself a link.
        LinkToLink => "cannot link to a link",
        /// The link could not be stored.
        PublishMetadata => "publishing the link failed",
        /// An object (not a link) already has the link's name.
        AlreadyExists => "an object of that name exists",
        /// Anything else; the source says what.
        Other => "adding the link failed",
    }
}

/// Why adding a link failed.
pub type AddLinkError = Error<AddLinkErrorKind>;

kinds! {
    /// The kinds of [`WatchError`] (and [`ListError`]).
    WatchErrorKind {
        /// No answer in time.
        TimedOut => "timed out",
        /// The consumer behind the watch could not be created.
        ConsumerCreate => "creating the watch consumer failed",
        /// Anything else; the source says what.
        Other => "watching failed",
    }
}

/// Why a watch could not start.
pub type WatchError = Error<WatchErrorKind>;
/// Why a listing could not start.
pub type ListError = WatchError;
/// The kinds of [`ListError`].
pub type ListErrorKind = WatchErrorKind;

kinds! {
    /// The kinds of [`WatcherError`] (and [`ListerError`]).
    WatcherErrorKind {
        /// The consumer delivering the changes failed.
        ConsumerError => "the watch consumer failed",
        /// Anything else (metadata that does not decode, ...).
        Other => "watch failed",
    }
}

/// Why one item of a watch or listing failed.
pub type WatcherError = Error<WatcherErrorKind>;
/// Why one item of a listing failed.
pub type ListerError = WatcherError;
/// The kinds of [`ListerError`].
pub type ListerErrorKind = WatcherErrorKind;

kinds! {
    /// The kinds of [`SealError`].
    SealErrorKind {
        /// No answer in time.
        TimedOut => "timed out",
        /// Anything else; the source says what.
        Other => "sealing failed",
        /// The bucket's stream info could not be fetched.
        Info => "fetching the bucket's stream info failed",
        /// The server refused to seal the stream.
        Update => "sealing the bucket's stream failed",
    }
}

/// Why sealing a bucket failed.
pub type SealError = Error<SealErrorKind>;

kinds! {
    /// The kinds of [`UpdateMetadataError`].
    UpdateMetadataErrorKind {
        /// The object name (old or new) is not valid.
        InvalidName => "invalid object name",
        /// No object of that name.
        NotFound => "object not found",
        /// No answer in time.
        TimedOut => "timed out",
        /// Anything else; the source says what.
        Other => "updating the metadata failed",
        /// The new metadata could not be stored.
        PublishMetadata => "publishing the metadata failed",
        /// Another object already has the new name.
        NameAlreadyInUse => "an object with the new name exists",
        /// The metadata under the old name could not be purged.
        Purge => "purging the metadata under the old name failed",
    }
}

/// Why updating an object's metadata failed.
pub type UpdateMetadataError = Error<UpdateMetadataErrorKind>;

kinds! {
    /// The kinds of [`ReadError`], the error inside the `io::Error` an [`Object`] read
    /// returns (an rnats addition; async-nats has only the `io::Error`).
    ///
    /// [`Object`]: super::Object
    ReadErrorKind {
        /// The data's SHA-256 is not the digest in the object's metadata.
        DigestMismatch => "the object's digest does not match its data",
        /// The data's size or chunk count is not what the metadata says.
        SizeMismatch => "the object's size does not match its metadata",
        /// Chunks the metadata counts are not in the bucket.
        ChunksMissing => "chunks of the object are missing",
        /// The consumer reading the chunks could not be created.
        Consumer => "creating the consumer that reads the object failed",
        /// Delivering the chunks failed.
        Delivery => "receiving the object's chunks failed",
        /// The server did not answer the request that starts the read in time (or, for a
        /// range, the get of one of its chunks); the read fails with
        /// [`std::io::ErrorKind::TimedOut`].
        TimedOut => "timed out starting to read the object",
    }
}

/// Why reading an object's data failed; find it with
/// `io_error.get_ref().and_then(|e| e.downcast_ref::<ReadError>())`.
pub type ReadError = Error<ReadErrorKind>;

kinds! {
    /// The kinds of [`CreateObjectStoreError`] (async-nats shares them with Key-Value's
    /// bucket creation).
    CreateObjectStoreErrorKind {
        /// The bucket name is not valid (letters, digits, `-` and `_` only).
        InvalidStoreName => "invalid Object Store bucket name",
        /// Unused by the Object Store (a Key-Value history limit).
        TooLongHistory => "too long history",
        /// The server refused; the source is the JetStream error.
        JetStream => "JetStream error",
        /// The bucket's stream could not be created; the source says why.
        BucketCreate => "creating the bucket failed",
        /// No answer in time.
        TimedOut => "timed out",
        /// Unused by the Object Store (Key-Value limit markers).
        LimitMarkersNotSupported => "limit markers not supported",
    }
}

/// Why creating a bucket failed.
pub type CreateObjectStoreError = Error<CreateObjectStoreErrorKind>;

kinds! {
    /// The kinds of [`ObjectStoreError`].
    ObjectStoreErrorKind {
        /// The bucket name is not valid.
        InvalidBucketName => "invalid Object Store bucket name",
        /// The bucket's stream could not be fetched (or deleted); the source says why.
        GetStore => "getting the Object Store bucket failed",
    }
}

/// Why getting (or deleting) a bucket failed.
pub type ObjectStoreError = Error<ObjectStoreErrorKind>;
/// Why deleting a bucket failed.
pub type DeleteObjectStore = ObjectStoreError;
/// The kinds of [`DeleteObjectStore`].
pub type DeleteObjectStoreKind = ObjectStoreErrorKind;

kinds! {
    /// The kinds of [`UpdateObjectStoreError`] (an rnats addition, as nats.go's
    /// `UpdateObjectStore`).
    UpdateObjectStoreErrorKind {
        /// The bucket name is not valid.
        InvalidStoreName => "invalid Object Store bucket name",
        /// No bucket of that name.
        NotFound => "Object Store bucket not found",
        /// The server refused the new configuration; the source says why.
        BucketUpdate => "updating the bucket failed",
        /// No answer in time.
        TimedOut => "timed out",
    }
}

/// Why updating a bucket's configuration failed.
pub type UpdateObjectStoreError = Error<UpdateObjectStoreErrorKind>;

/// Why reading a bucket's status failed.
pub type StatusError = crate::stream::InfoError;

/// The JetStream API error somewhere in `error`'s chain of causes, if the server refused
/// something: `server_error(&err).map(|e| e.error_code())` gives its [`ErrorCode`].
///
/// [`ErrorCode`]: crate::ErrorCode
pub fn server_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a crate::Error> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(found) = error.downcast_ref::<crate::Error>() {
            return Some(found);
        }
        next = error.source();
    }
    None
}

/// A failed direct get of an object's metadata as an info failure.
pub(crate) fn direct_info_error(error: DirectGetError) -> InfoError {
    match error.kind() {
        DirectGetErrorKind::NotFound => InfoError::new(InfoErrorKind::NotFound),
        DirectGetErrorKind::TimedOut => InfoError::with_source(InfoErrorKind::TimedOut, error),
        _ => InfoError::with_source(InfoErrorKind::Other, error),
    }
}

/// A failed get of an object's metadata from the stream's leader as an info failure.
pub(crate) fn leader_info_error(error: LastRawMessageError) -> InfoError {
    match error.kind() {
        LastRawMessageErrorKind::NoMessageFound => InfoError::new(InfoErrorKind::NotFound),
        _ => InfoError::with_source(InfoErrorKind::Other, error),
    }
}

/// An info failure as a get failure.
pub(crate) fn get_error(error: InfoError) -> GetError {
    match error.kind() {
        InfoErrorKind::InvalidName => GetError::new(GetErrorKind::InvalidName),
        InfoErrorKind::NotFound => GetError::new(GetErrorKind::NotFound),
        InfoErrorKind::TimedOut => GetError::with_source(GetErrorKind::TimedOut, error),
        InfoErrorKind::Other => GetError::with_source(GetErrorKind::Other, error),
    }
}

/// An info failure as a delete failure.
pub(crate) fn delete_error(error: InfoError) -> DeleteError {
    match error.kind() {
        InfoErrorKind::InvalidName => DeleteError::new(DeleteErrorKind::InvalidName),
        InfoErrorKind::NotFound => DeleteError::new(DeleteErrorKind::NotFound),
        InfoErrorKind::TimedOut => DeleteError::with_source(DeleteErrorKind::TimedOut, error),
        InfoErrorKind::Other => DeleteError::with_source(DeleteErrorKind::Other, error),
    }
}

/// An info failure as a metadata update failure.
pub(crate) fn update_metadata_error(error: InfoError) -> UpdateMetadataError {
    let kind = match error.kind() {
        InfoErrorKind::InvalidName => UpdateMetadataErrorKind::InvalidName,
        InfoErrorKind::NotFound => UpdateMetadataErrorKind::NotFound,
        InfoErrorKind::TimedOut => UpdateMetadataErrorKind::TimedOut,
        InfoErrorKind::Other => UpdateMetadataErrorKind::Other,
    };
    UpdateMetadataError::with_source(kind, error)
}

/// A failed consumer creation as a watch (or list) failure.
pub(crate) fn watch_consumer_error(error: ConsumerError) -> WatchError {
    let kind = match error.kind() {
        ConsumerErrorKind::TimedOut => WatchErrorKind::TimedOut,
        _ => WatchErrorKind::ConsumerCreate,
    };
    WatchError::with_source(kind, error)
}

/// A failed subscription as a watch (or list) failure.
pub(super) fn watch_stream_error(error: StreamError) -> WatchError {
    let kind = match error.kind() {
        StreamErrorKind::TimedOut => WatchErrorKind::TimedOut,
        StreamErrorKind::Other => WatchErrorKind::Other,
    };
    WatchError::with_source(kind, error)
}

/// A failed stream update as a seal failure.
pub(crate) fn seal_error(error: UpdateStreamError) -> SealError {
    let kind = match error.kind() {
        CreateStreamErrorKind::TimedOut => SealErrorKind::TimedOut,
        _ => SealErrorKind::Update,
    };
    SealError::with_source(kind, error)
}

/// A failed delivery as a watch (or list) item failure.
pub(crate) fn watcher_error(error: crate::consumer::push::OrderedError) -> WatcherError {
    WatcherError::with_source(WatcherErrorKind::ConsumerError, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_meta_message_is_a_missing_object_either_way() {
        let direct = direct_info_error(DirectGetError::new(DirectGetErrorKind::NotFound));
        assert_eq!(direct.kind(), InfoErrorKind::NotFound);
        let leader = LastRawMessageError::new(LastRawMessageErrorKind::NoMessageFound);
        assert_eq!(leader_info_error(leader).kind(), InfoErrorKind::NotFound);
    }

    #[test]
    fn a_direct_get_timeout_stays_a_timeout_and_the_rest_is_other() {
        let timed_out = direct_info_error(DirectGetError::new(DirectGetErrorKind::TimedOut));
        assert_eq!(timed_out.kind(), InfoErrorKind::TimedOut);
        let leader = LastRawMessageError::new(LastRawMessageErrorKind::Other);
        assert_eq!(leader_info_error(leader).kind(), InfoErrorKind::Other);
    }
}
