//! Mutex helpers both drivers use.

use std::sync::{Mutex, MutexGuard, TryLockError};

/// Locks a mutex, ignoring poisoning: every critical section in rnats leaves its data
/// consistent at each step, so a panic elsewhere does not make it unusable.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`lock`] without waiting: `None` while another thread holds the mutex.
pub(crate) fn try_lock<T>(mutex: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match mutex.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}
