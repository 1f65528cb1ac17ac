//! Key-Value buckets (ADR-8, with ADR-48's TTLs and limit markers) on JetStream streams.
//!
//! A bucket `b` is the stream `KV_b` on the subjects `$KV.b.>`; key `k` is the subject
//! `$KV.b.k`, and its revisions are that subject's messages (as many as the bucket's
//! history). Deletes and purges are marker messages (`KV-Operation: DEL` / `PURGE`), so they
//! can be watched like any change. The API is async-nats' own: buckets are managed from the
//! [`Context`](crate::Context), keys through a [`Store`].
//!
//! ```no_run
//! # async fn run() -> Result<(), rnats_core::Error> {
//! use futures_util::StreamExt;
//! use rnats_jetstream::kv;
//!
//! let client = rnats_core::connect("nats://127.0.0.1:4222").await?;
//! let jetstream = rnats_jetstream::new(client);
//! let kv = jetstream
//!     .create_key_value(kv::Config {
//!         bucket: "profiles".to_string(),
//!         history: 10,
//!         ..Default::default()
//!     })
//!     .await?;
//!
//! let revision = kv.put("sue.color", "blue".into()).await?;
//! kv.update("sue.color", "green".into(), revision).await?;
//! let color = kv.get("sue.color").await?;
//! println!("{color:?}");
//!
//! // Current values first, then every change; `InitialValuesDone` in between.
//! let mut events = kv
//!     .watch_with_options([">"], kv::WatchOptions::new())
//!     .await?
//!     .events();
//! while let Some(event) = events.next().await {
//!     match event? {
//!         kv::WatchEvent::Entry(entry) => println!("{} -> {:?}", entry.key, entry.operation),
//!         kv::WatchEvent::InitialValuesDone => break,
//!     }
//! }
//! # Ok(()) }
//! ```

pub mod bucket;
pub(crate) mod buckets;
pub mod codec;
pub(crate) mod config;
pub(crate) mod entry;
pub(crate) mod errors;
mod history;
pub(crate) mod name;
pub(crate) mod store;
mod update_with;
pub(crate) mod watch;

pub(crate) use self::watch::entry_of;

pub use self::bucket::Status;
pub use self::buckets::{KeyValueNames, KeyValueStores};
pub use self::config::Config;
pub use self::entry::{Entry, Operation, ParseOperationError};
pub use self::errors::{
    CreateError, CreateErrorKind, CreateKeyValueError, CreateKeyValueErrorKind, DeleteError,
    DeleteErrorKind, EntryError, EntryErrorKind, HistoryError, HistoryErrorKind, KeyValueError,
    KeyValueErrorKind, PurgeError, PurgeErrorKind, PutError, PutErrorKind, ServerRefusal,
    StatusError, StatusErrorKind, UpdateError, UpdateErrorKind, UpdateKeyValueError,
    UpdateKeyValueErrorKind, WatchError, WatchErrorKind, WatcherError, WatcherErrorKind,
};
pub use self::history::{History, Keys};
pub use self::name::{BucketName, InvalidName, Key};
pub use self::store::Store;
pub use self::watch::{Watch, WatchEvent, WatchEvents, WatchOptions};

/// Whether `bucket` can name a bucket (ADR-8: `A-Z a-z 0-9 _ -`).
pub fn is_valid_bucket_name(bucket: &str) -> bool {
    name::is_valid_bucket_name(bucket)
}

/// Whether `key` can name a key (ADR-8: `A-Z a-z 0-9 - / _ = .`, not starting or ending with
/// `.`, and no empty token such as `a..b`, which no stream's subjects match: nats.go refuses
/// it too, async-nats sends it and fails at the server).
pub fn is_valid_key(key: &str) -> bool {
    name::is_valid_key(key)
}
