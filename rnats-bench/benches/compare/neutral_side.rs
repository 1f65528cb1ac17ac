//! The Core scenarios with rnats' async client on its runtime-neutral backend, driven by
//! `async_io::block_on` on the calling thread outside any tokio runtime: the same steps,
//! subjects and payloads as `scenarios.rs`, with the concurrent halves (the subscriber of `sub`,
//! the responder of `req`) joined into the same `block_on` instead of spawned on a runtime.

use std::future::Future;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::{Either, select};
use rnats_bench::workload::{
    self, LAT_SUBJECT, LATENCY_WARM_UP, PUB_SUBJECT, RECEIVE_TIMEOUT, REQ_SUBJECT,
    ROUND_TRIP_TIMEOUT, SMALL_PAYLOAD, SUB_SUBJECT,
};
use rnats_bench::{Latency, Plan, Scenario, Throughput};

use crate::BenchError;

/// Runs one Core scenario and returns the values in the order of `scenario.metrics()`.
pub(crate) fn run(scenario: Scenario, url: &str, plan: Plan) -> Result<Vec<f64>, BenchError> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err("rnats-neutral must run outside the tokio runtime".into());
    }
    async_io::block_on(async {
        match scenario {
            Scenario::Pub(size) => {
                let t = publish(url, size.bytes(), plan.messages(size)).await?;
                Ok(vec![t.per_sec, t.mb_per_sec])
            }
            Scenario::Sub(size) => {
                let t = subscribe(url, size.bytes(), plan.messages(size)).await?;
                Ok(vec![t.per_sec, t.mb_per_sec])
            }
            Scenario::Req => {
                let (t, latency) = request(url, plan.requests()).await?;
                Ok(vec![t.per_sec, latency.p50_us, latency.p99_us])
            }
            Scenario::Lat => {
                let latency = latency(url, plan.latency_iterations(), None).await?;
                Ok(vec![latency.p50_us, latency.p99_us])
            }
            Scenario::LatIdle => {
                let gap = Some(plan.idle_gap());
                let latency = latency(url, plan.idle_latency_iterations(), gap).await?;
                Ok(vec![latency.p50_us, latency.p99_us])
            }
            other => Err(format!("rnats-neutral runs the Core scenarios only, not {other}").into()),
        }
    })
}

/// `work`, or `None` once `limit` has passed.
async fn within<T>(limit: Duration, work: impl Future<Output = T>) -> Option<T> {
    let work = std::pin::pin!(work);
    match select(work, async_io::Timer::after(limit)).await {
        Either::Left((done, _)) => Some(done),
        Either::Right(_) => None,
    }
}

fn payload(size: usize) -> Bytes {
    Bytes::from(workload::payload(size))
}

/// Connects with default options, or with subscriptions that hold `(messages, bytes)`.
async fn connect(url: &str, capacity: Option<(usize, usize)>) -> Result<rnats::Client, BenchError> {
    let mut options = rnats::ConnectOptions::new();
    if let Some((messages, bytes)) = capacity {
        options = options
            .subscription_capacity(messages)
            .subscription_capacity_bytes(bytes);
    }
    Ok(options.connect(url).await?)
}

async fn publish(url: &str, size: usize, count: usize) -> Result<Throughput, BenchError> {
    let client = connect(url, None).await?;
    let payload = payload(size);
    let start = Instant::now();
    for _ in 0..count {
        client.publish(PUB_SUBJECT, payload.clone()).await?;
    }
    client.flush().await?;
    Ok(Throughput::new(count, size, start.elapsed()))
}

async fn subscribe(url: &str, size: usize, count: usize) -> Result<Throughput, BenchError> {
    let receiver = connect(url, Some(workload::room_for_run(count, size))).await?;
    let mut subscriber = receiver.subscribe(SUB_SUBJECT).await?;
    receiver.flush().await?;
    let publisher = connect(url, None).await?;
    let receiving = async {
        let mut received = 0usize;
        let mut first = None;
        let finished = within(RECEIVE_TIMEOUT, async {
            while received < count {
                if subscriber.next().await.is_none() {
                    break;
                }
                if received == 0 {
                    first = Some(Instant::now());
                }
                received += 1;
            }
        })
        .await;
        (received, first, Instant::now(), finished.is_some())
    };
    let publishing = async {
        let payload = payload(size);
        for _ in 0..count {
            publisher.publish(SUB_SUBJECT, payload.clone()).await?;
        }
        publisher.flush().await?;
        Ok::<(), BenchError>(())
    };
    let ((received, first, last, in_time), published) =
        futures_util::future::join(receiving, publishing).await;
    published?;
    if received != count {
        let why = if in_time {
            "the subscription ended"
        } else {
            "timed out"
        };
        return Err(format!("DROPPED MESSAGES: received {received} of {count} ({why})").into());
    }
    let first = first.ok_or("no message received")?;
    Ok(Throughput::new(count, size, last - first))
}

async fn request(url: &str, count: usize) -> Result<(Throughput, Latency), BenchError> {
    let responder = connect(url, None).await?;
    let mut requests = responder.subscribe(REQ_SUBJECT).await?;
    responder.flush().await?;
    let responding = std::pin::pin!(async {
        while let Some(message) = requests.next().await {
            if let Some(reply) = message.reply
                && responder.publish(reply, message.payload).await.is_err()
            {
                break;
            }
        }
    });
    let requesting = std::pin::pin!(async {
        let requester = connect(url, None).await?;
        let payload = payload(SMALL_PAYLOAD);
        requester.request(REQ_SUBJECT, payload.clone()).await?;
        let mut samples = Vec::with_capacity(count);
        let start = Instant::now();
        for _ in 0..count {
            let sent = Instant::now();
            requester.request(REQ_SUBJECT, payload.clone()).await?;
            samples.push(sent.elapsed());
        }
        Ok::<_, BenchError>((start.elapsed(), samples))
    });
    let (elapsed, samples) = match select(requesting, responding).await {
        Either::Left((done, _)) => done?,
        Either::Right(_) => return Err("the responder's subscription ended".into()),
    };
    let latency = Latency::from_durations(&samples).ok_or("no requests made")?;
    Ok((Throughput::new(count, SMALL_PAYLOAD, elapsed), latency))
}

/// The seed loop: publish -> flush -> receive on one connection subscribed to its own
/// subject.
async fn latency(
    url: &str,
    iterations: usize,
    idle_gap: Option<Duration>,
) -> Result<Latency, BenchError> {
    let client = connect(url, None).await?;
    let mut subscriber = client.subscribe(LAT_SUBJECT).await?;
    client.flush().await?;
    let payload = payload(SMALL_PAYLOAD);
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..LATENCY_WARM_UP + iterations {
        if let Some(gap) = idle_gap.filter(|_| i >= LATENCY_WARM_UP) {
            async_io::Timer::after(gap).await;
        }
        let start = Instant::now();
        client.publish(LAT_SUBJECT, payload.clone()).await?;
        client.flush().await?;
        match within(ROUND_TRIP_TIMEOUT, subscriber.next()).await {
            Some(Some(_)) => {}
            Some(None) => return Err("subscription ended during the latency run".into()),
            None => return Err(format!("no message within {ROUND_TRIP_TIMEOUT:?}").into()),
        }
        if i >= LATENCY_WARM_UP {
            samples.push(start.elapsed());
        }
    }
    Latency::from_durations(&samples).ok_or_else(|| "no iterations".into())
}
