//! Which side of a receiving run costs what. The compare suite's `sub` rows pair each
//! client's subscriber with the same client's publisher; here the two come from different
//! clients: rnats as `#[tokio::main]` runs it (publishing from `block_on`, receiving in a
//! spawned task) and the raw blocking client (each side on a thread of its own). The four
//! pairs alternate within each round; medians over the rounds are printed: the rate (first
//! message received to last), the process's CPU a message (publisher and subscriber
//! together) and the server's.
//!
//! `cargo bench -p rnats-bench --bench mixed_sub -- [payload bytes] [messages] [rounds]`
//! (defaults: 32 bytes, 1,000,000 messages, 5 rounds), against a private nats-server it
//! starts.

use std::thread;
use std::time::Instant;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_bench::cost::{Usage, process_cpu};
use rnats_bench::raw::Connection;
use rnats_bench::small_bench::{self, BenchError};
use rnats_bench::stats::median;
use rnats_bench::workload::{RECEIVE_TIMEOUT, SUB_SUBJECT, payload, room_for_run};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Rnats,
    Raw,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Rnats => "rnats",
            Side::Raw => "raw",
        }
    }
}

/// (subscriber, publisher)
const PAIRS: [(Side, Side); 4] = [
    (Side::Rnats, Side::Rnats),
    (Side::Rnats, Side::Raw),
    (Side::Raw, Side::Rnats),
    (Side::Raw, Side::Raw),
];

/// One run's figures.
#[derive(Debug, Clone, Copy)]
struct Run {
    rate: f64,
    cpu_micros: f64,
    server_micros: f64,
}

fn main() -> std::process::ExitCode {
    small_bench::run("mixed_sub", |number| {
        compare(number(0, 32), number(1, 1_000_000), number(2, 5))
    })
}

async fn compare(size: usize, count: usize, rounds: usize) -> Result<(), BenchError> {
    let rounds = rounds.max(1);
    let server = rnats_test_server::NatsServer::builder().spawn()?;
    let (url, pid) = (server.url(), server.pid());
    // One short untimed run of each pair warms up the server and the runtime.
    for pair in PAIRS {
        run(&url, pid, pair, size, (count / 10).max(1)).await?;
    }
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); PAIRS.len()];
    for _ in 0..rounds {
        for (at, pair) in PAIRS.into_iter().enumerate() {
            runs[at].push(run(&url, pid, pair, size, count).await?);
        }
    }
    println!("{count} messages of {size} bytes a run, {rounds} rounds, medians");
    println!("| subscriber | publisher | msgs/s | CPU µs a message | server CPU µs a message |");
    println!("|---|---|---:|---:|---:|");
    for ((subscriber, publisher), runs) in PAIRS.into_iter().zip(&runs) {
        let of = |pick: fn(&Run) -> f64| {
            median(&runs.iter().map(pick).collect::<Vec<_>>()).unwrap_or(f64::NAN)
        };
        println!(
            "| {} | {} | {:.0} | {:.3} | {:.3} |",
            subscriber.name(),
            publisher.name(),
            of(|r| r.rate),
            of(|r| r.cpu_micros),
            of(|r| r.server_micros)
        );
    }
    Ok(())
}

/// When a subscriber's first and last messages came.
type Received = Result<(Instant, Instant), BenchError>;

/// A subscriber at work: an rnats task or a raw client's thread.
enum Receiving {
    Task(tokio::task::JoinHandle<Received>),
    Thread(thread::JoinHandle<Received>),
}

impl Receiving {
    async fn finish(self) -> Received {
        match self {
            Receiving::Task(task) => task.await?,
            Receiving::Thread(thread) => {
                tokio::task::spawn_blocking(move || {
                    thread
                        .join()
                        .map_err(|_| BenchError::from("the raw subscriber panicked"))?
                })
                .await?
            }
        }
    }
}

/// Subscribes with `subscriber`, then publishes `count` messages with `publisher` and waits
/// for the subscriber to have them all.
async fn run(
    url: &str,
    server_pid: u32,
    (subscriber, publisher): (Side, Side),
    size: usize,
    count: usize,
) -> Result<Run, BenchError> {
    let (before, server_before) = (Usage::now()?, process_cpu(server_pid)?);
    let receiving = match subscriber {
        Side::Rnats => receive_rnats(url, size, count).await?,
        Side::Raw => receive_raw(url, count)?,
    };
    let body = payload(size);
    match publisher {
        Side::Rnats => {
            let client = rnats::connect(url).await?;
            let body = Bytes::from(body);
            for _ in 0..count {
                client.publish(SUB_SUBJECT, body.clone()).await?;
            }
            client.flush().await?;
        }
        // Blocking calls on `block_on`'s thread, which is no worker.
        Side::Raw => {
            let mut connection = Connection::connect(url)?;
            // Its flush's PONG comes after the server forwarded everything before it.
            connection.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
            for _ in 0..count {
                connection.publish(SUB_SUBJECT.as_bytes(), None, &body)?;
            }
            connection.flush()?;
        }
    }
    let (first, last) = receiving.finish().await?;
    let (after, server_after) = (Usage::now()?, process_cpu(server_pid)?);
    let messages = count.max(1) as f64;
    Ok(Run {
        rate: messages / (last - first).as_secs_f64().max(f64::MIN_POSITIVE),
        cpu_micros: before.per_op_until(&after, count)[2],
        server_micros: server_after.saturating_sub(server_before).as_secs_f64() * 1e6 / messages,
    })
}

/// An rnats subscriber in a spawned task, with room for the whole run, as the compare
/// suite's: a message dropped for want of room makes the run fail.
async fn receive_rnats(url: &str, size: usize, count: usize) -> Result<Receiving, BenchError> {
    let (messages, bytes) = room_for_run(count, size);
    let client = rnats::ConnectOptions::new()
        .subscription_capacity(messages)
        .subscription_capacity_bytes(bytes)
        .connect(url)
        .await?;
    let mut subscriber = client.subscribe(SUB_SUBJECT).await?;
    client.flush().await?;
    Ok(Receiving::Task(tokio::spawn(async move {
        let (mut first, mut received) = (None, 0);
        let in_time = tokio::time::timeout(RECEIVE_TIMEOUT, async {
            while received < count && subscriber.next().await.is_some() {
                first.get_or_insert_with(Instant::now);
                received += 1;
            }
        })
        .await;
        let last = Instant::now();
        drop(client);
        if received < count {
            let why = match in_time {
                Ok(()) => "the subscription ended",
                Err(_) => "timed out",
            };
            return Err(format!("DROPPED MESSAGES: received {received} of {count} ({why})").into());
        }
        Ok((first.ok_or("no message")?, last))
    })))
}

/// A raw subscriber on a thread of its own.
fn receive_raw(url: &str, count: usize) -> Result<Receiving, BenchError> {
    let mut connection = Connection::connect(url)?;
    connection.subscribe(SUB_SUBJECT.as_bytes(), 1)?;
    connection.flush()?;
    connection.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
    Ok(Receiving::Thread(thread::spawn(move || {
        let mut first = None;
        for received in 0..count {
            connection
                .next_msg()
                .map_err(|e| format!("DROPPED MESSAGES: received {received} of {count} ({e})"))?;
            first.get_or_insert_with(Instant::now);
        }
        Ok((first.ok_or("no message")?, Instant::now()))
    })))
}
