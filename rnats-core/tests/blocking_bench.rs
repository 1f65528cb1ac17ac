//! Rough side-by-side timings of the blocking client (ignored by default; run with
//! `cargo test --release -p rnats-core --test blocking_bench -- --ignored --nocapture`):
//! sequential request latency against async rnats and a raw socket client, and 32-byte
//! publish throughput against a raw client writing through a `BufWriter`.
#![allow(clippy::unwrap_used, missing_docs)]

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rnats_core::blocking;
use rnats_test_server::NatsServer;

const REQUESTS: usize = 10_000;
const PUBLISHES: usize = 2_000_000;
const RUNS: usize = 5;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A blocking responder on its own connection answering "svc".
fn responder(url: &str) -> blocking::Client {
    let client = blocking::connect(url).unwrap();
    let mut service = client.subscribe("svc").unwrap();
    client.flush().unwrap();
    let replier = client.clone();
    thread::spawn(move || {
        for request in service.by_ref() {
            if let Some(reply) = request.reply {
                if replier.publish(reply, request.payload).is_err() {
                    return;
                }
            }
        }
    });
    client
}

/// A raw NATS client: CONNECT, then reads lines by hand.
struct Raw {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
}

impl Raw {
    fn connect(port: u16) -> Raw {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_nodelay(true).unwrap();
        let mut raw = Raw {
            reader: BufReader::with_capacity(64 * 1024, stream.try_clone().unwrap()),
            writer: BufWriter::with_capacity(64 * 1024, stream),
        };
        let mut line = String::new();
        raw.reader.read_line(&mut line).unwrap(); // INFO
        raw.writer
            .write_all(b"CONNECT {\"verbose\":false,\"headers\":true}\r\nPING\r\n")
            .unwrap();
        raw.writer.flush().unwrap();
        raw.expect_pong();
        raw
    }

    fn expect_pong(&mut self) {
        let mut line = String::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if line.starts_with("PONG") {
                return;
            }
        }
    }

    /// One request: SUB'd inbox `_RAW.r`, reply read back by hand.
    fn request(&mut self, payload: &[u8]) {
        write!(self.writer, "PUB svc _RAW.r {}\r\n", payload.len()).unwrap();
        self.writer.write_all(payload).unwrap();
        self.writer.write_all(b"\r\n").unwrap();
        self.writer.flush().unwrap();
        let mut line = String::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if line.starts_with("MSG") {
                break;
            }
            if line.starts_with("PING") {
                self.writer.write_all(b"PONG\r\n").unwrap();
            }
        }
        let n: usize = line.trim_end().rsplit(' ').next().unwrap().parse().unwrap();
        let mut body = vec![0; n + 2];
        std::io::Read::read_exact(&mut self.reader, &mut body).unwrap();
    }
}

#[test]
#[ignore = "a benchmark: run with --release --ignored --nocapture"]
fn sequential_request_latency() {
    let server = NatsServer::start();
    let _responder = responder(&server.url());
    let payload = Bytes::from_static(b"0123456789abcdef0123456789abcdef");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut t_blocking, mut t_async, mut t_raw) = (Vec::new(), Vec::new(), Vec::new());
    let client = blocking::connect(server.url()).unwrap();
    let async_client = runtime.block_on(rnats_core::connect(server.url())).unwrap();
    let mut raw = Raw::connect(server.port());
    raw.writer.write_all(b"SUB _RAW.r 1\r\nPING\r\n").unwrap();
    raw.writer.flush().unwrap();
    raw.expect_pong();
    for _ in 0..RUNS {
        let start = Instant::now();
        for _ in 0..REQUESTS {
            client.request("svc", payload.clone()).unwrap();
        }
        t_blocking.push(start.elapsed());
        let start = Instant::now();
        runtime.block_on(async {
            for _ in 0..REQUESTS {
                async_client.request("svc", payload.clone()).await.unwrap();
            }
        });
        t_async.push(start.elapsed());
        let start = Instant::now();
        for _ in 0..REQUESTS {
            raw.request(&payload);
        }
        t_raw.push(start.elapsed());
    }
    let per = |d: Duration| d / REQUESTS as u32;
    let (b, a, r) = (median(t_blocking), median(t_async), median(t_raw));
    println!(
        "{REQUESTS} sequential requests, median of {RUNS}: blocking {:?}/req, async {:?}/req, \
         raw {:?}/req; blocking/raw time {:.2}, blocking/async time {:.2}",
        per(b),
        per(a),
        per(r),
        b.as_secs_f64() / r.as_secs_f64(),
        b.as_secs_f64() / a.as_secs_f64(),
    );
}

#[test]
#[ignore = "a benchmark: run with --release --ignored --nocapture"]
fn request_latency_after_an_idle_gap() {
    let server = NatsServer::start();
    let _responder = responder(&server.url());
    let client = blocking::connect(server.url()).unwrap();
    let mut raw = Raw::connect(server.port());
    raw.writer.write_all(b"SUB _RAW.r 1\r\nPING\r\n").unwrap();
    raw.writer.flush().unwrap();
    raw.expect_pong();
    let (mut t_blocking, mut t_raw) = (Vec::new(), Vec::new());
    for _ in 0..100 {
        // The gap lets the background thread take over the idle socket.
        thread::sleep(Duration::from_millis(20));
        let start = Instant::now();
        client.request("svc", "x".into()).unwrap();
        t_blocking.push(start.elapsed());
        thread::sleep(Duration::from_millis(20));
        let start = Instant::now();
        raw.request(b"x");
        t_raw.push(start.elapsed());
    }
    let (b, r) = (median(t_blocking), median(t_raw));
    println!(
        "request after a 20 ms gap, median of 100: blocking {b:?}, raw {r:?}; ratio {:.2}",
        b.as_secs_f64() / r.as_secs_f64()
    );
}

#[test]
#[ignore = "a probe for strace: blocking requests only"]
fn probe_blocking_requests() {
    let server = NatsServer::start();
    let _responder = responder(&server.url());
    let client = blocking::connect(server.url()).unwrap();
    client.request("svc", "warm".into()).unwrap();
    eprintln!("PROBE START");
    for _ in 0..5 {
        client.request("svc", "x".into()).unwrap();
    }
    eprintln!("PROBE END");
}

#[test]
#[ignore = "a probe for perf: blocking publishes only"]
fn probe_blocking_publishes() {
    let server = NatsServer::start();
    let client = blocking::connect(server.url()).unwrap();
    let payload = Bytes::from_static(b"0123456789abcdef0123456789abcdef");
    for _ in 0..5 {
        for _ in 0..PUBLISHES {
            client.publish("bench.pub", payload.clone()).unwrap();
        }
        client.flush().unwrap();
    }
}

#[test]
#[ignore = "a benchmark: run with --release --ignored --nocapture"]
fn publish_throughput_32_bytes() {
    let server = NatsServer::start();
    let payload = Bytes::from_static(b"0123456789abcdef0123456789abcdef");
    let (mut t_blocking, mut t_raw) = (Vec::new(), Vec::new());
    let client = blocking::connect(server.url()).unwrap();
    let mut raw = Raw::connect(server.port());
    for _ in 0..RUNS {
        let start = Instant::now();
        for _ in 0..PUBLISHES {
            client.publish("bench.pub", payload.clone()).unwrap();
        }
        client.flush().unwrap();
        t_blocking.push(start.elapsed());

        let start = Instant::now();
        for _ in 0..PUBLISHES {
            raw.writer.write_all(b"PUB bench.pub 32\r\n").unwrap();
            raw.writer.write_all(&payload).unwrap();
            raw.writer.write_all(b"\r\n").unwrap();
        }
        raw.writer.write_all(b"PING\r\n").unwrap();
        raw.writer.flush().unwrap();
        raw.expect_pong();
        t_raw.push(start.elapsed());
    }
    let rate = |d: Duration| PUBLISHES as f64 / d.as_secs_f64() / 1e6;
    let (b, r) = (median(t_blocking), median(t_raw));
    println!(
        "{PUBLISHES} publishes of 32 B, median of {RUNS}: blocking {:.2} M msg/s, raw BufWriter \
         {:.2} M msg/s; ratio {:.2}",
        rate(b),
        rate(r),
        rate(b) / rate(r),
    );
}
