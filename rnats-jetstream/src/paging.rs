//! The pager the paged JetStream API listings share (`STREAM.NAMES`, `STREAM.LIST`,
//! `CONSUMER.NAMES.<stream>`, `CONSUMER.LIST.<stream>`): one page requested at a time, at
//! growing offsets, until `total` items came.

use std::collections::VecDeque;
use std::task::{Context as TaskContext, Poll};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::context::{Context, RequestError};
use crate::response::Response;

/// Fetches the page starting at an offset.
type FetchPage<T> =
    Box<dyn Fn(usize) -> BoxFuture<'static, Result<Page<T>, RequestError>> + Send + Sync>;

/// One page of a paged API listing: its items and how many there are in all.
#[derive(Debug, Deserialize)]
pub(crate) struct Page<T> {
    total: usize,
    /// The items; the server names the array for what it lists, and sends `null` for none.
    #[serde(rename = "streams", alias = "consumers")]
    items: Option<Vec<T>>,
}

/// Items of a paged listing, one page requested when the last is used up.
pub(crate) struct Pages<T> {
    fetch: FetchPage<T>,
    offset: usize,
    items: VecDeque<T>,
    pending: Option<BoxFuture<'static, Result<Page<T>, RequestError>>>,
    done: bool,
}

impl<T: DeserializeOwned + Send + 'static> Pages<T> {
    /// Pages of `subject`'s listing; each request is `body` with the page's `offset` added.
    pub(crate) fn new<B>(context: Context, subject: String, body: B) -> Pages<T>
    where
        B: Serialize + Clone + Send + Sync + 'static,
    {
        #[derive(Serialize)]
        struct Paged<B> {
            offset: usize,
            #[serde(flatten)]
            body: B,
        }
        let fetch: FetchPage<T> = Box::new(move |offset| {
            let (context, subject) = (context.clone(), subject.clone());
            let request = Paged {
                offset,
                body: body.clone(),
            };
            async move {
                let response: Response<Page<T>> = context.request(subject, &request).await?;
                response.into_result().map_err(RequestError::from)
            }
            .boxed()
        });
        Pages {
            fetch,
            offset: 0,
            items: VecDeque::new(),
            pending: None,
            done: false,
        }
    }

    /// The next item, fetching the next page when needed; `None` after the last page or
    /// after an error.
    pub(crate) fn poll_next_item(
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
            let offset = self.offset;
            let pending = self.pending.get_or_insert_with(|| (self.fetch)(offset));
            let result = match pending.poll_unpin(cx) {
                Poll::Ready(result) => result,
                Poll::Pending => return Poll::Pending,
            };
            self.pending = None;
            match result {
                Ok(page) => {
                    let items = page.items.unwrap_or_default();
                    self.offset += items.len();
                    // An empty page ends it too, so a miscounted total cannot loop us.
                    self.done = items.is_empty() || self.offset >= page.total;
                    self.items = items.into();
                }
                Err(error) => {
                    self.done = true;
                    return Poll::Ready(Some(Err(error)));
                }
            }
        }
    }
}
