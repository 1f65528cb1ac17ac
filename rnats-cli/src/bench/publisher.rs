//! One publishing client of a `pub` or `pubsub` run.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use rnats::{Client, HeaderMap, Subject};
use tokio::sync::Barrier;

use super::multisubject::MultiSubject;
use super::pace::Pace;
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
    /// Headers of every message (`--header`).
    pub(super) headers: Option<HeaderMap>,
    /// How it is held back (`--sleep`, `--throughput`).
    pub(super) pace: Pace,
    /// `--multisubject`: each message on a subject of its own.
    pub(super) multi: Option<MultiSubject>,
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
        let pacer = (!self.pace.is_free()).then(|| self.pace.start());
        let mut seed = u64::from(start.elapsed().subsec_nanos()) | 1;
        for n in 1..=self.msgs {
            match (&self.headers, &self.multi) {
                (None, None) => {
                    self.client
                        .publish(self.subject.clone(), self.payload.clone())
                        .await?
                }
                (headers, multi) => {
                    let subject = match multi {
                        Some(multi) => multi.subject(&self.subject, n, &mut seed),
                        None => self.subject.to_string(),
                    };
                    let headers = headers.clone().unwrap_or_default();
                    self.client
                        .publish_with_headers(subject, headers, self.payload.clone())
                        .await?
                }
            }
            self.counter.set(n);
            if let Some(pacer) = &pacer {
                pacer.after(n).await;
            }
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
