//! KV codecs (ADR-54): keys and values transformed on their way into a bucket and back, by a
//! [`CodecStore`] that wraps a [`Store`]. Keys that are not valid NATS subjects (spaces, file
//! paths) become storable, values can be encrypted or compressed, and every read, watch,
//! history and key listing hands back what was put, decoded.
//!
//! ```no_run
//! # async fn run(store: rnats_jetstream::kv::Store) -> Result<(), rnats_core::Error> {
//! use std::sync::Arc;
//! use rnats_jetstream::kv::codec::{Base64Codec, CodecStore, KeyChain, NoOpCodec, PathCodec};
//!
//! // `/users/sue smith/avatar` is stored under `_root_.dXNlcnM.c3VlIHNtaXRo.YXZhdGFy`.
//! let keys = KeyChain::new(vec![Arc::new(PathCodec), Arc::new(Base64Codec::new())])?;
//! let files = CodecStore::new(store, keys, NoOpCodec);
//! files.put("/users/sue smith/avatar", "png bytes".into()).await?;
//! assert_eq!(files.get("/users/sue smith/avatar").await?.as_deref(), Some(&b"png bytes"[..]));
//! # Ok(()) }
//! ```
//!
//! The built-in codecs are orbit.go's (`kvcodec`): [`NoOpCodec`], [`Base64Codec`] (each key
//! token on its own, URL-safe and unpadded, so wildcards still filter) and [`PathCodec`]
//! (`a/b/c` as `a.b.c`), chained with [`KeyChain`] and [`ValueChain`]: encoding runs the
//! codecs first to last, decoding last to first. [`Base64Codec::padded`] is nats.js'
//! `Base64KeyCodec` (standard alphabet, padded), for buckets shared with nats.js.
//!
//! A key codec that cannot keep `*` and `>` meaningful refuses wildcard filters
//! ([`CodecErrorKind::WildcardNotSupported`]); [`KeyCodec::encode_filter`] is where one that
//! can says so. The filter `>` alone (every key) works with any codec.

use std::error::Error as StdError;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use futures_util::Stream;

use super::{
    CreateError, DeleteError, Entry, EntryError, History, HistoryError, Keys, Operation,
    PurgeError, PutError, Status, StatusError, Store, UpdateError, Watch, WatchError, WatchOptions,
    WatcherError,
};

/// Why a codec could not encode or decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError {
    kind: CodecErrorKind,
    detail: String,
}

/// What kind of codec failure it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodecErrorKind {
    /// A key could not be encoded.
    KeyEncode,
    /// A stored key could not be decoded (written by another codec, or by hand).
    KeyDecode,
    /// A value could not be encoded.
    ValueEncode,
    /// A stored value could not be decoded.
    ValueDecode,
    /// The key codec cannot keep wildcards meaningful: watch everything and filter the
    /// decoded keys instead.
    WildcardNotSupported,
    /// A chain was made of no codecs.
    NoCodecs,
}

impl CodecError {
    /// An error of `kind`, with `detail` saying what failed.
    pub fn new(kind: CodecErrorKind, detail: impl Into<String>) -> CodecError {
        CodecError {
            kind,
            detail: detail.into(),
        }
    }

    /// What kind of failure it was.
    pub fn kind(&self) -> CodecErrorKind {
        self.kind
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            CodecErrorKind::KeyEncode => "cannot encode key",
            CodecErrorKind::KeyDecode => "cannot decode key",
            CodecErrorKind::ValueEncode => "cannot encode value",
            CodecErrorKind::ValueDecode => "cannot decode value",
            CodecErrorKind::WildcardNotSupported => "the key codec does not support wildcards",
            CodecErrorKind::NoCodecs => "a codec chain needs at least one codec",
        };
        if self.detail.is_empty() {
            f.write_str(what)
        } else {
            write!(f, "{what}: {}", self.detail)
        }
    }
}

impl StdError for CodecError {}

/// A failure of a [`CodecStore`] operation: the codec's, or the bucket's error `E`.
#[derive(Debug)]
pub enum Error<E> {
    /// A key or value could not be encoded or decoded.
    Codec(CodecError),
    /// The bucket operation failed.
    Store(E),
}

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Codec(error) => error.fmt(f),
            Error::Store(error) => error.fmt(f),
        }
    }
}

impl<E: StdError + 'static> StdError for Error<E> {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Error::Codec(error) => Some(error),
            Error::Store(error) => Some(error),
        }
    }
}

impl<E> From<CodecError> for Error<E> {
    fn from(error: CodecError) -> Self {
        Error::Codec(error)
    }
}

/// Transforms keys on their way into a bucket and back. The encoded key must be a valid KV
/// key (`A-Z a-z 0-9 - / _ = .`, dot-separated tokens).
pub trait KeyCodec: Send + Sync {
    /// The key as stored.
    fn encode_key(&self, key: &str) -> Result<String, CodecError>;

    /// The key as put, from the key as stored.
    fn decode_key(&self, key: &str) -> Result<String, CodecError>;

    /// A filter of keys (for watches and key listings) as stored. A filter may hold the
    /// wildcard tokens `*` and `>`; a codec that keeps them meaningful overrides this. The
    /// default encodes a filter without wildcards as a key and refuses one with them.
    fn encode_filter(&self, filter: &str) -> Result<String, CodecError> {
        if has_wildcard(filter) {
            return Err(CodecError::new(
                CodecErrorKind::WildcardNotSupported,
                format!("in {filter:?}; watch every key and filter the decoded ones instead"),
            ));
        }
        self.encode_key(filter)
    }
}

/// Transforms values on their way into a bucket and back.
pub trait ValueCodec: Send + Sync {
    /// The value as stored.
    fn encode_value(&self, value: Bytes) -> Result<Bytes, CodecError>;

    /// The value as put, from the value as stored.
    fn decode_value(&self, value: Bytes) -> Result<Bytes, CodecError>;
}

/// Whether a filter has a wildcard token.
fn has_wildcard(filter: &str) -> bool {
    filter.split('.').any(|token| token == "*" || token == ">")
}

/// Leaves keys and values as they are.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOpCodec;

impl KeyCodec for NoOpCodec {
    fn encode_key(&self, key: &str) -> Result<String, CodecError> {
        Ok(key.to_owned())
    }

    fn decode_key(&self, key: &str) -> Result<String, CodecError> {
        Ok(key.to_owned())
    }

    fn encode_filter(&self, filter: &str) -> Result<String, CodecError> {
        Ok(filter.to_owned())
    }
}

impl ValueCodec for NoOpCodec {
    fn encode_value(&self, value: Bytes) -> Result<Bytes, CodecError> {
        Ok(value)
    }

    fn decode_value(&self, value: Bytes) -> Result<Bytes, CodecError> {
        Ok(value)
    }
}

/// Base64 for keys (each dot-separated token on its own, so the key keeps its tokens and
/// wildcards still filter) and for values (whole).
#[derive(Debug, Clone, Copy)]
pub struct Base64Codec {
    engine: &'static base64::engine::GeneralPurpose,
}

impl Base64Codec {
    /// URL-safe and unpadded, as orbit.go's `kvcodec` and ADR-54 encode: every token is a
    /// valid KV key token.
    pub fn new() -> Base64Codec {
        Base64Codec {
            engine: &URL_SAFE_NO_PAD,
        }
    }

    /// The standard alphabet with `=` padding, as nats.js' `Base64KeyCodec` encodes. Its `+`
    /// is not a valid KV key character: a token whose encoding has one cannot be stored.
    pub fn padded() -> Base64Codec {
        Base64Codec { engine: &STANDARD }
    }

    fn encode_tokens(&self, key: &str, keep_wildcards: bool) -> String {
        key.split('.')
            .map(|token| {
                if keep_wildcards && (token == "*" || token == ">") {
                    token.to_owned()
                } else {
                    self.engine.encode(token)
                }
            })
            .collect::<Vec<_>>()
            .join(".")
    }
}

impl Default for Base64Codec {
    fn default() -> Self {
        Base64Codec::new()
    }
}

impl KeyCodec for Base64Codec {
    fn encode_key(&self, key: &str) -> Result<String, CodecError> {
        Ok(self.encode_tokens(key, false))
    }

    fn decode_key(&self, key: &str) -> Result<String, CodecError> {
        let tokens = key
            .split('.')
            .map(|token| {
                let bytes = self.engine.decode(token).map_err(|e| {
                    CodecError::new(CodecErrorKind::KeyDecode, format!("{token:?}: {e}"))
                })?;
                String::from_utf8(bytes).map_err(|e| {
                    CodecError::new(CodecErrorKind::KeyDecode, format!("{token:?}: {e}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(tokens.join("."))
    }

    fn encode_filter(&self, filter: &str) -> Result<String, CodecError> {
        Ok(self.encode_tokens(filter, true))
    }
}

impl ValueCodec for Base64Codec {
    fn encode_value(&self, value: Bytes) -> Result<Bytes, CodecError> {
        Ok(self.engine.encode(value).into())
    }

    fn decode_value(&self, value: Bytes) -> Result<Bytes, CodecError> {
        self.engine
            .decode(value)
            .map(Bytes::from)
            .map_err(|e| CodecError::new(CodecErrorKind::ValueDecode, e.to_string()))
    }
}

/// Path-style keys (`users/sue/avatar`) stored as NATS-style ones (`users.sue.avatar`). A
/// leading `/` becomes the token `_root_` (a key cannot start with a dot) and a trailing `/`
/// is dropped, as in orbit.go's `kvcodec`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PathCodec;

/// The token a leading `/` becomes.
const ROOT: &str = "_root_";

impl KeyCodec for PathCodec {
    fn encode_key(&self, key: &str) -> Result<String, CodecError> {
        let key = match key.strip_prefix('/') {
            Some("") => return Ok(ROOT.to_owned()),
            Some(rest) => format!("{ROOT}/{rest}"),
            None => key.to_owned(),
        };
        Ok(key.strip_suffix('/').unwrap_or(&key).replace('/', "."))
    }

    fn decode_key(&self, key: &str) -> Result<String, CodecError> {
        if key == ROOT {
            return Ok("/".to_owned());
        }
        match key
            .strip_prefix(ROOT)
            .and_then(|rest| rest.strip_prefix('.'))
        {
            Some(rest) => Ok(format!("/{}", rest.replace('.', "/"))),
            None => Ok(key.replace('.', "/")),
        }
    }

    /// `*` and `>` stay tokens of their own (`users/*/avatar` is `users.*.avatar`).
    fn encode_filter(&self, filter: &str) -> Result<String, CodecError> {
        self.encode_key(filter)
    }
}

/// Key codecs applied in turn: encoding first to last, decoding last to first. Filters with
/// wildcards pass only if every codec of the chain keeps them.
#[derive(Clone)]
pub struct KeyChain {
    codecs: Vec<Arc<dyn KeyCodec>>,
}

impl KeyChain {
    /// A chain of `codecs`; at least one.
    pub fn new(codecs: Vec<Arc<dyn KeyCodec>>) -> Result<KeyChain, CodecError> {
        if codecs.is_empty() {
            return Err(CodecError::new(CodecErrorKind::NoCodecs, ""));
        }
        Ok(KeyChain { codecs })
    }
}

impl fmt::Debug for KeyChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyChain({} codecs)", self.codecs.len())
    }
}

impl KeyCodec for KeyChain {
    fn encode_key(&self, key: &str) -> Result<String, CodecError> {
        self.codecs
            .iter()
            .try_fold(key.to_owned(), |key, codec| codec.encode_key(&key))
    }

    fn decode_key(&self, key: &str) -> Result<String, CodecError> {
        self.codecs
            .iter()
            .rev()
            .try_fold(key.to_owned(), |key, codec| codec.decode_key(&key))
    }

    fn encode_filter(&self, filter: &str) -> Result<String, CodecError> {
        self.codecs
            .iter()
            .try_fold(filter.to_owned(), |filter, codec| {
                codec.encode_filter(&filter)
            })
    }
}

/// Value codecs applied in turn: encoding first to last, decoding last to first.
#[derive(Clone)]
pub struct ValueChain {
    codecs: Vec<Arc<dyn ValueCodec>>,
}

impl ValueChain {
    /// A chain of `codecs`; at least one.
    pub fn new(codecs: Vec<Arc<dyn ValueCodec>>) -> Result<ValueChain, CodecError> {
        if codecs.is_empty() {
            return Err(CodecError::new(CodecErrorKind::NoCodecs, ""));
        }
        Ok(ValueChain { codecs })
    }
}

impl fmt::Debug for ValueChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ValueChain({} codecs)", self.codecs.len())
    }
}

impl ValueCodec for ValueChain {
    fn encode_value(&self, value: Bytes) -> Result<Bytes, CodecError> {
        self.codecs
            .iter()
            .try_fold(value, |value, codec| codec.encode_value(value))
    }

    fn decode_value(&self, value: Bytes) -> Result<Bytes, CodecError> {
        self.codecs
            .iter()
            .rev()
            .try_fold(value, |value, codec| codec.decode_value(value))
    }
}

/// A bucket seen through a key codec and a value codec: the same operations as [`Store`],
/// with keys and values as the application knows them.
#[derive(Clone)]
pub struct CodecStore {
    store: Store,
    codecs: Codecs,
}

/// The two codecs, shared by a store and its streams.
#[derive(Clone)]
struct Codecs {
    keys: Arc<dyn KeyCodec>,
    values: Arc<dyn ValueCodec>,
}

impl Codecs {
    /// `entry` as put: its key decoded, and its value for a put. Delete and purge markers
    /// carry no value, and a meta-only watch none either: an empty value is left as it is.
    fn decode(&self, mut entry: Entry) -> Result<Entry, CodecError> {
        entry.key = self.keys.decode_key(&entry.key)?;
        if entry.operation == Operation::Put && !entry.value.is_empty() {
            entry.value = self.values.decode_value(entry.value)?;
        }
        Ok(entry)
    }
}

impl fmt::Debug for CodecStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodecStore")
            .field("bucket", &self.store.name)
            .finish_non_exhaustive()
    }
}

impl CodecStore {
    /// `store` with `keys` encoding its keys and `values` its values.
    pub fn new(
        store: Store,
        keys: impl KeyCodec + 'static,
        values: impl ValueCodec + 'static,
    ) -> CodecStore {
        CodecStore {
            store,
            codecs: Codecs {
                keys: Arc::new(keys),
                values: Arc::new(values),
            },
        }
    }

    /// `store` with a key codec only.
    pub fn for_keys(store: Store, keys: impl KeyCodec + 'static) -> CodecStore {
        CodecStore::new(store, keys, NoOpCodec)
    }

    /// `store` with a value codec only.
    pub fn for_values(store: Store, values: impl ValueCodec + 'static) -> CodecStore {
        CodecStore::new(store, NoOpCodec, values)
    }

    /// The bucket underneath, which sees keys and values as stored.
    pub fn inner(&self) -> &Store {
        &self.store
    }

    /// The bucket's name.
    pub fn bucket(&self) -> &str {
        &self.store.name
    }

    /// The bucket's current status.
    pub async fn status(&self) -> Result<Status, StatusError> {
        self.store.status().await
    }

    /// Stores `value` under `key`; its revision.
    pub async fn put<T: AsRef<str>>(&self, key: T, value: Bytes) -> Result<u64, Error<PutError>> {
        let (key, value) = self.encode(key.as_ref(), value)?;
        self.store.put(key, value).await.map_err(Error::Store)
    }

    /// Stores `value` under `key` if the key has no value; its revision.
    pub async fn create<T: AsRef<str>>(
        &self,
        key: T,
        value: Bytes,
    ) -> Result<u64, Error<CreateError>> {
        let (key, value) = self.encode(key.as_ref(), value)?;
        self.store.create(key, value).await.map_err(Error::Store)
    }

    /// Stores `value` under `key` if its last revision is `revision`; the new revision.
    pub async fn update<T: AsRef<str>>(
        &self,
        key: T,
        value: Bytes,
        revision: u64,
    ) -> Result<u64, Error<UpdateError>> {
        let (key, value) = self.encode(key.as_ref(), value)?;
        self.store
            .update(key, value, revision)
            .await
            .map_err(Error::Store)
    }

    /// Deletes `key` (its history stays, up to the bucket's limit).
    pub async fn delete<T: AsRef<str>>(&self, key: T) -> Result<(), Error<DeleteError>> {
        let key = self.codecs.keys.encode_key(key.as_ref())?;
        self.store.delete(key).await.map_err(Error::Store)
    }

    /// Purges `key`: its history goes, a purge marker stays.
    pub async fn purge<T: AsRef<str>>(&self, key: T) -> Result<(), Error<PurgeError>> {
        let key = self.codecs.keys.encode_key(key.as_ref())?;
        self.store.purge(key).await.map_err(Error::Store)
    }

    /// The value of `key`, decoded; `None` if it never had one, or was deleted or purged.
    pub async fn get<T: AsRef<str>>(&self, key: T) -> Result<Option<Bytes>, Error<EntryError>> {
        Ok(self
            .entry(key)
            .await?
            .filter(|entry| entry.operation == Operation::Put)
            .map(|entry| entry.value))
    }

    /// The entry of `key` (with deletes and purges), decoded; `None` if it has none.
    pub async fn entry<T: AsRef<str>>(&self, key: T) -> Result<Option<Entry>, Error<EntryError>> {
        let key = self.codecs.keys.encode_key(key.as_ref())?;
        let entry = self.store.entry(key).await.map_err(Error::Store)?;
        Ok(entry.map(|entry| self.codecs.decode(entry)).transpose()?)
    }

    /// The entry of `key` at `revision`, decoded.
    pub async fn entry_for_revision<T: AsRef<str>>(
        &self,
        key: T,
        revision: u64,
    ) -> Result<Option<Entry>, Error<EntryError>> {
        let key = self.codecs.keys.encode_key(key.as_ref())?;
        let entry = self
            .store
            .entry_for_revision(key, revision)
            .await
            .map_err(Error::Store)?;
        Ok(entry.map(|entry| self.codecs.decode(entry)).transpose()?)
    }

    /// Every revision of `key` the bucket keeps, decoded.
    pub async fn history<T: AsRef<str>>(
        &self,
        key: T,
    ) -> Result<CodecHistory, Error<HistoryError>> {
        let key = self.codecs.keys.encode_key(key.as_ref())?;
        let inner = self.store.history(key).await.map_err(Error::Store)?;
        Ok(CodecHistory {
            inner,
            codecs: self.codecs.clone(),
        })
    }

    /// The keys with a value, decoded.
    pub async fn keys(&self) -> Result<CodecKeys, Error<HistoryError>> {
        let inner = self.store.keys().await.map_err(Error::Store)?;
        Ok(CodecKeys {
            inner,
            codecs: self.codecs.clone(),
        })
    }

    /// The keys with a value that match `filters` (wildcards as the key codec allows).
    pub async fn keys_with_filters<T, K>(
        &self,
        filters: K,
    ) -> Result<CodecKeys, Error<HistoryError>>
    where
        T: AsRef<str>,
        K: IntoIterator<Item = T>,
    {
        let filters = self.filters(filters)?;
        let inner = self
            .store
            .keys_with_filters(filters)
            .await
            .map_err(Error::Store)?;
        Ok(CodecKeys {
            inner,
            codecs: self.codecs.clone(),
        })
    }

    /// Watches `key` (wildcards as the key codec allows): changes from now on.
    pub async fn watch<T: AsRef<str>>(&self, key: T) -> Result<CodecWatch, Error<WatchError>> {
        self.watch_with_options([key], WatchOptions::new().updates_only())
            .await
    }

    /// Watches every key: changes from now on (as [`Store::watch_all`]). Works with every key
    /// codec, wildcards or not; `watch_with_options([">"], ..)` with initial values too.
    pub async fn watch_all(&self) -> Result<CodecWatch, Error<WatchError>> {
        self.watch(">").await
    }

    /// Watches `keys` (wildcards as the key codec allows) as `options` say.
    pub async fn watch_with_options<T, K>(
        &self,
        keys: K,
        options: WatchOptions,
    ) -> Result<CodecWatch, Error<WatchError>>
    where
        T: AsRef<str>,
        K: IntoIterator<Item = T>,
    {
        let filters = self.filters(keys)?;
        let inner = self
            .store
            .watch_with_options(filters, options)
            .await
            .map_err(Error::Store)?;
        Ok(self.codec_watch(inner))
    }

    /// Removes the markers of deleted and purged keys.
    pub async fn purge_deletes(&self) -> Result<(), PurgeError> {
        self.store.purge_deletes().await
    }

    fn encode(&self, key: &str, value: Bytes) -> Result<(String, Bytes), CodecError> {
        Ok((
            self.codecs.keys.encode_key(key)?,
            self.codecs.values.encode_value(value)?,
        ))
    }

    fn filters<T: AsRef<str>>(
        &self,
        filters: impl IntoIterator<Item = T>,
    ) -> Result<Vec<String>, CodecError> {
        filters
            .into_iter()
            .map(|filter| match filter.as_ref() {
                // Every key, however it is encoded: no codec needed.
                ">" => Ok(">".to_owned()),
                filter => self.codecs.keys.encode_filter(filter),
            })
            .collect()
    }

    fn codec_watch(&self, inner: Watch) -> CodecWatch {
        CodecWatch {
            inner: Box::pin(inner),
            codecs: self.codecs.clone(),
        }
    }
}

/// A [`Watch`] whose entries are decoded.
pub struct CodecWatch {
    inner: Pin<Box<Watch>>,
    codecs: Codecs,
}

impl CodecWatch {
    /// Whether the values that were current when the watch started have all come.
    pub fn seen_current(&self) -> bool {
        self.inner.seen_current()
    }
}

impl fmt::Debug for CodecWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodecWatch").finish_non_exhaustive()
    }
}

impl Stream for CodecWatch {
    type Item = Result<Entry, Error<WatcherError>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let item = std::task::ready!(self.inner.as_mut().poll_next(cx));
        Poll::Ready(item.map(|entry| match entry {
            Ok(entry) => self.codecs.decode(entry).map_err(Error::Codec),
            Err(error) => Err(Error::Store(error)),
        }))
    }
}

/// A [`History`] whose entries are decoded.
pub struct CodecHistory {
    inner: History,
    codecs: Codecs,
}

impl fmt::Debug for CodecHistory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodecHistory").finish_non_exhaustive()
    }
}

impl Stream for CodecHistory {
    type Item = Result<Entry, Error<WatcherError>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let item = std::task::ready!(Pin::new(&mut self.inner).poll_next(cx));
        Poll::Ready(item.map(|entry| match entry {
            Ok(entry) => self.codecs.decode(entry).map_err(Error::Codec),
            Err(error) => Err(Error::Store(error)),
        }))
    }
}

/// [`Keys`], decoded.
pub struct CodecKeys {
    inner: Keys,
    codecs: Codecs,
}

impl fmt::Debug for CodecKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodecKeys").finish_non_exhaustive()
    }
}

impl Stream for CodecKeys {
    type Item = Result<String, Error<WatcherError>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let item = std::task::ready!(Pin::new(&mut self.inner).poll_next(cx));
        Poll::Ready(item.map(|key| match key {
            Ok(key) => self.codecs.keys.decode_key(&key).map_err(Error::Codec),
            Err(error) => Err(Error::Store(error)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_encodes_each_token_url_safe_and_unpadded() {
        let codec = Base64Codec::new();
        // "Acme Inc" is QWNtZSBJbmM (8 bytes, unpadded), "contact" Y29udGFjdA.
        let encoded = codec.encode_key("Acme Inc.contact").unwrap();
        assert_eq!(encoded, "QWNtZSBJbmM.Y29udGFjdA");
        assert!(crate::kv::is_valid_key(&encoded));
        assert_eq!(codec.decode_key(&encoded).unwrap(), "Acme Inc.contact");
        // "~~~" is 0x7e7e7e: "fn5-" in the URL-safe alphabet, "fn5+" in the standard one.
        assert_eq!(codec.encode_key("~~~").unwrap(), "fn5-");
        assert_eq!(Base64Codec::padded().encode_key("~~~").unwrap(), "fn5+");
        assert_eq!(codec.encode_filter("a b.*.>").unwrap(), "YSBi.*.>");
        assert_eq!(
            codec.decode_key("not base64!").unwrap_err().kind(),
            CodecErrorKind::KeyDecode
        );
    }

    #[test]
    fn padded_base64_is_nats_js_key_codec() {
        // nats.js: btoa("users") === "dXNlcnM=".
        let codec = Base64Codec::padded();
        assert_eq!(codec.encode_key("users.john").unwrap(), "dXNlcnM=.am9obg==");
        assert_eq!(codec.decode_key("dXNlcnM=.am9obg==").unwrap(), "users.john");
    }

    #[test]
    fn base64_values_round_trip() {
        let codec = Base64Codec::new();
        let stored = codec
            .encode_value(Bytes::from_static(b"info@acme.com"))
            .unwrap();
        assert_eq!(stored, "aW5mb0BhY21lLmNvbQ");
        assert_eq!(codec.decode_value(stored).unwrap(), "info@acme.com");
    }

    #[test]
    fn paths_become_tokens_with_a_root_marker() {
        let codec = PathCodec;
        for (path, stored, back) in [
            ("users/sue/avatar", "users.sue.avatar", "users/sue/avatar"),
            ("/etc/hosts", "_root_.etc.hosts", "/etc/hosts"),
            ("/", "_root_", "/"),
            ("dir/", "dir", "dir"),
            ("users/*/avatar", "users.*.avatar", "users/*/avatar"),
        ] {
            assert_eq!(codec.encode_filter(path).unwrap(), stored, "{path}");
            assert_eq!(codec.decode_key(stored).unwrap(), back, "{stored}");
        }
    }

    /// A codec without wildcard support: reverses each key.
    struct Reverse;

    impl KeyCodec for Reverse {
        fn encode_key(&self, key: &str) -> Result<String, CodecError> {
            Ok(key.chars().rev().collect())
        }

        fn decode_key(&self, key: &str) -> Result<String, CodecError> {
            Ok(key.chars().rev().collect())
        }
    }

    #[test]
    fn chains_encode_in_order_and_decode_in_reverse() {
        let chain = KeyChain::new(vec![Arc::new(PathCodec), Arc::new(Base64Codec::new())]).unwrap();
        let stored = chain.encode_key("/a b/c").unwrap();
        assert_eq!(stored, "X3Jvb3Rf.YSBi.Yw");
        assert_eq!(chain.decode_key(&stored).unwrap(), "/a b/c");
        assert_eq!(chain.encode_filter("a/*").unwrap(), "YQ.*");
        // One codec that cannot filter spoils the chain's wildcards, not its plain filters.
        let chain = KeyChain::new(vec![Arc::new(Reverse), Arc::new(Base64Codec::new())]).unwrap();
        assert_eq!(
            chain.encode_filter("a.*").unwrap_err().kind(),
            CodecErrorKind::WildcardNotSupported
        );
        assert_eq!(chain.encode_filter("ab.c").unwrap(), "Yw.YmE");
        let values = ValueChain::new(vec![
            Arc::new(Base64Codec::new()),
            Arc::new(Base64Codec::new()),
        ])
        .unwrap();
        let twice = values.encode_value(Bytes::from_static(b"x")).unwrap();
        assert_eq!(twice, "ZUE");
        assert_eq!(values.decode_value(twice).unwrap(), "x");
        assert_eq!(
            KeyChain::new(Vec::new()).unwrap_err().kind(),
            CodecErrorKind::NoCodecs
        );
    }
}
