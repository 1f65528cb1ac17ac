//! Walking the paged JetStream API listings (`STREAM.NAMES`, `STREAM.LIST`,
//! `CONSUMER.NAMES.<stream>`, `CONSUMER.LIST.<stream>`, the subject counts of `STREAM.INFO`):
//! which offset to ask for next, and when the listing is over.
//!
//! Each reply carries its place (`total`, `offset`, `limit`) and a page of items; from
//! nats-server 2.12 a stream or consumer listing also names the items of the page it could
//! not include (`missing`: their servers did not answer in time, or hold them offline, with
//! the reason in `offline`). Those still count towards the page's place. nats-server
//! echoes the offset asked for in every one (`ApiPaged` in `server/jetstream_api.go`, a field
//! without `omitempty`), so a reply naming another offset is not the page asked for. Taking it
//! anyway would let a peer that ignores the offset hand back the same page until its `total`
//! is reached, and a caller collecting every page would loop and grow for as long as that
//! `total` says.

use std::collections::{BTreeMap, VecDeque};
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
    /// it names and how many items it covers: those it carries, and those it names `missing`
    /// or `offline` without carrying them, each once. A page naming another offset is refused
    /// and ends the listing; its items must not be used.
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
    pub(crate) total: usize,
    /// Read as 0 when missing. Every nats-server sends it; 0 is right for the first page
    /// only, so a later page without it is refused as not the page asked for, never taken
    /// for it.
    #[serde(default)]
    pub(crate) offset: usize,
    /// The items; the server names the array for what it lists, and sends `null` for none.
    #[serde(rename = "streams", alias = "consumers")]
    pub(crate) items: Option<Vec<T>>,
    /// The names of the page's items that could not be listed (nats-server 2.12+).
    #[serde(default)]
    pub(crate) missing: Option<Vec<String>>,
    /// The page's items that are offline, by name, with the reason (nats-server 2.12+).
    #[serde(default)]
    pub(crate) offline: Option<BTreeMap<String, String>>,
}

/// An item of a paged listing, by the name the listing's `missing` and `offline` use.
pub(crate) trait Listed {
    /// The stream's or consumer's name.
    fn listed_name(&self) -> &str;
}

impl Listed for String {
    fn listed_name(&self) -> &str {
        self
    }
}

impl<T: Listed> Page<T> {
    /// How many places of the listing the page covers (see [`places_covered`]).
    pub(crate) fn covered(&self, items: &[T]) -> usize {
        let listed: Vec<&str> = items.iter().map(Listed::listed_name).collect();
        let missing = self.missing.iter().flatten().map(String::as_str);
        let offline = self
            .offline
            .iter()
            .flat_map(BTreeMap::keys)
            .map(String::as_str);
        places_covered(&listed, missing.chain(offline))
    }
}

/// How many places of a stream or consumer listing a page covers, for
/// [`PageCursor::handle_page`]: the names it `listed`, and those it could not list
/// (`unlisted`: its `missing` and `offline` names, nats-server 2.12+). A name can be both
/// listed and missing (the server lists a stream whose replicas are all offline from its
/// assignment and calls it missing too), and an offline name is missing as well: each counts
/// once.
pub fn places_covered<'a>(listed: &[&str], unlisted: impl IntoIterator<Item = &'a str>) -> usize {
    let mut extra: Vec<&str> = unlisted
        .into_iter()
        .filter(|name| !listed.contains(name))
        .collect();
    extra.sort_unstable();
    extra.dedup();
    listed.len().saturating_add(extra.len())
}

/// Items of a paged listing, one page requested when the last is used up.
pub(crate) struct Pages<T> {
    fetch: FetchPage<T>,
    cursor: PageCursor,
    items: VecDeque<T>,
    pending: Option<BoxFuture<'static, Result<Page<T>, RequestError>>>,
    /// The names the pages so far reported missing, in the order reported.
    missing: Vec<String>,
    /// The items the pages so far reported offline, with the reason.
    offline: BTreeMap<String, String>,
}

impl<T: Listed + DeserializeOwned + Send + 'static> Pages<T> {
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
            missing: Vec::new(),
            offline: BTreeMap::new(),
        }
    }

    /// The names the pages fetched so far could not list.
    pub(crate) fn missing(&self) -> &[String] {
        &self.missing
    }

    /// The items the pages fetched so far found offline, with the reason.
    pub(crate) fn offline(&self) -> &BTreeMap<String, String> {
        &self.offline
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
            let mut page = match result {
                Ok(page) => page,
                Err(error) => {
                    self.cursor.finish();
                    return Poll::Ready(Some(Err(error)));
                }
            };
            let items = page.items.take().unwrap_or_default();
            // A page the server left items out of moves past them too, or the next page
            // would start early and repeat items.
            let covered = page.covered(&items);
            if let Err(error) = self.cursor.handle_page(page.offset, page.total, covered) {
                return Poll::Ready(Some(Err(error.into())));
            }
            self.handle_missing(page.missing, page.offline);
            self.items = items.into();
        }
    }

    /// Keeps what a page reported missing or offline; a name is kept once.
    fn handle_missing(
        &mut self,
        missing: Option<Vec<String>>,
        offline: Option<BTreeMap<String, String>>,
    ) {
        for name in missing.into_iter().flatten() {
            if !self.missing.contains(&name) {
                self.missing.push(name);
            }
        }
        self.offline.extend(offline.into_iter().flatten());
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

    #[test]
    fn names_a_page_could_not_list_count_towards_its_place_once() {
        // nats-server 2.12's reply when one stream's server was gone and another's
        // configuration needs a newer server: `B` listed from its assignment and missing,
        // `C` missing and offline.
        let page = br#"{"type":"io.nats.jetstream.api.v1.stream_list_response","total":4,
            "offset":0,"limit":3,"streams":["A","B"],"missing":["B","C"],
            "offline":{"C":"unsupported - required API level: 9, current API level: 2"}}"#;
        let page: Page<String> = serde_json::from_slice(page).unwrap();
        let items = page.items.clone().unwrap();
        assert_eq!(page.covered(&items), 3);
        assert_eq!(page.missing.as_deref(), Some(&["B".into(), "C".into()][..]));
        let offline = page.offline.as_ref().unwrap();
        assert!(offline["C"].starts_with("unsupported"), "{offline:?}");
        // Without them (every server before 2.12), the items alone.
        let page: Page<String> =
            serde_json::from_str(r#"{"total": 2, "offset": 0, "streams": ["A", "B"]}"#).unwrap();
        assert_eq!(page.covered(page.items.as_ref().unwrap()), 2);
        assert!(page.missing.is_none() && page.offline.is_none());
    }

    #[test]
    fn a_page_of_missing_names_only_does_not_end_the_listing() {
        let page = r#"{"total": 3, "offset": 0, "streams": [], "missing": ["A", "B"]}"#;
        let page: Page<String> = serde_json::from_str(page).unwrap();
        let mut cursor = PageCursor::new();
        let covered = page.covered(&[]);
        cursor
            .handle_page(page.offset, page.total, covered)
            .unwrap();
        assert_eq!((cursor.offset(), cursor.is_done()), (2, false));
    }
}
