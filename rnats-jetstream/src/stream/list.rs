//! Listing streams page by page (`STREAM.NAMES`, `STREAM.LIST`) as `futures` streams, on the
//! pager the consumer listings share.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use serde::Serialize;

use super::Info;
use crate::context::Context;
use crate::paging::Pages;
use crate::stream_errors::StreamsError;

/// The names of the account's streams (or of those holding a subject), as a
/// [`futures_util::Stream`].
pub struct StreamNames {
    pages: Pages<String>,
}

/// The body of `STREAM.NAMES`: an optional subject the streams must hold.
#[derive(Serialize, Clone)]
struct NamesFilter {
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
}

impl StreamNames {
    pub(crate) fn new(context: Context, subject: Option<String>) -> StreamNames {
        StreamNames {
            pages: Pages::new(context, "STREAM.NAMES".to_owned(), NamesFilter { subject }),
        }
    }
}

impl futures_util::Stream for StreamNames {
    type Item = Result<String, StreamsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.pages.poll_next_item(cx)
    }
}

/// The infos of the account's streams, as a [`futures_util::Stream`].
pub struct Streams {
    pages: Pages<Info>,
}

impl Streams {
    pub(crate) fn new(context: Context) -> Streams {
        Streams {
            pages: Pages::new(
                context,
                "STREAM.LIST".to_owned(),
                NamesFilter { subject: None },
            ),
        }
    }
}

impl futures_util::Stream for Streams {
    type Item = Result<Info, StreamsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.pages.poll_next_item(cx)
    }
}
