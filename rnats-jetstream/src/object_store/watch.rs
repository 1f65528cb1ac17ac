//! [`Watch`] (changes to a bucket's metadata as they happen) and [`List`] (every live object
//! once), both on an ordered push consumer of the meta subjects `$O.<bucket>.M.>`.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures_util::StreamExt;

use super::ObjectStore;
use super::errors::{
    ListError, WatchError, WatcherError, WatcherErrorKind, watch_consumer_error,
    watch_stream_error, watcher_error,
};
use super::info::ObjectInfo;
use crate::consumer::DeliverPolicy;
use crate::consumer::push::{Ordered, OrderedConfig};

impl ObjectStore {
    /// Changes to the bucket from now on: each new, updated or deleted object's metadata.
    pub async fn watch(&self) -> Result<Watch, WatchError> {
        self.watch_from(DeliverPolicy::New).await
    }

    /// Like [`ObjectStore::watch`], starting with the current metadata of every object
    /// (deleted ones included).
    pub async fn watch_with_history(&self) -> Result<Watch, WatchError> {
        self.watch_from(DeliverPolicy::LastPerSubject).await
    }

    /// Every live object's metadata, once.
    pub async fn list(&self) -> Result<List, ListError> {
        let consumer = self
            .stream
            .create_consumer(self.meta_consumer(DeliverPolicy::All, "object store list"))
            .await
            .map_err(watch_consumer_error)?;
        let done = consumer.info.num_pending == 0;
        Ok(List {
            messages: Some(consumer.messages().await.map_err(watch_stream_error)?),
            done,
        })
    }

    async fn watch_from(&self, deliver_policy: DeliverPolicy) -> Result<Watch, WatchError> {
        let consumer = self
            .stream
            .create_consumer(self.meta_consumer(deliver_policy, "object store watcher"))
            .await
            .map_err(watch_consumer_error)?;
        Ok(Watch {
            messages: consumer.messages().await.map_err(watch_stream_error)?,
        })
    }

    fn meta_consumer(&self, deliver_policy: DeliverPolicy, description: &str) -> OrderedConfig {
        OrderedConfig {
            deliver_subject: self.context().client.new_inbox(),
            description: Some(description.to_owned()),
            filter_subject: format!("$O.{}.M.>", self.name),
            deliver_policy,
            ..Default::default()
        }
    }
}

/// Changes to a bucket, as a [`futures_util::Stream`] of metadata; from
/// [`ObjectStore::watch`]. It ends only if the consumer fails for good.
pub struct Watch {
    messages: Ordered,
}

impl futures_util::Stream for Watch {
    type Item = Result<ObjectInfo, WatcherError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        match self.messages.poll_next_unpin(cx) {
            Poll::Ready(Some(Ok(message))) => Poll::Ready(Some(decode(&message.payload))),
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(watcher_error(error)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// A bucket's live objects, as a [`futures_util::Stream`] of metadata; from
/// [`ObjectStore::list`]. It ends after the last object.
pub struct List {
    messages: Option<Ordered>,
    done: bool,
}

impl futures_util::Stream for List {
    type Item = Result<ObjectInfo, WatcherError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if self.done {
                // Dropping the subscription ends the ephemeral consumer's interest.
                self.messages = None;
                return Poll::Ready(None);
            }
            let Some(messages) = self.messages.as_mut() else {
                return Poll::Ready(None);
            };
            let message = match messages.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(message))) => message,
                Poll::Ready(Some(Err(error))) => {
                    return Poll::Ready(Some(Err(watcher_error(error))));
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            };
            match message.info() {
                Ok(info) => self.done = info.pending == 0,
                Err(error) => {
                    let error = WatcherError::with_source(WatcherErrorKind::Other, error);
                    return Poll::Ready(Some(Err(error)));
                }
            }
            match decode(&message.payload) {
                Ok(info) if info.deleted => continue,
                item => return Poll::Ready(Some(item)),
            }
        }
    }
}

fn decode(payload: &[u8]) -> Result<ObjectInfo, WatcherError> {
    serde_json::from_slice(payload)
        .map_err(|error| WatcherError::with_source(WatcherErrorKind::Other, error))
}
