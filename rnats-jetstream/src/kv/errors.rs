//! The error types of the Key-Value store, with async-nats' kinds. A server refusal stays in
//! the source chain; [`ServerRefusal::jetstream_error`] finds it, with its `ErrorCode`.

use std::fmt;

use rnats_core::error::Error;

use crate::consumer::push::OrderedError;
use crate::consumer::{StreamError, StreamErrorKind};
use crate::context::{PublishError, PublishErrorKind};
use crate::errors::ErrorCode;
use crate::stream::{ConsumerError, ConsumerErrorKind, DirectGetError, DirectGetErrorKind};

/// Finds the JetStream API error behind any error of this crate, however deep in the source
/// chain it sits: `err.jetstream_error().map(|e| e.error_code())`.
pub trait ServerRefusal {
    /// The server's refusal behind this error, if the server refused.
    fn jetstream_error(&self) -> Option<&crate::Error>;

    /// The server's `err_code`, if the server refused.
    fn error_code(&self) -> Option<ErrorCode> {
        self.jetstream_error().map(crate::Error::error_code)
    }
}

impl<E: std::error::Error + 'static> ServerRefusal for E {
    fn jetstream_error(&self) -> Option<&crate::Error> {
        let mut next: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(error) = next {
            if let Some(found) = error.downcast_ref::<crate::Error>() {
                return Some(found);
            }
            next = error.source();
        }
        None
    }
}

/// Defines a `Copy` kind enum with one message per variant and its error alias.
macro_rules! kinds {
    ($(#[$meta:meta])* $kind:ident, $error:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $kind {
            $($(#[$vmeta])* $variant,)+
        }

        impl fmt::Display for $kind {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self {
                    $(Self::$variant => $text,)+
                })
            }
        }

        #[doc = concat!("An error of kind [`", stringify!($kind), "`].")]
        pub type $error = Error<$kind>;
    };
}

kinds! {
    /// The kinds of [`PutError`].
    PutErrorKind, PutError {
        /// The key is not valid (ADR-8).
        InvalidKey => "key cannot be empty or start/end with `.`, and holds only `A-Z a-z 0-9 - / _ = .`",
        /// The publish could not be sent.
        Publish => "failed to put key into store",
        /// The stream did not acknowledge the value.
        Ack => "ack error",
    }
}

kinds! {
    /// The kinds of [`EntryError`] (reading an entry).
    EntryErrorKind, EntryError {
        /// The key is not valid (ADR-8).
        InvalidKey => "key cannot be empty or start/end with `.`, and holds only `A-Z a-z 0-9 - / _ = .`",
        /// No answer within the timeout.
        TimedOut => "timed out",
        /// Anything else; the source says what.
        Other => "failed getting entry",
    }
}

kinds! {
    /// The kinds of [`UpdateError`], [`DeleteError`] and [`PurgeError`].
    UpdateErrorKind, UpdateError {
        /// The key is not valid (ADR-8).
        InvalidKey => "key cannot be empty or start/end with `.`, and holds only `A-Z a-z 0-9 - / _ = .`",
        /// No answer within the timeout.
        TimedOut => "timed out",
        /// The key's last revision is not the one expected.
        WrongLastRevision => "wrong last revision",
        /// Anything else; the source says what.
        Other => "failed to update the key",
    }
}

kinds! {
    /// The kinds of [`CreateError`].
    CreateErrorKind, CreateError {
        /// The key has a value already.
        AlreadyExists => "key already exists",
        /// The key is not valid (ADR-8).
        InvalidKey => "key cannot be empty or start/end with `.`, and holds only `A-Z a-z 0-9 - / _ = .`",
        /// The value could not be stored.
        Publish => "failed to create key in store",
        /// The stream did not acknowledge the value.
        Ack => "ack error",
        /// Anything else; the source says what.
        Other => "other error",
    }
}

kinds! {
    /// The kinds of [`WatchError`] (starting a watch, history or key listing).
    WatchErrorKind, WatchError {
        /// A key or filter is not valid.
        InvalidKey => "invalid key or filter",
        /// No answer within the timeout.
        TimedOut => "timed out",
        /// The server refused the watch consumer.
        ConsumerCreate => "watch consumer creation failed",
        /// Anything else; the source says what.
        Other => "watch failed",
    }
}

kinds! {
    /// The kinds of [`WatcherError`] (an item of a running watch).
    WatcherErrorKind, WatcherError {
        /// The consumer under the watch failed.
        Consumer => "watcher consumer error",
        /// Anything else, e.g. a message without JetStream metadata.
        Other => "watcher error",
    }
}

/// The kinds of [`StatusError`].
#[derive(Clone, Debug, PartialEq)]
pub enum StatusErrorKind {
    /// The server refused, with this error.
    JetStream(crate::Error),
    /// No answer within the timeout.
    TimedOut,
}

impl fmt::Display for StatusErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::JetStream(error) => write!(f, "jetstream request failed: {error}"),
            Self::TimedOut => f.write_str("timed out"),
        }
    }
}

/// Why a bucket's status could not be read.
pub type StatusError = Error<StatusErrorKind>;

/// Why a delete failed (async-nats' name).
pub type DeleteError = UpdateError;
/// The kinds of [`DeleteError`].
pub type DeleteErrorKind = UpdateErrorKind;
/// Why a purge failed (async-nats' name).
pub type PurgeError = UpdateError;
/// The kinds of [`PurgeError`].
pub type PurgeErrorKind = UpdateErrorKind;
/// Why a history or key listing could not start (async-nats' name).
pub type HistoryError = WatchError;
/// The kinds of [`HistoryError`].
pub type HistoryErrorKind = WatchErrorKind;

/// A publish failure as an update failure: a failed expectation is a wrong revision.
pub(crate) fn update_error(error: PublishError) -> UpdateError {
    let kind = match error.kind() {
        PublishErrorKind::TimedOut => UpdateErrorKind::TimedOut,
        PublishErrorKind::WrongLastSequence => UpdateErrorKind::WrongLastRevision,
        _ => UpdateErrorKind::Other,
    };
    UpdateError::with_source(kind, error)
}

/// An update failure as a create failure: a wrong revision means the key exists.
pub(crate) fn create_of_update(error: UpdateError) -> CreateError {
    let kind = match error.kind() {
        UpdateErrorKind::InvalidKey => CreateErrorKind::InvalidKey,
        UpdateErrorKind::TimedOut => CreateErrorKind::Publish,
        UpdateErrorKind::WrongLastRevision => CreateErrorKind::AlreadyExists,
        UpdateErrorKind::Other => CreateErrorKind::Other,
    };
    CreateError::with_source(kind, error)
}

/// A read failure as a create failure.
pub(crate) fn create_of_entry(error: EntryError) -> CreateError {
    let kind = match error.kind() {
        EntryErrorKind::InvalidKey => CreateErrorKind::InvalidKey,
        EntryErrorKind::TimedOut => CreateErrorKind::Publish,
        EntryErrorKind::Other => CreateErrorKind::Other,
    };
    CreateError::with_source(kind, error)
}

/// A direct get failure as a read failure.
pub(crate) fn entry_of_direct(error: DirectGetError) -> EntryError {
    let kind = match error.kind() {
        DirectGetErrorKind::TimedOut => EntryErrorKind::TimedOut,
        DirectGetErrorKind::InvalidSubject => EntryErrorKind::InvalidKey,
        _ => EntryErrorKind::Other,
    };
    EntryError::with_source(kind, error)
}

/// A consumer creation failure as a watch failure, the refusal kept as the source.
pub(crate) fn watch_of_consumer(error: ConsumerError) -> WatchError {
    match error.kind() {
        ConsumerErrorKind::TimedOut => WatchError::with_source(WatchErrorKind::TimedOut, error),
        // Keep the refusal itself as the source, so its code is reachable.
        ConsumerErrorKind::JetStream(refusal) => {
            WatchError::with_source(WatchErrorKind::ConsumerCreate, refusal)
        }
        _ => WatchError::with_source(WatchErrorKind::Other, error),
    }
}

/// A subscription failure as a watch failure.
pub(crate) fn watch_of_stream(error: StreamError) -> WatchError {
    let kind = match error.kind() {
        StreamErrorKind::TimedOut => WatchErrorKind::TimedOut,
        StreamErrorKind::Other => WatchErrorKind::Other,
    };
    WatchError::with_source(kind, error)
}

/// An ordered consumer failure as a watcher failure.
pub(crate) fn watcher_of_ordered(error: OrderedError) -> WatcherError {
    WatcherError::with_source(WatcherErrorKind::Consumer, error)
}

kinds! {
    /// The kinds of [`KeyValueError`] (getting or deleting a bucket).
    KeyValueErrorKind, KeyValueError {
        /// The bucket name is not valid (ADR-8: `A-Z a-z 0-9 _ -`), or the stream behind it
        /// is not a Key-Value bucket.
        InvalidStoreName => "invalid Key Value Store name",
        /// The bucket's stream could not be read (it may not exist; the source says).
        GetBucket => "failed to get the bucket",
        /// The server refused; the source says why.
        JetStream => "JetStream error",
    }
}

kinds! {
    /// The kinds of [`CreateKeyValueError`].
    CreateKeyValueErrorKind, CreateKeyValueError {
        /// The bucket name is not valid (ADR-8: `A-Z a-z 0-9 _ -`).
        InvalidStoreName => "invalid Key Value Store name",
        /// `history` is over 64.
        TooLongHistory => "too long history",
        /// A JetStream request failed; the source says why.
        JetStream => "JetStream error",
        /// The server refused the bucket's stream; the source says why.
        BucketCreate => "bucket creation failed",
        /// No answer within the timeout.
        TimedOut => "timed out",
        /// `limit_markers` needs nats-server 2.11 or later.
        LimitMarkersNotSupported => "limit markers not supported",
    }
}

kinds! {
    /// The kinds of [`UpdateKeyValueError`].
    UpdateKeyValueErrorKind, UpdateKeyValueError {
        /// The bucket name is not valid (ADR-8: `A-Z a-z 0-9 _ -`).
        InvalidStoreName => "invalid Key Value Store name",
        /// `history` is over 64.
        TooLongHistory => "too long history",
        /// A JetStream request failed; the source says why.
        JetStream => "JetStream error",
        /// The server refused the new config; the source says why.
        BucketUpdate => "bucket update failed",
        /// No answer within the timeout.
        TimedOut => "timed out",
        /// `limit_markers` needs nats-server 2.11 or later.
        LimitMarkersNotSupported => "limit markers not supported",
        /// The bucket does not exist.
        NotFound => "bucket does not exist",
    }
}
