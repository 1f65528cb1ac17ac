//! Noticing an ordered consumer that reads a replica left behind.
//!
//! An ordered consumer is R1: the server places it on any one of its stream's replicas and it
//! delivers from that replica's copy of the stream. A replica cut off from the others by a
//! route partition stops receiving what is stored meanwhile, and after the heal it may take
//! tens of seconds to catch up (measured with nats-server 2.15.1: 20 and 39 s after a 12 s
//! partition of the stream leader, in `tests/faults.rs`). All that time the consumer is in
//! step by every sign it gives: its heartbeats name the last message it sent as the last one
//! there is, so neither a gap nor a missed heartbeat shows it (async-nats' ordered consumers
//! wait it out the same way).
//!
//! So an ordered consumer that has delivered nothing for a while asks the stream leader,
//! which is current by definition, whether a message it should have had is stored
//! (`STREAM.MSG.GET` of the first message at or after the next sequence, on each of its
//! filters). One is: the consumer is recreated after the last message delivered, which puts
//! it on a replica picked afresh. The first question comes after 10 s with no delivery (two
//! of a push consumer's idle heartbeats); each answer that finds nothing doubles the wait, up
//! to a minute, so an idle consumer (a watch of a quiet bucket) asks about once a minute; a
//! delivery starts over. A question left unanswered (3 s without an answer, or the 503 a
//! server gives while it catches up after a partition, as the consumer's own server did for
//! 8 s after the heal in the suite) is asked again 2 s later, ten times in a row at most;
//! then the waits double as above, so a client not allowed to ask costs one request a
//! minute. After a recreation this made, the next question comes 3 s after the new consumer
//! is in place, in case it landed on the same replica.
//!
//! A consumer that delivers at a pace of its own (`ReplayPolicy::Original`, a `rate_limit`)
//! may lag the stream by design and never asks.

use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::heartbeat::Monitor;
use super::recreate::restart_at;
use super::{DeliverPolicy, ReplayPolicy};
use crate::context::Context;
use crate::stream::RawMessageErrorKind;

/// The wait after the last delivery before the first question.
const FIRST_WAIT: Duration = Duration::from_secs(10);
/// The wait after a question that found the consumer behind, once it is made again.
const AFTER_RECREATION: Duration = Duration::from_secs(3);
/// The wait after a question left unanswered...
const RETRY: Duration = Duration::from_secs(2);
/// ...so many times in a row at most; then the waits double.
const MOST_RETRIES: u32 = 10;
/// The longest wait between two questions of an idle consumer.
const MOST_WAIT: Duration = Duration::from_secs(60);
/// How long one question may take before it counts as unanswered.
const ASK_BOUND: Duration = Duration::from_secs(3);

/// What the stream leader said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// A message the consumer should have delivered is stored.
    Behind,
    /// Nothing stored after what the consumer delivered matches it.
    InStep,
    /// No answer (a timeout, no leader, a server catching up).
    Unknown,
}

impl Answer {
    /// The wait before the next question after this answer, the last wait having been
    /// `wait` and `unanswered` questions in a row having gone unanswered before this one.
    /// Also the new count of those.
    fn next_wait(self, wait: Duration, unanswered: u32) -> (Duration, u32) {
        let doubled = wait.saturating_mul(2).clamp(FIRST_WAIT, MOST_WAIT);
        match self {
            Answer::Behind => (AFTER_RECREATION, 0),
            Answer::InStep => (doubled, 0),
            Answer::Unknown if unanswered < MOST_RETRIES => (RETRY, unanswered + 1),
            Answer::Unknown => (doubled, unanswered),
        }
    }
}

/// What the question needs to know of an ordered consumer besides how far it got.
#[derive(Debug, Clone)]
pub(crate) struct Position {
    pub(crate) stream_name: String,
    /// The consumer's filters; none means every subject.
    pub(crate) filters: Vec<String>,
    /// Where the consumer starts (or started again) while it has delivered nothing.
    pub(crate) deliver_policy: DeliverPolicy,
}

impl Position {
    /// A consumer's position from its filters (the single one, or the several).
    pub(crate) fn new(
        stream_name: String,
        filter_subject: &str,
        filter_subjects: &[String],
        deliver_policy: DeliverPolicy,
    ) -> Position {
        let filters = match filter_subject {
            "" => filter_subjects.to_vec(),
            one => vec![one.to_owned()],
        };
        Position {
            stream_name,
            filters,
            deliver_policy,
        }
    }

    /// The stream sequence after which the consumer owes every matching message, when that
    /// is known: after a delivery (`last_delivered`, the stream sequence of the last message
    /// delivered, 0 before the first), or for a start that names its sequence.
    fn after(&self, last_delivered: u64) -> Option<u64> {
        match restart_at(self.deliver_policy, last_delivered) {
            DeliverPolicy::All => Some(0),
            DeliverPolicy::ByStartSequence { start_sequence } => {
                Some(start_sequence.saturating_sub(1))
            }
            _ => None,
        }
    }
}

/// Whether a consumer with this pace may be checked at all (see the module docs).
pub(crate) fn checked(replay_policy: ReplayPolicy, rate_limit: u64) -> bool {
    replay_policy != ReplayPolicy::Original && rate_limit == 0
}

/// Asks the stream leader whether a message after `position` matches one of its filters.
async fn ask(context: Context, position: Position, after: u64) -> Answer {
    tokio::time::timeout(ASK_BOUND, ask_each(context, position, after))
        .await
        .unwrap_or(Answer::Unknown)
}

/// [`ask`], filter by filter.
async fn ask_each(context: Context, position: Position, after: u64) -> Answer {
    let all = [String::from(">")];
    let filters = match position.filters.as_slice() {
        [] => &all[..],
        filters => filters,
    };
    for filter in filters {
        let answer =
            crate::stream::RawMessageBuilder::new(context.clone(), position.stream_name.clone())
                .without_headers()
                .sequence(after.saturating_add(1))
                .next_by_subject(filter.as_str())
                .send()
                .await;
        match answer {
            Ok(_) => return Answer::Behind,
            Err(error) if matches!(error.kind(), RawMessageErrorKind::NoMessageFound) => {}
            Err(_) => return Answer::Unknown,
        }
    }
    Answer::InStep
}

/// Watches an ordered consumer's idle spells and asks about them (see the module docs).
pub(crate) struct StaleCheck {
    /// Off for a consumer with a pace of its own.
    enabled: bool,
    /// The wait after the last delivery (or answer) before the next question.
    wait: Duration,
    /// Questions in a row left unanswered.
    unanswered: u32,
    idle: Monitor,
    position: Position,
    asking: Option<BoxFuture<'static, Answer>>,
}

impl std::fmt::Debug for StaleCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaleCheck")
            .field("enabled", &self.enabled)
            .field("wait", &self.wait)
            .field("unanswered", &self.unanswered)
            .field("asking", &self.asking.is_some())
            .finish()
    }
}

impl StaleCheck {
    /// A check for a consumer at `position`; `enabled` as [`checked`] says.
    pub(crate) fn new(enabled: bool, position: Position) -> StaleCheck {
        StaleCheck {
            enabled,
            wait: FIRST_WAIT,
            unanswered: 0,
            idle: Monitor::with_limit(FIRST_WAIT),
            position,
            asking: None,
        }
    }

    /// A message was delivered at `now`: the idle spell, and any question, start over.
    pub(crate) fn delivered_at(&mut self, now: Instant) {
        self.asking = None;
        self.unanswered = 0;
        if self.wait != FIRST_WAIT {
            self.set_wait(FIRST_WAIT);
        }
        self.idle.seen_at(now);
    }

    /// The consumer was replaced: no question about the old one is pending, and the idle
    /// spell counts from now.
    pub(crate) fn restart(&mut self) {
        self.asking = None;
        self.idle = Monitor::with_limit(self.wait);
    }

    /// Called while the consumer has nothing to deliver, the last message it delivered
    /// being at stream sequence `last_delivered` (0 for none): whether it should be
    /// recreated, because the stream leader holds a message it should have delivered by now.
    pub(crate) fn poll_behind(
        &mut self,
        cx: &mut TaskContext<'_>,
        context: &Context,
        last_delivered: u64,
    ) -> bool {
        if !self.enabled {
            return false;
        }
        loop {
            if let Some(asking) = self.asking.as_mut() {
                let Poll::Ready(answer) = asking.poll_unpin(cx) else {
                    return false;
                };
                self.asking = None;
                let (wait, unanswered) = answer.next_wait(self.wait, self.unanswered);
                self.unanswered = unanswered;
                self.set_wait(wait);
                if answer == Answer::Behind {
                    tracing::debug!("an ordered consumer's replica is behind its stream");
                    return true;
                }
                continue;
            }
            if !self.idle.poll_missed(cx) {
                return false;
            }
            match self.position.after(last_delivered) {
                Some(after) => {
                    let context = context.recovery_context();
                    let position = self.position.clone();
                    self.asking = Some(Box::pin(ask(context, position, after)));
                }
                // Nothing to compare with until a first delivery; ask again then.
                None => self.set_wait(MOST_WAIT),
            }
        }
    }

    fn set_wait(&mut self, wait: Duration) {
        self.wait = wait;
        self.idle = Monitor::with_limit(wait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(policy: DeliverPolicy) -> Position {
        Position::new("S".into(), "", &[], policy)
    }

    #[test]
    fn the_question_starts_after_the_last_delivery_or_a_named_start() {
        assert_eq!(position(DeliverPolicy::New).after(7), Some(7));
        assert_eq!(position(DeliverPolicy::All).after(0), Some(0));
        let named = DeliverPolicy::ByStartSequence { start_sequence: 10 };
        assert_eq!(position(named).after(0), Some(9));
        // A start the server picks when it makes the consumer gives nothing to compare with.
        assert_eq!(position(DeliverPolicy::New).after(0), None);
        assert_eq!(position(DeliverPolicy::LastPerSubject).after(0), None);
        // The server's word, saturated rather than overflowed.
        let zero = DeliverPolicy::ByStartSequence { start_sequence: 0 };
        assert_eq!(position(zero).after(0), Some(0));
    }

    #[test]
    fn one_filter_or_several_or_none() {
        let several = ["a".to_owned(), "b.>".to_owned()];
        let one = Position::new("S".into(), "c", &[], DeliverPolicy::All);
        assert_eq!(one.filters, ["c"]);
        let both = Position::new("S".into(), "", &several, DeliverPolicy::All);
        assert_eq!(both.filters, several);
        assert!(position(DeliverPolicy::All).filters.is_empty());
    }

    #[test]
    fn waits_double_while_in_step_retry_soon_while_unanswered_and_start_over_when_behind() {
        let secs = Duration::from_secs;
        // In step: 10, 20, 40, 60, 60 s.
        let mut wait = FIRST_WAIT;
        let mut waits = Vec::new();
        for _ in 0..4 {
            (wait, _) = Answer::InStep.next_wait(wait, 0);
            waits.push(wait);
        }
        assert_eq!(waits, [secs(20), secs(40), secs(60), secs(60)]);
        // Unanswered: 2 s ten times, then doubling; an answer resets the count.
        let (mut wait, mut unanswered) = (FIRST_WAIT, 0);
        for n in 1..=MOST_RETRIES {
            (wait, unanswered) = Answer::Unknown.next_wait(wait, unanswered);
            assert_eq!((wait, unanswered), (RETRY, n));
        }
        (wait, unanswered) = Answer::Unknown.next_wait(wait, unanswered);
        assert_eq!((wait, unanswered), (FIRST_WAIT, MOST_RETRIES));
        (wait, unanswered) = Answer::Unknown.next_wait(wait, unanswered);
        assert_eq!(wait, secs(20));
        assert_eq!(Answer::InStep.next_wait(wait, unanswered), (secs(40), 0));
        assert_eq!(
            Answer::Behind.next_wait(MOST_WAIT, 3),
            (AFTER_RECREATION, 0)
        );
    }

    #[test]
    fn a_consumer_with_a_pace_of_its_own_is_never_checked() {
        assert!(checked(ReplayPolicy::Instant, 0));
        assert!(!checked(ReplayPolicy::Original, 0));
        assert!(!checked(ReplayPolicy::Instant, 1_000_000));
    }
}
