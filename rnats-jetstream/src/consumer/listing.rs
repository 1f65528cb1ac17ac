//! Listing a stream's consumers (`CONSUMER.NAMES`, `CONSUMER.LIST`), page by page, and the
//! answer to pausing one.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::Stream;
use rnats_core::datetime::DateTime;
use serde::{Deserialize, Serialize};

use super::Info;
use crate::context::{Context, RequestError};
use crate::paging::{Listed, Pages};

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
    pages: Pages<String>,
}

/// The infos of a stream's consumers, from `Stream::consumers`.
///
/// A clustered nats-server (2.12+) lists a consumer it could not reach in time, or holds
/// offline, by name only: read those from [`missing`](Self::missing) and
/// [`offline`](Self::offline) as the listing goes, and after it ends.
pub struct Consumers {
    pages: Pages<Info>,
}

impl ConsumerNames {
    pub(crate) fn new(context: Context, stream: String) -> ConsumerNames {
        ConsumerNames {
            pages: Pages::new(context, format!("CONSUMER.NAMES.{stream}"), Unfiltered {}),
        }
    }
}

impl Consumers {
    pub(crate) fn new(context: Context, stream: String) -> Consumers {
        Consumers {
            pages: Pages::new(context, format!("CONSUMER.LIST.{stream}"), Unfiltered {}),
        }
    }

    /// The consumers the pages read so far could not list: their servers did not answer in
    /// time, or hold them offline (those are in [`offline`](Self::offline) too).
    pub fn missing(&self) -> &[String] {
        self.pages.missing()
    }

    /// The consumers the pages read so far found offline, with the server's reason.
    pub fn offline(&self) -> &BTreeMap<String, String> {
        self.pages.offline()
    }
}

impl Listed for Info {
    fn listed_name(&self) -> &str {
        &self.name
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

/// The body of the consumer listings besides the page's offset: nothing.
#[derive(Serialize, Clone)]
struct Unfiltered {}
