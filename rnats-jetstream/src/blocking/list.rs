//! The paged listings of streams and consumers (`STREAM.NAMES`, `STREAM.LIST`,
//! `CONSUMER.NAMES.<stream>`, `CONSUMER.LIST.<stream>`) as iterators, one page requested
//! when the last is used up, on the async listings' page cursor.

use std::collections::{BTreeMap, VecDeque};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::context::Context;
use super::stream::Stream;
use crate::context::RequestError;
use crate::paging::{Listed, Page, PageCursor};
use crate::response::Response;

/// Defines a listing: an iterator over one kind of item, with what the pages could not list.
macro_rules! listing {
    ($(#[$meta:meta])* $name:ident, $item:ty) => {
        $(#[$meta])*
        ///
        /// A failed page request is an error item and ends it. A clustered nats-server
        /// (2.12+) names by name only the items it could not reach or holds offline: read
        /// those from `missing` and `offline` as the listing goes, and after it ends.
        #[derive(Debug)]
        pub struct $name(List<$item>);

        impl $name {
            /// The items the pages read so far could not list: their servers did not
            /// answer in time, or hold them offline.
            pub fn missing(&self) -> &[String] {
                &self.0.missing
            }

            /// The items the pages read so far found offline, with the server's reason.
            pub fn offline(&self) -> &BTreeMap<String, String> {
                &self.0.offline
            }
        }

        impl Iterator for $name {
            type Item = Result<$item, RequestError>;

            fn next(&mut self) -> Option<Self::Item> {
                self.0.next_item()
            }
        }
    };
}

listing!(
    /// The names of the account's streams; from [`Context::stream_names`].
    StreamNames,
    String
);
listing!(
    /// The infos of the account's streams; from [`Context::streams`].
    Streams,
    crate::stream::Info
);
listing!(
    /// The names of a stream's consumers; from [`Stream::consumer_names`].
    ConsumerNames,
    String
);
listing!(
    /// The infos of a stream's consumers; from [`Stream::consumers`].
    Consumers,
    crate::consumer::Info
);

impl Context {
    /// The names of all streams of the account, fetched page by page as they are read.
    pub fn stream_names(&self) -> StreamNames {
        StreamNames(List::new(
            self.clone(),
            "STREAM.NAMES".to_owned(),
            json!({}),
        ))
    }

    /// The names of the streams that store `subject` (wildcards allowed).
    pub fn stream_names_for_subject<S: Into<String>>(&self, subject: S) -> StreamNames {
        let body = json!({ "subject": subject.into() });
        StreamNames(List::new(self.clone(), "STREAM.NAMES".to_owned(), body))
    }

    /// The infos of all streams of the account, fetched page by page as they are read.
    pub fn streams(&self) -> Streams {
        Streams(List::new(self.clone(), "STREAM.LIST".to_owned(), json!({})))
    }
}

impl Stream {
    /// The names of this stream's consumers, fetched page by page as they are read.
    pub fn consumer_names(&self) -> ConsumerNames {
        let subject = format!("CONSUMER.NAMES.{}", self.name);
        ConsumerNames(List::new(self.context.clone(), subject, json!({})))
    }

    /// The infos of this stream's consumers, fetched page by page as they are read.
    pub fn consumers(&self) -> Consumers {
        let subject = format!("CONSUMER.LIST.{}", self.name);
        Consumers(List::new(self.context.clone(), subject, json!({})))
    }
}

/// The items of a paged listing, one page requested when the last is used up.
#[derive(Debug)]
struct List<T> {
    context: Context,
    subject: String,
    /// The request body; each page's `offset` is set in it.
    body: Value,
    cursor: PageCursor,
    items: VecDeque<T>,
    missing: Vec<String>,
    offline: BTreeMap<String, String>,
}

impl<T> List<T> {
    fn new(context: Context, subject: String, body: Value) -> List<T> {
        List {
            context,
            subject,
            body,
            cursor: PageCursor::new(),
            items: VecDeque::new(),
            missing: Vec::new(),
            offline: BTreeMap::new(),
        }
    }
}

impl<T: Listed + DeserializeOwned> List<T> {
    /// Requests the page at the cursor and keeps its items.
    fn fetch_page(&mut self) -> Result<(), RequestError> {
        if let Value::Object(body) = &mut self.body {
            body.insert("offset".to_owned(), json!(self.cursor.offset()));
        }
        let response: Response<Page<T>> =
            self.context.request(self.subject.as_str(), &self.body)?;
        let mut page = response.into_result()?;
        let items = page.items.take().unwrap_or_default();
        // A page the server left items out of moves past them too, or the next page would
        // start early and repeat items.
        let covered = page.covered(&items);
        self.cursor.handle_page(page.offset, page.total, covered)?;
        for name in page.missing.into_iter().flatten() {
            if !self.missing.contains(&name) {
                self.missing.push(name);
            }
        }
        self.offline.extend(page.offline.into_iter().flatten());
        self.items = items.into();
        Ok(())
    }
}

impl<T: Listed + DeserializeOwned> List<T> {
    /// The next item, fetching the next page when needed; `None` after the last page or
    /// after an error.
    fn next_item(&mut self) -> Option<Result<T, RequestError>> {
        loop {
            if let Some(item) = self.items.pop_front() {
                return Some(Ok(item));
            }
            if self.cursor.is_done() {
                return None;
            }
            if let Err(error) = self.fetch_page() {
                self.cursor.finish();
                return Some(Err(error));
            }
        }
    }
}
