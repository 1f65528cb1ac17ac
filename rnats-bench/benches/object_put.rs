//! Object Store puts (ADR-20) of one large object, over the pipelined chunked upload and
//! over fast ingest (ADR-50), side by side on one nats-server: each run puts `size` MiB in
//! chunks of `chunk` KiB into a fresh memory bucket, one without and one with
//! `Config::fast_ingest`, timed from the call until the put returned (metadata stored).
//! Runs alternate so drift hits both alike. Printed: the medians and the best runs in MB/s,
//! and the median CPU time each put cost the client (`getrusage`) and the server
//! (`/proc/<pid>/stat`), which a busy machine disturbs less than wall time.
//!
//! `cargo bench -p rnats-bench --bench object_put -- [size MiB] [runs] [chunk KiB]`
//! (defaults: 64 MiB, 5 runs each, 128 KiB chunks as every client's default).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use rnats::jetstream::object_store::{Config, ObjectMetadata};
use rnats::jetstream::{self, Context};
use rnats_bench::cost::Usage;
use rnats_bench::small_bench::{self, BenchError};

const BUCKET: &str = "bench_put";

fn main() -> ExitCode {
    small_bench::run("object_put", |number| {
        compare(number(0, 64), number(1, 5), number(2, 128) * 1024)
    })
}

async fn compare(mib: usize, runs: usize, chunk: usize) -> Result<(), BenchError> {
    let server = rnats_test_server::NatsServer::builder()
        .jetstream(true)
        .spawn()?;
    let js = jetstream::new(rnats::connect(server.url()).await?);
    let pid = server.pid();
    let data: Vec<u8> = (0..mib * 1024 * 1024).map(|i| (i % 251) as u8).collect();
    // One untimed round of each to warm up connection, allocator and server.
    put(&js, pid, &data, chunk, false).await?;
    put(&js, pid, &data, chunk, true).await?;
    let (mut chunked, mut fast) = (Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        chunked.push(put(&js, pid, &data, chunk, false).await?);
        fast.push(put(&js, pid, &data, chunk, true).await?);
    }
    let kib = chunk / 1024;
    println!("object: {mib} MiB in {kib} KiB chunks, memory bucket, {runs} runs each");
    println!("                          MB/s median   best   CPU ms: client  server");
    let chunked = Summary::of(&chunked, data.len());
    let fast = Summary::of(&fast, data.len());
    chunked.print("chunked (pipelined acks):");
    fast.print("fast ingest:             ");
    println!(
        "ratio fast / chunked: {:.2}x median, {:.2}x best; CPU {:.2}x client, {:.2}x server",
        fast.rate / chunked.rate,
        fast.best / chunked.best,
        fast.client_ms / chunked.client_ms,
        fast.server_ms / chunked.server_ms,
    );
    Ok(())
}

/// What one put cost.
struct Cost {
    wall: Duration,
    client: Duration,
    server: Duration,
}

/// The medians (and the best rate) of a side's runs.
struct Summary {
    rate: f64,
    best: f64,
    client_ms: f64,
    server_ms: f64,
}

impl Summary {
    fn of(costs: &[Cost], bytes: usize) -> Summary {
        let rates: Vec<f64> = costs.iter().map(|c| rate(bytes, c.wall)).collect();
        let ms = |d: fn(&Cost) -> Duration| {
            median(costs.iter().map(|c| d(c).as_secs_f64() * 1e3).collect())
        };
        Summary {
            best: best(&rates),
            rate: median(rates),
            client_ms: ms(|c| c.client),
            server_ms: ms(|c| c.server),
        }
    }

    fn print(&self, label: &str) {
        println!(
            "{label} {:>11.1} {:>6.1} {:>14.0} {:>7.0}",
            self.rate, self.best, self.client_ms, self.server_ms
        );
    }
}

/// The CPU time (user and system, every thread) process `pid` has used, from
/// `/proc/<pid>/stat` (Linux).
fn process_cpu(pid: u32) -> Result<Duration, BenchError> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name, in parentheses, may hold spaces: count fields after its end.
    let rest = stat.rsplit_once(')').ok_or("no ')' in /proc/<pid>/stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = fields.get(11).ok_or("short stat")?.parse::<u64>()?
        + fields.get(12).ok_or("short stat")?.parse::<u64>()?;
    // SAFETY: sysconf only reads a configuration value.
    #[allow(unsafe_code)]
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let per_second = u64::try_from(per_second).unwrap_or(100).max(1);
    Ok(Duration::from_nanos(ticks * 1_000_000_000 / per_second))
}

/// One put of `data` into a fresh bucket, with or without fast ingest.
async fn put(
    js: &Context,
    server_pid: u32,
    data: &[u8],
    chunk: usize,
    fast_ingest: bool,
) -> Result<Cost, BenchError> {
    let _ = js.delete_object_store(BUCKET).await;
    let store = js
        .create_object_store(Config {
            bucket: BUCKET.to_owned(),
            storage: jetstream::stream::StorageType::Memory,
            fast_ingest,
            ..Default::default()
        })
        .await?;
    let (client, server) = (Usage::now()?, process_cpu(server_pid)?);
    let start = Instant::now();
    let meta = ObjectMetadata {
        name: "object".to_owned(),
        chunk_size: Some(chunk),
        ..Default::default()
    };
    let info = store.put(meta, &mut &data[..]).await?;
    let wall = start.elapsed();
    let (client, server) = (
        Usage::now()?.cpu.saturating_sub(client.cpu),
        process_cpu(server_pid)?.saturating_sub(server),
    );
    if info.size != data.len() {
        return Err(format!("stored {} of {} bytes", info.size, data.len()).into());
    }
    Ok(Cost {
        wall,
        client,
        server,
    })
}

/// MB/s (10^6 bytes).
fn rate(bytes: usize, elapsed: Duration) -> f64 {
    bytes as f64 / elapsed.as_secs_f64() / 1e6
}

/// The fastest run: on a shared machine, the one least disturbed by others.
fn best(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
