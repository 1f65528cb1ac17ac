//! `rnats latency --server-b URL`: natscli's latency test between two servers. One
//! connection publishes to the first server (`--server`) at `--rate` messages a second for
//! `--duration`, each message carrying its send time; a second connection subscribed on
//! `--server-b` receives them, and the delay of each goes into a histogram. Against one
//! server (or twice the same) it measures publish-to-delivery through it.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use clap::Args;
use futures_util::StreamExt;

use crate::conn::{ConnArgs, parse_duration};
use crate::error::CliError;
use crate::out;
use crate::stats::{Latencies, human};

/// How long to wait for a probe to cross from the first server to the second (routes or
/// gateways may still be forming interest).
const ROUTE_WAIT: Duration = Duration::from_secs(2);

/// Options of `rnats latency`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  rnats latency --server nats://a:4222 --server-b nats://b:4222 --duration 10s"
)]
pub(crate) struct LatencyArgs {
    /// The second server, where the subscriber connects.
    #[arg(long, value_name = "URL")]
    server_b: String,
    /// Bytes per message (at least 8: the send time; at most 64MiB).
    #[arg(long, default_value_t = 8, value_parser = parse_size)]
    size: usize,
    /// Messages a second.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    rate: u64,
    /// How long to publish.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    duration: Duration,
    /// Also write the latency distribution to FILE.histogram (percentile, microseconds).
    #[arg(long, value_name = "FILE")]
    histogram: Option<String>,
}

/// Runs `rnats latency`.
pub(crate) async fn run(args: LatencyArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let msgs = (args.duration.as_secs_f64() * args.rate as f64).round() as u64;
    if msgs == 0 {
        return Err(CliError::Usage("--duration × --rate gives no messages"));
    }
    let (publisher, _) = conn.connect().await?;
    let second = ConnArgs {
        server: Some(args.server_b.clone()),
        ..conn.clone()
    };
    let (subscriber, _) = second.connect().await?;
    let mut text = String::from("==============================\n");
    text.push_str(&format!(
        "Pub Server RTT : {}\n",
        show(rtt(&publisher).await?)
    ));
    text.push_str(&format!(
        "Sub Server RTT : {}\n",
        show(rtt(&subscriber).await?)
    ));
    out::print(&text)?;

    let subject = subscriber.new_inbox();
    let mut messages = subscriber.subscribe(subject.clone()).await?;
    subscriber.flush().await?;
    wait_for_route(&publisher, &subscriber).await?;
    out::print(&format!(
        "Message Payload: {}\nTarget Duration: {:?}\nTarget Msgs/Sec: {}\n\
         Target Band/Sec: {}/s\n==============================\n",
        human::size(args.size),
        args.duration,
        args.rate,
        human::size(band(args.rate, args.size)),
    ))?;

    let gap = Duration::from_secs_f64(1.0 / args.rate as f64);
    // A message lost on the way must not hold the report back: the receiver gives up once
    // nothing came for twice the gap between sends (and at least the route wait).
    let quiet = ROUTE_WAIT.max(gap * 2);
    let receiver = tokio::spawn(async move {
        let mut latencies = Latencies::new();
        for _ in 0..msgs {
            let Ok(Some(message)) = tokio::time::timeout(quiet, messages.next()).await else {
                break;
            };
            let sent = message
                .payload
                .get(..8)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(u64::from_le_bytes)
                .unwrap_or(0);
            latencies.record(Duration::from_nanos(now_nanos().saturating_sub(sent)));
        }
        latencies
    });
    let mut payload = vec![0u8; args.size];
    let started = Instant::now();
    for n in 0..msgs {
        payload[..8].copy_from_slice(&now_nanos().to_le_bytes());
        publisher
            .publish(subject.clone(), Bytes::copy_from_slice(&payload))
            .await?;
        // Keep to the rate: wait until this message's slot has passed.
        let due = started + gap.mul_f64((n + 1) as f64);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            tokio::time::sleep(wait).await;
        }
    }
    publisher.flush().await?;
    let sent_for = started.elapsed();
    let latencies = receiver.await?;
    let received_after = started.elapsed();
    report(&args, &latencies, msgs, sent_for, received_after)
}

/// Bytes a second the test moves: each message goes out to one server and in from the
/// other. Only a figure to print, so a `--rate` too large to multiply saturates.
fn band(rate: u64, size: usize) -> usize {
    let size = u64::try_from(size).unwrap_or(u64::MAX);
    usize::try_from(rate.saturating_mul(size).saturating_mul(2)).unwrap_or(usize::MAX)
}

/// Parses `--size`: at least the 8 bytes of the send time, and no more than a server
/// takes in one message, so the payload is never a buffer too large to allocate.
fn parse_size(text: &str) -> Result<usize, String> {
    let bytes = crate::parse::message_size(text).map_err(|e| e.to_string())?;
    if bytes < 8 {
        return Err(CliError::InvalidArgument {
            what: "message size",
            given: text.to_owned(),
            reason: "at least 8 bytes are needed to carry the send time".to_owned(),
        }
        .to_string());
    }
    Ok(bytes)
}

/// Prints natscli's summary: percentiles, rates and wall times.
fn report(
    args: &LatencyArgs,
    latencies: &Latencies,
    msgs: u64,
    sent_for: Duration,
    received_after: Duration,
) -> Result<(), CliError> {
    let at = |q: f64| show(Duration::from_secs_f64(latencies.quantile_us(q) / 1e6));
    let mut text = String::from("HDR Percentiles:\n");
    for (label, q) in [
        ("10", 0.10),
        ("50", 0.50),
        ("75", 0.75),
        ("90", 0.90),
        ("99", 0.99),
        ("99.9", 0.999),
        ("99.99", 0.9999),
        ("100", 1.0),
    ] {
        text.push_str(&format!("{:<10}{}\n", format!("{label}:"), at(q)));
    }
    let rate = (msgs as f64 / sent_for.as_secs_f64()).round() as u64;
    text.push_str("==============================\n");
    text.push_str(&format!("Actual Msgs/Sec: {rate}\n"));
    text.push_str(&format!(
        "Actual Band/Sec: {}/s\n",
        human::size(band(rate, args.size))
    ));
    text.push_str(&format!(
        "Received       : {} of {msgs}\n",
        latencies.count()
    ));
    text.push_str(&format!("Minimum Latency: {}\n", at(0.0)));
    text.push_str(&format!("Median Latency : {}\n", at(0.5)));
    text.push_str(&format!("Maximum Latency: {}\n", at(1.0)));
    text.push_str(&format!("Last Sent Wall Time: {}\n", show(sent_for)));
    text.push_str(&format!("Last Recv Wall Time: {}\n", show(received_after)));
    out::print(&text)?;
    if let Some(file) = &args.histogram {
        let mut table = String::from("Percentile Microseconds\n");
        for (percentile, micros) in latencies.distribution() {
            table.push_str(&format!("{percentile:.5} {micros:.3}\n"));
        }
        let path = std::path::PathBuf::from(format!("{file}.histogram"));
        std::fs::write(&path, table).map_err(|source| CliError::WriteFile { path, source })?;
    }
    Ok(())
}

/// One PING/PONG round trip.
async fn rtt(client: &rnats::Client) -> Result<Duration, CliError> {
    let started = Instant::now();
    client.flush().await?;
    Ok(started.elapsed())
}

/// Publishes probes through the first server until one reaches a subscription on the
/// second, so interest has crossed between them before the timed run.
async fn wait_for_route(
    publisher: &rnats::Client,
    subscriber: &rnats::Client,
) -> Result<(), CliError> {
    let probe = subscriber.new_inbox();
    let mut arrivals = subscriber.subscribe(probe.clone()).await?;
    subscriber.flush().await?;
    let deadline = Instant::now() + ROUTE_WAIT;
    while Instant::now() < deadline {
        publisher.publish(probe.clone(), Bytes::new()).await?;
        publisher.flush().await?;
        let tick = tokio::time::timeout(Duration::from_millis(10), arrivals.next());
        if let Ok(Some(_)) = tick.await {
            return Ok(());
        }
    }
    Err(CliError::Usage(
        "no message crossed from --server to --server-b within 2s",
    ))
}

/// Nanoseconds since the Unix epoch, the clock both ends of the test share.
fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// A duration for people.
fn show(d: Duration) -> String {
    human::latency_us(d.as_secs_f64() * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The latency arguments of `argv`, as the whole command line parses them.
    fn latency(argv: &[&str]) -> Result<LatencyArgs, clap::Error> {
        use clap::Parser;
        let mut full = vec!["rnats", "latency", "--server-b", "nats://b:4222"];
        full.extend_from_slice(argv);
        match crate::cli::Cli::try_parse_from(full)?.command {
            crate::cli::Command::Latency(args) => Ok(args),
            other => panic!("not a latency command: {other:?}"),
        }
    }

    #[test]
    fn message_sizes_past_what_a_server_takes_are_refused() {
        assert!(latency(&["--size", "1099511627776"]).is_err());
        assert!(latency(&["--size", "7"]).is_err());
        assert!(latency(&["--size", "1024"]).is_ok());
    }

    #[test]
    fn the_bandwidth_figure_saturates() {
        assert_eq!(band(1000, 8), 16_000);
        assert_eq!(band(u64::MAX, 64 << 20), usize::MAX);
    }
}
