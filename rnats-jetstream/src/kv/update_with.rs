//! Read, change, write back: the compare-and-set loop every user of `update` writes by hand
//! (an rnats extension; wadm and orbit.go's stores each carry their own).

use bytes::Bytes;

use super::entry::{Entry, Operation};
use super::errors::{EntryError, EntryErrorKind, UpdateError, UpdateErrorKind};
use super::store::Store;

impl Store {
    /// Changes `key` from what it holds: reads its entry, asks `change` for the next value
    /// (`None` when the key has no value: never written, deleted or purged), and writes it
    /// only if nobody wrote the key in between, as [`Store::update`] does. When somebody
    /// did, it reads again and asks again, until a write lands; `change` may run several
    /// times, so it should only compute. `change` returning `None` writes nothing.
    ///
    /// Returns the revision written, or `None` when `change` declined.
    ///
    /// ```no_run
    /// # async fn run(store: rnats_jetstream::kv::Store) -> Result<(), rnats_core::Error> {
    /// // A counter that concurrent writers add to without losing a count.
    /// store
    ///     .update_with("visits", |entry| {
    ///         let now: u64 = entry
    ///             .and_then(|entry| std::str::from_utf8(&entry.value).ok()?.parse().ok())
    ///             .unwrap_or(0);
    ///         Some((now + 1).to_string().into())
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn update_with<T, F>(&self, key: T, mut change: F) -> Result<Option<u64>, UpdateError>
    where
        T: AsRef<str>,
        F: FnMut(Option<&Entry>) -> Option<Bytes>,
    {
        let key = key.as_ref();
        loop {
            let entry = self.entry(key).await.map_err(update_of_entry)?;
            // A delete or purge marker is no value, but a write must expect it as the last
            // revision all the same; a key never written expects revision 0.
            let (current, revision) = match &entry {
                Some(entry) if matches!(entry.operation, Operation::Put) => {
                    (Some(entry), entry.revision)
                }
                Some(marker) => (None, marker.revision),
                None => (None, 0),
            };
            let Some(value) = change(current) else {
                return Ok(None);
            };
            match self.update(key, value, revision).await {
                Ok(written) => return Ok(Some(written)),
                Err(error) if error.kind() == UpdateErrorKind::WrongLastRevision => continue,
                Err(error) => return Err(error),
            }
        }
    }
}

/// A read failure as an update failure.
fn update_of_entry(error: EntryError) -> UpdateError {
    let kind = match error.kind() {
        EntryErrorKind::InvalidKey => UpdateErrorKind::InvalidKey,
        EntryErrorKind::TimedOut => UpdateErrorKind::TimedOut,
        EntryErrorKind::Other => UpdateErrorKind::Other,
    };
    UpdateError::with_source(kind, error)
}
