//! The `main` of the small bench binaries (`fast_ingest`, `object_put`): they run only under
//! `cargo bench`, take their settings as positional numbers, and run one async comparison.

use std::future::Future;
use std::process::ExitCode;

/// What a small bench's comparison fails with.
pub type BenchError = Box<dyn std::error::Error + Send + Sync>;

/// Runs `compare` on a multi-threaded runtime with the positional numbers of the command
/// line (`number(i, default)` gives the `i`-th, or `default` where it is missing or not a
/// number). Without `--bench` (as `cargo test --all-targets` runs bench binaries) it says
/// how to run it and succeeds without measuring: a debug build's run would only cost CI
/// minutes.
pub fn run<F, Fut>(name: &str, compare: F) -> ExitCode
where
    F: FnOnce(&dyn Fn(usize, usize) -> usize) -> Fut,
    Fut: Future<Output = Result<(), BenchError>>,
{
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        eprintln!(
            "{name}: not run without --bench; use `cargo bench -p rnats-bench --bench {name}`"
        );
        return ExitCode::SUCCESS;
    }
    let numbers: Vec<Option<usize>> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.parse().ok())
        .collect();
    let number = |i: usize, default: usize| numbers.get(i).copied().flatten().unwrap_or(default);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(compare(&number)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name} bench failed: {e}");
            ExitCode::FAILURE
        }
    }
}
