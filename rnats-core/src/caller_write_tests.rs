//! The writer role of a caller in `block_on`, and a task's writes at the write limit
//! (`caller_write.rs`), against a real server: each test runs its own multi-threaded
//! runtime, as `#[tokio::main]` does, and publishes past the write limit, from `block_on`
//! or from spawned tasks, so that the caller writes the queue itself.
#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::ops::RangeInclusive;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::StreamExt;
use rnats_test_server::{NatsServer, Proxy};
use tokio::runtime::{Builder, Runtime};
use tokio::task::JoinHandle;

use crate::writer::Writer;
use crate::{Client, ConnectOptions, ConnectionEvent, Events, Subscriber};

const WAIT: Duration = Duration::from_secs(30);
/// A small write limit, so that a few hundred publishes fill the queue.
const LIMIT: usize = 16 * 1024;

/// What `#[tokio::main]` builds.
fn main_runtime() -> Runtime {
    Builder::new_multi_thread().enable_all().build().unwrap()
}

/// Message `i`: its number, then padding to `size` bytes.
fn numbered(i: u64, size: usize) -> Bytes {
    let mut payload = BytesMut::with_capacity(size.max(8));
    payload.put_u64(i);
    payload.resize(size.max(8), b'x');
    payload.freeze()
}

fn number(payload: &[u8]) -> u64 {
    u64::from_be_bytes(payload[..8].try_into().unwrap())
}

/// Options with the tests' small write limit, reconnecting at once after a link is lost.
fn limited() -> ConnectOptions {
    ConnectOptions::new()
        .write_buffer_limit(LIMIT)
        .reconnect_delay_callback(|_| Duration::from_millis(10))
}

/// A subscription to `subject` on a connection of its own to `url`, in place on the server.
async fn subscribed(url: &str, subject: &str) -> Subscriber {
    let receiver = crate::connect(url).await.unwrap();
    let sub = receiver.subscribe(subject.to_owned()).await.unwrap();
    receiver.flush().await.unwrap();
    sub
}

/// Publishes message `i` of a bulk stream. Every thousandth (the 500th, 1500th, ...) is
/// followed by a flush: the engine then goes idle, so the next queue the caller fills is
/// its own to write even when the engine would otherwise keep pace with the stream (taking
/// each queue before it fills, so that the caller never needs the role).
async fn publish_in_bulk(client: &Client, subject: &'static str, i: u64, size: usize) {
    client.publish(subject, numbered(i, size)).await.unwrap();
    if i % 1000 == 500 {
        client.flush().await.unwrap();
    }
}

/// Publishes numbered 4 KiB messages on a stalled link until one waits for room (kernel
/// buffers take megabytes before the socket is full). Returns that publish's number (every
/// lower one returned) and the publish itself, still waiting: awaited, it completes once the
/// link flows; dropped, its message is never queued.
async fn publish_until_one_waits<'a>(
    client: &'a Client,
    subject: &'static str,
) -> (
    u64,
    Pin<Box<impl Future<Output = Result<(), crate::PublishError>> + 'a>>,
) {
    let mut number = 0;
    loop {
        let mut publish = Box::pin(client.publish(subject, numbered(number, 4096)));
        // Long enough that only a full socket keeps a publish waiting, however busy the
        // machine.
        match tokio::time::timeout(Duration::from_secs(2), publish.as_mut()).await {
            Ok(result) => result.unwrap(),
            Err(_) => return (number, publish),
        }
        number += 1;
        assert!(number < 100_000, "the socket never filled");
    }
}

/// Publishes messages `from..from + 100` and a flush once the link flows again, then waits
/// for `check` to have received the last of them.
async fn publish_the_rest(
    client: &Client,
    subject: &'static str,
    from: u64,
    check: JoinHandle<u64>,
) {
    for i in from..from + 100 {
        client.publish(subject, numbered(i, 4096)).await.unwrap();
    }
    client.flush().await.unwrap();
    tokio::time::timeout(WAIT, check).await.unwrap().unwrap();
}

fn caller_turns(client: &Client) -> u64 {
    client.shared().caller_turns.load(Ordering::Relaxed)
}

/// Waits for the next `Reconnected` event.
async fn reconnected(events: &mut Events) {
    tokio::time::timeout(WAIT, async {
        while let Some(event) = events.next().await {
            if matches!(event, ConnectionEvent::Reconnected) {
                return;
            }
        }
        panic!("events ended");
    })
    .await
    .expect("no reconnect")
}

/// Receives until message `last` came, checking that numbers only go up: every one of them,
/// unless the link was cut (`cut`: where the second link's numbers may begin); then gaps are
/// allowed, and what each of the two links carried must be in order (`two_runs_in_order`).
/// Returns how many came.
fn receive_in_order(
    mut sub: Subscriber,
    last: u64,
    cut: Option<RangeInclusive<u64>>,
) -> JoinHandle<u64> {
    tokio::spawn(async move {
        let mut expected = 0;
        let mut arrived = Vec::new();
        loop {
            let message = tokio::time::timeout(WAIT, sub.next())
                .await
                .expect("timed out")
                .expect("ended");
            let n = number(&message.payload);
            if cut.is_none() {
                assert_eq!(n, expected, "lost or out of order");
                expected = n + 1;
            }
            arrived.push(n);
            if n == last {
                if let Some(second_begins) = cut {
                    two_runs_in_order(&arrived, second_begins);
                }
                return arrived.len() as u64;
            }
        }
    })
}

/// Checks numbers that crossed two links one after the other: the first link carried them
/// up to where the second took over (somewhere in `second_begins`), each link in order. The
/// server reads its two connections apart, so it may route the first link's tail (bytes
/// still in its socket when the link was cut) after the second link's first messages: the
/// arrivals must be the two runs interleaved. A number that came after a larger one can only
/// be the first link's, and one that a smaller one came after only the second's: the second
/// link must begin above every number of the first kind and at or below every one of the
/// second, within `second_begins`.
fn two_runs_in_order(arrived: &[u64], second_begins: RangeInclusive<u64>) {
    let mut late = None;
    let mut largest_yet = None;
    for &n in arrived {
        if largest_yet.is_some_and(|largest| n <= largest) {
            late = late.max(Some(n));
        }
        largest_yet = largest_yet.max(Some(n));
    }
    let mut overtaking = None::<u64>;
    let mut smallest_after = None::<u64>;
    for &n in arrived.iter().rev() {
        if smallest_after.is_some_and(|smallest| n >= smallest) {
            overtaking = Some(overtaking.map_or(n, |o| o.min(n)));
        }
        smallest_after = Some(smallest_after.map_or(n, |s| s.min(n)));
    }
    let from = late.map_or(*second_begins.start(), |n| {
        (n + 1).max(*second_begins.start())
    });
    let to = overtaking.map_or(*second_begins.end(), |n| n.min(*second_begins.end()));
    assert!(
        from <= to,
        "not two runs in order, the second beginning in {second_begins:?}: {late:?} came \
         after a larger number, {overtaking:?} before a smaller one"
    );
}

#[test]
fn two_runs_in_order_takes_the_links_interleaved_and_nothing_else() {
    let ok = |arrived: &[u64], second: RangeInclusive<u64>| {
        std::panic::catch_unwind(|| two_runs_in_order(arrived, second)).is_ok()
    };
    // The first link's 3 and 4 routed after the second's 5 and 6; a gap where 8 was lost.
    assert!(ok(&[0, 1, 2, 5, 6, 3, 4, 7, 9], 3..=5));
    assert!(ok(&[0, 1, 2, 3, 4], 2..=4));
    // The second link cannot have begun below 5, nor above 3.
    assert!(!ok(&[0, 1, 2, 5, 6, 3, 4, 7], 2..=3));
    assert!(!ok(&[0, 1, 2, 5, 6, 3, 4, 7], 6..=7));
    // Out of order within one link, or a number twice.
    assert!(!ok(&[0, 2, 1, 3, 4], 3..=4));
    assert!(!ok(&[0, 1, 5, 7, 6, 8], 4..=5));
    assert!(!ok(&[0, 1, 2, 2, 3], 1..=4));
}

/// A bulk publisher in `block_on` writes its full queues itself while a task publishes on
/// the same connection through the engine: each stream arrives whole and in order, and the
/// end of the run, with no flush behind it, goes out through the engine's tail watch.
#[test]
fn a_bulk_publisher_writes_its_own_batches_beside_the_engine_in_order() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let main_sub = subscribed(&server.url(), "bulk.main").await;
        let task_sub = subscribed(&server.url(), "bulk.task").await;
        let client = limited().connect(server.url()).await.unwrap();
        let (count, task_count) = (20_000, 2_000);
        let main_check = receive_in_order(main_sub, count - 1, None);
        let task_check = receive_in_order(task_sub, task_count - 1, None);
        let task_client = client.clone();
        let task = tokio::spawn(async move {
            for i in 0..task_count {
                let payload = numbered(i, 100);
                task_client.publish("bulk.task", payload).await.unwrap();
                if i % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        });
        for i in 0..count {
            publish_in_bulk(&client, "bulk.main", i, 200).await;
        }
        // No flush: the caller is parked on the receivers only.
        tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
        tokio::time::timeout(WAIT, main_check)
            .await
            .unwrap()
            .unwrap();
        tokio::time::timeout(WAIT, task_check)
            .await
            .unwrap()
            .unwrap();
        assert!(caller_turns(&client) > 0, "the caller never wrote a batch");
        let statistics = client.statistics();
        assert_eq!(
            statistics.out_messages.load(Ordering::Relaxed),
            count + task_count,
            "every message counted once"
        );
    });
}

/// Planned moves (`force_reconnect`) while the caller writes its batches: a move takes the
/// queue, partly written frame and all, from the caller as it would from the engine. Every
/// message arrives, in order.
#[test]
fn planned_moves_during_a_callers_turns_lose_and_reorder_nothing() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let sub = subscribed(&server.url(), "moves").await;
        let client = limited().connect(server.url()).await.unwrap();
        // 20,000 messages of 200 bytes fit in the reconnect buffer (8 MiB) however slow the
        // moves are: publishes made while the client moves never wait, they are kept.
        let count = 20_000;
        let check = receive_in_order(sub, count - 1, None);
        let progress = Arc::new(AtomicU64::new(0));
        let mover = {
            let (client, progress) = (client.clone(), Arc::clone(&progress));
            tokio::spawn(async move {
                let mut events = client.events();
                for step in 1..=3 {
                    while progress.load(Ordering::Relaxed) < step * count / 4 {
                        tokio::task::yield_now().await;
                    }
                    client.force_reconnect().await.unwrap();
                    reconnected(&mut events).await;
                }
            })
        };
        for i in 0..count {
            publish_in_bulk(&client, "moves", i, 200).await;
            progress.store(i, Ordering::Relaxed);
        }
        client.flush().await.unwrap();
        tokio::time::timeout(WAIT, mover).await.unwrap().unwrap();
        tokio::time::timeout(WAIT, check).await.unwrap().unwrap();
        assert!(caller_turns(&client) > 0, "the caller never wrote a batch");
    });
}

/// A link cut while the caller writes: what was in flight may be lost with the link, but
/// nothing arrives twice or out of order, the publisher goes on, and what it publishes once
/// the link is back arrives.
#[test]
fn a_link_lost_during_a_callers_turns_reorders_nothing() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    main_runtime().block_on(async {
        let sub = subscribed(&server.url(), "cut").await;
        let client = limited().connect(proxy.url()).await.unwrap();
        let mut events = client.events();
        let count = 30_000;
        // Everything up to the last flush before the cut (`publish_in_bulk` flushes at each
        // ...500) reached the server on the first link; the second carries at most what
        // follows it.
        let last_flushed = (count / 2 - 1) / 1000 * 1000 + 500;
        let check = receive_in_order(sub, count - 1, Some(last_flushed + 1..=count / 2));
        for i in 0..count / 2 {
            publish_in_bulk(&client, "cut", i, 300).await;
        }
        assert!(caller_turns(&client) > 0, "the caller never wrote a batch");
        proxy.cut();
        reconnected(&mut events).await;
        for i in count / 2..count {
            publish_in_bulk(&client, "cut", i, 300).await;
        }
        client.flush().await.unwrap();
        let received = tokio::time::timeout(WAIT, check).await.unwrap().unwrap();
        assert!(received >= count / 2, "only {received} arrived");
    });
}

/// A socket that stays full (the link stalled): the caller's turns pause until they have
/// written nothing for `STALL`, then the run goes to the engine, the next publish awaits
/// room without taking turns, and dropping that publish leaves nobody holding the writer
/// role. Once the link flows again every message whose publish returned arrives, in order.
#[test]
fn a_stalled_link_goes_to_the_engine_and_a_dropped_publish_holds_nothing() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    main_runtime().block_on(async {
        let sub = subscribed(&server.url(), "stall").await;
        let client = limited().connect(proxy.url()).await.unwrap();
        proxy.stall();
        let (published, mut waiting) = publish_until_one_waits(&client, "stall").await;
        {
            let writes = client.shared().writes();
            assert_eq!(writes.writer, Writer::Writing, "the engine holds no batch");
            assert!(writes.outside_waiter, "the caller does not wait for room");
        }
        // Waiting for room, it takes no turns: nothing is awake for a stalled link.
        let turns = caller_turns(&client);
        let more = tokio::time::timeout(Duration::from_millis(100), waiting.as_mut()).await;
        assert!(more.is_err(), "a publish went through a stalled link");
        assert_eq!(
            caller_turns(&client),
            turns,
            "the waiting publish took turns"
        );
        // Its message was never queued: the next publish takes its number.
        drop(waiting);
        assert!(caller_turns(&client) > 0, "the caller never wrote a batch");
        assert_ne!(
            client.shared().writes().writer,
            Writer::Caller,
            "a dropped publish left the writer role held"
        );
        let check = receive_in_order(sub, published + 99, None);
        proxy.resume();
        publish_the_rest(&client, "stall", published, check).await;
    });
}

/// A caller that reaches the limit while the engine holds a batch waits, and gets the queue
/// when that batch ends: the engine hands it the writer role instead of taking the queue
/// (without that, the engine kept the role for as long as the stream went on). The link
/// is stalled so that the engine's batch cannot end before the caller waits.
#[test]
fn a_caller_waiting_behind_the_engines_batch_gets_the_queue_when_it_ends() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    main_runtime().block_on(async {
        let sub = subscribed(&server.url(), "handed").await;
        let client = limited().connect(proxy.url()).await.unwrap();
        proxy.stall();
        // The caller's turns have written nothing for `STALL`, so the run went to the
        // engine, which holds a batch it cannot finish.
        let (waiting_number, mut waiting) = publish_until_one_waits(&client, "handed").await;
        let published = waiting_number + 1;
        {
            let writes = client.shared().writes();
            assert!(writes.outside_waiter, "the caller does not wait for room");
            assert_eq!(writes.writer, Writer::Writing, "the engine holds no batch");
        }
        let turns = caller_turns(&client);
        let runs = client.shared().writes().bulk_publishes;
        let check = receive_in_order(sub, published + 99, None);
        proxy.resume();
        waiting.as_mut().await.unwrap();
        // Handed the queue, the caller starts a bulk run (`bulk_publishes` counts its start)
        // and normally writes the queue itself. On a loaded machine it may not run within
        // the engine's tail watch (two 1 ms periods), which then takes the queue back, as it
        // should: the hand-off is what this test is about, not the scheduler.
        let handed = client.shared().writes().bulk_publishes > runs;
        assert!(
            handed || caller_turns(&client) > turns,
            "the engine took the queue the caller waited for"
        );
        publish_the_rest(&client, "handed", published, check).await;
    });
}

/// Bulk runs that stop right after the caller wrote everything: the tail watch then finds
/// the run over with nothing left to write, hands the queue back to the engine, and the
/// link carries on (an empty batch taken as a write was once a lost link).
#[test]
fn bulk_runs_that_stop_fully_written_keep_the_link() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let client = limited().connect(server.url()).await.unwrap();
        let payload = Bytes::from(vec![b'x'; 1024]);
        for run in 1..=10 {
            while caller_turns(&client) < run {
                client.publish("runs", payload.clone()).await.unwrap();
            }
            // The run stops: the caller awaits something else until the engine's tail
            // watch has taken the queue back (two periods, in timer ticks). Nothing tells
            // of that but the writer's state, so it is looked at once a period.
            let deadline = Instant::now() + WAIT;
            while client.shared().writes().writer == Writer::Bulk {
                assert!(Instant::now() < deadline, "the run never ended");
                tokio::time::sleep(crate::caller_write::TAIL).await;
            }
        }
        client.flush().await.unwrap();
        let connects = client.statistics().connects.load(Ordering::Relaxed);
        assert_eq!(connects, 1, "the link was lost");
    });
}

/// The client dropped right after a bulk run, with no flush: the engine's last pass writes
/// what the run left queued, as it writes its own queue.
#[test]
fn a_bulk_runs_last_publishes_go_out_when_the_client_is_dropped() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let sub = subscribed(&server.url(), "dropped").await;
        let client = limited().connect(server.url()).await.unwrap();
        let mut published = 0;
        while caller_turns(&client) == 0 {
            publish_in_bulk(&client, "dropped", published, 200).await;
            published += 1;
        }
        for _ in 0..10 {
            client
                .publish("dropped", numbered(published, 200))
                .await
                .unwrap();
            published += 1;
        }
        drop(client);
        let check = receive_in_order(sub, published - 1, None);
        tokio::time::timeout(WAIT, check).await.unwrap().unwrap();
    });
}

/// Publishes `count` numbered messages of `size` bytes from a task, flushing as
/// [`publish_in_bulk`] does, and returns once the last publish returned.
fn publish_from_task(
    client: &Client,
    subject: &'static str,
    count: u64,
    size: usize,
) -> JoinHandle<()> {
    let client = client.clone();
    tokio::spawn(async move {
        for i in 0..count {
            publish_in_bulk(&client, subject, i, size).await;
        }
    })
}

/// Two tasks publish on one connection past the write limit: each writes the full queues
/// the engine was woken for but had not taken (`write_for_task`), the engine writes the
/// rest, and both streams arrive whole and in order, every message counted once.
#[test]
fn tasks_publishing_in_bulk_write_their_full_queues_in_order() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let first_sub = subscribed(&server.url(), "tasks.first").await;
        let second_sub = subscribed(&server.url(), "tasks.second").await;
        let client = limited().connect(server.url()).await.unwrap();
        let (first_count, second_count) = (20_000, 5_000);
        let first_check = receive_in_order(first_sub, first_count - 1, None);
        let second_check = receive_in_order(second_sub, second_count - 1, None);
        let first = publish_from_task(&client, "tasks.first", first_count, 200);
        let second = publish_from_task(&client, "tasks.second", second_count, 100);
        for done in [first, second] {
            tokio::time::timeout(WAIT, done).await.unwrap().unwrap();
        }
        client.flush().await.unwrap();
        for check in [first_check, second_check] {
            tokio::time::timeout(WAIT, check).await.unwrap().unwrap();
        }
        assert!(caller_turns(&client) > 0, "no task wrote a queue");
        let statistics = client.statistics();
        assert_eq!(
            statistics.out_messages.load(Ordering::Relaxed),
            first_count + second_count,
            "every message counted once"
        );
    });
}

/// Planned moves while a task writes the queues it fills: a move takes the queue from
/// under the lock the task writes it with, so nothing is lost or reordered.
#[test]
fn planned_moves_during_a_tasks_turns_lose_and_reorder_nothing() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let sub = subscribed(&server.url(), "task.moves").await;
        let client = limited().connect(server.url()).await.unwrap();
        let count = 20_000;
        let check = receive_in_order(sub, count - 1, None);
        let publisher = publish_from_task(&client, "task.moves", count, 200);
        let mut events = client.events();
        for _ in 0..3 {
            client.force_reconnect().await.unwrap();
            reconnected(&mut events).await;
        }
        tokio::time::timeout(WAIT, publisher)
            .await
            .unwrap()
            .unwrap();
        client.flush().await.unwrap();
        tokio::time::timeout(WAIT, check).await.unwrap().unwrap();
        assert!(caller_turns(&client) > 0, "the task never wrote a queue");
    });
}

/// A task meets a full socket (the link stalled): its write leaves the rest queued and it
/// awaits room as before; that publish is dropped while it waits. Once the link flows, the
/// engine writes what was queued: every message whose publish returned arrives, in order.
#[test]
fn a_task_on_a_stalled_link_awaits_room_and_loses_nothing() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    main_runtime().block_on(async {
        let sub = subscribed(&server.url(), "task.stall").await;
        let client = limited().connect(proxy.url()).await.unwrap();
        proxy.stall();
        let task_client = client.clone();
        let published = tokio::spawn(async move {
            let (published, waiting) = publish_until_one_waits(&task_client, "task.stall").await;
            drop(waiting);
            published
        });
        let published = tokio::time::timeout(WAIT, published)
            .await
            .unwrap()
            .unwrap();
        assert!(caller_turns(&client) > 0, "the task never wrote a queue");
        let check = receive_in_order(sub, published + 99, None);
        proxy.resume();
        publish_the_rest(&client, "task.stall", published, check).await;
    });
}

/// The turns of a bulk run whose socket takes nothing (the peer reads nothing): each waits
/// `WAIT` and pauses, leaving the run the caller's (writer `Bulk`) and waking nobody, until
/// the turns have written nothing for `STALL`; then the run goes to the engine. A turn that
/// writes starts that clock again.
#[tokio::test]
async fn a_bulk_runs_turns_pause_on_a_full_socket_until_it_stalls() {
    use tokio::io::AsyncReadExt;

    use super::{STALL, Turn, WAIT as TURN_WAIT, WriteSide, may_take_over, write_as_caller};
    use crate::floor::frames::Frames;
    use crate::floor::sync::lock;
    use crate::socket::Socket;
    use crate::statistics::Statistics;
    use crate::writer::{After, Writes};

    let (ours, mut theirs) = crate::writer::tests::loopback().await;
    let writes = std::sync::Mutex::new(Writes::new(1 << 20));
    let (statistics, kicks, turns) = (Statistics::default(), AtomicU64::new(0), AtomicU64::new(0));
    let (engine_waker, space) = (
        futures_util::task::AtomicWaker::new(),
        tokio::sync::Notify::new(),
    );
    let directly_written = std::sync::atomic::AtomicBool::new(false);
    let side = WriteSide {
        writes: &writes,
        statistics: &statistics,
        kicks: &kicks,
        engine_waker: &engine_waker,
        space: &space,
        directly_written: &directly_written,
        turns: &turns,
    };
    {
        let mut writes = lock(&writes);
        writes.handle_connected(
            Frames::default(),
            Some(Arc::new(Socket::Tokio(ours))),
            1,
            false,
        );
        // Far more than the kernel's buffers on both ends take.
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..32 {
            writes
                .queue
                .push_control(|buf| buf.extend_from_slice(&chunk));
        }
        writes.writer = Writer::Bulk;
        // As an engine whose tail watch is armed: a pause need not wake it.
        writes.bulk_watched = true;
    }
    let started = Instant::now();
    assert_eq!(
        write_as_caller(&side, lock(&writes), After::Bulk, TURN_WAIT),
        Turn::Paused
    );
    {
        let writes = lock(&writes);
        assert_eq!(writes.writer, Writer::Bulk);
        assert!(writes.bulk_paused);
        assert!(writes.bulk_stuck_since.is_some(), "the clock did not start");
    }
    // Turns go on pausing (a descheduled test thread may see only one more) until the
    // clock, started by the first, passes `STALL`.
    loop {
        match write_as_caller(&side, lock(&writes), After::Bulk, TURN_WAIT) {
            Turn::Paused => {}
            Turn::Left => break,
            Turn::Written => panic!("a peer that reads nothing took 32 MiB"),
        }
        assert!(started.elapsed() < WAIT, "the run never stalled");
    }
    assert!(
        started.elapsed() >= STALL,
        "stalled after {:?}",
        started.elapsed()
    );
    {
        let writes = lock(&writes);
        assert_eq!(
            writes.writer,
            Writer::Woken,
            "the engine was not given the run"
        );
        assert!(writes.bulk_stuck_since.is_none());
        assert!(
            writes.bulk_stalled,
            "the engine would hand the run straight back"
        );
    }
    assert_eq!(
        kicks.load(Ordering::Relaxed),
        1,
        "only the hand-back wakes the engine"
    );
    // Until the engine takes a batch, no caller takes the stalled run back either.
    assert!(
        !may_take_over(&lock(&writes), false, || true),
        "a caller may take back a stalled run"
    );
    // A turn that finds no room starts the clock afresh (the stall stopped it)...
    lock(&writes).writer = Writer::Bulk;
    assert_eq!(
        write_as_caller(&side, lock(&writes), After::Bulk, TURN_WAIT),
        Turn::Paused
    );
    let first = lock(&writes)
        .bulk_stuck_since
        .expect("the clock did not start");
    // ...and one that writes starts it again, once the peer has read some.
    let mut drained = vec![0; 1 << 20];
    tokio::time::timeout(WAIT, theirs.read_exact(&mut drained))
        .await
        .expect("the peer found no MiB to read")
        .unwrap();
    let out = statistics.out_bytes.load(Ordering::Relaxed);
    assert_eq!(
        write_as_caller(&side, lock(&writes), After::Bulk, TURN_WAIT),
        Turn::Paused
    );
    assert!(
        statistics.out_bytes.load(Ordering::Relaxed) > out,
        "the turn wrote nothing into the room the peer's read made"
    );
    let since = lock(&writes).bulk_stuck_since;
    assert!(
        since.is_some_and(|at| at > first),
        "the clock ran on through a write"
    );
}
