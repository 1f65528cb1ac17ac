//! Whole objects as bytes or files, for callers who do not want to hold a reader: the
//! `PutBytes`/`GetBytes`/`PutFile`/`GetFile` of nats.go. rnats extensions; async-nats has
//! only the reader forms, which these wrap.

use std::path::Path;

use bytes::Bytes;
use tokio::io::AsyncReadExt;

use super::{
    GetError, GetErrorKind, ObjectInfo, ObjectMetadata, ObjectStore, PutError, PutErrorKind,
};

/// How much of an object's announced size [`ObjectStore::get_bytes`] reserves up front: the
/// size comes from the server, so it is a hint, not a promise.
const RESERVE_LIMIT: usize = 16 << 20;

impl ObjectStore {
    /// Stores `data` as the object `meta` names.
    ///
    /// ```no_run
    /// # async fn run(bucket: rnats_jetstream::object_store::ObjectStore) -> Result<(), rnats_core::Error> {
    /// bucket.put_bytes("motd.txt", "hello".into()).await?;
    /// assert_eq!(bucket.get_bytes("motd.txt").await?, "hello");
    /// # Ok(()) }
    /// ```
    pub async fn put_bytes<T>(&self, meta: T, data: Bytes) -> Result<ObjectInfo, PutError>
    where
        ObjectMetadata: From<T>,
    {
        let mut reader: &[u8] = &data;
        self.put(meta, &mut reader).await
    }

    /// The whole object `name`, read into memory and checked against its digest. A failed
    /// read (digest or size mismatch, lost chunks) is `GetErrorKind::Other` with the
    /// `io::Error` as its source, whose inner error is a
    /// [`ReadError`](super::ReadError).
    pub async fn get_bytes<T: AsRef<str> + Send>(&self, name: T) -> Result<Bytes, GetError> {
        let mut object = self.get(name).await?;
        let mut data = Vec::with_capacity(object.info.size.min(RESERVE_LIMIT));
        object
            .read_to_end(&mut data)
            .await
            .map_err(|e| GetError::with_source(GetErrorKind::Other, e))?;
        Ok(Bytes::from(data))
    }

    /// Stores the file at `path` as the object `meta` names, streaming it in chunks. A file
    /// that cannot be opened is `PutErrorKind::ReadChunks`.
    pub async fn put_file<T>(&self, meta: T, path: impl AsRef<Path>) -> Result<ObjectInfo, PutError>
    where
        ObjectMetadata: From<T>,
    {
        let mut file = rnats_core::runtime::open_file(path.as_ref())
            .await
            .map_err(|e| PutError::with_source(PutErrorKind::ReadChunks, e))?;
        self.put(meta, &mut file).await
    }

    /// Writes the object `name` to a file at `path` (created or truncated), streaming it in
    /// chunks. A failed read or write is `GetErrorKind::Other` with the `io::Error` as its
    /// source; a digest mismatch is found only at the end, so the file then holds data that
    /// failed its check, and the caller should remove it.
    pub async fn get_file<T: AsRef<str> + Send>(
        &self,
        name: T,
        path: impl AsRef<Path>,
    ) -> Result<ObjectInfo, GetError> {
        let mut object = self.get(name).await?;
        let mut file = rnats_core::runtime::create_file(path.as_ref())
            .await
            .map_err(|e| GetError::with_source(GetErrorKind::Other, e))?;
        tokio::io::copy(&mut object, &mut file)
            .await
            .map_err(|e| GetError::with_source(GetErrorKind::Other, e))?;
        tokio::io::AsyncWriteExt::flush(&mut file)
            .await
            .map_err(|e| GetError::with_source(GetErrorKind::Other, e))?;
        Ok(object.info.clone())
    }
}
