//! Code awaiting in `Runtime::block_on` on the multi-threaded runtime (the body of
//! `#[tokio::main]`): there the caller is not a worker, and writes to an idle connection
//! itself instead of waking the engine's task (`shared::outside_workers`). Each test runs
//! its own runtime, as `#[tokio::main]` does, against a real server.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{FutureExt, StreamExt};
use rnats_core::Client;
use rnats_test_server::NatsServer;
use tokio::runtime::{Builder, Runtime};

/// What `#[tokio::main]` builds.
fn main_runtime() -> Runtime {
    Builder::new_multi_thread().enable_all().build().unwrap()
}

fn payload(i: usize) -> Bytes {
    Bytes::from(i.to_string())
}

/// The seed program (nats.rs issue 573): publish, flush, receive, in `block_on`.
#[test]
fn the_seed_loop_round_trips_in_block_on() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        let mut sub = client.subscribe("seed").await.unwrap();
        client.flush().await.unwrap();
        for i in 0..200 {
            client.publish("seed", payload(i)).await.unwrap();
            client.flush().await.unwrap();
            assert_eq!(next_payload(&mut sub).await, payload(i));
        }
    });
}

/// A publish written by the `block_on` caller needs nobody behind it: with no flush, no
/// later call and the caller parked on something else, it still reaches the server.
#[test]
fn a_lone_publish_from_block_on_goes_out_without_a_flush() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let receiver = rnats_core::connect(server.url()).await.unwrap();
        let mut sub = receiver.subscribe("lone").await.unwrap();
        receiver.flush().await.unwrap();
        let client = rnats_core::connect(server.url()).await.unwrap();
        for i in 0..20 {
            client.publish("lone", payload(i)).await.unwrap();
            // The caller now waits on the other connection only.
            assert_eq!(next_payload(&mut sub).await, payload(i));
        }
    });
}

/// Publishes from `block_on` alternate between direct writes and the engine's batches (a
/// direct write leaves the next publish to the engine): a burst far over the write limit
/// and lone publishes between flushes all arrive, in order.
#[test]
fn publishes_from_block_on_keep_their_order_through_direct_writes_and_batches() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let receiver = rnats_core::connect(server.url()).await.unwrap();
        let mut sub = receiver.subscribe("order").await.unwrap();
        receiver.flush().await.unwrap();
        let client = rnats_core::ConnectOptions::new()
            .write_buffer_limit(4096)
            .connect(server.url())
            .await
            .unwrap();
        let count = 3000;
        let receiving = tokio::spawn(async move {
            for i in 0..count {
                assert_eq!(next_payload(&mut sub).await, payload(i));
            }
        });
        for i in 0..count {
            client.publish("order", payload(i)).await.unwrap();
            if i % 7 == 0 {
                client.flush().await.unwrap();
            }
        }
        client.flush().await.unwrap();
        tokio::time::timeout(WAIT, receiving)
            .await
            .unwrap()
            .unwrap();
    });
}

/// Requests from `block_on` and from tasks on the same connection at once, with a
/// responder task on another: every one gets its own reply.
#[test]
fn requests_from_block_on_and_tasks_mixed_all_get_their_replies() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let responder = rnats_core::connect(server.url()).await.unwrap();
        let mut service = responder.subscribe("svc").await.unwrap();
        responder.flush().await.unwrap();
        tokio::spawn(async move {
            while let Some(request) = service.next().await {
                let reply = request.reply.unwrap();
                responder.publish(reply, request.payload).await.unwrap();
            }
        });
        let client = rnats_core::connect(server.url()).await.unwrap();
        let tasks: Vec<_> = (0..4)
            .map(|t| {
                let client: Client = client.clone();
                tokio::spawn(async move {
                    for i in 0..100 {
                        let body = payload(t * 1000 + i);
                        let reply = client.request("svc", body.clone()).await.unwrap();
                        assert_eq!(reply.payload, body);
                    }
                })
            })
            .collect();
        for i in 0..300 {
            let body = payload(100_000 + i);
            let reply = tokio::time::timeout(WAIT, client.request("svc", body.clone()))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(reply.payload, body);
        }
        for task in tasks {
            tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
        }
    });
}

/// Outside any runtime's context (a plain thread polling with another executor) and on the
/// current-thread runtime, a publish is left to the engine as before, and still goes out.
#[test]
fn publishes_from_other_executors_still_go_out() {
    let server = NatsServer::start();
    let runtime = main_runtime();
    let (client, mut sub) = runtime.block_on(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        let sub = client.subscribe("other").await.unwrap();
        client.flush().await.unwrap();
        (client, sub)
    });
    block_on_plain_thread(client.publish("other", payload(1))).unwrap();
    let current = Builder::new_current_thread().enable_all().build().unwrap();
    current
        .block_on(client.publish("other", payload(2)))
        .unwrap();
    runtime.block_on(async {
        assert_eq!(next_payload(&mut sub).await, payload(1));
        assert_eq!(next_payload(&mut sub).await, payload(2));
    });
}

/// Polls `future` on this thread, parking between polls: an executor that is not tokio.
fn block_on_plain_thread<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

/// Planned moves (`force_reconnect`) while `block_on` publishes and flushes: a move hands
/// the queue to the old link and the next publishes to the reconnect buffer, so no direct
/// write may slip between them. Every message arrives, in order.
#[test]
fn publishes_from_block_on_survive_planned_moves_in_order() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let receiver = rnats_core::connect(server.url()).await.unwrap();
        let mut sub = receiver.subscribe("moves").await.unwrap();
        receiver.flush().await.unwrap();
        let client = quick().connect(server.url()).await.unwrap();
        let mut events = client.events();
        let count = 600;
        let receiving = tokio::spawn(async move {
            for i in 0..count {
                assert_eq!(next_payload(&mut sub).await, payload(i));
            }
        });
        for i in 0..count {
            if i % 150 == 76 {
                continue; // published below, before the reconnect finished
            }
            client.publish("moves", payload(i)).await.unwrap();
            if i % 150 == 75 {
                client.force_reconnect().await.unwrap();
                // The next publishes go to the reconnect buffer until the new link is up.
                client.publish("moves", payload(i + 1)).await.unwrap();
                wait_for(&mut events, |e| {
                    *e == rnats_core::ConnectionEvent::Reconnected
                })
                .await;
                client.flush().await.unwrap();
                continue;
            }
            if i % 3 == 0 {
                client.flush().await.unwrap();
            }
        }
        client.flush().await.unwrap();
        tokio::time::timeout(WAIT, receiving)
            .await
            .unwrap()
            .unwrap();
    });
}

/// A request from `block_on` that nobody answers times out (the timer fires on a worker
/// and wakes the caller), and the connection goes on working for the same caller.
#[test]
fn a_request_from_block_on_times_out_and_the_next_one_works() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        // A subscriber that never answers keeps the server from replying "no responders".
        let _silent = client.subscribe("silent").await.unwrap();
        let mut echo = client.subscribe("echo").await.unwrap();
        client.flush().await.unwrap();
        let responder = client.clone();
        tokio::spawn(async move {
            while let Some(request) = echo.next().await {
                let reply = request.reply.unwrap();
                responder.publish(reply, request.payload).await.unwrap();
            }
        });
        let limit = Duration::from_millis(100);
        let err = client
            .request_with_timeout("silent", payload(0), Some(limit))
            .await
            .unwrap_err();
        assert_eq!(
            err.cause(),
            Some(&rnats_core::RequestCause::TimedOut(limit))
        );
        let reply = client.request("echo", payload(1)).await.unwrap();
        assert_eq!(reply.payload, payload(1));
        client.flush().await.unwrap();
    });
}

/// While the `block_on` thread waits for a flush or a reply, the engine on the workers goes
/// on reading: a subscription consumed by a task gets what another connection publishes,
/// and the task's own flushes complete, before the `block_on` caller's wait ends.
#[test]
fn tasks_are_served_while_block_on_waits() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        let mut gate = client.subscribe("gate").await.unwrap();
        let mut feed = client.subscribe("feed").await.unwrap();
        client.flush().await.unwrap();
        let other = rnats_core::connect(server.url()).await.unwrap();
        let task_client = client.clone();
        // The task receives 100 messages and flushes after each, then opens the gate.
        let task = tokio::spawn(async move {
            for i in 0..100 {
                assert_eq!(next_payload(&mut feed).await, payload(i));
                task_client.flush().await.unwrap();
            }
            task_client.publish("gate", payload(0)).await.unwrap();
            task_client.flush().await.unwrap();
        });
        let publishing = tokio::spawn(async move {
            for i in 0..100 {
                other.publish("feed", payload(i)).await.unwrap();
            }
            other.flush().await.unwrap();
        });
        // The `block_on` caller waits on the same connection meanwhile.
        assert_eq!(next_payload(&mut gate).await, payload(0));
        tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
        tokio::time::timeout(WAIT, publishing)
            .await
            .unwrap()
            .unwrap();
    });
}

/// `block_on` and tasks publishing on one connection at once: the caller's direct writes
/// and the tasks' batches contend for the write lock, and the engine, left idle, skips the
/// lock while a caller holds it (`Engine::take_queued`). Nothing may be left behind: every
/// publisher's messages all arrive, each publisher's in order.
#[test]
fn block_on_and_tasks_publishing_at_once_lose_nothing() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let receiver = rnats_core::connect(server.url()).await.unwrap();
        let mut sub = receiver.subscribe("mixed.>").await.unwrap();
        receiver.flush().await.unwrap();
        let client = rnats_core::connect(server.url()).await.unwrap();
        let (publishers, count) = (3, 500);
        let receiving = tokio::spawn(async move {
            let mut next = vec![0usize; publishers + 1];
            for _ in 0..(publishers + 1) * count {
                let message = tokio::time::timeout(WAIT, sub.next())
                    .await
                    .unwrap()
                    .unwrap();
                let from: usize = message.subject.as_str()["mixed.".len()..].parse().unwrap();
                assert_eq!(message.payload, payload(next[from]), "publisher {from}");
                next[from] += 1;
            }
        });
        let tasks: Vec<_> = (0..publishers)
            .map(|p| {
                let client = client.clone();
                tokio::spawn(async move {
                    for i in 0..count {
                        client
                            .publish(format!("mixed.{p}"), payload(i))
                            .await
                            .unwrap();
                        if i % 64 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        for i in 0..count {
            client
                .publish(format!("mixed.{publishers}"), payload(i))
                .await
                .unwrap();
            if i % 5 == 0 {
                client.flush().await.unwrap();
            }
        }
        for task in tasks {
            tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
        }
        client.flush().await.unwrap();
        tokio::time::timeout(WAIT, receiving)
            .await
            .unwrap()
            .unwrap();
    });
}

/// A flush and a request waiting in `block_on` when the server dies: the flush is answered
/// by the server that comes back (its PING is sent again on the new link), the request gets
/// its reply (the responder is a task on the same connection, so its subscription is
/// replayed before the request is sent again), and the caller's next direct writes go to
/// the new link, in order.
#[test]
fn waits_in_block_on_span_a_lost_server() {
    let mut server = NatsServer::start();
    main_runtime().block_on(async {
        let client = quick().connect(server.url()).await.unwrap();
        let mut echo = client.subscribe("echo").await.unwrap();
        let mut own = client.subscribe("own").await.unwrap();
        client.flush().await.unwrap();
        let answering = client.clone();
        tokio::spawn(async move {
            while let Some(request) = echo.next().await {
                let reply = request.reply.unwrap();
                answering.publish(reply, request.payload).await.unwrap();
            }
        });
        let mut events = client.events();
        server.kill();
        wait_for(&mut events, |e| {
            matches!(e, rnats_core::ConnectionEvent::Disconnected { .. })
        })
        .await;
        // Both waits start during the outage, from the `block_on` thread.
        let flush = client.flush();
        let request = client.request("echo", payload(7));
        server.restart().unwrap();
        let (flushed, reply) = tokio::time::timeout(WAIT, async { tokio::join!(flush, request) })
            .await
            .unwrap();
        flushed.unwrap();
        assert_eq!(reply.unwrap().payload, payload(7));
        for i in 0..50 {
            client.publish("own", payload(i)).await.unwrap();
            client.flush().await.unwrap();
            assert_eq!(next_payload(&mut own).await, payload(i));
        }
    });
}

/// A flush from `block_on` covers every publish queued before it, whatever came between
/// (a second publish, a PING of `rtt`'s own, a flush from a task): by the time it returns,
/// the publishes' own subscription has each of them, the server sending a connection's
/// messages to it ahead of the PONG.
#[test]
fn a_flush_from_block_on_covers_every_publish_before_it() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        let mut sub = client.subscribe("covered").await.unwrap();
        client.flush().await.unwrap();
        let (mut sent, mut received) = (0, 0);
        for i in 0..300 {
            client.publish("covered", payload(sent)).await.unwrap();
            sent += 1;
            match i % 5 {
                2 => {
                    client.publish("covered", payload(sent)).await.unwrap();
                    sent += 1;
                }
                3 => drop(client.rtt().await.unwrap()),
                4 => {
                    let flusher = client.clone();
                    let flushed = tokio::spawn(async move { flusher.flush().await });
                    flushed.await.unwrap().unwrap();
                }
                _ => {}
            }
            client.flush().await.unwrap();
            while received < sent {
                let message = sub.next().now_or_never().flatten();
                let message = message.unwrap_or_else(|| {
                    panic!("message {received} of {sent} not in when the flush returned")
                });
                assert_eq!(message.payload, payload(received));
                received += 1;
            }
        }
    });
}

/// A flush is a barrier for what other connections sent: once another client's flush has
/// returned, a flush here returns only after this connection has received what that client
/// published to it. So it pings after it is called, even right behind a publish of its own
/// from `block_on` that a PING could have gone out with, before the other client's message
/// reached the server (docs/blocking.md, "Why main keeps the two writes").
#[test]
fn a_flush_right_after_a_publish_still_covers_another_connections_messages() {
    let server = NatsServer::start();
    main_runtime().block_on(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        let mut sub = client.subscribe("barrier.in").await.unwrap();
        let mut own = client.subscribe("barrier.out").await.unwrap();
        client.flush().await.unwrap();
        let other = rnats_core::connect(server.url()).await.unwrap();
        for i in 0..200 {
            // Publish-then-flush, as a loop that always flushes its publishes does.
            client.publish("barrier.out", payload(i)).await.unwrap();
            client.flush().await.unwrap();
            client.publish("barrier.out", payload(i)).await.unwrap();
            // Whatever the server sent right behind that publish's message is in too.
            for _ in 0..2 {
                assert_eq!(next_payload(&mut own).await, payload(i));
            }
            // The other side publishes to this one and flushes: the server has it...
            other.publish("barrier.in", payload(i)).await.unwrap();
            other.flush().await.unwrap();
            // ...so after this flush, so does this connection's subscription.
            client.flush().await.unwrap();
            let message = sub.next().now_or_never().flatten();
            assert_eq!(
                message.map(|m| m.payload),
                Some(payload(i)),
                "round {i}: the other side's message was not in after the flush"
            );
        }
    });
}

/// A publisher in `block_on` writes its own batches (`caller_write`): when the server stops
/// reading, its turns hand the queue to the engine, whose write timeout then ends the link
/// (pings, every minute, cannot be what ends it here).
#[test]
fn a_write_timeout_ends_a_stalled_link_under_a_publisher_in_block_on() {
    let server = NatsServer::start();
    let proxy = rnats_test_server::Proxy::start(&server.url()).unwrap();
    main_runtime().block_on(async {
        let timeout = Duration::from_millis(500);
        let client = quick()
            .write_timeout(timeout)
            .ignore_discovered_servers()
            .connect(proxy.url())
            .await
            .unwrap();
        let mut events = client.events();
        let mut sub = client.subscribe("after").await.unwrap();
        client.flush().await.unwrap();
        proxy.stall();
        let stalled = std::time::Instant::now();
        let filler = Bytes::from(vec![b'x'; 16 * 1024]);
        // Publishes wait for room once the sockets are full; the lost link releases them.
        while client.connection_state() == rnats_core::State::Connected {
            client.publish("filler", filler.clone()).await.unwrap();
        }
        wait_for_write_stall(&mut events, stalled, timeout).await;
        proxy.cut();
        proxy.resume();
        wait_for(&mut events, |e| {
            *e == rnats_core::ConnectionEvent::Reconnected
        })
        .await;
        client
            .publish("after", "moving again".into())
            .await
            .unwrap();
        assert_eq!(next_payload(&mut sub).await, Bytes::from("moving again"));
    });
}
