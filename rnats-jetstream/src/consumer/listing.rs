//! Listing a stream's consumers (`CONSUMER.NAMES`, `CONSUMER.LIST`), page by page, and the
//! answer to pausing one.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, Stream};
use rnats_core::datetime::DateTime;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::Info;
use crate::context::{Context, RequestError, RequestErrorKind};
use crate::response::Response;

/// The answer to pausing or resuming a consumer.
#[derive(Debug, Clone, Deserialize)]
pub struct PauseResponse {
    /// Whether the consumer is paused now.
    pub paused: bool,
    /// Until when (Go's zero time once resumed).
    #[serde(with = "rnats_core::datetime::rfc3339")]
    pub pause_until: DateTime,
    /// How long the pause has left.
    #[serde(default, with = "crate::nanos::option")]
    pub pause_remaining: Option<Duration>,
}

/// The names of a stream's consumers, from `Stream::consumer_names`.
pub struct ConsumerNames {
    pages: Pager<String>,
}

/// The infos of a stream's consumers, from `Stream::consumers`.
pub struct Consumers {
    pages: Pager<Info>,
}

impl ConsumerNames {
    pub(crate) fn new(context: Context, stream: String) -> ConsumerNames {
        ConsumerNames {
            pages: Pager::new(context, format!("CONSUMER.NAMES.{stream}")),
        }
    }
}

impl Consumers {
    pub(crate) fn new(context: Context, stream: String) -> Consumers {
        Consumers {
            pages: Pager::new(context, format!("CONSUMER.LIST.{stream}")),
        }
    }
}

impl Stream for ConsumerNames {
    type Item = Result<String, RequestError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().pages.poll_next_item(cx)
    }
}

impl Stream for Consumers {
    type Item = Result<Info, RequestError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().pages.poll_next_item(cx)
    }
}

/// One page of a paged list; the list's field is `consumers` in both APIs.
#[derive(Deserialize)]
struct Page<T> {
    total: usize,
    #[serde(default = "Option::default")]
    consumers: Option<Vec<T>>,
}

/// Requests page after page at growing offsets until `total` items came.
struct Pager<T> {
    context: Context,
    subject: String,
    offset: usize,
    items: VecDeque<T>,
    request: Option<BoxFuture<'static, Result<Page<T>, RequestError>>>,
    done: bool,
}

impl<T: DeserializeOwned + Send + 'static> Pager<T> {
    fn new(context: Context, subject: String) -> Pager<T> {
        Pager {
            context,
            subject,
            offset: 0,
            items: VecDeque::new(),
            request: None,
            done: false,
        }
    }

    fn poll_next_item(
        &mut self,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<T, RequestError>>> {
        loop {
            if let Some(item) = self.items.pop_front() {
                return Poll::Ready(Some(Ok(item)));
            }
            if self.done {
                return Poll::Ready(None);
            }
            let request = self.request.get_or_insert_with(|| {
                let (context, subject, offset) =
                    (self.context.clone(), self.subject.clone(), self.offset);
                Box::pin(async move {
                    match context
                        .request(subject, &json!({ "offset": offset }))
                        .await?
                    {
                        Response::Ok(page) => Ok(page),
                        Response::Err { error } => {
                            Err(RequestError::with_source(RequestErrorKind::Other, error))
                        }
                    }
                })
            });
            let page = match request.poll_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(page) => page,
            };
            self.request = None;
            let page = match page {
                Ok(page) => page,
                Err(error) => {
                    self.done = true;
                    return Poll::Ready(Some(Err(error)));
                }
            };
            let items = page.consumers.unwrap_or_default();
            self.offset += items.len();
            // An empty page ends the list even if `total` promised more.
            self.done = items.is_empty() || self.offset >= page.total;
            self.items.extend(items);
        }
    }
}
