//! [`Progress`]: how far a put or a read has come, for callers who show it (an rnats
//! addition to the async-nats API).

/// How far a transfer has come; handed to the callback of
/// [`ObjectStore::put_with_progress`](super::ObjectStore::put_with_progress) after each
/// chunk the server acked, and to that of [`Object::with_progress`](super::Object::with_progress)
/// after each chunk received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Bytes transferred so far.
    pub bytes: u64,
    /// Chunks transferred so far.
    pub chunks: usize,
    /// The object's size, when known (on a read; a put reads until its source ends).
    pub total: Option<u64>,
}
