//! Creating an ordered consumer again after a fault: the consumer it replaces is deleted
//! first (on the wire, without waiting for the answer), then the create is sent, and sent
//! again as soon as the connection tells of something that may have lost it.
//!
//! A create sent while the meta leader is being elected gets no answer at all, however long
//! it waits. Giving up on it only after its bound (the context's timeout, else 10 s, as in
//! async-nats) loses whatever is left of that bound once the election is over: ordered
//! consumers came back up to 9 s after a heal that way (issue 32). But the client hears of
//! what ends an election: the servers' routes go and come back (each a
//! [`ClusterChanged`](rnats_core::ConnectionEvent::ClusterChanged), as the server's INFO
//! names other peers), or the connection itself moves. On each of those the same create is
//! sent again at once, with the same name and configuration, while the earlier sends go on
//! waiting: a create that was slow rather than lost is still answered, and a second one that
//! lands after it finds the consumer it made (`CreateOrUpdate` with the same configuration
//! changes nothing). From the first such news on the cluster is in flux (an election may
//! follow a heal), so the create is also sent again every second until one is answered.
//! With no news at all a lost create is sent again only once its bound is up, which is what
//! async-nats' own tests of the recreation pin. None of this costs anything in steady state.

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use rnats_core::{ConnectionEvent, Request};

use super::{Consumer, DeliverPolicy, FromConsumer, Info, IntoConsumerConfig};
use crate::consumer_errors::{ConsumerError, ConsumerErrorKind};
use crate::context::Context;

/// Once news came (see the module docs): how long a send waits for its answer before the
/// same create is sent again.
const RESEND_IN_FLUX: Duration = Duration::from_secs(1);
/// The most sends waiting at once.
const MOST_IN_FLIGHT: usize = 10;
/// The longest one send waits when nothing else bounds it (no context or client timeout):
/// async-nats' floor for a recreation.
const SEND_BOUND: Duration = Duration::from_secs(10);

/// Where an ordered consumer made as `info` says starts again when it is recreated before it
/// delivered anything: with `policy`, its own, unless that policy picks its start at the
/// moment the consumer is made, which `New` and `Last` always do, and `LastPerSubject` when
/// nothing matched it then (a watch of an empty bucket, say). The server starts such a
/// consumer at one sequence and reads on from there, and reports the sequence before it as
/// `info.delivered.stream_sequence`. Made again with its own policy, the consumer would skip
/// what was stored in between (`New`), or keep only the last of it (`Last`) or the last of
/// each subject (the watch would miss every revision of a key but its last), so it starts
/// after that sequence instead. A `LastPerSubject` consumer that had messages pending cannot
/// be made again that way: it keeps its policy, and what was stored in between comes as the
/// last of each subject.
///
/// `info` must be what the server answered when it made the consumer, as
/// [`Consumer::cached_info`] is for a consumer fresh from `create_consumer`.
pub(crate) fn first_start(policy: DeliverPolicy, info: &Info) -> DeliverPolicy {
    let from_made_at = match policy {
        DeliverPolicy::New | DeliverPolicy::Last => true,
        DeliverPolicy::LastPerSubject => info.num_pending == 0,
        DeliverPolicy::All
        | DeliverPolicy::ByStartSequence { .. }
        | DeliverPolicy::ByStartTime { .. } => false,
    };
    match from_made_at {
        true => after(info.delivered.stream_sequence),
        false => policy,
    }
}

/// Where an ordered consumer made again starts: with `policy`, its first start (see
/// [`first_start`]), while it has delivered nothing, else right after `last_delivered`, the
/// stream sequence of the last message it delivered.
pub(crate) fn restart_at(policy: DeliverPolicy, last_delivered: u64) -> DeliverPolicy {
    match last_delivered {
        0 => policy,
        last => after(last),
    }
}

/// The start right after stream sequence `sequence`. The sequence is the server's word (an
/// answer's field, an ack subject's token): one at `u64::MAX` starts there again rather than
/// overflowing.
fn after(sequence: u64) -> DeliverPolicy {
    DeliverPolicy::ByStartSequence {
        start_sequence: sequence.saturating_add(1),
    }
}

/// Queues the deletion of the consumer `old` on `stream` ahead of anything sent after it,
/// without waiting for the answer: the old consumer may still exist (a gap, not a deletion),
/// and a delete waiting on an election (its node died) must not hold the new consumer back.
pub(crate) async fn delete_replaced(context: &Context, stream: &str, old: &str) {
    let request = Request::new().payload(Bytes::from_static(b"{}"));
    // A failure here (the client closing) shows in the create that follows.
    let _ = context
        .send_request(format!("CONSUMER.DELETE.{stream}.{old}"), request)
        .await;
}

/// Deletes the ordered consumer `name` on `stream` in the background, for an ordered
/// stream dropped by its owner: the server would remove it after its inactive threshold
/// (30 s), delivering heartbeats to nobody and counting against the stream's and the
/// account's consumer limits meanwhile, which adds up for code that opens and drops watches
/// often. As nats.go does when its library-made consumers are unsubscribed. Nothing is sent
/// outside a tokio runtime (a stream dropped after its runtime ended).
pub(crate) fn delete_when_dropped(context: &Context, stream: &str, name: &str) {
    if name.is_empty() {
        return;
    }
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let context = context.clone();
        let stream = stream.to_owned();
        let name = name.to_owned();
        runtime.spawn(async move { delete_replaced(&context, &stream, &name).await });
    }
}

/// Creates (or finds) the consumer `config` describes on `stream`. Each send is bounded by
/// `context`'s timeout and by [`SEND_BOUND`]; the same create is sent again when every send
/// timed out, or at once on news that a send may have been lost and every
/// [`RESEND_IN_FLUX`] after it (see the module docs). The
/// first answer decides, except a send timing out, which leaves the others to answer. It
/// never gives up on its own: the caller bounds it, or keeps trying anyway.
pub(crate) async fn create_resending<C>(
    context: &Context,
    config: &C,
    stream: &str,
) -> Result<Consumer<C>, ConsumerError>
where
    C: IntoConsumerConfig + FromConsumer + Clone,
{
    // Listening before the first send, so no news between is missed.
    let mut news = Some(context.client.events());
    let mut in_flux = false;
    let mut sends = FuturesUnordered::new();
    loop {
        if sends.len() < MOST_IN_FLIGHT {
            let send = context.create_consumer_on_stream(config.clone(), stream);
            sends.push(async move {
                rnats_core::runtime::timeout(SEND_BOUND, send)
                    .await
                    .unwrap_or_else(|_| Err(ConsumerError::new(ConsumerErrorKind::TimedOut)))
            });
        }
        let mut resend = std::pin::pin!(rnats_core::runtime::sleep(RESEND_IN_FLUX));
        loop {
            tokio::select! {
                answer = sends.next() => match answer {
                    Some(Ok(consumer)) => return Ok(consumer),
                    // Lost on the way, or not answered yet: the later sends may still be.
                    Some(Err(error)) if matches!(error.kind(), ConsumerErrorKind::TimedOut) => {}
                    Some(Err(error)) => return Err(error),
                    // Every send timed out: send again now.
                    None => break,
                },
                event = next_event(&mut news) => match event {
                    Some(event) if may_have_lost_a_request(&event) => {
                        in_flux = true;
                        break;
                    }
                    Some(_) => {}
                    // The client is closing: the sends end with it.
                    None => news = None,
                },
                () = resend.as_mut(), if in_flux => break,
            }
        }
    }
}

/// The next connection event, or never once there are no more.
async fn next_event(news: &mut Option<rnats_core::Events>) -> Option<ConnectionEvent> {
    match news {
        Some(events) => events.next().await,
        None => std::future::pending().await,
    }
}

/// News after which a request in flight may be gone without an answer: a route cut or back,
/// a new connection, or events missed (which may have been those).
fn may_have_lost_a_request(event: &ConnectionEvent) -> bool {
    matches!(
        event,
        ConnectionEvent::ClusterChanged
            | ConnectionEvent::Reconnected
            | ConnectionEvent::Connected
            | ConnectionEvent::Lagged(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A consumer's create answer with `num_pending` and the stream sequence it started after.
    fn info(num_pending: u64, stream_sequence: u64) -> Info {
        serde_json::from_value(serde_json::json!({
            "stream_name": "S",
            "name": "C",
            "created": "2026-12-06T10:00:00Z",
            "config": { "deliver_policy": "all", "ack_policy": "none", "replay_policy": "instant" },
            "delivered": { "consumer_seq": 0, "stream_seq": stream_sequence },
            "ack_floor": { "consumer_seq": 0, "stream_seq": 0 },
            "num_ack_pending": 0,
            "num_redelivered": 0,
            "num_waiting": 0,
            "num_pending": num_pending,
        }))
        .unwrap()
    }

    fn from(start_sequence: u64) -> DeliverPolicy {
        DeliverPolicy::ByStartSequence { start_sequence }
    }

    #[test]
    fn a_policy_that_starts_where_it_was_made_starts_after_that_sequence() {
        assert_eq!(first_start(DeliverPolicy::New, &info(0, 41)), from(42));
        assert_eq!(first_start(DeliverPolicy::Last, &info(1, 41)), from(42));
        assert_eq!(
            first_start(DeliverPolicy::LastPerSubject, &info(0, 41)),
            from(42)
        );
        // Pending messages: the last of each subject still has to come.
        assert_eq!(
            first_start(DeliverPolicy::LastPerSubject, &info(3, 41)),
            DeliverPolicy::LastPerSubject
        );
        assert_eq!(
            first_start(DeliverPolicy::All, &info(0, 41)),
            DeliverPolicy::All
        );
    }

    #[test]
    fn a_restart_goes_on_after_the_last_message_delivered() {
        assert_eq!(restart_at(DeliverPolicy::All, 0), DeliverPolicy::All);
        assert_eq!(restart_at(DeliverPolicy::All, 7), from(8));
        assert_eq!(restart_at(DeliverPolicy::New, 7), from(8));
    }

    #[test]
    fn a_sequence_at_the_top_of_its_range_does_not_overflow() {
        // Both come off the network: a create answer's field, an ack subject's token.
        assert_eq!(
            first_start(DeliverPolicy::New, &info(0, u64::MAX)),
            from(u64::MAX)
        );
        assert_eq!(restart_at(DeliverPolicy::All, u64::MAX), from(u64::MAX));
    }
}
