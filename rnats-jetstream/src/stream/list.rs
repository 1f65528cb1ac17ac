//! Listing streams page by page (`STREAM.NAMES`, `STREAM.LIST`) as `futures` streams, on the
//! pager the consumer listings share.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use serde::Serialize;

use super::Info;
use crate::context::Context;
use crate::paging::{Listed, Pages};
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
///
/// A clustered nats-server (2.12+) lists a stream it could not reach in time, or holds
/// offline, by name only: read those from [`missing`](Self::missing) and
/// [`offline`](Self::offline) as the listing goes, and after it ends.
///
/// ```no_run
/// # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
/// use futures_util::TryStreamExt;
/// let mut streams = jetstream.streams();
/// while let Some(info) = streams.try_next().await? {
///     println!("{}", info.config.name);
/// }
/// for name in streams.missing() {
///     println!("{name}: no answer");
/// }
/// # Ok(()) }
/// ```
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

    /// The streams the pages read so far could not list: their servers did not answer in
    /// time, or hold them offline (those are in [`offline`](Self::offline) too). A stream
    /// whose replicas are all offline can be listed, from its configuration alone, and be
    /// missing as well.
    pub fn missing(&self) -> &[String] {
        self.pages.missing()
    }

    /// The streams the pages read so far found offline, with the server's reason (e.g. a
    /// configuration this server's version cannot run).
    pub fn offline(&self) -> &BTreeMap<String, String> {
        self.pages.offline()
    }
}

impl Listed for Info {
    fn listed_name(&self) -> &str {
        &self.config.name
    }
}

impl futures_util::Stream for Streams {
    type Item = Result<Info, StreamsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.pages.poll_next_item(cx)
    }
}
