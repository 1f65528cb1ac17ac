//! `kv put` and `kv get`: Key-Value operations, each awaited and timed, shared between
//! `--clients` clients.
//!
//! The bucket is `--bucket` (rnats' own `RNATS_BENCH` by default). One that does not exist
//! is made for the run (filled first for `kv get`) and deleted after it; one that exists is
//! used as it is and kept, except rnats' own, which is made anew. Keys are `0`, `1`, ... in order, or drawn at random below
//! `--randomize N`.

use std::sync::Arc;
use std::time::Instant;

use rnats::ConnectOptions;
use rnats::jetstream::kv::{Config, Store};
use rnats::jetstream::stream::StorageType;
use tokio::sync::Barrier;

use super::Plan;
use super::args::DEFAULT_BUCKET;
use super::report::{Figures, Group};
use super::supervisor::{Counter, Supervisor};
use crate::error::CliError;
use crate::stats::{Latencies, Span};

/// Which operation a run times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Put,
    Get,
}

/// `kv put`: `plan.msgs` puts of the payload.
pub(super) async fn put(plan: &Plan) -> Result<Figures, CliError> {
    run(plan, Op::Put).await
}

/// `kv get`: fills the bucket, then `plan.msgs` gets.
pub(super) async fn get(plan: &Plan) -> Result<Figures, CliError> {
    run(plan, Op::Get).await
}

/// Prepares the bucket, runs the clients, cleans up.
async fn run(plan: &Plan, op: Op) -> Result<Figures, CliError> {
    let admin = plan
        .connect(ConnectOptions::new(), "rnats-bench-kv-admin".to_owned())
        .await?;
    let js = rnats::jetstream::new(admin);
    let made = prepare_bucket(&js, plan).await?;
    // A bucket of the user's is read as it is, as natscli reads the one its `kv put` filled.
    if op == Op::Get && made {
        fill(&js, plan).await?;
    }
    let mut workers = Vec::with_capacity(plan.clients);
    for i in 1..=plan.clients {
        let client = plan
            .connect(ConnectOptions::new(), format!("rnats-bench-kv-{i}"))
            .await?;
        let store = rnats::jetstream::new(client)
            .get_key_value(plan.store.bucket.as_str())
            .await
            .map_err(kv_error)?;
        workers.push(store);
    }
    let label = if op == Op::Put { "puts" } else { "gets" };
    let mut supervisor = Supervisor::new(label, plan.msgs, plan.progress);
    let start = Arc::new(Barrier::new(plan.clients));
    let mut offset = 0;
    let mut tasks = Vec::with_capacity(plan.clients);
    for (i, (store, ops)) in workers
        .into_iter()
        .zip(super::split(plan.msgs, plan.clients))
        .enumerate()
    {
        let worker = Worker {
            store,
            plan: plan.clone(),
            op,
            ops,
            first_key: offset,
            seed: 0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1),
            start: Arc::clone(&start),
            counter: supervisor.counter(),
        };
        offset += ops;
        tasks.push(tokio::spawn(worker.run()));
    }
    let (results, timeline) = supervisor.finish(tasks).await;
    if made {
        js.delete_key_value(plan.store.bucket.as_str())
            .await
            .map_err(kv_error)?;
    }
    let (spans, latencies): (Vec<Span>, Vec<Latencies>) = results?.into_iter().unzip();
    let group = Group::from_spans(&spans);
    let figures = match op {
        Op::Put => Figures {
            putters: group,
            ..Figures::default()
        },
        Op::Get => Figures {
            getters: group,
            ..Figures::default()
        },
    };
    Ok(figures.timed(&latencies).over_time(timeline))
}

/// One client's share of a run.
#[derive(Debug)]
struct Worker {
    store: Store,
    plan: Plan,
    op: Op,
    ops: u64,
    /// Its first key when keys go in order (each client has its own range).
    first_key: u64,
    /// State of its key picker with `--randomize`.
    seed: u64,
    start: Arc<Barrier>,
    counter: Counter,
}

impl Worker {
    /// Runs its operations one after the other, timing each.
    async fn run(mut self) -> Result<(Span, Latencies), CliError> {
        let mut latencies = Latencies::new();
        let payload = self.plan.payload.clone();
        let pacer = (!self.plan.pace.is_free()).then(|| self.plan.pace.start());
        self.start.wait().await;
        let start = Instant::now();
        for n in 1..=self.ops {
            let key = self.key(n - 1);
            let sent = Instant::now();
            match self.op {
                Op::Put => {
                    self.store
                        .put(key, payload.clone())
                        .await
                        .map_err(kv_error)?;
                }
                Op::Get => {
                    self.store.get(key).await.map_err(kv_error)?;
                }
            }
            latencies.record(sent.elapsed());
            self.counter.set(n);
            if let Some(pacer) = &pacer {
                pacer.after(n).await;
            }
        }
        let span = Span::of(self.ops, payload.len(), start, Instant::now());
        Ok((span, latencies))
    }

    /// The key of the `i`-th operation.
    fn key(&mut self, i: u64) -> String {
        match self.plan.store.randomize {
            0 => (self.first_key + i).to_string(),
            below => (next_random(&mut self.seed) % below).to_string(),
        }
    }
}

/// The next number of a xorshift64 sequence: cheap, and random enough to spread keys.
pub(super) fn next_random(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    x
}

/// Makes the bucket, or takes the existing one as the module doc says; whether the run
/// made it.
async fn prepare_bucket(js: &rnats::jetstream::Context, plan: &Plan) -> Result<bool, CliError> {
    let store = &plan.store;
    let name = store.bucket.as_str();
    if js.get_key_value(name).await.is_ok() {
        if name != DEFAULT_BUCKET {
            return Ok(false);
        }
        js.delete_key_value(name).await.map_err(kv_error)?;
    }
    let config = Config {
        bucket: name.to_owned(),
        history: i64::from(store.history.max(1)),
        storage: if store.storage == "file" {
            StorageType::File
        } else {
            StorageType::Memory
        },
        num_replicas: store.replicas,
        max_bytes: store
            .max_bytes
            .and_then(|b| i64::try_from(b).ok())
            .unwrap_or(-1),
        ..Config::default()
    };
    js.create_key_value(config).await.map_err(kv_error)?;
    Ok(true)
}

/// Puts every key a `kv get` run reads (pipelined, not timed): `0` to `msgs - 1`, or to
/// `--randomize - 1`.
async fn fill(js: &rnats::jetstream::Context, plan: &Plan) -> Result<(), CliError> {
    let keys = match plan.store.randomize {
        0 => plan.msgs,
        below => below,
    };
    let subjects = (0..keys).map(|key| format!("$KV.{}.{key}", plan.store.bucket));
    super::jetstream::publish_pipelined(js, subjects, &plan.payload).await
}

/// Any Key-Value error, boxed.
fn kv_error(error: impl Into<rnats::Error>) -> CliError {
    CliError::JetStreamConsumer(error.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_keys_stay_below_the_bound_and_vary() {
        let mut seed = 42;
        let keys: Vec<u64> = (0..100).map(|_| next_random(&mut seed) % 10).collect();
        assert!(keys.iter().all(|k| *k < 10));
        assert!(keys.iter().any(|k| *k != keys[0]));
    }
}
