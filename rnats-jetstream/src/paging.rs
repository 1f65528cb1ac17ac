//! Walking the paged JetStream API listings (`STREAM.NAMES`, `STREAM.LIST`,
//! `CONSUMER.NAMES.<stream>`, `CONSUMER.LIST.<stream>`, the subject counts of `STREAM.INFO`):
//! which offset to ask for next, and when the listing is over.
//!
//! Each reply carries its place (`total`, `offset`, `limit`) and a page of items. nats-server
//! echoes the offset asked for in every one (`ApiPaged` in `server/jetstream_api.go`, a field
//! without `omitempty`), so a reply naming another offset is not the page asked for. Taking it
//! anyway would let a peer that ignores the offset hand back the same page until its `total`
//! is reached, and a caller collecting every page would loop and grow for as long as that
//! `total` says.

use std::collections::VecDeque;
use std::fmt;
use std::task::{Context as TaskContext, Poll};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::context::{Context, RequestError, RequestErrorKind};
use crate::response::Response;

/// Where a paged listing stands: the offset to ask for next, and whether it is over.
///
/// Feed it each reply with [`handle_page`](Self::handle_page): the cursor only moves forward,
/// past the items of a page that answered the offset asked for, so no item is yielded twice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageCursor {
    offset: usize,
    done: bool,
}

impl PageCursor {
    /// A listing that has not had its first page yet.
    pub fn new() -> PageCursor {
        PageCursor::default()
    }

    /// The offset to ask for next.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Whether the listing is over: the last page came, or one was refused.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Takes in the reply to a request for [`offset`](Self::offset): the `offset` and `total`
    /// it names and how many items it carries. A page naming another offset is refused and
    /// ends the listing; its items must not be used.
    pub fn handle_page(
        &mut self,
        offset: usize,
        total: usize,
        items: usize,
    ) -> Result<(), UnexpectedPageError> {
        // An empty page ends the listing whatever place it names: nats-server clamps the
        // offset to the count when items went away between two pages, and sends offset 0
        // when no subject matches a stream info's filter any more. Nothing repeats from it.
        if items == 0 {
            self.done = true;
            return Ok(());
        }
        if offset != self.offset {
            self.done = true;
            return Err(UnexpectedPageError {
                asked: self.offset,
                got: offset,
            });
        }
        // A page longer than the server's `limit` is taken whole: it still moves forward.
        self.offset = self.offset.saturating_add(items);
        self.done = self.offset >= total;
        Ok(())
    }

    /// Ends the listing, after a request that failed.
    pub fn finish(&mut self) {
        self.done = true;
    }
}

/// A reply to a paged listing that is not the page asked for: it names another offset.
/// Taking it would yield items again (or skip some), so the listing ends with a
/// [`RequestError`] of kind [`Other`](RequestErrorKind::Other) caused by this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnexpectedPageError {
    asked: usize,
    got: usize,
}

impl UnexpectedPageError {
    /// The offset asked for.
    pub fn asked(&self) -> usize {
        self.asked
    }

    /// The offset the reply named (0 when it named none).
    pub fn got(&self) -> usize {
        self.got
    }
}

impl fmt::Display for UnexpectedPageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "asked for the page at offset {}, got the page at offset {}",
            self.asked, self.got
        )
    }
}

impl std::error::Error for UnexpectedPageError {}

impl From<UnexpectedPageError> for RequestError {
    fn from(error: UnexpectedPageError) -> Self {
        RequestError::with_source(RequestErrorKind::Other, error)
    }
}

/// Fetches the page starting at an offset.
type FetchPage<T> =
    Box<dyn Fn(usize) -> BoxFuture<'static, Result<Page<T>, RequestError>> + Send + Sync>;

/// One page of a paged API listing: its place and its items.
#[derive(Debug, Deserialize)]
pub(crate) struct Page<T> {
    total: usize,
    /// Read as 0 when missing. Every nats-server sends it; 0 is right for the first page
    /// only, so a later page without it is refused as not the page asked for, never taken
    /// for it.
    #[serde(default)]
    offset: usize,
    /// The items; the server names the array for what it lists, and sends `null` for none.
    #[serde(rename = "streams", alias = "consumers")]
    items: Option<Vec<T>>,
}

/// Items of a paged listing, one page requested when the last is used up.
pub(crate) struct Pages<T> {
    fetch: FetchPage<T>,
    cursor: PageCursor,
    items: VecDeque<T>,
    pending: Option<BoxFuture<'static, Result<Page<T>, RequestError>>>,
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
            cursor: PageCursor::new(),
            items: VecDeque::new(),
            pending: None,
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
            if self.cursor.is_done() {
                return Poll::Ready(None);
            }
            let offset = self.cursor.offset();
            let pending = self.pending.get_or_insert_with(|| (self.fetch)(offset));
            let result = match pending.poll_unpin(cx) {
                Poll::Ready(result) => result,
                Poll::Pending => return Poll::Pending,
            };
            self.pending = None;
            let page = match result {
                Ok(page) => page,
                Err(error) => {
                    self.cursor.finish();
                    return Poll::Ready(Some(Err(error)));
                }
            };
            let items = page.items.unwrap_or_default();
            if let Err(error) = self
                .cursor
                .handle_page(page.offset, page.total, items.len())
            {
                return Poll::Ready(Some(Err(error.into())));
            }
            self.items = items.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_at_the_offsets_asked_for_move_forward_to_the_total() {
        let mut cursor = PageCursor::new();
        assert_eq!(cursor.handle_page(0, 5, 2), Ok(()));
        assert_eq!((cursor.offset(), cursor.is_done()), (2, false));
        // Longer than the server's limit: still taken, still forward.
        assert_eq!(cursor.handle_page(2, 5, 3), Ok(()));
        assert_eq!((cursor.offset(), cursor.is_done()), (5, true));
    }

    #[test]
    fn a_page_at_another_offset_is_refused_and_ends_the_listing() {
        let mut cursor = PageCursor::new();
        cursor.handle_page(0, 1_000_000, 2).unwrap();
        let error = cursor.handle_page(0, 1_000_000, 2).unwrap_err();
        assert_eq!((error.asked(), error.got()), (2, 0));
        assert!(cursor.is_done());
        assert_eq!(cursor.offset(), 2);
        // Ahead is refused too: items would be skipped.
        let mut cursor = PageCursor::new();
        assert!(cursor.handle_page(7, 10, 1).is_err());
    }

    #[test]
    fn an_empty_page_ends_the_listing_whatever_its_place() {
        // The server clamps the offset to the count when the list shrank between pages.
        let mut cursor = PageCursor::new();
        cursor.handle_page(0, 10, 4).unwrap();
        assert_eq!(cursor.handle_page(3, 3, 0), Ok(()));
        assert!(cursor.is_done());
        let mut cursor = PageCursor::new();
        cursor.handle_page(0, 10, 4).unwrap();
        assert_eq!(cursor.handle_page(4, 10, 0), Ok(()));
        assert!(cursor.is_done());
    }

    #[test]
    fn a_missing_offset_passes_on_the_first_page_only() {
        let page = r#"{"total": 4, "limit": 2, "streams": ["a", "b"]}"#;
        let page: Page<String> = serde_json::from_str(page).unwrap();
        let mut cursor = PageCursor::new();
        cursor.handle_page(page.offset, page.total, 2).unwrap();
        let error = cursor.handle_page(page.offset, page.total, 2).unwrap_err();
        assert_eq!((error.asked(), error.got()), (2, 0));
    }
}
