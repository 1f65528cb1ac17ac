//! Noticing a pull request that its consumer dropped without a word.
//!
//! A pull request lives in the memory of the consumer's leader, and nats-server drops one
//! without telling the client in two cases. A leader that loses its leadership forgets its
//! requests, and the new leader ends with 409 `Leadership Change` only those the old one
//! replicated to it: a leader cut off from its peers by a partition goes on taking requests
//! it cannot replicate until it notices that it lost its quorum (10 to 20 s with
//! nats-server's defaults, while the other side elects a new leader in 4 to 9 s). And a
//! leader drops a request whose reply subject it no longer sees interest in, as across a cut
//! route or leaf link, even when the interest comes back a moment later. Nothing tells the
//! client: no 409, no advisory (an election on the far side of a partition is announced
//! there), and two idle heartbeats (30 s at the default 15 s) pass before the missed ones
//! count. `tests/faults.rs` measured durable consumers 30 s late, and once not back within
//! 90 s, after 9-12 s partitions of the readers' server.
//!
//! So the stream asks the consumer's leader whether anybody waits (`CONSUMER.INFO`), in two
//! kinds of spell:
//!
//! - after a pull sent again because of a fault (a reconnect, a cluster change, a leader
//!   change, no responders): 3 s after the pull, then 6 and 12 s later, while twice the idle
//!   heartbeat has not passed since the pull;
//! - when one and a half heartbeat intervals have passed without a message or heartbeat
//!   (half an interval past the heartbeat due): at once, then 6 s later and so on, until the
//!   heartbeat is missed.
//!
//! A message or a heartbeat ends a spell, and so does a missed heartbeat (the stream pulls
//! again then anyway). Nobody waiting while the stream's books hold a request with room left
//! means the request is gone: the stream pulls again (counted in
//! [`Recoveries::lost_pulls`](super::Recoveries::lost_pulls)) and goes on asking, twice at
//! most a spell. Somebody waiting proves nothing (other clients may pull from the same
//! consumer, and a leader cut off from its peers still holds the request it is about to
//! forget), so the questions go on until the spell ends. The answer counts only when it
//! names a leader: a server that is in the consumer's group but has not started it answers
//! with a blank state. An answer to a question asked before the latest pull is dropped.
//!
//! Nothing is asked in steady state, nor while the connection is down. Waits vary by a fifth
//! either way, so that the streams of many clients that saw the same cluster change do not
//! ask together, and faults in a burst move the spell's next question later rather than
//! adding questions; the first wait, 3 s, is longer than the longest retry after no
//! responders (2 s), so nothing is asked while the consumer is electing a leader. A stream
//! whose idle heartbeat is under 1.5 s misses it before the first question after a fault.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use tokio::time::{Instant, Sleep};

use crate::consumer::stale::jittered;
use crate::context::Context;
use crate::response::Response;

/// The wait after a pull before the first question, and the least between two: longer than
/// the longest retry after no responders (2 s), so that no question goes out while the
/// consumer has no leader to answer it.
const FIRST_WAIT: Duration = Duration::from_secs(3);
/// How long one question may take before it counts as unanswered.
const ASK_BOUND: Duration = Duration::from_secs(3);
/// The horizon when the stream has no heartbeats or expiry to go by.
const DEFAULT_HORIZON: Duration = Duration::from_secs(30);
/// Pulls sent again in one spell, at most.
const MOST_LOSSES: u32 = 2;

/// What the question reads of the consumer's info.
#[derive(Deserialize)]
struct Waiting {
    num_waiting: usize,
    cluster: Option<Leader>,
}

#[derive(Deserialize)]
struct Leader {
    leader: Option<String>,
}

/// The question: the consumer leader's count of waiting requests, `None` when unanswered.
type Ask = Box<dyn Fn() -> BoxFuture<'static, Option<usize>> + Send>;

/// Questions about a pull request that may be gone; see the module documentation.
pub(crate) struct LostPull {
    ask: Ask,
    /// How long after a fault's pull missed heartbeats would tell (twice the interval).
    horizon: Duration,
    spell: Option<Spell>,
}

/// One spell of questions, until a sign of life, a miss, or its horizon.
struct Spell {
    since: Instant,
    /// The wait before the next question; doubles after each.
    gap: Duration,
    next: Pin<Box<Sleep>>,
    /// The question on its way.
    asking: Option<BoxFuture<'static, Option<usize>>>,
    losses: u32,
}

impl Spell {
    fn new(since: Instant, first: Instant) -> Spell {
        Spell {
            since,
            gap: FIRST_WAIT,
            next: Box::pin(tokio::time::sleep_until(first)),
            asking: None,
            losses: 0,
        }
    }
}

impl LostPull {
    /// Asks nothing yet; `horizon` is how long missed heartbeats take to tell (zero for a
    /// stream with none, which gets [`DEFAULT_HORIZON`]).
    pub(crate) fn new(context: Context, stream: &str, consumer: &str, horizon: Duration) -> Self {
        let subject = format!("CONSUMER.INFO.{stream}.{consumer}");
        Self::asking(
            Box::new(move || ask(context.clone(), subject.clone()).boxed()),
            horizon,
        )
    }

    fn asking(ask: Ask, horizon: Duration) -> Self {
        LostPull {
            ask,
            horizon: if horizon.is_zero() {
                DEFAULT_HORIZON
            } else {
                horizon
            },
            spell: None,
        }
    }

    /// A pull goes out again because of a fault: a spell from now, in place of any other (a
    /// question on its way was asked before this pull, and its answer would mislead).
    pub(crate) fn watch(&mut self) {
        let now = Instant::now();
        self.spell = Some(Spell::new(now, now + jittered(FIRST_WAIT)));
    }

    /// A heartbeat is late: ask at once, unless a question is on its way.
    pub(crate) fn ask_now(&mut self) {
        let now = Instant::now();
        match self.spell.as_mut() {
            Some(spell) if spell.asking.is_none() => spell.next.as_mut().reset(now),
            Some(_) => {}
            None => self.spell = Some(Spell::new(now, now)),
        }
    }

    /// The request showed it lives (a message or a heartbeat came), or a missed heartbeat
    /// sent a new one: the spell ends.
    pub(crate) fn end(&mut self) {
        self.spell = None;
    }

    /// Whether the request is gone, so that the caller pulls again at once; registers the
    /// waker for the next question or answer. `connected` ends the spell while the
    /// connection is down (its return brings a pull and a spell of its own); `open` is
    /// whether the caller's books hold a request with room left, without which nobody
    /// waiting tells nothing.
    pub(crate) fn poll_lost(
        &mut self,
        cx: &mut TaskContext<'_>,
        connected: bool,
        open: bool,
    ) -> bool {
        let horizon = self.horizon;
        let (lost, over) = match self.spell.as_mut() {
            None => return false,
            Some(_) if !connected => (false, true),
            Some(spell) => spell.poll(cx, &self.ask, horizon, open),
        };
        if over {
            self.spell = None;
        }
        lost
    }
}

impl Spell {
    /// Drives the spell: `(lost, over)`.
    fn poll(
        &mut self,
        cx: &mut TaskContext<'_>,
        ask: &Ask,
        horizon: Duration,
        open: bool,
    ) -> (bool, bool) {
        loop {
            if let Some(asking) = self.asking.as_mut() {
                let Poll::Ready(waiting) = asking.poll_unpin(cx) else {
                    return (false, false);
                };
                self.asking = None;
                let now = Instant::now();
                let lost = waiting == Some(0) && open;
                if lost {
                    self.losses += 1;
                }
                self.gap = self.gap.saturating_mul(2);
                let next = now + jittered(self.gap);
                if self.losses >= MOST_LOSSES || next.duration_since(self.since) > horizon {
                    return (lost, true);
                }
                self.next.as_mut().reset(next);
                if lost {
                    // Armed for the next question before the caller pulls again.
                    let _ = self.next.poll_unpin(cx);
                    return (true, false);
                }
            }
            if self.next.poll_unpin(cx).is_pending() {
                return (false, false);
            }
            if Instant::now().duration_since(self.since) > horizon {
                return (false, true);
            }
            self.asking = Some(ask());
        }
    }
}

/// Asks the consumer's leader how many requests wait; `None` for no answer in time, an error
/// reply (no leader yet, or no consumer), one that names no leader, or one that does not
/// parse.
async fn ask(context: Context, subject: String) -> Option<usize> {
    let empty = serde_json::json!({});
    let request = context.request::<_, _, Response<Waiting>>(subject, &empty);
    match tokio::time::timeout(ASK_BOUND, request).await {
        Ok(Ok(response)) => answer(response),
        _ => None,
    }
}

/// The count of waiting requests, if the response is a leader's.
fn answer(response: Response<Waiting>) -> Option<usize> {
    match response {
        Response::Ok(Waiting {
            num_waiting,
            cluster: Some(Leader {
                leader: Some(leader),
            }),
        }) if !leader.is_empty() => Some(num_waiting),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use futures_util::task::{ArcWake, noop_waker_ref, waker};

    use super::*;

    /// Questions answered with what the cell holds, and counted; a cell holding `None` stays
    /// unanswered until it holds an answer.
    type Answers = Arc<Mutex<Option<usize>>>;

    fn check(answer: Option<usize>) -> (LostPull, Arc<AtomicUsize>, Answers) {
        let asked = Arc::new(AtomicUsize::new(0));
        let answer = Arc::new(Mutex::new(answer));
        let (count, reply) = (asked.clone(), answer.clone());
        let ask: Ask = Box::new(move || {
            count.fetch_add(1, Ordering::SeqCst);
            let reply = *reply.lock().unwrap();
            async move { reply }.boxed()
        });
        (
            LostPull::asking(ask, Duration::from_secs(30)),
            asked,
            answer,
        )
    }

    fn poll(check: &mut LostPull, open: bool) -> bool {
        let mut cx = TaskContext::from_waker(noop_waker_ref());
        check.poll_lost(&mut cx, true, open)
    }

    /// Moves the paused clock on by `ms` and polls: whether the pull was lost.
    async fn after(check: &mut LostPull, ms: u64, open: bool) -> bool {
        tokio::time::advance(Duration::from_millis(ms)).await;
        poll(check, open)
    }

    /// Polls every 100 ms for `secs` seconds: the times of the questions, in tenths of a
    /// second, and how many polls said lost.
    async fn run(check: &mut LostPull, asked: &AtomicUsize, secs: u64) -> (Vec<u64>, usize) {
        let (mut at, mut lost) = (Vec::new(), 0);
        for tenth in 1..=secs * 10 {
            let before = asked.load(Ordering::SeqCst);
            lost += usize::from(after(check, 100, true).await);
            if asked.load(Ordering::SeqCst) > before {
                at.push(tenth);
            }
        }
        (at, lost)
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_is_asked_until_a_fault_nor_after_a_sign_of_life() {
        let (mut check, asked, _) = check(Some(0));
        assert!(!after(&mut check, 60_000, true).await);
        check.watch();
        check.end();
        assert!(!after(&mut check, 60_000, true).await);
        assert_eq!(asked.load(Ordering::SeqCst), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn questions_after_a_fault_come_at_3_then_6_then_12_s_apart_a_fifth_either_way() {
        let (mut check, asked, _) = check(Some(1));
        check.watch();
        let (at, lost) = run(&mut check, &asked, 60).await;
        assert_eq!(lost, 0, "somebody waits");
        assert_eq!(at.len(), 3, "asked at {at:?} tenths");
        assert!((24..=36).contains(&at[0]), "{at:?}");
        assert!((48..=72).contains(&(at[1] - at[0])), "{at:?}");
        assert!((96..=144).contains(&(at[2] - at[1])), "{at:?}");
        // 24 s more would pass the 30 s horizon.
    }

    #[tokio::test(start_paused = true)]
    async fn nobody_waiting_for_an_open_request_is_a_loss_twice_a_spell_at_most() {
        let (mut check, asked, _) = check(Some(0));
        check.watch();
        let (at, lost) = run(&mut check, &asked, 60).await;
        assert_eq!((at.len(), lost), (2, 2), "asked at {at:?} tenths");
        // A new fault starts a new spell.
        check.watch();
        let (_, lost) = run(&mut check, &asked, 60).await;
        assert_eq!(lost, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn nobody_waiting_is_no_loss_without_an_open_request() {
        let (mut check, asked, _) = check(Some(0));
        check.watch();
        assert!(!after(&mut check, 3_600, false).await);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_to_a_question_from_before_the_latest_pull_is_dropped() {
        let (mut check, asked, answer) = check(None);
        check.watch();
        assert!(!after(&mut check, 3_600, true).await);
        assert_eq!(asked.load(Ordering::SeqCst), 1, "on its way, unanswered");
        // A new pull goes out; the question on its way would now answer for the old one.
        check.watch();
        *answer.lock().unwrap() = Some(0);
        assert!(!after(&mut check, 2_000, true).await);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert!(after(&mut check, 1_600, true).await, "asked afresh");
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_faults_moves_the_question_later() {
        let (mut check, asked, _) = check(Some(1));
        check.watch();
        for _ in 0..5 {
            // A no-responders retry every 2 s keeps the question back.
            assert!(!after(&mut check, 2_000, true).await);
            check.watch();
        }
        assert_eq!(asked.load(Ordering::SeqCst), 0);
        assert!(!after(&mut check, 3_600, true).await);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_heartbeat_asks_at_once() {
        let (mut check, asked, _) = check(Some(0));
        check.ask_now();
        assert!(poll(&mut check, true));
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lost_connection_ends_the_spell() {
        let (mut check, asked, _) = check(Some(0));
        check.watch();
        tokio::time::advance(Duration::from_secs(4)).await;
        let mut cx = TaskContext::from_waker(noop_waker_ref());
        assert!(!check.poll_lost(&mut cx, false, true));
        assert!(!after(&mut check, 60_000, true).await);
        assert_eq!(asked.load(Ordering::SeqCst), 0);
    }

    struct Count(AtomicUsize);

    impl ArcWake for Count {
        fn wake_by_ref(this: &Arc<Self>) {
            this.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_task_is_woken_for_each_question_and_after_a_loss() {
        let (mut check, asked, _) = check(Some(0));
        let woken = Arc::new(Count(AtomicUsize::new(0)));
        let waker = waker(woken.clone());
        let mut cx = TaskContext::from_waker(&waker);
        check.watch();
        assert!(!check.poll_lost(&mut cx, true, true));
        tokio::time::advance(Duration::from_millis(3_600)).await;
        assert_eq!(woken.0.load(Ordering::SeqCst), 1, "woken for the question");
        assert!(check.poll_lost(&mut cx, true, true));
        // The next question's timer was armed before the loss was told.
        tokio::time::advance(Duration::from_millis(7_200)).await;
        assert_eq!(woken.0.load(Ordering::SeqCst), 2, "woken for the next");
        assert!(check.poll_lost(&mut cx, true, true));
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn only_a_leader_answer_counts() {
        let parse = |json: &str| answer(serde_json::from_str(json).unwrap());
        let led = r#"{"num_waiting":2,"cluster":{"leader":"n1"}}"#;
        assert_eq!(parse(led), Some(2));
        // A group member that has not started the consumer answers with a blank state.
        assert_eq!(parse(r#"{"num_waiting":0,"cluster":{}}"#), None);
        assert_eq!(parse(r#"{"num_waiting":0,"cluster":{"leader":""}}"#), None);
        assert_eq!(parse(r#"{"num_waiting":0}"#), None);
        let error = r#"{"error":{"code":503,"err_code":10008,"description":"unavailable"}}"#;
        assert_eq!(parse(error), None);
        assert!(serde_json::from_str::<Response<Waiting>>(r#"{"cluster":{}}"#).is_err());
    }
}
