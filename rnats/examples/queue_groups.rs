//! Queue groups: share the work on a subject among several subscribers.
//!
//! Subscribers that join the same queue group split the messages between them: each
//! message goes to one member only, chosen by the server. A plain subscriber on the same
//! subject still sees every message. Run it with `cargo run --example queue_groups`
//! (`NATS_URL` picks the server).

use futures_util::StreamExt;
use tokio::sync::mpsc;

const JOBS: usize = 12;
const WORKERS: usize = 3;

#[tokio::main]
async fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::connect(&url).await?;
    println!("connected to {url}");

    // Each worker reports the jobs it took through this channel, so `main` knows when all
    // of them have been handled.
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let mut workers = Vec::new();
    for worker in 1..=WORKERS {
        // Same subject, same queue group name: the members of a group are load balanced.
        let mut jobs = client
            .queue_subscribe("jobs.resize", "workers".into())
            .await?;
        let done_tx = done_tx.clone();
        workers.push(tokio::spawn(async move {
            while let Some(job) = jobs.next().await {
                let job = String::from_utf8_lossy(&job.payload).into_owned();
                if done_tx.send((worker, job)).is_err() {
                    break;
                }
            }
        }));
    }

    // An ordinary subscriber is outside the group and gets a copy of everything.
    let mut audit = client.subscribe("jobs.resize").await?;
    audit.unsubscribe_after(JOBS as u64).await?;

    // The subscriptions were sent before the jobs on this same connection, so the server
    // has them when the jobs arrive.
    for job in 1..=JOBS {
        client
            .publish("jobs.resize", format!("image-{job}").into())
            .await?;
    }

    let mut per_worker = [0usize; WORKERS];
    for _ in 0..JOBS {
        let Some((worker, job)) = done_rx.recv().await else {
            break;
        };
        println!("worker {worker} took {job}");
        per_worker[worker - 1] += 1;
    }
    let audited = audit.count().await;

    let handled: usize = per_worker.iter().sum();
    println!("{handled} jobs shared by the group, per worker: {per_worker:?}");
    println!("the audit subscriber saw all {audited}");

    // Draining ends every subscription of the client, so the workers' loops finish.
    client.drain().await?;
    for worker in workers {
        worker.await?;
    }
    println!("done");
    Ok(())
}
