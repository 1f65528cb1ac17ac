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
//! Two watches shorten that, neither of which costs anything in steady state:
//!
//! - [`Probe`]: after a fault (a reconnect, a cluster change, a leader change, no
//!   responders), for as long as missed heartbeats would take to tell (twice the idle
//!   heartbeat), the stream's pull requests ask for a heartbeat every second, and four
//!   seconds without a message or a heartbeat mean the request is gone: the stream pulls
//!   again at once, without an error item, three times a watch at most. A probing request
//!   keeps its heartbeat until it ends, so the heartbeats can outlast the window by the
//!   request's expiry. The server itself proves each request alive, and a leader that took
//!   a request and then stepped down is found out within seconds of its step-down. A stream whose own heartbeats would tell as
//!   soon (an idle heartbeat of 2 s or less), or whose requests expire within two seconds,
//!   does without.
//! - [`LostPull`]: without a fault to go by, when one and a half heartbeat intervals pass
//!   without a message or a heartbeat (half an interval past the heartbeat due), the stream
//!   asks the consumer's leader whether anybody waits (`CONSUMER.INFO`): at once, then 6 and
//!   12 s later (a fifth either way), until the heartbeat is missed. Nobody waiting while the
//!   stream's books hold a request with room left means the request is gone: it pulls again,
//!   twice a spell at most. Somebody waiting proves nothing (other clients may pull from the
//!   same consumer), so the missed heartbeat stays the last resort. The answer counts only
//!   when it names a leader: a server that is in the consumer's group but has not started it
//!   answers with a blank state. An answer to a question asked before the latest pull is
//!   dropped.
//!
//! Both count what they find in [`Recoveries::lost_pulls`](super::Recoveries::lost_pulls).

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use rnats_core::runtime::{self, Sleep};
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::consumer::stale::jittered;
use crate::context::Context;
use crate::errors::ErrorCode;
use crate::response::Response;

/// Half the wait between the first two questions (the wait doubles before each use), and
/// the wait after a pull before a question may follow it.
const FIRST_WAIT: Duration = Duration::from_secs(3);
/// How long one question may take before it counts as unanswered.
pub(crate) const ASK_BOUND: Duration = Duration::from_secs(3);
/// The horizon when the stream has no heartbeats or expiry to go by.
const DEFAULT_HORIZON: Duration = Duration::from_secs(30);
/// Pulls sent again in one spell of questions, at most.
const MOST_LOSSES: u32 = 2;
/// The idle heartbeat a [`Probe`] asks of each request.
pub(crate) const PROBE_HEARTBEAT: Duration = Duration::from_secs(1);
/// The silence that tells a probing request is gone: four of its heartbeats, as a leader
/// that has just been elected may be slow to send them.
pub(crate) const PROBE_LIMIT: Duration = Duration::from_secs(4);
/// Pulls sent again in one [`Probe`] watch, at most.
const MOST_PROBE_LOSSES: u32 = 3;

/// Watches the requests sent after a fault by asking each for a heartbeat a second; see the
/// module documentation. Pure bookkeeping: the stream asks for the heartbeat and watches the
/// silence.
#[derive(Debug)]
pub(crate) struct Probe {
    /// How long a watch lasts; zero for a stream that does without.
    window: Duration,
    /// Until when the watch lasts, while one does.
    until: Option<Instant>,
    losses: u32,
}

/// What a [`PROBE_LIMIT`] silence means to a [`Probe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProbeSilence {
    /// No watch: the silence is a plain miss.
    Unwatched,
    /// The request is gone: pull again at once.
    Lost,
    /// The watch is over (it found as many losses as it may, or nothing was open): the usual
    /// heartbeat again, and the silence judged by it.
    Over,
}

impl Probe {
    /// A probe for a stream whose requests have `idle_heartbeat` and expire after
    /// `expires`, and whose heartbeats are missed after `window`.
    pub(crate) fn new(
        idle_heartbeat: Duration,
        expires: Option<Duration>,
        window: Duration,
    ) -> Probe {
        // Worth it where a probe tells sooner than the request's own heartbeats would.
        let worth_it = idle_heartbeat.saturating_mul(2) > PROBE_LIMIT
            && expires.is_some_and(|expires| expires >= PROBE_HEARTBEAT * 2);
        Probe {
            window: if worth_it { window } else { Duration::ZERO },
            until: None,
            losses: 0,
        }
    }

    /// A fault: watch from `now`. Whether the stream now probes (it does not without a
    /// window).
    pub(crate) fn start(&mut self, now: Instant) -> bool {
        if self.window.is_zero() {
            return false;
        }
        self.until = Some(now + self.window);
        self.losses = 0;
        true
    }

    /// Whether a watch is on.
    pub(crate) fn is_on(&self) -> bool {
        self.until.is_some()
    }

    /// Whether a request sent at `now` probes; a watch whose window passed ends here.
    pub(crate) fn request(&mut self, now: Instant) -> bool {
        match self.until {
            Some(until) if now < until => true,
            _ => {
                self.until = None;
                false
            }
        }
    }

    /// What [`PROBE_LIMIT`] of silence means, `open` telling whether the stream counts a
    /// request open with room left. While a watch is on, every request sent since the fault
    /// asked for a heartbeat a second (a plain request sent after the window ends the watch
    /// first), so the silence is a loss, whenever it comes, up to the watch's limit. With no
    /// request of its own open (a batch delivered whole, waiting for its reader), the
    /// silence is nothing, and the usual heartbeat judges from there.
    pub(crate) fn silence(&mut self, open: bool) -> ProbeSilence {
        match self.until {
            None => ProbeSilence::Unwatched,
            Some(_) if self.losses >= MOST_PROBE_LOSSES || !open => {
                self.until = None;
                ProbeSilence::Over
            }
            Some(_) => {
                self.losses += 1;
                ProbeSilence::Lost
            }
        }
    }
}

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

/// Questions about a pull request whose heartbeat is late; see the module documentation.
pub(crate) struct LostPull {
    ask: Ask,
    /// How long a spell may last: as long as missed heartbeats take to tell.
    horizon: Duration,
    spell: Option<Spell>,
}

/// One spell of questions, until a sign of life, a fault, a miss, or its horizon.
struct Spell {
    questions: Questions,
    /// Fires at [`Questions::next_at`].
    next: Pin<Box<Sleep>>,
    /// The question on its way.
    asking: Option<BoxFuture<'static, Option<usize>>>,
}

impl Spell {
    fn new(now: Instant, horizon: Duration) -> Spell {
        let questions = Questions::new(now, horizon);
        Spell {
            next: Box::pin(rnats_core::runtime::sleep_until(questions.next_at())),
            questions,
            asking: None,
        }
    }
}

/// When the questions of one spell are due and what each answer means, without a clock or
/// I/O: the async [`LostPull`] and the blocking consumer's `Messages` ask by it.
#[derive(Debug, Clone)]
pub(crate) struct Questions {
    since: Instant,
    /// How long the spell may last.
    horizon: Duration,
    /// The wait before the next question; doubles after each.
    gap: Duration,
    next: Instant,
    losses: u32,
}

/// What one answer means; from [`Questions::answered`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// The request is gone: pull again at once.
    pub(crate) lost: bool,
    /// The spell is over: no more questions until the next late heartbeat.
    pub(crate) over: bool,
}

impl Questions {
    /// A spell starting at `now`, the first question at once, lasting at most `horizon`
    /// (zero: [`DEFAULT_HORIZON`]).
    pub(crate) fn new(now: Instant, horizon: Duration) -> Questions {
        Questions {
            since: now,
            horizon: if horizon.is_zero() {
                DEFAULT_HORIZON
            } else {
                horizon
            },
            gap: FIRST_WAIT,
            next: now,
            losses: 0,
        }
    }

    /// When the next question is due.
    pub(crate) fn next_at(&self) -> Instant {
        self.next
    }

    /// The next question is due at once (a heartbeat is late again).
    pub(crate) fn ask_now(&mut self, now: Instant) {
        self.next = now;
    }

    /// Whether the spell has outlasted its horizon at `now`.
    pub(crate) fn is_over(&self, now: Instant) -> bool {
        now.duration_since(self.since) > self.horizon
    }

    /// A pull went out at `now`: the next question waits until the leader has had time to
    /// take it.
    pub(crate) fn pulled(&mut self, now: Instant) {
        self.next = now + jittered(FIRST_WAIT);
    }

    /// The leader answered at `now` that `waiting` requests wait (`None`: no answer that
    /// counts); `open` is whether the caller's books hold a request with room left, without
    /// which nobody waiting tells nothing.
    pub(crate) fn answered(&mut self, now: Instant, waiting: Option<usize>, open: bool) -> Verdict {
        let lost = waiting == Some(0) && open;
        if lost {
            self.losses += 1;
        }
        self.gap = self.gap.saturating_mul(2);
        self.next = now + jittered(self.gap);
        let over =
            self.losses >= MOST_LOSSES || self.next.duration_since(self.since) > self.horizon;
        Verdict { lost, over }
    }
}

impl LostPull {
    /// Asks nothing yet; `horizon` bounds a spell (the stream's missed-heartbeat limit; zero
    /// for a stream with none, which gets [`DEFAULT_HORIZON`]).
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
            horizon,
            spell: None,
        }
    }

    /// A heartbeat is late: a spell of questions from now, the first at once, unless one is
    /// under way.
    pub(crate) fn ask_now(&mut self) {
        let now = runtime::now();
        match self.spell.as_mut() {
            Some(spell) if spell.asking.is_none() => {
                spell.questions.ask_now(now);
                spell.next.as_mut().reset(now);
            }
            Some(_) => {}
            None => self.spell = Some(Spell::new(now, self.horizon)),
        }
    }

    /// The request showed it lives (a message or a heartbeat came), or a fault or a missed
    /// heartbeat sent a new one: the spell ends, and an answer on its way, which would speak
    /// of the old request, is dropped.
    pub(crate) fn end(&mut self) {
        self.spell = None;
    }

    /// A pull went out (any pull: after an expiry, a refusal, a loss): an answer on its way
    /// speaks of the requests before it and is dropped, and the next question waits until
    /// the leader has had time to take the new one.
    pub(crate) fn pulled(&mut self) {
        if let Some(spell) = self.spell.as_mut() {
            spell.asking = None;
            spell.questions.pulled(runtime::now());
            spell.next.as_mut().reset(spell.questions.next_at());
        }
    }

    /// Whether the request is gone, so that the caller pulls again at once; registers the
    /// waker for the next question or answer. `connected` ends the spell while the
    /// connection is down (its return brings a pull, watched by a [`Probe`]); `open` is
    /// whether the caller's books hold a request with room left, without which nobody
    /// waiting tells nothing.
    pub(crate) fn poll_lost(
        &mut self,
        cx: &mut TaskContext<'_>,
        connected: bool,
        open: bool,
    ) -> bool {
        let (lost, over) = match self.spell.as_mut() {
            None => return false,
            Some(_) if !connected => (false, true),
            Some(spell) => spell.poll(cx, &self.ask, open),
        };
        if over {
            self.spell = None;
        }
        lost
    }
}

impl Spell {
    /// Drives the spell: `(lost, over)`.
    fn poll(&mut self, cx: &mut TaskContext<'_>, ask: &Ask, open: bool) -> (bool, bool) {
        loop {
            if let Some(asking) = self.asking.as_mut() {
                let Poll::Ready(waiting) = asking.poll_unpin(cx) else {
                    return (false, false);
                };
                self.asking = None;
                let verdict = self.questions.answered(runtime::now(), waiting, open);
                if verdict.over {
                    return (verdict.lost, true);
                }
                self.next.as_mut().reset(self.questions.next_at());
                if verdict.lost {
                    // Armed for the next question before the caller pulls again.
                    let _ = self.next.poll_unpin(cx);
                    return (true, false);
                }
            }
            if self.next.poll_unpin(cx).is_pending() {
                return (false, false);
            }
            if self.questions.is_over(runtime::now()) {
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
    match rnats_core::runtime::timeout(ASK_BOUND, request).await {
        Ok(Ok(response)) => answer(response),
        _ => None,
    }
}

/// Whether the server says that the consumer (or its stream) does not exist: 10014 or 10059
/// from a server that knows (a standalone server, or the cluster's meta leader, which alone
/// answers so in a cluster). No answer in time, an error of any other kind (no leader yet,
/// no permission to ask) or the consumer's info is not that.
pub(crate) async fn is_missing(context: Context, subject: String) -> bool {
    let empty = serde_json::json!({});
    let request = context.request::<_, _, Response<IgnoredAny>>(subject, &empty);
    match rnats_core::runtime::timeout(ASK_BOUND, request).await {
        Ok(Ok(answer)) => says_missing(&answer),
        _ => false,
    }
}

/// Whether a `CONSUMER.INFO` answer says that the consumer or its stream does not exist
/// (10014, 10059); shared with the blocking consumer's question.
pub(crate) fn says_missing(answer: &Response<IgnoredAny>) -> bool {
    matches!(
        answer,
        Response::Err { error }
            if matches!(
                error.error_code(),
                ErrorCode::CONSUMER_NOT_FOUND | ErrorCode::STREAM_NOT_FOUND
            )
    )
}

/// The count of waiting requests in the text of a `CONSUMER.INFO` answer, if it is a
/// leader's (the blocking consumer's question).
pub(crate) fn waiting_in(payload: &[u8]) -> Option<usize> {
    serde_json::from_slice(payload).ok().and_then(answer)
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

    /// What the next question gets: `Some(answer)`, or `None` for no reply ever.
    type Answers = Arc<Mutex<Option<Option<usize>>>>;

    fn check(answer: Option<usize>) -> (LostPull, Arc<AtomicUsize>, Answers) {
        let asked = Arc::new(AtomicUsize::new(0));
        let answer = Arc::new(Mutex::new(Some(answer)));
        let (count, reply) = (asked.clone(), answer.clone());
        let ask: Ask = Box::new(move || {
            count.fetch_add(1, Ordering::SeqCst);
            match *reply.lock().unwrap() {
                Some(reply) => async move { reply }.boxed(),
                None => futures_util::future::pending().boxed(),
            }
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

    /// Polls at once and then every 100 ms for `secs` seconds: the times of the questions,
    /// in tenths of a second, and how many polls said lost.
    async fn run(check: &mut LostPull, asked: &AtomicUsize, secs: u64) -> (Vec<u64>, usize) {
        let (mut at, mut lost) = (Vec::new(), 0);
        for tenth in 0..=secs * 10 {
            let before = asked.load(Ordering::SeqCst);
            let ms = if tenth == 0 { 0 } else { 100 };
            lost += usize::from(after(check, ms, true).await);
            if asked.load(Ordering::SeqCst) > before {
                at.push(tenth);
            }
        }
        (at, lost)
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_is_asked_until_a_heartbeat_is_late_nor_after_a_sign_of_life() {
        let (mut check, asked, _) = check(Some(0));
        assert!(!after(&mut check, 60_000, true).await);
        check.ask_now();
        check.end();
        assert!(!after(&mut check, 60_000, true).await);
        assert_eq!(asked.load(Ordering::SeqCst), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn questions_come_at_once_then_6_then_12_s_apart_a_fifth_either_way() {
        let (mut check, asked, _) = check(Some(1));
        check.ask_now();
        let (at, lost) = run(&mut check, &asked, 60).await;
        assert_eq!(lost, 0, "somebody waits");
        assert_eq!(at.len(), 3, "asked at {at:?} tenths");
        assert_eq!(at[0], 0, "{at:?}");
        assert!((48..=72).contains(&(at[1] - at[0])), "{at:?}");
        assert!((96..=144).contains(&(at[2] - at[1])), "{at:?}");
        // 24 s more would pass the 30 s horizon.
    }

    #[tokio::test(start_paused = true)]
    async fn nobody_waiting_for_an_open_request_is_a_loss_twice_a_spell_at_most() {
        let (mut check, asked, _) = check(Some(0));
        check.ask_now();
        let (at, lost) = run(&mut check, &asked, 60).await;
        assert_eq!((at.len(), lost), (2, 2), "asked at {at:?} tenths");
        // The next late heartbeat starts a new spell.
        check.ask_now();
        let (_, lost) = run(&mut check, &asked, 60).await;
        assert_eq!(lost, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn nobody_waiting_is_no_loss_without_an_open_request() {
        let (mut check, asked, _) = check(Some(0));
        check.ask_now();
        assert!(!poll(&mut check, false));
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_to_a_question_from_before_a_fault_is_dropped() {
        let (mut check, asked, answer) = check(Some(0));
        *answer.lock().unwrap() = None;
        check.ask_now();
        assert!(!poll(&mut check, true));
        assert_eq!(asked.load(Ordering::SeqCst), 1, "on its way, unanswered");
        // A later heartbeat while it is on its way asks nothing more.
        check.ask_now();
        assert!(!poll(&mut check, true));
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        // A fault sends a new pull: the question on its way would speak of the old one.
        check.end();
        *answer.lock().unwrap() = Some(Some(0));
        check.ask_now();
        assert!(poll(&mut check, true), "asked afresh");
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_on_its_way_when_any_pull_goes_out_is_dropped() {
        let (mut check, asked, answer) = check(Some(0));
        *answer.lock().unwrap() = None;
        check.ask_now();
        assert!(!poll(&mut check, true));
        // A 408 ends the request and the stream pulls again while the question is out.
        check.pulled();
        *answer.lock().unwrap() = Some(Some(0));
        assert!(
            !poll(&mut check, true),
            "the old question's answer is not waited for"
        );
        assert!(
            !after(&mut check, 2_300, true).await,
            "nothing asked right after the pull"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert!(after(&mut check, 1_300, true).await, "asked afresh");
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lost_connection_ends_the_spell() {
        let (mut check, asked, _) = check(Some(0));
        check.ask_now();
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
    async fn the_task_is_woken_for_the_next_question_after_a_loss() {
        let (mut check, asked, _) = check(Some(0));
        let woken = Arc::new(Count(AtomicUsize::new(0)));
        let waker = waker(woken.clone());
        let mut cx = TaskContext::from_waker(&waker);
        check.ask_now();
        assert!(check.poll_lost(&mut cx, true, true));
        // The next question's timer was armed before the loss was told.
        tokio::time::advance(Duration::from_millis(7_200)).await;
        assert_eq!(woken.0.load(Ordering::SeqCst), 1, "woken for the next");
        assert!(check.poll_lost(&mut cx, true, true));
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn only_a_leader_answer_counts() {
        let parse = |json: &str| waiting_in(json.as_bytes());
        let led = r#"{"num_waiting":2,"cluster":{"leader":"n1"}}"#;
        assert_eq!(parse(led), Some(2));
        // A group member that has not started the consumer answers with a blank state.
        assert_eq!(parse(r#"{"num_waiting":0,"cluster":{}}"#), None);
        assert_eq!(parse(r#"{"num_waiting":0,"cluster":{"leader":""}}"#), None);
        assert_eq!(parse(r#"{"num_waiting":0}"#), None);
        let error = r#"{"error":{"code":503,"err_code":10008,"description":"unavailable"}}"#;
        assert_eq!(parse(error), None);
        assert!(serde_json::from_str::<Response<Waiting>>(r#"{"cluster":{}}"#).is_err());
        assert_eq!(parse("not json"), None);
    }

    #[test]
    fn a_spell_asks_at_once_then_doubles_its_gap_until_its_horizon() {
        let start = runtime::now();
        let mut questions = Questions::new(start, secs(30));
        assert_eq!(questions.next_at(), start, "the first at once");
        let mut gaps = Vec::new();
        let mut at = start;
        loop {
            let verdict = questions.answered(at, Some(1), true);
            assert!(!verdict.lost, "somebody waits");
            gaps.push(questions.next_at() - at);
            if verdict.over {
                break;
            }
            at = questions.next_at();
        }
        // 6 s and 12 s, a fifth either way; the third (24 s) would pass the horizon.
        assert_eq!(gaps.len(), 3, "{gaps:?}");
        let six = Duration::from_millis(4_800)..=Duration::from_millis(7_200);
        assert!(six.contains(&gaps[0]), "{gaps:?}");
        assert!(gaps[1] > gaps[0] && gaps[2] > gaps[1], "{gaps:?}");
        assert!(questions.is_over(start + secs(31)));
        assert!(!questions.is_over(start + secs(29)));
    }

    #[test]
    fn nobody_waiting_is_a_loss_only_with_a_request_open_and_twice_at_most() {
        let start = runtime::now();
        let mut questions = Questions::new(start, secs(60));
        let idle = questions.answered(start, Some(0), false);
        assert_eq!(
            idle,
            Verdict {
                lost: false,
                over: false
            }
        );
        let unanswered = questions.answered(start, None, true);
        assert!(!unanswered.lost);
        let first = questions.answered(start, Some(0), true);
        assert_eq!(
            first,
            Verdict {
                lost: true,
                over: false
            }
        );
        let second = questions.answered(start, Some(0), true);
        assert_eq!(
            second,
            Verdict {
                lost: true,
                over: true
            }
        );
    }

    #[test]
    fn a_pull_puts_the_next_question_off_and_a_late_heartbeat_brings_it_on() {
        let start = runtime::now();
        let mut questions = Questions::new(start, secs(30));
        questions.pulled(start);
        let wait = questions.next_at() - start;
        assert!((secs(2)..=secs(4)).contains(&wait), "{wait:?}");
        questions.ask_now(start + secs(1));
        assert_eq!(questions.next_at(), start + secs(1));
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn a_probe_needs_a_longer_heartbeat_and_room_in_the_expiry() {
        let now = runtime::now();
        for (heartbeat, expires) in [(2, Some(30)), (15, Some(1)), (15, None)] {
            let mut probe = Probe::new(secs(heartbeat), expires.map(secs), secs(30));
            assert!(!probe.start(now), "{heartbeat} s, {expires:?}");
            assert!(!probe.request(now));
            assert_eq!(probe.silence(true), ProbeSilence::Unwatched);
        }
    }

    #[test]
    fn a_probe_watches_its_window_and_finds_three_losses_at_most() {
        let now = runtime::now();
        let mut probe = Probe::new(secs(15), Some(secs(30)), secs(30));
        assert_eq!(probe.silence(true), ProbeSilence::Unwatched);
        assert!(probe.start(now));
        assert!(probe.request(now + secs(29)));
        for _ in 0..3 {
            assert_eq!(probe.silence(true), ProbeSilence::Lost);
        }
        assert_eq!(probe.silence(true), ProbeSilence::Over);
        assert!(!probe.is_on());
        // A new fault, a new watch; past its window, requests are plain again and the
        // watch is over.
        assert!(probe.start(now + secs(10)));
        assert_eq!(probe.silence(true), ProbeSilence::Lost);
        assert!(!probe.request(now + secs(40)));
        assert!(!probe.is_on());
        assert_eq!(probe.silence(true), ProbeSilence::Unwatched);
        // Silence with only probing requests sent is a loss whenever it comes: the probe
        // keeps no clock of its own for it.
        assert!(probe.start(now + secs(50)));
        assert_eq!(probe.silence(true), ProbeSilence::Lost);
        // Nothing open: nothing lost, and the watch is over.
        assert_eq!(probe.silence(false), ProbeSilence::Over);
        assert!(!probe.is_on());
    }
}
