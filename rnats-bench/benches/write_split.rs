//! What it costs a round trip that a publish and its flush's PING leave in two writes, as
//! rnats' do (docs/blocking.md, "Why main keeps the two writes"), rather than one. The seed
//! latency loop (publish, flush, receive the message back) on tokio's plain socket from
//! `block_on`, as `#[tokio::main]` runs it, in three forms:
//!
//! - `one`: the publish and the PING in one write, as the raw clients send them;
//! - `two`: two writes, with the socket registered for reading and writing, as tokio's
//!   `TcpStream` (and so the rnats engine) registers it;
//! - `two-read-only`: two writes, with the socket registered for reading only.
//!
//! The last one isolates a part of the cost: epoll is edge-triggered, and when the server
//! acknowledges the first write apart from its answer, that ACK alone wakes the worker
//! parked in the I/O driver with `EPOLLOUT` (`strace -f -e epoll_wait` shows those events),
//! which then finds nothing to do.
//!
//! The forms alternate within each round; medians over the rounds are printed.
//! `cargo bench -p rnats-bench --bench write_split -- [round trips] [rounds]` (defaults:
//! 20,000 round trips, 5 rounds), against a private nats-server it starts.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use rnats_bench::cost::Usage;
use rnats_bench::small_bench::{self, BenchError};
use rnats_bench::stats::median;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::TcpStream;

const PUBLISH: &[u8] = b"PUB bench.split 32\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n";
const PING: &[u8] = b"PING\r\n";
/// What comes back for one round trip: the message (`MSG bench.split 1 32`, its payload)
/// and the PONG.
const ANSWER: usize = 56 + 6;

#[derive(Debug, Clone, Copy)]
enum Form {
    One,
    Two,
    TwoReadOnly,
}

impl Form {
    const ALL: [Form; 3] = [Form::One, Form::Two, Form::TwoReadOnly];

    fn name(self) -> &'static str {
        match self {
            Form::One => "one",
            Form::Two => "two",
            Form::TwoReadOnly => "two-read-only",
        }
    }
}

/// One form's figures for one run, per round trip.
#[derive(Debug, Clone, Copy)]
struct Run {
    micros: f64,
    switches: f64,
    cpu_micros: f64,
}

fn main() -> std::process::ExitCode {
    small_bench::run("write_split", |number| {
        compare(number(0, 20_000), number(1, 5))
    })
}

async fn compare(round_trips: usize, rounds: usize) -> Result<(), BenchError> {
    let server = rnats_test_server::NatsServer::builder().spawn()?;
    let address = server.url().trim_start_matches("nats://").to_owned();
    // One untimed run of each form warms up the server and the runtime.
    for form in Form::ALL {
        run(&address, form, round_trips / 10).await?;
    }
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); Form::ALL.len()];
    for _ in 0..rounds.max(1) {
        for (at, form) in Form::ALL.into_iter().enumerate() {
            runs[at].push(run(&address, form, round_trips).await?);
        }
    }
    println!("{round_trips} round trips a run, {rounds} rounds, medians per round trip");
    println!("| writes | µs | voluntary switches | CPU µs |");
    println!("|---|---:|---:|---:|");
    for (form, runs) in Form::ALL.into_iter().zip(&runs) {
        let of = |pick: fn(&Run) -> f64| {
            median(&runs.iter().map(pick).collect::<Vec<_>>()).unwrap_or(f64::NAN)
        };
        println!(
            "| {} | {:.1} | {:.3} | {:.1} |",
            form.name(),
            of(|r| r.micros),
            of(|r| r.switches),
            of(|r| r.cpu_micros)
        );
    }
    Ok(())
}

/// Connects, subscribes to the subject it publishes to, and times `round_trips` round trips
/// in `form`.
async fn run(address: &str, form: Form, round_trips: usize) -> Result<Run, BenchError> {
    let mut stream = TcpStream::connect(address).await?;
    stream.set_nodelay(true)?;
    let mut buf = vec![0; 64 * 1024];
    read_until(&mut stream, &mut buf, b"\r\n").await?;
    stream
        .write_all(
            b"CONNECT {\"verbose\":false,\"pedantic\":false}\r\nSUB bench.split 1\r\nPING\r\n",
        )
        .await?;
    read_until(&mut stream, &mut buf, b"PONG\r\n").await?;
    let (before, start) = (Usage::now()?, Instant::now());
    match form {
        Form::One => {
            let both = [PUBLISH, PING].concat();
            for _ in 0..round_trips {
                stream.write_all(&both).await?;
                read_answer(&mut stream, &mut buf).await?;
            }
        }
        Form::Two => {
            for _ in 0..round_trips {
                stream.write_all(PUBLISH).await?;
                stream.write_all(PING).await?;
                read_answer(&mut stream, &mut buf).await?;
            }
        }
        Form::TwoReadOnly => {
            let stream = stream.into_std()?;
            // SAFETY: the `std` stream owns its descriptor, which stays open, the same one,
            // until the `AsyncFd` that owns the stream drops it.
            #[allow(unsafe_code)]
            let socket = unsafe { AsyncFd::register_with_interest(stream, Interest::READABLE) }
                .map_err(io::Error::from)?;
            for _ in 0..round_trips {
                // Two small writes into an idle socket: the kernel takes them whole.
                socket.get_ref().write_all(PUBLISH)?;
                socket.get_ref().write_all(PING)?;
                let mut got = 0;
                while got < ANSWER {
                    let mut ready = socket.readable().await?;
                    match ready.try_io(|socket| socket.get_ref().read(&mut buf)) {
                        Ok(Ok(0)) => return Err("the server closed the connection".into()),
                        Ok(read) => got += read?,
                        Err(_would_block) => {}
                    }
                }
            }
        }
    }
    let (elapsed, after) = (start.elapsed(), Usage::now()?);
    let per = |d: Duration| d.as_secs_f64() * 1e6 / round_trips as f64;
    Ok(Run {
        micros: per(elapsed),
        switches: after.voluntary.saturating_sub(before.voluntary) as f64 / round_trips as f64,
        cpu_micros: per(after.cpu.saturating_sub(before.cpu)),
    })
}

/// Reads one round trip's answer (the message and the PONG, in one read or more).
async fn read_answer(stream: &mut TcpStream, buf: &mut [u8]) -> io::Result<()> {
    let mut got = 0;
    while got < ANSWER {
        match stream.read(buf).await? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            read => got += read,
        }
    }
    Ok(())
}

/// Reads until what was read ends with `end` (the handshake's lines).
async fn read_until(stream: &mut TcpStream, buf: &mut [u8], end: &[u8]) -> io::Result<()> {
    let mut seen = Vec::new();
    while !seen.ends_with(end) {
        match stream.read(buf).await? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            read => seen.extend_from_slice(&buf[..read]),
        }
    }
    Ok(())
}
