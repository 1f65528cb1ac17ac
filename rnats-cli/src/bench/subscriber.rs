//! One subscribing client of a `sub` or `pubsub` run.

use std::time::Instant;

use futures_util::StreamExt;
use rnats::{Client, Subscriber};

use super::supervisor::{Counter, StopSignal};
use crate::error::CliError;
use crate::stats::Span;

/// What a subscriber is told to do.
#[derive(Debug)]
pub(super) struct Receiver {
    /// Its connection, kept open for as long as the subscription is read.
    pub(super) client: Client,
    /// The subscription, made and flushed before any publisher started.
    pub(super) subscription: Subscriber,
    /// Messages it should receive.
    pub(super) expected: u64,
    /// Where progress goes.
    pub(super) counter: Counter,
    /// Raised when the run has stalled and waiting on is pointless.
    pub(super) stop: StopSignal,
}

/// What a subscriber got.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reception {
    /// Messages received.
    pub(super) received: u64,
    /// Messages it should have received.
    pub(super) expected: u64,
    /// Messages the client discarded because the subscription queue was full.
    pub(super) dropped: u64,
    /// From the first message to the last; `None` unless all expected messages came.
    pub(super) span: Option<Span>,
}

impl Receiver {
    /// Reads messages until all expected ones arrived, the stream ended, or the supervisor
    /// said stop. Timing runs from the first message to the last, as in `nats bench`.
    pub(super) async fn run(mut self) -> Result<Reception, CliError> {
        let mut received = 0;
        let mut bytes = 0u64;
        let mut first = None;
        let mut end = None;
        let stopped = self.stop.stopped();
        tokio::pin!(stopped);
        while received < self.expected {
            tokio::select! {
                biased;
                message = self.subscription.next() => {
                    let Some(message) = message else { break };
                    // Reading the clock only at the ends keeps it out of the hot loop.
                    if received == 0 {
                        first = Some(Instant::now());
                    }
                    received += 1;
                    bytes += message.payload.len() as u64;
                    self.counter.set(received);
                    if received == self.expected {
                        end = Some(Instant::now());
                    }
                }
                () = &mut stopped => break,
            }
        }
        let span = first.zip(end).map(|(start, end)| Span {
            msgs: received,
            bytes,
            start,
            end,
        });
        let dropped = self.subscription.dropped();
        drop(self.client);
        Ok(Reception {
            received,
            expected: self.expected,
            dropped,
            span,
        })
    }
}
