//! rnats vs async-nats vs a raw blocking-socket baseline, side by side, on one nats-server.
//!
//! `cargo bench -p rnats-bench --bench compare -- [--quick] [--rounds R]
//! [--runtime current-thread|multi-thread] [--shape block-on|spawn] [--clients NAME,...]
//! [--server URL] [--json PATH] [SCENARIO...]`
//!
//! One server serves the whole run. Each scenario runs `R` rounds; a round runs every client
//! that supports the scenario, in an order that rotates every round. The async clients share
//! one tokio runtime (`--runtime`, multi-threaded by default); the blocking clients, rnats's
//! ([`rnats_bench::blocking`]) and the raw one ([`rnats_bench::raw`]), Core scenarios only,
//! run on plain threads outside it. The table shows the median over rounds per client and the
//! ratios of rnats and rnats-blocking to async-nats and to raw, and under each scenario what a
//! run cost the process per operation (context switches and CPU time, from `getrusage`) and,
//! when the server's process is known (started here, or `--server-pid`), the server's CPU
//! time per operation. The async clients' code runs in `block_on` (as in `#[tokio::main]`)
//! or, with `--shape spawn`, in a spawned task. The `mem` scenario runs in child processes
//! (this binary again, with `--mem-child`) because peak RSS is per process.
//!
//! A client is one `*_side.rs` module: `rnats_side` and `async_nats_side` compile the shared
//! async `scenarios.rs` against their client; `raw_tokio_side` runs the raw client's wire
//! handling on tokio in the same shape (the floor of that shape); `threaded_side` maps
//! scenarios onto the raw and the blocking client, and `neutral_side` runs rnats'
//! runtime-neutral backend under `async_io::block_on` outside tokio, both called from
//! [`run_blocking`].
//!
//! Exits non-zero when any run was invalid (dropped messages, timeout, error). Run directly,
//! the binary wants `--bench` as `cargo bench` passes it; without it (as under `cargo test`) it
//! does nothing.

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use rnats_bench::args::USAGE;
use rnats_bench::cost::{self, Usage};
use rnats_bench::{
    Args, ClientKind, JS_FETCH_BATCH, JS_IN_FLIGHT, MemChild, MemProbe, PayloadSize, Plan, Report,
    Scenario, Shape, memory,
};
use rnats_test_server::NatsServer;

#[path = "compare/async_nats_side.rs"]
mod async_nats_side;
#[path = "compare/neutral_side.rs"]
mod neutral_side;
#[path = "compare/raw_tokio_side.rs"]
mod raw_tokio_side;
#[path = "compare/rnats_side.rs"]
mod rnats_side;
#[path = "compare/threaded_side.rs"]
mod threaded_side;

/// Any failure of a run; its message ends up in the report.
type BenchError = Box<dyn std::error::Error + Send + Sync>;

/// Subscription limits for a connection that must not drop a message.
#[derive(Debug, Clone, Copy)]
struct Capacity {
    /// Messages a subscription may buffer.
    messages: usize,
    /// Bytes a subscription may buffer (rnats only; async-nats counts messages).
    bytes: usize,
}

/// Runs `$body` with `$s` naming the async scenarios module of `$client`'s side; a client
/// that is not async is an error (it runs through [`run_blocking`]).
macro_rules! on_client {
    ($client:expr, |$s:ident| $body:expr) => {
        match $client {
            ClientKind::Rnats => {
                use rnats_side::scenarios as $s;
                $body
            }
            ClientKind::AsyncNats => {
                use async_nats_side::scenarios as $s;
                $body
            }
            client @ (ClientKind::RnatsNeutral
            | ClientKind::RnatsBlocking
            | ClientKind::RawTokio
            | ClientKind::Raw) => Err(format!("{client} has no async scenarios").into()),
        }
    };
}

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if args.help {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let runtime = match args.runtime.build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot build the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(child) = args.mem_child {
        return run_mem_child(&runtime, &args, child);
    }
    if !args.bench {
        // `cargo test --all-targets` runs bench binaries too, without `--bench`: a full
        // comparison there would cost CI minutes and measure a debug build.
        eprintln!(
            "compare: not run without --bench; use `cargo bench -p rnats-bench --bench compare`"
        );
        return ExitCode::SUCCESS;
    }
    match run(&runtime, &args) {
        Ok(report) if report.is_valid() => ExitCode::SUCCESS,
        Ok(_) => {
            eprintln!("error: INVALID RUN: some runs failed; see the list under the table");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The whole comparison: start the server, run every scenario, print the table.
fn run(runtime: &tokio::runtime::Runtime, args: &Args) -> Result<Report, BenchError> {
    for arg in &args.ignored {
        eprintln!("note: ignoring argument {arg}");
    }
    // The server lives until the end of this function; JetStream serves the js-* scenarios.
    let (_server, url, server_pid) = match &args.server {
        Some(url) => (None, url.clone(), args.server_pid),
        None => {
            let server = NatsServer::builder().jetstream(true).spawn()?;
            let url = server.url();
            let pid = server.pid();
            (Some(server), url, Some(pid))
        }
    };
    // The server's CPU time around each run; a server that cannot be read (gone, another
    // machine's pid) is said once and left out of the table.
    let server_cpu = || server_pid.map(cost::process_cpu).transpose();
    if let Err(e) = server_cpu() {
        eprintln!("note: the server's CPU time cannot be read ({e}); no server CPU row");
    }
    let server_cpu = || server_cpu().ok().flatten();
    let plan = Plan { quick: args.quick };
    let mut report = Report::new(
        args.quick,
        args.rounds,
        url.clone(),
        args.runtime,
        &args.clients,
    );
    report.shape = args.shape;
    let linger = args.linger_ms.map(Duration::from_millis);
    if let Some(delay) = linger {
        let _ = rnats_side::LINGER.set(delay);
    }
    eprintln!(
        "clients: {}; async clients on the {} tokio runtime, in {}{}",
        args.clients
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(", "),
        args.runtime,
        args.shape,
        linger.map_or(String::new(), |d| format!("; rnats lingers {d:?}")),
    );

    // A short unmeasured publish per client (a quick pub32 run): the server's and each
    // library's first-use costs (allocations, lazy statics, page faults) should not land in
    // the first measured run.
    let warm_up = Scenario::Pub(PayloadSize::B32);
    for &client in &args.clients {
        run_client(runtime, args, &url, warm_up, client, Plan { quick: true })?;
    }

    for &scenario in &args.scenarios {
        let clients = scenario.clients(&args.clients);
        for round in 0..args.rounds {
            for client in ClientKind::order_for_round(&clients, round) {
                let before = Usage::now();
                let server_before = server_cpu();
                let outcome = run_client(runtime, args, &url, scenario, client, plan);
                let server_after = server_cpu();
                let after = Usage::now();
                match outcome {
                    Ok(values) => {
                        report.record(scenario, client, &values);
                        let Some(operations) = plan.operations(scenario) else {
                            continue;
                        };
                        if let (Ok(before), Ok(after)) = (before, after) {
                            let per_op = before.per_op_until(&after, operations);
                            report.record_cost(scenario, client, per_op);
                        }
                        if let (Some(before), Some(after)) = (server_before, server_after) {
                            let used = after.saturating_sub(before).as_secs_f64();
                            let cpu_us = used * 1e6 / operations.max(1) as f64;
                            report.record_server_cost(scenario, client, cpu_us);
                        }
                    }
                    Err(e) => {
                        eprintln!(
                            "!!! INVALID: {scenario} / {client} / round {}: {e}",
                            round + 1
                        );
                        report.record_failure(scenario, client, round + 1, e.to_string());
                    }
                }
            }
        }
        eprintln!("done: {scenario}");
    }

    print_report(&report, args)?;
    Ok(report)
}

/// Prints the table, and writes the JSON where `--json` says.
fn print_report(report: &Report, args: &Args) -> Result<(), BenchError> {
    println!("\n{}", report.to_markdown());
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&report.to_json())?;
        std::fs::write(path, json)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// One run of `scenario` with `client`: `mem` in child processes, an async client on the
/// runtime, a blocking one on this thread. Returns the values in the order of
/// `scenario.metrics()`.
fn run_client(
    runtime: &tokio::runtime::Runtime,
    args: &Args,
    url: &str,
    scenario: Scenario,
    client: ClientKind,
    plan: Plan,
) -> Result<Vec<f64>, BenchError> {
    match scenario {
        Scenario::Mem => run_mem(args, url, client),
        _ if client.is_async() => match args.shape {
            Shape::BlockOn => runtime.block_on(run_once(scenario, client, url, plan)),
            Shape::Spawn => {
                let url = url.to_owned();
                let task = async move { run_once(scenario, client, &url, plan).await };
                runtime.block_on(async { tokio::spawn(task).await? })
            }
        },
        _ => run_blocking(scenario, client, url, plan),
    }
}

/// One run of one scenario with a client that blocks the calling thread. Its socket
/// timeouts turn a hang into a failure. Returns the values in the order of
/// `scenario.metrics()`.
fn run_blocking(
    scenario: Scenario,
    client: ClientKind,
    url: &str,
    plan: Plan,
) -> Result<Vec<f64>, BenchError> {
    match client {
        ClientKind::Raw => threaded_side::RAW.run(scenario, url, plan),
        ClientKind::RnatsBlocking => threaded_side::BLOCKING.run(scenario, url, plan),
        ClientKind::RnatsNeutral => neutral_side::run(scenario, url, plan),
        ClientKind::Rnats | ClientKind::AsyncNats | ClientKind::RawTokio => {
            Err(format!("{client} runs on the tokio runtime").into())
        }
    }
}

/// One run of one scenario with an async client, bounded in time so a hang becomes a failure.
/// Returns the values in the order of `scenario.metrics()`.
async fn run_once(
    scenario: Scenario,
    client: ClientKind,
    url: &str,
    plan: Plan,
) -> Result<Vec<f64>, BenchError> {
    // Longer than the subscriber's own receive timeout, so a run that loses messages reports
    // how many arrived instead of a bare hang.
    let limit = Duration::from_secs(if plan.quick { 120 } else { 300 });
    let run = async {
        if client == ClientKind::RawTokio {
            return raw_tokio_side::run(scenario, url, plan).await;
        }
        on_client!(client, |s| match scenario {
            Scenario::Pub(size) => {
                let t = s::publish(url, size.bytes(), plan.messages(size)).await?;
                Ok(vec![t.per_sec, t.mb_per_sec])
            }
            Scenario::Sub(size) => {
                let t = s::subscribe(url, size.bytes(), plan.messages(size)).await?;
                Ok(vec![t.per_sec, t.mb_per_sec])
            }
            Scenario::Req => {
                let (t, latency) = s::request(url, plan.requests()).await?;
                Ok(vec![t.per_sec, latency.p50_us, latency.p99_us])
            }
            Scenario::Lat => {
                let latency = s::latency(url, plan.latency_iterations(), None).await?;
                Ok(vec![latency.p50_us, latency.p99_us])
            }
            Scenario::LatIdle => {
                let gap = Some(plan.idle_gap());
                let latency = s::latency(url, plan.idle_latency_iterations(), gap).await?;
                Ok(vec![latency.p50_us, latency.p99_us])
            }
            Scenario::Mem => Err("mem runs in child processes".into()),
            Scenario::JsPub(size) => {
                let count = plan.js_messages(false);
                let started = Instant::now();
                let t = s::jetstream_publish(url, size.bytes(), count, 1).await?;
                let per_ack_us = started.elapsed().as_secs_f64() * 1e6 / count as f64;
                Ok(vec![t.per_sec, per_ack_us])
            }
            Scenario::JsFetch => {
                let count = plan.js_messages(true);
                let t = s::jetstream_fetch(url, 32, count, JS_FETCH_BATCH).await?;
                Ok(vec![t.per_sec, t.mb_per_sec])
            }
            Scenario::ObjPut => {
                let size = plan.object_size();
                let elapsed = s::object_put(url, size).await?;
                Ok(object_metrics(size, elapsed))
            }
            Scenario::ObjGet => {
                let size = plan.object_size();
                let elapsed = s::object_get(url, size).await?;
                Ok(object_metrics(size, elapsed))
            }
            Scenario::JsPipe(size) => {
                let count = plan.js_messages(true);
                let t = s::jetstream_publish(url, size.bytes(), count, JS_IN_FLIGHT).await?;
                Ok(vec![t.per_sec, t.mb_per_sec])
            }
            Scenario::KvPut(tasks) => {
                let (t, mean_us) = s::kv::kv_put(url, plan.kv_operations(), tasks).await?;
                Ok(vec![t.per_sec, mean_us])
            }
            Scenario::KvGet(tasks) => {
                let (t, mean_us) = s::kv::kv_get(url, plan.kv_operations(), tasks).await?;
                Ok(vec![t.per_sec, mean_us])
            }
        })
    };
    match tokio::time::timeout(limit, run).await {
        Ok(result) => result,
        Err(_) => Err(format!("HANG: no result within {limit:?}").into()),
    }
}

/// MB/s and microseconds for one object of `size` bytes moved in `elapsed`.
fn object_metrics(size: usize, elapsed: Duration) -> Vec<f64> {
    let secs = elapsed.as_secs_f64().max(1e-9);
    vec![size as f64 / 1e6 / secs, secs * 1e6]
}

/// The `mem` scenario for one client: each probe in a fresh child process.
fn run_mem(args: &Args, url: &str, client: ClientKind) -> Result<Vec<f64>, BenchError> {
    let peak_kib = mem_probe(args, url, client, MemProbe::Publish, "peak_rss_kib")?;
    let large_kib = mem_probe(args, url, client, MemProbe::PublishLarge, "peak_rss_kib")?;
    let per_sub = mem_probe(args, url, client, MemProbe::IdleSubs, "bytes_per_sub")?;
    let js_peak_kib = mem_probe(args, url, client, MemProbe::JsPublish, "peak_rss_kib")?;
    Ok(vec![
        peak_kib / 1024.0,
        large_kib / 1024.0,
        per_sub,
        js_peak_kib / 1024.0,
    ])
}

/// Runs this binary again as a `mem` child and reads `key` from its report line.
fn mem_probe(
    args: &Args,
    url: &str,
    client: ClientKind,
    probe: MemProbe,
    key: &str,
) -> Result<f64, BenchError> {
    let exe = std::env::current_exe()?;
    let output = Command::new(exe)
        .args(args.mem_child_args(url, client, probe))
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "{} child failed ({}): {}",
            probe.name(),
            output.status,
            stderr.trim()
        )
        .into());
    }
    let values = memory::parse_report(&stdout).ok_or("the child printed no report")?;
    values
        .get(key)
        .copied()
        .ok_or_else(|| format!("the child's report has no {key}").into())
}

/// Inside a `mem` child: run one probe and print its report line.
fn run_mem_child(runtime: &tokio::runtime::Runtime, args: &Args, child: MemChild) -> ExitCode {
    let Some(url) = args.server.as_deref() else {
        eprintln!("error: --mem-child needs --server");
        return ExitCode::from(2);
    };
    let plan = Plan { quick: args.quick };
    let limit = Duration::from_secs(if plan.quick { 120 } else { 300 });
    let result: Result<(&str, f64), BenchError> = runtime.block_on(async {
        let probe = async {
            on_client!(child.client, |s| match child.probe {
                MemProbe::Publish => {
                    let size = plan.memory_payload();
                    let kib = s::peak_rss_publishing(url, size, plan.memory_messages()).await?;
                    Ok(("peak_rss_kib", kib as f64))
                }
                MemProbe::PublishLarge => {
                    let size = PayloadSize::K8.bytes();
                    let count = plan.memory_large_messages();
                    let kib = s::peak_rss_publishing(url, size, count).await?;
                    Ok(("peak_rss_kib", kib as f64))
                }
                MemProbe::JsPublish => {
                    let size = plan.memory_payload();
                    let count = plan.memory_messages();
                    let kib = s::peak_rss_jetstream_publishing(url, size, count).await?;
                    Ok(("peak_rss_kib", kib as f64))
                }
                MemProbe::IdleSubs => {
                    let per_sub = s::rss_per_idle_subscription(url, plan.idle_subscriptions());
                    Ok(("bytes_per_sub", per_sub.await?))
                }
            })
        };
        tokio::time::timeout(limit, probe)
            .await
            .unwrap_or_else(|_| Err("HANG".into()))
    });
    match result {
        Ok((key, value)) => {
            println!("{}", memory::format_report(&[(key, value)]));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
