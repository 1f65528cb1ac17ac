//! Noticing a pull request that its consumer dropped without a word.
//!
//! A pull request lives in the memory of the consumer's leader. When leadership moves, the
//! new leader ends the requests it knows of with 409 `Leadership Change`, but it knows only
//! those the old leader replicated to it. A leader cut off from its peers by a partition goes
//! on taking requests it cannot replicate until it notices that it lost its quorum (10 to
//! 20 s with nats-server's defaults, while the other side elects a new leader in 4 to 9 s),
//! and when it steps down it forgets them. A client on its side that pulls again as the
//! routes come back can hand its request to that leader in its last moments, and nothing
//! tells the client: no 409, no advisory (the election happened on the far side), and two
//! idle heartbeats (30 s at the default 15 s) before the missed ones count. `tests/faults.rs`
//! measured durable consumers 30 s late, and once not back within 90 s, after 9-12 s
//! partitions of the readers' server.
//!
//! So after a pull sent again because of a fault (a reconnect, a cluster change, a leader
//! change, no responders), and until the request shows that it lives (a message or a
//! heartbeat arrives for it), the stream asks the consumer's current leader whether anybody
//! is waiting (`CONSUMER.INFO`, which the leader answers): 3 s after the pull, then after 6
//! and 12 s more, and never once the heartbeats would have told (twice the idle heartbeat). Nobody waiting while the stream's books hold a request with room left means
//! the request is gone: the stream pulls again (counted in
//! [`Recoveries::lost_pulls`](super::Recoveries::lost_pulls)) and watches the new request the
//! same way, until the same horizon. Somebody waiting proves nothing (other clients may pull
//! from the same consumer), so the questions go on. Nothing is asked in steady state, nor
//! while the connection is down, and fault signals in a burst move the next question later
//! rather than adding questions: at most one every 3 s, and none while the consumer answers
//! pulls with no responders every 2 s or sooner (it is electing a leader).

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use tokio::time::{Instant, Sleep};

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

/// The one field of the consumer's info the question needs.
#[derive(Deserialize)]
struct Waiting {
    #[serde(default)]
    num_waiting: usize,
}

/// The question: the consumer leader's count of waiting requests, `None` when unanswered.
type Ask = Box<dyn Fn() -> BoxFuture<'static, Option<usize>> + Send>;

/// Questions about the last pull sent after a fault; see the module documentation.
pub(crate) struct LostPull {
    ask: Ask,
    /// After this long without a sign the stream's heartbeat monitor tells instead.
    horizon: Duration,
    watch: Option<Watch>,
}

/// One spell of questions, from a fault's pull until a sign of life or the horizon.
struct Watch {
    since: Instant,
    gap: Duration,
    next: Pin<Box<Sleep>>,
    /// The question on its way: the leader's count of waiting requests, `None` unanswered.
    asking: Option<BoxFuture<'static, Option<usize>>>,
}

impl LostPull {
    /// Watches nothing yet; `horizon` is how long missed heartbeats take to tell (zero for
    /// a stream with none, which gets [`DEFAULT_HORIZON`]).
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
            watch: None,
        }
    }

    /// A pull goes out again because of a fault: watch it from now.
    pub(crate) fn watch(&mut self) {
        let next = Instant::now() + FIRST_WAIT;
        match self.watch.as_mut() {
            // A burst of faults: one spell, its next question moved past the latest pull.
            Some(watch) => {
                watch.since = Instant::now();
                watch.gap = FIRST_WAIT;
                if watch.asking.is_none() {
                    watch.next.as_mut().reset(next);
                }
            }
            None => {
                self.watch = Some(Watch {
                    since: Instant::now(),
                    gap: FIRST_WAIT,
                    next: Box::pin(tokio::time::sleep_until(next)),
                    asking: None,
                });
            }
        }
    }

    /// A heartbeat is late (one and a half intervals without a sign): ask at once.
    pub(crate) fn ask_now(&mut self) {
        let now = Instant::now();
        match self.watch.as_mut() {
            Some(watch) if watch.asking.is_none() => watch.next.as_mut().reset(now),
            Some(_) => {}
            None => {
                self.watch = Some(Watch {
                    since: now,
                    gap: FIRST_WAIT,
                    next: Box::pin(tokio::time::sleep_until(now)),
                    asking: None,
                });
            }
        }
    }

    /// The request showed it lives (a message or a heartbeat for it): no more questions.
    pub(crate) fn alive(&mut self) {
        self.watch = None;
    }

    /// Whether the request being watched is gone, so that the caller pulls again at once.
    /// `connected` stops the spell while the connection is down (its return brings a pull
    /// and a spell of its own); `open` is whether the caller's books hold a request with
    /// room left, without which nobody waiting is no sign of anything.
    pub(crate) fn poll_lost(
        &mut self,
        cx: &mut TaskContext<'_>,
        connected: bool,
        open: bool,
    ) -> bool {
        let horizon = self.horizon;
        let (lost, over) = match self.watch.as_mut() {
            None => return false,
            Some(_) if !connected => (false, true),
            Some(watch) => watch.poll(cx, &self.ask, horizon, open),
        };
        if over {
            self.watch = None;
        }
        lost
    }
}

impl Watch {
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
                if waiting == Some(0) && open {
                    // The new pull is watched as the lost one was, within the same horizon.
                    self.gap = FIRST_WAIT;
                    self.next.as_mut().reset(now + FIRST_WAIT);
                    return (true, false);
                }
                self.gap = self.gap.saturating_mul(2);
                if now.duration_since(self.since) + self.gap > horizon {
                    return (false, true);
                }
                self.next.as_mut().reset(now + self.gap);
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
/// reply (no leader yet, or no consumer) or one that does not parse.
async fn ask(context: Context, subject: String) -> Option<usize> {
    let empty = serde_json::json!({});
    let request = context.request::<_, _, Response<Waiting>>(subject, &empty);
    match tokio::time::timeout(ASK_BOUND, request).await {
        Ok(Ok(Response::Ok(waiting))) => Some(waiting.num_waiting),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use futures_util::task::noop_waker_ref;

    use super::*;

    /// A check whose questions are answered with `answer` and counted.
    fn check(answer: Option<usize>) -> (LostPull, Arc<AtomicUsize>, Arc<Mutex<Option<usize>>>) {
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

    /// Moves the paused clock on by `secs` and polls, returning whether the pull was lost.
    async fn after(check: &mut LostPull, secs: u64, open: bool) -> bool {
        tokio::time::advance(Duration::from_secs(secs)).await;
        let mut cx = TaskContext::from_waker(noop_waker_ref());
        check.poll_lost(&mut cx, true, open)
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_is_asked_until_a_fault_nor_after_a_sign_of_life() {
        let (mut check, asked, _) = check(Some(0));
        assert!(!after(&mut check, 60, true).await);
        check.watch();
        check.alive();
        assert!(!after(&mut check, 60, true).await);
        assert_eq!(asked.load(Ordering::SeqCst), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn nobody_waiting_for_an_open_request_is_a_loss_asked_about_again() {
        let (mut check, asked, answer) = check(Some(0));
        check.watch();
        assert!(!after(&mut check, 2, true).await);
        assert_eq!(
            asked.load(Ordering::SeqCst),
            0,
            "asked before the first wait"
        );
        assert!(after(&mut check, 1, true).await);
        // The pull sent again is watched the same way.
        assert!(!after(&mut check, 2, true).await);
        *answer.lock().unwrap() = Some(1);
        assert!(!after(&mut check, 1, true).await);
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn nobody_waiting_is_no_loss_without_an_open_request() {
        let (mut check, asked, _) = check(Some(0));
        check.watch();
        assert!(!after(&mut check, 3, false).await);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn questions_double_apart_and_stop_at_the_horizon() {
        let (mut check, asked, _) = check(Some(1));
        check.watch();
        let mut at = Vec::new();
        for second in 1..=60 {
            let before = asked.load(Ordering::SeqCst);
            assert!(!after(&mut check, 1, true).await);
            if asked.load(Ordering::SeqCst) > before {
                at.push(second);
            }
        }
        // 3 s, then 6 and 12 more; 24 more would pass the 30 s horizon.
        assert_eq!(at, [3, 9, 21]);
    }

    #[tokio::test(start_paused = true)]
    async fn unanswered_questions_are_paced_as_answered_ones() {
        let (mut check, asked, _) = check(None);
        check.watch();
        for _ in 0..60 {
            assert!(!after(&mut check, 1, true).await);
        }
        assert_eq!(asked.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_faults_moves_the_question_later() {
        let (mut check, asked, _) = check(Some(1));
        check.watch();
        for _ in 0..5 {
            // A no-responders retry every 2 s keeps the question back.
            assert!(!after(&mut check, 2, true).await);
            check.watch();
        }
        assert_eq!(asked.load(Ordering::SeqCst), 0);
        assert!(!after(&mut check, 3, true).await);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lost_connection_ends_the_spell() {
        let (mut check, asked, _) = check(Some(0));
        check.watch();
        tokio::time::advance(Duration::from_secs(3)).await;
        let mut cx = TaskContext::from_waker(noop_waker_ref());
        assert!(!check.poll_lost(&mut cx, false, true));
        assert!(!after(&mut check, 60, true).await);
        assert_eq!(asked.load(Ordering::SeqCst), 0);
    }
}
