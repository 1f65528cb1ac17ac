//! An object's data as a [`futures_util::Stream`] of [`Bytes`]: [`Object::into_chunks`], for
//! callers that pass the data on as it comes, an HTTP body above all (hyper's `StreamBody`,
//! axum's `Body::from_stream`), without copying each chunk through a read buffer (the ask of
//! nats.rs PR #1205). An rnats addition.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use futures_util::stream::FusedStream;

use super::errors::ReadError;
use super::info::ObjectInfo;
use super::object::Object;

/// An object's data as a [`futures_util::Stream`] of its chunks; from
/// [`Object::into_chunks`].
///
/// Each item is one chunk's payload as it arrived (for a range, the part of a chunk the
/// range holds). The checks are the reader's: the last chunk is held back until the size and
/// the SHA-256 digest of the whole have been checked against the metadata, and if they do
/// not match, an error item ([`ReadErrorKind::DigestMismatch`], ...) comes in its place. The
/// stream ends after the last chunk or after the first error.
///
/// [`ReadErrorKind::DigestMismatch`]: super::ReadErrorKind::DigestMismatch
#[derive(Debug)]
pub struct Chunks {
    object: Object,
    ended: bool,
}

impl Object {
    /// The object's data as a stream of its chunks, each handed out as the [`Bytes`] it
    /// arrived in, not copied (an rnats addition). What a read already took is not handed
    /// out again; progress callbacks go on being called.
    ///
    /// ```no_run
    /// # async fn run(bucket: rnats_jetstream::object_store::ObjectStore) -> Result<(), rnats_core::Error> {
    /// use futures_util::TryStreamExt;
    /// let mut chunks = bucket.get("video.mp4").await?.into_chunks();
    /// // An HTTP body would take `chunks` as it is.
    /// while let Some(chunk) = chunks.try_next().await? {
    ///     println!("{} bytes", chunk.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn into_chunks(self) -> Chunks {
        Chunks {
            object: self,
            ended: false,
        }
    }
}

impl Chunks {
    /// The object's metadata.
    pub fn info(&self) -> &ObjectInfo {
        &self.object.info
    }
}

impl futures_util::Stream for Chunks {
    type Item = Result<Bytes, ReadError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        let item = match std::task::ready!(this.object.poll_bytes(cx)) {
            Ok(Some(bytes)) => return Poll::Ready(Some(Ok(bytes))),
            Ok(None) => None,
            Err(error) => Some(Err(error)),
        };
        // A failed reader fails every later read the same way; a stream says it once.
        this.ended = true;
        Poll::Ready(item)
    }
}

impl FusedStream for Chunks {
    fn is_terminated(&self) -> bool {
        self.ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_a_stream_an_http_body_takes() {
        fn body<S>()
        where
            S: futures_util::TryStream<Ok = Bytes> + Send + 'static,
            S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        {
        }
        body::<Chunks>();
    }
}
