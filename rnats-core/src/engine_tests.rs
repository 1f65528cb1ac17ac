//! The engine's state transitions without a socket: replay after a reconnect, flush
//! bookkeeping during an outage, and the release of waiters when the driver is gone.

use std::io::IoSlice;
use std::sync::Arc;

use bytes::Bytes;
use rnats_proto::{ServerInfo, Subject};

use super::{DriverGuard, Ending, Engine, replay};
use crate::connection::LinkState;
use crate::error::FlushCause;
use crate::events::ConnectionEvent;
use crate::floor::frames::{Frames, IOVECS};
use crate::floor::server_pool::ServerPool;
use crate::floor::session::{Pong, Waiting};
use crate::options::ConnectOptions;
use crate::shared::{Shared, Sink, SubEntry};
use crate::sub_queue::{Limits, SubQueue};

/// Client state whose write queue is a live link's, with no socket (callers never write
/// directly).
fn shared() -> Arc<Shared> {
    let pool = ServerPool::new(vec!["127.0.0.1:1".parse().expect("an address")], true);
    let shared = Arc::new(Shared::new(
        crate::rt::Rt::Tokio,
        ConnectOptions::new(),
        ServerInfo::default(),
        pool,
        None,
    ));
    go_live(&shared);
    shared
}

fn go_live(shared: &Shared) {
    shared
        .writes()
        .queue
        .handle_connected(None, 1, Frames::default());
}

fn subscribe(shared: &Shared, sid: u64, subject: &str, max: Option<u64>, delivered: u64) {
    subscribe_queue(shared, sid, subject, max, delivered);
}

fn subscribe_queue(
    shared: &Shared,
    sid: u64,
    subject: &str,
    max: Option<u64>,
    delivered: u64,
) -> Arc<SubQueue> {
    let queue = Arc::new(SubQueue::new(Limits {
        messages: 16,
        bytes: 1 << 16,
        copy_below: 16 * 1024,
    }));
    let mut entry = SubEntry::new(
        Subject::from(subject),
        None,
        Sink::Queue(Arc::clone(&queue)),
    );
    entry.delivered = delivered;
    entry.max = max;
    shared.session().subs.insert(sid, entry);
    queue
}

/// An engine with no socket, fed bytes straight into its read buffer: the driver's
/// protocol handling without I/O. Its link counts as live for callers.
fn engine_without_socket(shared: &Arc<Shared>) -> Engine {
    let engine = Engine::new(Arc::clone(shared), None);
    go_live(shared);
    shared.set_state(LinkState::Connected);
    engine
}

fn take_messages(queue: &SubQueue) -> Vec<Bytes> {
    let mut local = std::collections::VecDeque::new();
    let waker = futures_util::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let _ = queue.poll_take(&mut cx, &mut local);
    local.into_iter().map(|m| m.into_msg().payload).collect()
}

/// Everything queued, as the bytes a socket would get.
fn queued_bytes(shared: &Shared) -> Vec<u8> {
    let frames = std::mem::take(shared.writes().queue.frames_mut());
    frame_bytes(frames)
}

/// The bytes a socket would get for `frames`.
fn frame_bytes(mut frames: Frames) -> Vec<u8> {
    let mut all = Vec::new();
    while !frames.is_empty() {
        let mut slices = [IoSlice::new(&[]); IOVECS];
        let n = frames.io_slices(&mut slices);
        let written: usize = slices[..n].iter().map(|s| s.len()).sum();
        for s in &slices[..n] {
            all.extend_from_slice(s);
        }
        frames.advance(written);
    }
    all
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .split("\r\n")
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The waiters of a PONG that must answer a flush's PING.
fn answered(pong: Pong<crate::shared::FlushWaiter>) -> Waiting<crate::shared::FlushWaiter> {
    match pong {
        Pong::Answered(Some(waiting)) => waiting,
        Pong::Answered(None) => panic!("the PONG answered a PING nobody waits for"),
        Pong::Unasked => panic!("the PONG answered no PING"),
    }
}

fn go_offline(shared: &Shared) {
    shared.writes().queue.handle_disconnected();
    shared.set_state(LinkState::Disconnected);
}

#[test]
fn replay_sends_subscriptions_then_kept_publishes_then_one_ping_for_all_flushes() {
    let shared = shared();
    subscribe(&shared, 1, "a", None, 0);
    subscribe(&shared, 2, "b.>", Some(5), 2);
    go_offline(&shared);
    shared.writes().queue.push_message(
        |buf| buf.extend_from_slice(b"PUB kept 2\r\n"),
        &Bytes::from_static(b"hi"),
    );
    let first = shared.push_ping().expect("not closed");
    let second = shared.push_ping().expect("not closed");
    let abandoned = shared.push_ping().expect("not closed");
    drop(abandoned);
    assert!(
        shared.writes().queue.len() == b"PUB kept 2\r\nhi\r\n".len(),
        "no PING goes out while disconnected"
    );

    replay(&shared, None);

    let got = lines(&queued_bytes(&shared));
    let mut subs: Vec<&str> = got[..3].iter().map(String::as_str).collect();
    subs.sort_unstable();
    assert_eq!(subs, ["SUB a 1", "SUB b.> 2", "UNSUB 2 3"]);
    assert_eq!(got[3..], ["PUB kept 2", "hi", "PING"]);
    assert!(
        shared.writes().queue.is_live(),
        "callers write to the new link"
    );
    let session = shared.session();
    assert_eq!(
        session.pings.waiting(),
        1,
        "one PING serves every waiting flush"
    );
    match session.pings.oldest() {
        Some((1, Waiting::Many(waiters))) => assert_eq!(waiters.len(), 2, "abandoned pruned"),
        other => panic!("unexpected {other:?}"),
    }
    drop(session);
    answered(shared.count_pong()).resolve(Ok(()));
    assert_eq!(first.blocking_recv(), Ok(Ok(())));
    assert_eq!(second.blocking_recv(), Ok(Ok(())));
}

#[test]
fn a_subscribe_after_the_replay_sends_its_own_sub() {
    let shared = shared();
    go_offline(&shared);
    // While disconnected a SUB is not queued: the replay restores it from the table.
    subscribe(&shared, 7, "early", None, 0);
    assert!(shared.push_control(|buf| rnats_proto::encode_sub(buf, "early", None, 7)));
    assert_eq!(shared.writes().queue.len(), 0);
    replay(&shared, None);
    assert_eq!(lines(&queued_bytes(&shared)), ["SUB early 7"]);
    // Once the replay has run, a subscription sends its own SUB.
    subscribe(&shared, 8, "late", None, 0);
    assert!(shared.push_control(|buf| rnats_proto::encode_sub(buf, "late", None, 8)));
    assert_eq!(lines(&queued_bytes(&shared)), ["SUB late 8"]);
}

#[test]
fn abandoned_flushes_made_during_an_outage_do_not_pile_up() {
    let shared = shared();
    go_offline(&shared);
    for _ in 0..10_000 {
        drop(shared.push_ping());
    }
    let kept = shared.session().pings.deferred();
    assert!(kept <= 32, "{kept} dropped flushes kept");
    let live: Vec<_> = (0..100).map(|_| shared.push_ping()).collect();
    assert!(shared.session().pings.deferred() <= 100 + 2 * 32);
    drop(live);
}

/// The read path holds the session while it dispatches a batch; a flush must not wait for
/// that (a flush is not held up by reads).
#[test]
fn a_flush_does_not_wait_for_the_session_lock() {
    let shared = shared();
    let dispatching = shared.session();
    let (tx, rx) = std::sync::mpsc::channel();
    let flusher = {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let _ = tx.send(shared.push_ping().is_some());
        })
    };
    let queued = rx.recv_timeout(std::time::Duration::from_secs(5));
    drop(dispatching);
    flusher.join().expect("the flusher ends");
    assert_eq!(queued, Ok(true), "the flush waited for the session lock");
    assert_eq!(lines(&queued_bytes(&shared)), ["PING"]);
    assert_eq!(shared.writes().new_flushes.len(), 1, "left for the engine");
}

#[tokio::test]
async fn flushes_lost_with_their_link_say_so() {
    let shared = shared();
    let mut engine = engine_without_socket(&shared);
    let answered = shared.push_ping().expect("not closed");
    let lost = shared.push_ping().expect("not closed");
    engine.read_buf.extend_from_slice(b"PONG\r\n");
    assert!(engine.handle_input().is_ok());
    // The second PING's PONG never comes: its link is lost first.
    engine.disconnected("cut".to_owned());
    assert_eq!(answered.await, Ok(Ok(())));
    assert_eq!(lost.await, Ok(Err(FlushCause::Disconnected)));
    assert!(shared.writes().new_flushes.is_empty());
}

#[tokio::test]
async fn a_driver_that_panics_releases_every_waiter() {
    let shared = shared();
    let flush = shared.push_ping().expect("not closed");
    let (pending, clock) = crate::request::Pending::register(&shared);
    let guard = DriverGuard(Arc::clone(&shared));
    let task = tokio::spawn(async move {
        let _guard = guard;
        panic!("a bug in the engine");
    });
    assert!(task.await.is_err(), "the task panicked");
    assert!(flush.await.is_err(), "the flush is released (Closed)");
    let err = pending.wait(None, clock).await.unwrap_err();
    assert_eq!(err.cause(), Some(&crate::error::RequestCause::Closed));
    shared.wait_done().await;
    assert_eq!(shared.state(), LinkState::Closed);
    assert!(shared.push_ping().is_none(), "nothing is accepted any more");
}

#[tokio::test]
async fn a_scripted_conversation_delivers_answers_and_ends_refused_subscriptions() {
    let shared = shared();
    let mut events = shared.events.subscribe();
    let mut engine = engine_without_socket(&shared);
    let allowed = subscribe_queue(&shared, 1, "a", Some(3), 0);
    let refused = subscribe_queue(&shared, 2, "secret.>", None, 0);
    let flush = shared.push_ping().expect("not closed");
    assert_eq!(lines(&queued_bytes(&shared)), ["PING"]);

    engine.read_buf.extend_from_slice(
        b"MSG a 1 2\r\nhi\r\nPING\r\n\
          -ERR 'Permissions Violation for Subscription to \"secret.>\"'\r\n\
          MSG a 1 5\r\nthere\r\nPONG\r\n",
    );
    assert!(
        engine.handle_input().is_ok(),
        "a permission error is not fatal"
    );

    assert_eq!(
        take_messages(&allowed),
        [Bytes::from("hi"), Bytes::from("there")]
    );
    assert_eq!(
        shared.session().subs.get(1).map(|e| e.delivered),
        Some(2),
        "auto-unsubscribe counts what was delivered"
    );
    assert!(
        !shared.session().subs.contains(2),
        "the refused one is gone"
    );
    assert!(matches!(
        refused.take_error(),
        Some(crate::error::SubscriberError::PermissionViolation { subject }) if subject == "secret.>"
    ));
    assert_eq!(
        lines(&queued_bytes(&shared)),
        ["PONG"],
        "the server's PING answered"
    );
    assert_eq!(flush.await, Ok(Ok(())), "the PONG resolved the flush");
    assert!(matches!(
        events.try_recv(),
        Ok(ConnectionEvent::ServerError(_))
    ));
}

#[tokio::test]
async fn auto_unsubscribe_ends_the_stream_at_the_count() {
    let shared = shared();
    let mut engine = engine_without_socket(&shared);
    let queue = subscribe_queue(&shared, 5, "n", Some(2), 1);
    engine
        .read_buf
        .extend_from_slice(b"MSG n 5 1\r\nx\r\nMSG n 5 1\r\ny\r\n");
    assert!(engine.handle_input().is_ok());
    // One was delivered before (say, on the link before a reconnect): one more ends it, and
    // the message past the count is dropped.
    assert_eq!(take_messages(&queue), [Bytes::from("x")]);
    assert!(!shared.session().subs.contains(5));
}

#[tokio::test]
async fn lame_duck_info_is_reported_once() {
    let shared = shared();
    let mut events = shared.events.subscribe();
    let mut engine = engine_without_socket(&shared);
    shared
        .session()
        .handle_connected(std::time::Instant::now(), ServerInfo::default());
    engine
        .read_buf
        .extend_from_slice(b"INFO {\"ldm\":true}\r\nINFO {\"ldm\":true}\r\n");
    assert!(engine.handle_input().is_ok());
    let mut lame_duck = 0;
    while let Ok(event) = events.try_recv() {
        lame_duck += usize::from(event == ConnectionEvent::LameDuckMode);
    }
    assert_eq!(lame_duck, 1);
    assert!(
        shared.session().poll_timeout().is_some(),
        "a move is scheduled"
    );
}

#[tokio::test]
async fn a_fatal_server_error_ends_the_link() {
    let shared = shared();
    let mut engine = engine_without_socket(&shared);
    engine
        .read_buf
        .extend_from_slice(b"-ERR 'Authorization Violation'\r\n");
    match engine.handle_input() {
        Err(Ending::Lost(reason)) => assert!(reason.contains("uthorization"), "{reason}"),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_planned_move_gives_the_old_link_what_it_accepted_and_a_last_ping() {
    let shared = shared();
    shared
        .writes()
        .queue
        .push_control(|buf| buf.extend_from_slice(b"PUB a 1\r\nx\r\n"));
    let mut out = Frames::default();
    let last_ping = shared.writes().handle_move(&mut out, &shared.statistics);
    assert_eq!(last_ping, Some(1), "the link's first PING");
    shared.session().pings.note_last_ping(1);
    assert_eq!(lines(&frame_bytes(out)), ["PUB a 1", "x", "PING"]);
    {
        let writes = shared.writes();
        assert!(
            !writes.queue.is_live(),
            "callers now fill the reconnect buffer"
        );
        assert!(writes.queue.is_empty());
        let session = shared.session();
        assert!(
            !session.pings.move_answered(),
            "the last PING awaits its PONG"
        );
        assert_eq!(
            session.pings.waiting(),
            0,
            "nobody waits on it but the move"
        );
    }
    let mut again = Frames::default();
    assert!(
        shared
            .writes()
            .handle_move(&mut again, &shared.statistics)
            .is_none(),
        "nothing to hand over twice"
    );
    // A flush made during the move waits for the next link, and a publish is kept for it.
    let flush = shared.push_ping().expect("not closed");
    shared
        .writes()
        .queue
        .push_control(|buf| buf.extend_from_slice(b"PUB b 1\r\ny\r\n"));
    // The old link ends with its PONG unanswered: that PING was a keepalive, so no flush
    // fails, and the one made during the move survives to the next link.
    let lost = shared.session().handle_disconnected();
    assert!(lost.is_empty(), "no flush waited on the old link");
    shared.writes().handle_disconnected();
    replay(&shared, None);
    assert_eq!(lines(&queued_bytes(&shared)), ["PUB b 1", "y", "PING"]);
    answered(shared.count_pong()).resolve(Ok(()));
    assert_eq!(flush.blocking_recv(), Ok(Ok(())));
}

/// The linger policy on a virtual clock: publishes are held until the delay, `max_bytes`
/// (clamped to the write limit) or anything urgent, and a delay past the clock's range
/// saturates instead of overflowing.
#[test]
fn linger_holds_publishes_until_its_delay_its_bytes_or_a_flush() {
    use crate::options::Linger;
    use crate::writer::Writes;
    use std::time::Duration;
    use std::time::Instant;

    const MS: Duration = Duration::from_millis(1);
    let linger = Linger {
        delay: 20 * MS,
        max_bytes: 100,
    };
    let start = Instant::now();
    let mut writes = Writes::new(1 << 16);
    assert_eq!(
        writes.linger_until(linger, 1 << 16, start),
        None,
        "nothing queued"
    );
    writes
        .queue
        .push_control(|buf| buf.extend_from_slice(b"PUB a 1\r\nx\r\n"));
    writes.linger_since = Some(start);
    assert_eq!(
        writes.linger_until(linger, 1 << 16, start + 5 * MS),
        Some(start + 20 * MS),
        "held until the delay"
    );
    assert_eq!(writes.linger_until(linger, 1 << 16, start + 20 * MS), None);
    assert_eq!(
        writes.linger_until(linger, 8, start + 5 * MS),
        None,
        "max_bytes past the write limit: publishers would wait there"
    );
    writes.urgent = true;
    assert_eq!(writes.linger_until(linger, 1 << 16, start), None, "a flush");
    writes.urgent = false;
    writes.space_waiters = true;
    assert_eq!(
        writes.linger_until(linger, 1 << 16, start),
        None,
        "publishers wait"
    );
    writes.space_waiters = false;
    while writes.queue.len() < 100 {
        writes
            .queue
            .push_control(|buf| buf.extend_from_slice(b"PUB a 1\r\nx\r\n"));
    }
    assert_eq!(
        writes.linger_until(linger, 1 << 16, start),
        None,
        "max_bytes"
    );
    let forever = Linger {
        delay: Duration::MAX,
        max_bytes: usize::MAX,
    };
    let held = writes.linger_until(forever, usize::MAX, start + 5 * MS);
    assert!(
        held.is_some_and(|at| at > start + 86_400_000 * MS),
        "{held:?}"
    );
}

/// Client state lingering an hour (up to `max_bytes`), live with no socket, and its engine.
fn lingering(max_bytes: usize) -> (Arc<Shared>, Engine) {
    let pool = ServerPool::new(vec!["127.0.0.1:1".parse().expect("an address")], true);
    let shared = Arc::new(Shared::new(
        crate::rt::Rt::Tokio,
        ConnectOptions::new().linger(std::time::Duration::from_secs(3600), max_bytes),
        ServerInfo::default(),
        pool,
        None,
    ));
    let engine = engine_without_socket(&shared);
    (shared, engine)
}

/// Queues a `PUB a` of `payload` as a caller would, with `urgency`.
fn queue_pub(shared: &Shared, payload: &str, urgency: crate::writer::Urgency) {
    let mut writes = shared.writes();
    writes.queue.push_control(|buf| {
        buf.extend_from_slice(format!("PUB a {}\r\n{payload}\r\n", payload.len()).as_bytes());
    });
    shared.submit(writes, urgency);
}

/// Under linger, the engine holds a linger back until its timer, after writing a batch; a
/// flush or a request then writes the queue itself or wakes the engine (here, with no
/// socket, it wakes it), without tripping the writer invariant asserted in `Writes::submit`
/// (the batch is out), and the engine takes everything at once. A publish that starts a
/// linger while the engine's timer is armed wakes nobody.
#[tokio::test]
async fn flushes_and_requests_take_what_a_linger_holds() {
    use crate::writer::{Urgency, Writer};
    let (shared, mut engine) = lingering(1 << 20);
    let waker = futures_util::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let queue = |payload: &str, urgency: Urgency| queue_pub(&shared, payload, urgency);
    let kicks = || shared.kicks.load(std::sync::atomic::Ordering::Relaxed);
    assert!(!engine.take_queued(&mut cx), "nothing queued yet");
    assert_eq!(shared.writes().writer, Writer::Idle);
    queue("x", Urgency::Normal);
    assert_eq!(
        shared.writes().writer,
        Writer::Woken,
        "the first linger wakes the engine"
    );
    assert!(!engine.take_queued(&mut cx), "held back");
    assert!(shared.writes().linger_armed);
    for (urgent, last, count) in [("flush", "PING", 3), ("request", "req", 4)] {
        let before = kicks();
        if urgent == "flush" {
            let _pong = shared.push_ping().expect("not closed");
        } else {
            queue("req", Urgency::Request);
        }
        assert_eq!(kicks(), before + 1, "the {urgent} did not wake the engine");
        assert!(shared.writes().urgent);
        assert!(engine.take_queued(&mut cx), "taken for the {urgent}");
        let written = lines(&frame_bytes(std::mem::take(&mut engine.out)));
        assert_eq!(written.last().map(String::as_str), Some(last));
        assert_eq!(written.len(), count, "{written:?}");
        // The next linger, while the timer is armed, wakes nobody.
        queue("y", Urgency::Normal);
        assert_eq!(
            shared.writes().writer,
            Writer::Writing,
            "a linger that starts while the timer is armed woke the engine"
        );
        assert!(!engine.take_queued(&mut cx), "held back");
        assert_eq!(shared.writes().writer, Writer::Idle);
    }
}

/// Under linger, a publish that brings the queue to `max_bytes` wakes the engine to write,
/// also when it is the first of a linger and the engine's timer is armed.
#[tokio::test]
async fn a_linger_that_starts_at_max_bytes_wakes_the_engine_though_its_timer_is_armed() {
    use crate::writer::{Urgency, Writer};
    let (shared, mut engine) = lingering(64);
    let waker = futures_util::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let queue = |payload: &str| queue_pub(&shared, payload, Urgency::Normal);
    assert!(!engine.take_queued(&mut cx), "nothing queued yet");
    queue("small");
    assert!(!engine.take_queued(&mut cx), "held back");
    assert!(shared.writes().linger_armed);
    let _pong = shared.push_ping().expect("not closed");
    assert!(engine.take_queued(&mut cx), "taken for the flush");
    engine.out = Frames::default(); // written
    assert_eq!(shared.writes().writer, Writer::Writing);
    assert!(!engine.take_queued(&mut cx), "nothing queued");
    assert_eq!(shared.writes().writer, Writer::Idle);
    queue(&"x".repeat(64));
    assert_eq!(
        shared.writes().writer,
        Writer::Woken,
        "a linger that starts at max_bytes left for the timer"
    );
    assert!(engine.take_queued(&mut cx), "written at max_bytes");
}

/// While the engine watches a caller's bulk run (`Look::Caller`), a caller holding the
/// write lock is that run going on: the engine's look does not wait for the lock, which
/// would park its worker until the caller's write ended and make the caller wake it as it
/// unlocked. Once someone kicks it, the queue may be its own: then it waits.
#[tokio::test]
async fn a_look_at_a_bulk_run_does_not_wait_for_the_callers_lock() {
    use std::sync::mpsc;
    use std::time::Duration;

    use crate::writer::Writer;

    let shared = shared();
    let mut engine = engine_without_socket(&shared);
    shared.writes().writer = Writer::Bulk;
    engine.tail_at = Some(shared.rt.now() + crate::caller_write::TAIL);
    let waker = futures_util::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    // A caller mid-write: it holds the lock until told to let go, or for ten seconds.
    let (locked_tx, locked_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let holder = {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let writes = shared.writes();
            locked_tx.send(()).expect("the test waits");
            let told = done_rx.recv_timeout(Duration::from_secs(10)).is_ok();
            drop(writes);
            told
        })
    };
    locked_rx.recv().expect("the holder locks");
    assert!(!engine.take_queued(&mut cx), "nothing to take mid-run");
    assert!(engine.tail_at.is_some(), "the watch goes on");
    done_tx.send(()).expect("the holder waits");
    assert!(
        holder.join().expect("the holder ends"),
        "the look waited for the caller's lock"
    );
    // A kick while the lock is held (a task's frame, a run handed back): the queue may be
    // the engine's now, so the look waits for the lock and takes it. The holder lets go
    // after a bound the look cannot return before, unless it skips the lock.
    let (locked_tx, locked_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let holder = {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let mut writes = shared.writes();
            writes
                .queue
                .push_control(|buf| buf.extend_from_slice(b"PUB a 1\r\nx\r\n"));
            writes.kick(&shared.kicks);
            locked_tx.send(()).expect("the test waits");
            let told = done_rx.recv_timeout(Duration::from_millis(200)).is_ok();
            drop(writes);
            told
        })
    };
    locked_rx.recv().expect("the holder locks");
    let took = engine.take_queued(&mut cx);
    let _ = done_tx.send(());
    assert!(
        !holder.join().expect("the holder ends"),
        "the kicked look did not wait for the lock"
    );
    assert!(took, "the kicked engine took no queue");
    assert_eq!(
        lines(&frame_bytes(std::mem::take(&mut engine.out))),
        ["PUB a 1", "x"]
    );
}
