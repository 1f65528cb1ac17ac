//! How costs grow: rnats and async-nats along each scale axis, in one run on one nats-server.
//!
//! `cargo bench -p rnats-bench --bench scale -- [--quick] [--rounds N] [--points N,...]
//! [--clients NAME,...] [--server URL] [--json PATH] [--svg-dir DIR] [AXIS...]`
//!
//! For each axis ([`rnats_bench::scale::Axis`]) and each of its points, every client runs the
//! same probe (`src/scale/probes.rs`, compiled once per async client; the blocking client's
//! in `src/scale/blocking_probes.rs`, on the axes where it applies), the clients alternating
//! which goes first, `--rounds` times; each figure is the median of the rounds. The table
//! shows each figure at each point and its growth (largest point over smallest);
//! `--svg-dir` writes the curves as `AXIS.svg`. This binary counts its heap allocations
//! ([`CountingAlloc`]), so memory figures are live heap bytes, not RSS.
//!
//! Exits non-zero when a point failed. Run directly, the binary wants `--bench` as `cargo
//! bench` passes it; without it (as under `cargo test`) it does nothing.

use std::process::ExitCode;

use rnats_bench::scale::args::{ScaleArgs, USAGE};
use rnats_bench::scale::heap::CountingAlloc;
use rnats_bench::scale::rnats_side::{self, POINT_LIMIT};
use rnats_bench::scale::{
    Axis, Curve, ScaleError, blocking_probes, median_of, svg, to_json, to_markdown,
};
use rnats_test_server::NatsServer;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

// The async-nats side: the probes compiled against async-nats. `probes.rs` reaches its
// client through `super::{connect, jetstream, HeaderMap}`, which for a module at the root of
// this binary are the items below.

/// The side's header map, for the headers axis.
use async_nats::HeaderMap;
/// The side's JetStream module, for the KV and Object Store axes.
use async_nats::jetstream;

/// Connects with async-nats, with subscriptions that hold `messages` messages (async-nats
/// bounds them by count only).
async fn connect(url: &str, messages: usize) -> Result<async_nats::Client, ScaleError> {
    Ok(async_nats::ConnectOptions::new()
        .subscription_capacity(messages)
        .connect(url)
        .await?)
}

/// The probes run with async-nats, the reference client.
// The same file is compiled for each client on purpose; see its module docs.
#[allow(clippy::duplicate_mod, unreachable_pub)]
#[path = "../src/scale/probes.rs"]
mod async_nats_probes;

fn main() -> ExitCode {
    let args = match ScaleArgs::parse(std::env::args().skip(1)) {
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
    if !args.bench {
        eprintln!("scale: not run without --bench; use `cargo bench -p rnats-bench --bench scale`");
        return ExitCode::SUCCESS;
    }
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: INVALID RUN: some points failed; see the lists under the tables");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Every axis asked for: run, print, write. Returns whether every point succeeded.
fn run(args: &ScaleArgs) -> Result<bool, ScaleError> {
    let runtime = tokio::runtime::Runtime::new()?;
    let (_server, url) = match &args.server {
        Some(url) => (None, url.clone()),
        None => {
            let server = NatsServer::builder().jetstream(true).spawn()?;
            let url = server.url();
            (Some(server), url)
        }
    };
    let mut all_ok = true;
    let mut json = Vec::new();
    for &axis in &args.axes {
        let curves = run_axis(&runtime, args, axis, &url);
        all_ok &= curves
            .iter()
            .all(|c| c.points.iter().all(|(_, r)| r.is_ok()));
        println!(
            "\n## {axis} ({})\n\n{}",
            axis.unit(),
            to_markdown(axis, &curves)
        );
        if let Some(dir) = &args.svg_dir {
            std::fs::create_dir_all(dir)?;
            let path = dir.join(format!("{axis}.svg"));
            std::fs::write(&path, svg::chart(axis, &curves)?)?;
            eprintln!("wrote {}", path.display());
        }
        let mut raw = to_json(axis, &curves);
        raw["rounds"] = args.rounds.into();
        json.push(raw);
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&json)?)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(all_ok)
}

/// One axis, every point, every client that runs it, `args.rounds` times; at each point the
/// clients take turns going first, and each figure is the median of the rounds.
fn run_axis(
    runtime: &tokio::runtime::Runtime,
    args: &ScaleArgs,
    axis: Axis,
    url: &str,
) -> Vec<Curve> {
    let clients: Vec<&'static str> = args
        .clients
        .iter()
        .copied()
        .filter(|c| *c != "rnats-blocking" || axis.blocking_applies())
        .collect();
    let mut curves: Vec<Curve> = clients
        .iter()
        .map(|client| Curve {
            client: (*client).to_owned(),
            points: Vec::new(),
        })
        .collect();
    let points = match &args.points {
        Some(points) => points.as_slice(),
        None => axis.plan(args.quick),
    };
    for (i, &n) in points.iter().enumerate() {
        let mut rounds: Vec<Vec<Result<Vec<f64>, String>>> = vec![Vec::new(); clients.len()];
        for round in 0..args.rounds {
            let mut order: Vec<usize> = (0..clients.len()).collect();
            order.rotate_left((i + round) % clients.len().max(1));
            for c in order {
                let result = measure(runtime, clients[c], axis, url, n);
                if let Err(e) = &result {
                    eprintln!("!!! INVALID: {axis} / {} / {n}: {e}", clients[c]);
                }
                eprintln!("done: {axis} {n} {} round {}", clients[c], round + 1);
                rounds[c].push(result);
            }
        }
        for (curve, rounds) in curves.iter_mut().zip(rounds) {
            curve.points.push((n, median_of(rounds)));
        }
    }
    curves
}

/// One run of `client`'s probe for `axis` at `n`, bounded by [`POINT_LIMIT`]. The blocking
/// client runs on a thread of its own, off the runtime.
fn measure(
    runtime: &tokio::runtime::Runtime,
    client: &str,
    axis: Axis,
    url: &str,
    n: usize,
) -> Result<Vec<f64>, String> {
    if client == "rnats-blocking" {
        let (sender, receiver) = std::sync::mpsc::channel();
        let url = url.to_owned();
        std::thread::spawn(move || {
            let result = blocking_probes::measure(axis, &url, n).map_err(|e| e.to_string());
            let _ = sender.send(result);
        });
        return receiver
            .recv_timeout(POINT_LIMIT)
            .unwrap_or_else(|_| Err(format!("HANG: no result within {POINT_LIMIT:?}")));
    }
    runtime.block_on(async {
        let probe = async {
            match client {
                "async-nats" => async_nats_probes::measure(axis, url, n).await,
                _ => rnats_side::probes::measure(axis, url, n).await,
            }
        };
        match tokio::time::timeout(POINT_LIMIT, probe).await {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(_) => Err(format!("HANG: no result within {POINT_LIMIT:?}")),
        }
    })
}
