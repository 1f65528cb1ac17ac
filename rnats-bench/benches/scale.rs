//! How costs grow: rnats and async-nats along each scale axis, in one run on one nats-server.
//!
//! `cargo bench -p rnats-bench --bench scale -- [--quick] [--clients NAME,...]
//! [--server URL] [--json PATH] [--svg-dir DIR] [AXIS...]`
//!
//! For each axis ([`rnats_bench::scale::Axis`]) and each of its points, every client runs the
//! same probe (`src/scale/probes.rs`, compiled once per client), the clients alternating
//! which goes first. The table shows each figure at each point and its growth (largest point
//! over smallest); `--svg-dir` writes the curves as `AXIS.svg`. This binary counts its heap
//! allocations ([`CountingAlloc`]), so memory figures are live heap bytes, not RSS.
//!
//! Exits non-zero when a point failed. Run directly, the binary wants `--bench` as `cargo
//! bench` passes it; without it (as under `cargo test`) it does nothing.

use std::process::ExitCode;

use rnats_bench::scale::args::{ScaleArgs, USAGE};
use rnats_bench::scale::heap::CountingAlloc;
use rnats_bench::scale::rnats_side::{self, POINT_LIMIT};
use rnats_bench::scale::{Axis, Curve, ScaleError, svg, to_json, to_markdown};
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
        json.push(to_json(axis, &curves));
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&json)?)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(all_ok)
}

/// One axis, every point, every client; at each point the clients take turns going first.
fn run_axis(
    runtime: &tokio::runtime::Runtime,
    args: &ScaleArgs,
    axis: Axis,
    url: &str,
) -> Vec<Curve> {
    let mut curves: Vec<Curve> = args
        .clients
        .iter()
        .map(|client| Curve {
            client: (*client).to_owned(),
            points: Vec::new(),
        })
        .collect();
    for (i, &n) in axis.plan(args.quick).iter().enumerate() {
        let mut order: Vec<usize> = (0..curves.len()).collect();
        let turns = i % order.len().max(1);
        order.rotate_left(turns);
        for c in order {
            let client = args.clients[c];
            let result = runtime.block_on(async {
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
            });
            if let Err(e) = &result {
                eprintln!("!!! INVALID: {axis} / {client} / {n}: {e}");
            }
            eprintln!("done: {axis} {n} {client}");
            curves[c].points.push((n, result));
        }
    }
    curves
}
