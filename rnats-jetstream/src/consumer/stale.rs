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
//! So an ordered consumer that has had nothing to deliver for a while asks the stream leader
//! (which holds what the majority stored) whether a message it owes is stored:
//! `STREAM.MSG.GET` of the first message after its last one, filter by filter. The first
//! question comes after 10 s with nothing to deliver (two of a push consumer's idle
//! heartbeats), counted from the moment its queue ran dry; each answer that finds nothing
//! doubles the wait, up to a minute, so an idle consumer (a watch of a quiet bucket) asks
//! about once a minute, one request a filter; a delivery starts over. Waits vary by a fifth
//! either way, so that watches recreated together do not ask together for ever after.
//!
//! A message found is asked about once more a second later, and only if it is still owed
//! then (no delivery in between: one may have been on its way) is the consumer recreated
//! after its last message, which puts it on a replica picked afresh. The next question comes
//! 3 s after the new consumer is in place, in case it landed on the same replica (one chance
//! in three on an R3 stream). From the fourth recreation in a row without a delivery between
//! them the wait doubles, so that nothing can make a consumer recreate itself in a tight
//! loop.
//!
//! A question left unanswered (3 s without an answer to one filter's request, or the 503 a
//! server gives while it catches up after a partition, as the consumer's own server did for
//! 8 s after the heal in the suite) is asked again 2 s later, ten times in a row at most;
//! then the wait goes to 10 s and doubles from there, and deliveries do not start the
//! retries over until a question is answered or the consumer is recreated. A client that may not send `STREAM.MSG.GET` (a least-privilege Key-Value
//! user) hears so from its server (`-ERR 'Permissions Violation for Publish to ...'`, a
//! [`ConnectionEvent::ServerError`]) and its consumer stops asking for good after that one
//! error. Nothing is asked while the connection is down: the question waits (2 s at a time)
//! without counting as unanswered.
//!
//! A consumer asks only once it knows where it is: after its first delivery, or from the
//! start for one that starts at the first message or at a named sequence (which `New` and
//! `Last` starts become, see `recreate::first_start`). A consumer that
//! delivers at a pace of its own (`ReplayPolicy::Original`, a `rate_limit`) may lag the
//! stream by design and never asks.

use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use rnats_core::ConnectionEvent;
use rnats_core::proto::{PermissionOp, ServerError};

use super::heartbeat::Monitor;
use super::recreate::restart_at;
use super::{Config, DeliverPolicy, ReplayPolicy};
use crate::context::Context;
use crate::stream::RawMessageErrorKind;

/// The wait after the queue ran dry before the first question.
const FIRST_WAIT: Duration = Duration::from_secs(10);
/// The wait before asking again about a message found owed.
const GRACE: Duration = Duration::from_secs(1);
/// The wait after a recreation this made, before the new consumer is asked about...
const AFTER_RECREATION: Duration = Duration::from_secs(3);
/// ...for so many recreations in a row without a delivery; then the wait doubles.
const QUICK_RECREATIONS: u32 = 3;
/// The wait after a question left unanswered...
const RETRY: Duration = Duration::from_secs(2);
/// ...so many times in a row at most; then the waits double.
const MOST_RETRIES: u32 = 10;
/// The longest wait between two questions of an idle consumer.
const MOST_WAIT: Duration = Duration::from_secs(60);
/// How long one filter's request may take before the question counts as unanswered.
const ASK_BOUND: Duration = Duration::from_secs(3);

/// What the stream leader said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// A message the consumer should have delivered is stored.
    Behind,
    /// Nothing stored after what the consumer delivered matches it.
    InStep,
    /// No answer: an error (no leader, a server catching up, no responders), or no reply
    /// within [`ASK_BOUND`].
    Unknown,
    /// The client may not ask (the server refused the publish).
    Forbidden,
}

/// The waits between questions: what the answers so far make of the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pace {
    wait: Duration,
    /// Questions in a row left unanswered.
    unanswered: u32,
    /// A message was found owed and is asked about once more.
    suspect: bool,
    /// Recreations this asked for in a row, without a delivery between them.
    recreated: u32,
}

impl Pace {
    const fn new() -> Pace {
        Pace {
            wait: FIRST_WAIT,
            unanswered: 0,
            suspect: false,
            recreated: 0,
        }
    }

    /// A delivery: the waits start over, but for a streak of unanswered questions, which only
    /// an answer (or a recreation, see [`StaleCheck::restart`]) ends.
    fn delivered(&mut self) {
        let exhausted = self.unanswered >= MOST_RETRIES;
        *self = Pace {
            unanswered: self.unanswered,
            ..Pace::new()
        };
        if exhausted {
            self.wait = MOST_WAIT;
        }
    }

    /// Takes in an answer; whether the consumer is to be recreated now.
    fn answered(&mut self, answer: Answer) -> bool {
        let doubled = self.wait.saturating_mul(2).clamp(FIRST_WAIT, MOST_WAIT);
        if matches!(answer, Answer::Behind | Answer::InStep) {
            self.unanswered = 0;
        }
        match answer {
            Answer::Behind if self.suspect => {
                self.suspect = false;
                self.recreated = self.recreated.saturating_add(1);
                self.wait = match self.recreated {
                    n if n <= QUICK_RECREATIONS => AFTER_RECREATION,
                    _ => self
                        .wait
                        .saturating_mul(2)
                        .clamp(AFTER_RECREATION, MOST_WAIT),
                };
                return true;
            }
            Answer::Behind => {
                // The wait stays as it was: the next question comes after the grace (`next`).
                self.suspect = true;
                return false;
            }
            Answer::InStep => self.wait = doubled,
            _ if self.unanswered < MOST_RETRIES => {
                self.unanswered += 1;
                self.wait = RETRY;
            }
            _ => self.wait = doubled,
        }
        self.suspect = false;
        false
    }

    /// The wait before the next question.
    fn next(&self) -> Duration {
        if self.suspect { GRACE } else { self.wait }
    }
}

/// What the question needs to know of an ordered consumer besides how far it got.
#[derive(Debug, Clone)]
struct Position {
    stream_name: String,
    /// The consumer's filters; none means every subject.
    filters: Vec<String>,
    /// Where the consumer starts (or started again) while it has delivered nothing.
    deliver_policy: DeliverPolicy,
}

impl Position {
    /// A consumer's position from its filters (the single one, or the several).
    fn new(
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

    /// The question for a consumer whose last message was at `last_delivered`, if it can
    /// be asked.
    fn question(
        &self,
        context: &Context,
        last_delivered: u64,
    ) -> Option<BoxFuture<'static, Answer>> {
        let after = self.after(last_delivered)?;
        let context = context.recovery_context();
        let position = self.clone();
        Some(Box::pin(ask(context, position, after)))
    }
}

/// Whether a consumer with this pace may be checked at all (see the module docs).
fn checked(replay_policy: ReplayPolicy, rate_limit: u64) -> bool {
    replay_policy != ReplayPolicy::Original && rate_limit == 0
}

/// Asks the stream leader, filter by filter, whether a message after stream sequence
/// `after` matches. The leader's answer carries the message itself (payload and all, which
/// `STREAM.MSG.GET` cannot leave out); the question is rare enough for that.
async fn ask(context: Context, position: Position, after: u64) -> Answer {
    // Listened to before the first request: a refused publish is told only this way.
    let mut events = context.client.events();
    let refused = format!(
        "{}.STREAM.MSG.GET.{}",
        context.prefix(),
        position.stream_name
    );
    let all = [String::from(">")];
    let filters = match position.filters.as_slice() {
        [] => &all[..],
        filters => filters,
    };
    for filter in filters {
        let request =
            crate::stream::RawMessageBuilder::new(context.clone(), position.stream_name.clone())
                .without_headers()
                .sequence(after.saturating_add(1))
                .next_by_subject(filter.as_str())
                .send();
        let forbidden = async {
            while let Some(event) = events.next().await {
                if let ConnectionEvent::ServerError(ServerError::PermissionViolation {
                    operation: PermissionOp::Publish,
                    subject,
                    ..
                }) = event
                    && subject == refused
                {
                    return;
                }
            }
            std::future::pending::<()>().await;
        };
        let answer = tokio::select! {
            // A refusal ready with the timeout is still a refusal.
            biased;
            () = forbidden => return Answer::Forbidden,
            answer = rnats_core::runtime::timeout(ASK_BOUND, request) => answer,
        };
        match answer {
            Ok(Ok(_)) => return Answer::Behind,
            Ok(Err(error)) if matches!(error.kind(), RawMessageErrorKind::NoMessageFound) => {}
            Ok(Err(error)) => {
                tracing::debug!(%error, "an ordered consumer's question went unanswered");
                return Answer::Unknown;
            }
            Err(_) => return Answer::Unknown,
        }
    }
    Answer::InStep
}

/// Watches an ordered consumer's idle spells and asks about them (see the module docs).
pub(crate) struct StaleCheck {
    /// Off for a consumer with a pace of its own.
    enabled: bool,
    /// Off while the connection is down.
    paused: bool,
    pace: Pace,
    /// A delivery came since the queue last ran dry: the idle spell starts at the next.
    fresh: bool,
    idle: Monitor,
    position: Position,
    asking: Option<BoxFuture<'static, Answer>>,
}

impl std::fmt::Debug for StaleCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaleCheck")
            .field("enabled", &self.enabled)
            .field("paused", &self.paused)
            .field("pace", &self.pace)
            .field("asking", &self.asking.is_some())
            .finish()
    }
}

impl StaleCheck {
    /// The check for an ordered consumer of `stream_name` made with `config` (its start
    /// already the one a recreation before the first delivery would take).
    pub(crate) fn for_consumer(stream_name: String, config: &Config) -> StaleCheck {
        let position = Position::new(
            stream_name,
            &config.filter_subject,
            &config.filter_subjects,
            config.deliver_policy,
        );
        StaleCheck::new(checked(config.replay_policy, config.rate_limit), position)
    }

    /// A check for a consumer at `position`; `enabled` as [`checked`] says.
    fn new(enabled: bool, position: Position) -> StaleCheck {
        StaleCheck {
            enabled,
            paused: false,
            pace: Pace::new(),
            fresh: false,
            idle: Monitor::with_limit(jittered(FIRST_WAIT)),
            position,
            asking: None,
        }
    }

    /// A message was delivered: the waits, and any question, start over once the queue
    /// runs dry again. No clock is read here, on the path of every message.
    pub(crate) fn delivered(&mut self) {
        self.fresh = true;
    }

    /// The consumer was replaced: no question about the old one is pending, unanswered ones
    /// are forgotten, and the idle spell counts from now.
    pub(crate) fn restart(&mut self) {
        self.asking = None;
        self.pace.unanswered = 0;
        self.pace.suspect = false;
        self.rearm();
    }

    /// The connection went down: nothing is asked until it is back.
    pub(crate) fn pause(&mut self) {
        self.paused = true;
        self.asking = None;
    }

    /// The connection is back.
    pub(crate) fn resume(&mut self) {
        self.paused = false;
        self.rearm();
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
        if !self.enabled || self.paused {
            return false;
        }
        if std::mem::take(&mut self.fresh) {
            self.asking = None;
            let before = self.pace;
            self.pace.delivered();
            // The usual case keeps its wait (and its timer): only the clock is read.
            match self.pace == before {
                true => self.idle.seen(),
                false => self.rearm(),
            }
        }
        loop {
            if let Some(asking) = self.asking.as_mut() {
                let Poll::Ready(answer) = asking.poll_unpin(cx) else {
                    return false;
                };
                self.asking = None;
                if answer == Answer::Forbidden {
                    tracing::debug!("an ordered consumer may not ask its stream leader; stopped");
                    self.enabled = false;
                    return false;
                }
                let recreate = self.pace.answered(answer);
                self.rearm();
                if recreate {
                    tracing::debug!("an ordered consumer's replica is behind its stream");
                    return true;
                }
                continue;
            }
            if !self.idle.poll_missed(cx) {
                return false;
            }
            // Asked while disconnected, a question would wait in the client's buffer and
            // count as unanswered: wait until the connection is back.
            if context.client.connection_state() != rnats_core::State::Connected {
                self.idle.set_limit(RETRY);
                self.idle.seen();
                continue;
            }
            match self.position.question(context, last_delivered) {
                Some(question) => self.asking = Some(question),
                // Nothing to compare with until a first delivery, which starts over.
                None => {
                    self.pace.wait = MOST_WAIT;
                    self.rearm();
                }
            }
        }
    }

    /// Counts the idle spell from now, to the wait the pace says.
    fn rearm(&mut self) {
        self.idle.set_limit(jittered(self.pace.next()));
        self.idle.seen();
    }
}

/// `wait`, a fifth longer or shorter at most, at random.
pub(crate) fn jittered(wait: Duration) -> Duration {
    wait.mul_f64(0.8 + 0.4 * fastrand::f64())
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
    fn waits_double_while_in_step_up_to_a_minute() {
        let mut pace = Pace::new();
        let mut waits = Vec::new();
        for _ in 0..4 {
            assert!(!pace.answered(Answer::InStep));
            waits.push(pace.next().as_secs());
        }
        assert_eq!(waits, [20, 40, 60, 60]);
        pace.delivered();
        assert_eq!(pace.next(), FIRST_WAIT);
    }

    #[test]
    fn a_message_owed_twice_in_a_row_recreates_and_again_only_after_longer_waits() {
        let mut pace = Pace::new();
        assert!(!pace.answered(Answer::Behind), "asked again first");
        assert_eq!(pace.next(), GRACE);
        assert!(pace.answered(Answer::Behind));
        assert_eq!(pace.next(), AFTER_RECREATION);
        // The new consumers deliver nothing and are behind too: from the fourth recreation in
        // a row the wait doubles.
        let waits: Vec<u64> = (0..5)
            .map(|_| {
                assert!(!pace.answered(Answer::Behind));
                assert!(pace.answered(Answer::Behind));
                pace.next().as_secs()
            })
            .collect();
        assert_eq!(waits, [3, 3, 6, 12, 24]);
        // A delivery in between clears both the suspicion and the doubling.
        assert!(!pace.answered(Answer::Behind));
        pace.delivered();
        assert!(!pace.answered(Answer::Behind));
        assert!(pace.answered(Answer::Behind));
        assert_eq!(pace.next(), AFTER_RECREATION);
        // In step at the second question: nothing was owed after all.
        let mut pace = Pace::new();
        assert!(!pace.answered(Answer::Behind));
        assert!(!pace.answered(Answer::InStep));
        assert_eq!(pace.next(), FIRST_WAIT * 2);
    }

    #[test]
    fn unanswered_questions_retry_soon_ten_times_then_once_a_minute_across_deliveries() {
        let mut pace = Pace::new();
        for n in 1..=MOST_RETRIES {
            assert!(!pace.answered(Answer::Unknown));
            assert_eq!((pace.next(), pace.unanswered), (RETRY, n));
        }
        let waits: Vec<u64> = (0..3)
            .map(|_| {
                pace.answered(Answer::Unknown);
                pace.next().as_secs()
            })
            .collect();
        assert_eq!(waits, [10, 20, 40]);
        // A delivery does not start the retries over: a client that may not ask keeps
        // asking once a minute.
        pace.delivered();
        assert_eq!(pace.next(), MOST_WAIT);
        pace.answered(Answer::Unknown);
        assert_eq!(pace.next(), MOST_WAIT);
        // An answer ends the streak.
        pace.answered(Answer::InStep);
        assert_eq!(pace.unanswered, 0);
        pace.delivered();
        assert_eq!(pace.next(), FIRST_WAIT);
    }

    #[test]
    fn waits_vary_by_a_fifth_at_most() {
        for _ in 0..1000 {
            let wait = jittered(FIRST_WAIT);
            assert!(wait >= FIRST_WAIT.mul_f64(0.8) && wait <= FIRST_WAIT.mul_f64(1.2));
        }
    }

    #[test]
    fn a_consumer_with_a_pace_of_its_own_is_never_checked() {
        assert!(checked(ReplayPolicy::Instant, 0));
        assert!(!checked(ReplayPolicy::Original, 0));
        assert!(!checked(ReplayPolicy::Instant, 1_000_000));
    }
}
