//! What every clone of a blocking `Client`, and every `Subscriber`, holds: the connection
//! closes when the last one goes.

use std::sync::Arc;

use super::state::Inner;

/// Closes the connection when the last handle goes.
pub(super) struct Handle {
    inner: Arc<Inner>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        let inner = &*self.inner;
        inner
            .write
            .finish_writes(inner, inner.options.connection_timeout);
        self.inner.close();
    }
}

impl Handle {
    pub(super) fn new(inner: Arc<Inner>) -> Handle {
        Handle { inner }
    }

    pub(super) fn inner(&self) -> &Inner {
        &self.inner
    }
}
