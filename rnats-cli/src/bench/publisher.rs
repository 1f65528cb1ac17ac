//! One publishing client of a `pub` or `pubsub` run.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use rnats::{Client, Subject};
use tokio::sync::Barrier;

use super::supervisor::Counter;
use crate::error::CliError;
use crate::stats::Span;

/// What a publisher is told to do.
#[derive(Debug)]
pub(super) struct Publisher {
    /// Its own connection.
    pub(super) client: Client,
    /// Where to publish.
    pub(super) subject: Subject,
    /// What to publish, every time.
    pub(super) payload: Bytes,
    /// How many messages.
    pub(super) msgs: u64,
    /// Released once every publisher is connected, so they start together.
    pub(super) start: Arc<Barrier>,
    /// Where progress goes.
    pub(super) counter: Counter,
}

impl Publisher {
    /// Publishes every message, then flushes: the span ends when the server has them all.
    pub(super) async fn run(self) -> Result<Span, CliError> {
        self.start.wait().await;
        let start = Instant::now();
        for n in 1..=self.msgs {
            self.client
                .publish(self.subject.clone(), self.payload.clone())
                .await?;
            self.counter.set(n);
        }
        self.client.flush().await?;
        Ok(Span::of(
            self.msgs,
            self.payload.len(),
            start,
            Instant::now(),
        ))
    }
}
