//! Client behaviour against a real nats-server, checked on state only the crate can see: the
//! request table and the keepalive count.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures_util::{FutureExt, StreamExt};
use rnats_test_server::NatsServer;

use crate::ConnectOptions;

#[tokio::test]
async fn dropped_request_futures_free_their_slot() {
    let server = NatsServer::start();
    let client = crate::connect(server.url()).await.unwrap();
    let _silent = client.subscribe("slow.svc").await.unwrap();
    client.flush().await.unwrap();
    for _ in 0..100 {
        let pending = client.request("slow.svc", "x".into());
        assert!(
            pending.now_or_never().is_none(),
            "registered and sent, no reply yet"
        );
    }
    let timed_out = client
        .request_with_timeout("slow.svc", "x".into(), Some(Duration::from_millis(1)))
        .await;
    assert!(timed_out.is_err());
    let pending = client
        .start_request("slow.svc", None, "x".into())
        .await
        .unwrap();
    assert_eq!(client.shared().requests().len(), 1, "the started one only");
    drop(pending);
    assert!(
        client.shared().requests().len() == 0,
        "every dropped, timed-out or abandoned request freed its slot"
    );
}

#[tokio::test]
async fn each_reply_costs_the_requesting_engine_one_pass() {
    const REQUESTS: u64 = 200;
    let server = NatsServer::start();
    let responder = crate::connect(server.url()).await.unwrap();
    let mut requests = responder.subscribe("svc.echo").await.unwrap();
    responder.flush().await.unwrap();
    let answering = tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            let reply = request.reply.expect("a request has a reply subject");
            responder.publish(reply, request.payload).await.unwrap();
        }
    });
    let client = crate::connect(server.url()).await.unwrap();
    // The first request sets up the reply subscription.
    client.request("svc.echo", "first".into()).await.unwrap();
    let passes = || client.shared().engine_passes.load(Ordering::Relaxed);
    let before = passes();
    for i in 0..REQUESTS {
        let answer = client
            .request("svc.echo", i.to_string().into())
            .await
            .unwrap();
        assert_eq!(answer.payload, i.to_string().as_bytes());
    }
    // The request is written by its caller into the idle connection; the engine wakes only
    // for the reply and, having read it, has nothing left for a second pass.
    let made = passes() - before;
    assert!(
        made >= REQUESTS,
        "every reply was read by the engine: {made}"
    );
    assert!(
        made < REQUESTS * 3 / 2,
        "{made} passes for {REQUESTS} replies: the engine went round again for nothing"
    );
    answering.abort();
}

#[tokio::test]
async fn keepalive_pings_are_sent_and_answered() {
    const MAX_OUTSTANDING: u32 = 10;
    const SENT: u64 = 25;
    let server = NatsServer::start();
    let client = ConnectOptions::new()
        // Ten unanswered PINGs end the link: a second of silence, which a server starved of
        // CPU on a loaded 2-core machine can take to answer (two, 200 ms, was seen to fail).
        .ping_interval(Duration::from_millis(100))
        .max_pings_outstanding(MAX_OUTSTANDING)
        .connect(server.url())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Time must pass for PINGs to be due; each turn waits one interval, then proves the link
    // still works with a round trip.
    while client.shared().keepalive_pings.load(Ordering::Relaxed) < SENT {
        assert!(Instant::now() < deadline, "no keepalive PINGs were sent");
        tokio::time::sleep(Duration::from_millis(100)).await;
        client.flush().await.unwrap();
    }
    // More PINGs than may be outstanding: the server's answers were counted, or the link
    // would have been found stale and replaced.
    assert_eq!(client.connection_state(), crate::State::Connected);
    assert_eq!(client.statistics().connects.load(Ordering::Relaxed), 1);
}

/// Under linger, a publisher that flushes after each publish from `block_on` (outside the
/// runtime's workers) wakes the engine for neither: the flush's caller writes the publish
/// with its PING, and the linger timer the engine keeps armed covers the lingers that start
/// meanwhile. The engine runs for the answers it reads, and a few times for its timer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lingering_publishes_leave_with_their_flush_and_wake_nobody() {
    const ROUND_TRIPS: u64 = 200;
    let server = NatsServer::start();
    let client = ConnectOptions::new()
        .linger(Duration::from_secs(60), 1 << 20)
        .connect(server.url())
        .await
        .unwrap();
    let mut messages = client.subscribe("lat.linger").await.unwrap();
    client.flush().await.unwrap();
    // The first linger wakes the engine, which arms its timer.
    client.publish("lat.linger", "first".into()).await.unwrap();
    client.flush().await.unwrap();
    assert_eq!(messages.next().await.unwrap().payload, "first");
    let passes = || client.shared().engine_passes.load(Ordering::Relaxed);
    let before = passes();
    for i in 0..ROUND_TRIPS {
        client
            .publish("lat.linger", i.to_string().into())
            .await
            .unwrap();
        client.flush().await.unwrap();
        let message = messages.next().await.unwrap();
        assert_eq!(message.payload, i.to_string().as_bytes());
    }
    let made = passes() - before;
    assert!(
        made < ROUND_TRIPS * 3 / 2,
        "{made} engine passes for {ROUND_TRIPS} round trips: publishes or flushes woke it"
    );
}

/// A publish that starts a linger while the engine's linger timer is armed wakes nobody,
/// yet leaves by its deadline: the timer brings the engine back, and the engine holds the new
/// linger to its own deadline. Once a delay has passed since the last linger began, the
/// timer is let go (the next linger wakes the engine again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lingering_publish_nobody_woke_the_engine_for_leaves_on_its_timer() {
    // Long enough that the engine, woken for a linger, arms its timer before the delay is
    // over even on a machine busy with builds.
    const DELAY: Duration = Duration::from_secs(1);
    let server = NatsServer::start();
    let receiver = crate::connect(server.url()).await.unwrap();
    let mut messages = receiver.subscribe("linger.lone").await.unwrap();
    receiver.flush().await.unwrap();
    let client = ConnectOptions::new()
        .linger(DELAY, 1 << 20)
        .connect(server.url())
        .await
        .unwrap();
    let armed = || client.shared().writes().linger_armed;
    let mut lone_while_armed = 0;
    for round in 0..3 {
        let flushed = format!("flushed {round}");
        client
            .publish("linger.lone", flushed.clone().into())
            .await
            .unwrap();
        client.flush().await.unwrap();
        let message = messages.next().await.unwrap();
        assert_eq!(message.payload, flushed.as_bytes());
        // The engine, woken for that linger, arms its timer (bounded: a stalled machine may
        // let the delay pass first, and then nothing is armed).
        let until = Instant::now() + Duration::from_secs(5);
        while !armed() && Instant::now() < until {
            tokio::task::yield_now().await;
        }
        lone_while_armed += u32::from(armed());
        let lone = format!("lone {round}");
        client
            .publish("linger.lone", lone.clone().into())
            .await
            .unwrap();
        let message = tokio::time::timeout(Duration::from_secs(10), messages.next())
            .await
            .expect("a lingering publish never left")
            .unwrap();
        assert_eq!(message.payload, lone.as_bytes());
        // The engine lets its timer go at the look that finds a delay passed since the last
        // linger began: the one that wrote the lone publish, or a later one when something
        // urgent took the publish out first (the answer to the server's first PING, which
        // comes about two seconds after connecting, does).
        let until = Instant::now() + Duration::from_secs(10);
        while armed() {
            assert!(
                Instant::now() < until,
                "the linger timer outlived the last linger"
            );
            // A poll interval, not a wait for something to happen: up to a delay may pass.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    assert!(
        lone_while_armed > 0,
        "no publish started a linger while armed"
    );
}

/// A flush or a request made while a publish lingers (its timer an hour away) goes out at
/// once, and the lingering publish with it, also when the engine has looked at the queue and
/// held it back meanwhile (here: woken by a message it reads; `Writes::engine_holds`, whose
/// states `flushes_and_requests_take_what_a_linger_holds` goes through one by one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flushes_and_requests_take_a_lingering_publish_with_them() {
    let server = NatsServer::start();
    let receiver = crate::connect(server.url()).await.unwrap();
    let mut messages = receiver.subscribe("linger.held").await.unwrap();
    let mut service = receiver.subscribe("linger.svc").await.unwrap();
    receiver.flush().await.unwrap();
    let responder = receiver.clone();
    tokio::spawn(async move {
        while let Some(request) = service.next().await {
            let reply = request.reply.unwrap();
            responder.publish(reply, "pong".into()).await.unwrap();
        }
    });
    for urgent in ["flush", "request"] {
        let client = ConnectOptions::new()
            .linger(Duration::from_secs(3600), 1 << 20)
            .connect(server.url())
            .await
            .unwrap();
        let mut nudges = client.subscribe("linger.nudge").await.unwrap();
        // Sets up the reply subscription, and gets the SUBs above out.
        let reply = client.request("linger.svc", "?".into()).await.unwrap();
        assert_eq!(reply.payload, "pong");
        client.publish("linger.held", urgent.into()).await.unwrap();
        // A message for the client: its engine reads it and looks at the lingering queue.
        receiver.publish("linger.nudge", "".into()).await.unwrap();
        receiver.flush().await.unwrap();
        nudges.next().await.unwrap();
        let sent = async {
            if urgent == "flush" {
                client.flush().await.unwrap();
            } else {
                let reply = client.request("linger.svc", "?".into()).await.unwrap();
                assert_eq!(reply.payload, "pong");
            }
        };
        tokio::time::timeout(Duration::from_secs(10), sent)
            .await
            .unwrap_or_else(|_| panic!("the {urgent} was held back"));
        let message = messages.next().await.unwrap();
        assert_eq!(message.payload, urgent.as_bytes());
    }
}

/// A subscriber on the engine's own thread takes what each two reads brought before the
/// engine reads on: a stream waiting in the socket is read [`ROUNDS`] full buffers at a
/// time, then the engine yields and the subscriber it woke runs. Reading 32 buffers at a
/// time, the engine ran megabytes ahead of it, into memory long out of cache (issue 31).
///
/// [`ROUNDS`]: crate::engine::ROUNDS
#[test]
fn a_subscriber_on_the_engines_thread_runs_every_two_reads() {
    const SIZE: usize = 8 * 1024;
    const COUNT: u64 = 1024;
    let server = NatsServer::start();
    // One thread for the engine and the subscriber, as on a worker that runs both.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (client, mut messages) = runtime.block_on(async {
        let client = crate::connect(server.url()).await.unwrap();
        let messages = client.subscribe("lag.stream").await.unwrap();
        client.flush().await.unwrap();
        (client, messages)
    });
    // While its runtime does not run, the client reads nothing: the stream waits for it in
    // its socket and in the server.
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let publisher = crate::connect(server.url()).await.unwrap();
        for _ in 0..COUNT {
            let payload = bytes::Bytes::from(vec![b'x'; SIZE]);
            publisher.publish("lag.stream", payload).await.unwrap();
        }
        publisher.flush().await.unwrap();
    });
    let statistics = client.statistics();
    let receiving = runtime.spawn(async move {
        let mut most_ahead = 0;
        for received in 0..COUNT {
            let message = messages.next().await.unwrap();
            assert_eq!(message.payload.len(), SIZE);
            // Counted once a read's messages have been handed over.
            let read = statistics.in_messages.load(Ordering::Relaxed);
            most_ahead = most_ahead.max(read - (received + 1));
        }
        most_ahead
    });
    let most_ahead = runtime.block_on(receiving).unwrap();
    // Two reads at most. A read takes at most the default 64 KiB read buffer grown
    // READ_GROWTH times (and the room a reused buffer has beyond it, less than a message),
    // and may end a message the read before it began. (Reading 32 buffers at a time, the
    // engine ran 980 messages ahead here.)
    let per_read = (64 * 1024 * crate::engine::READ_GROWTH / SIZE) as u64 + 2;
    let bound = 2 * per_read;
    assert!(
        most_ahead <= bound,
        "the engine read {most_ahead} messages ahead of its subscriber (at most {bound})"
    );
}

/// On the runtime-neutral backend, a caller on its own thread writes a publish, a flush and
/// a request into an idle plain-TCP connection itself, as `block_on`'s thread does on tokio,
/// and so does a responder's reply: rnats' task thread is not woken to write them
/// (`Shared::kicks`), and everything arrives. (The engine used to write every byte of such a
/// connection, woken once per frame.)
#[test]
fn a_neutral_caller_writes_into_an_idle_connection_itself() {
    let server = NatsServer::start();
    async_io::block_on(async {
        assert!(
            tokio::runtime::Handle::try_current().is_err(),
            "no tokio here"
        );
        let client = crate::connect(server.url()).await.unwrap();
        let responder = crate::connect(server.url()).await.unwrap();
        let mut requests = responder.subscribe("direct.svc").await.unwrap();
        responder.flush().await.unwrap();
        let mut echoes = client.subscribe("direct.echo").await.unwrap();
        client.flush().await.unwrap();
        let kicks = |c: &crate::Client| c.shared().kicks.load(Ordering::Relaxed);
        let (client_kicks, responder_kicks) = (kicks(&client), kicks(&responder));
        for i in 0..20 {
            let payload = bytes::Bytes::from(format!("{i}"));
            client
                .publish("direct.echo", payload.clone())
                .await
                .unwrap();
            assert_eq!(echoes.next().await.unwrap().payload, payload);
            client.flush().await.unwrap();
            let answer = async {
                let request = requests.next().await.unwrap();
                let reply = request.reply.unwrap();
                responder.publish(reply, request.payload).await.unwrap();
            };
            let (reply, ()) =
                futures_util::join!(client.request("direct.svc", payload.clone()), answer);
            assert_eq!(reply.unwrap().payload, payload);
        }
        // Through the engine, each of the 60 frames the client writes and the 20 the responder
        // does would cost a wake-up. A caller descheduled between its write and letting go of
        // the lock can have the engine read the answer first and leave the writer as the
        // direct write left it, so the next request goes through the engine: none in ten runs
        // beside two busy loops, but 6 once with the machine running two test suites besides.
        // A fifth of the frames still tells the two apart.
        let (client_woken, responder_woken) = (
            kicks(&client) - client_kicks,
            kicks(&responder) - responder_kicks,
        );
        assert!(
            client_woken <= 12,
            "the client's engine was woken {client_woken} times to write"
        );
        assert!(
            responder_woken <= 4,
            "the responder's engine was woken {responder_woken} times to write"
        );
    });
}
