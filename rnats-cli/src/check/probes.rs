//! The checks themselves: each connects, measures, and compares with its thresholds. A
//! failure to connect or a missing stream, consumer or bucket is CRITICAL (what operators
//! probe for); settings that cannot be read are UNKNOWN.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rnats::jetstream;
use rnats::jetstream::kv::Operation;
use rnats::jetstream::stream::{ClusterInfo, SourceInfo};
use time::OffsetDateTime;

use super::{ConnectionArgs, ConsumerArgs, JetStreamArgs, KvArgs, Outcome, StreamArgs};
use crate::conn::ConnArgs;
use crate::jetstream::duration as show;

/// `check connection`.
pub(super) async fn connection(conn: &ConnArgs, t: &ConnectionArgs) -> Outcome {
    let mut outcome = Outcome::new("Connection");
    let settings = match conn.settings() {
        Ok(settings) => settings,
        Err(e) => {
            outcome.unknown(e.to_string());
            return outcome;
        }
    };
    let started = Instant::now();
    let client = match settings.connect().await {
        Ok(client) => client,
        Err(e) => {
            outcome.critical(e.to_string());
            return outcome;
        }
    };
    let what = format!("connected to {}", settings.url);
    timed(
        &mut outcome,
        "connect_time",
        &what,
        started.elapsed(),
        t.connect_warn,
        t.connect_critical,
    );

    let started = Instant::now();
    if let Err(e) = client.flush().await {
        outcome.critical(format!("PING failed: {e}"));
        return outcome;
    }
    timed(
        &mut outcome,
        "rtt",
        "rtt",
        started.elapsed(),
        t.rtt_warn,
        t.rtt_critical,
    );

    // A message to ourselves through the server: publish, route, deliver.
    let subject = client.new_inbox();
    let mut subscriber = match client.subscribe(subject.clone()).await {
        Ok(subscriber) => subscriber,
        Err(e) => {
            outcome.critical(format!("subscribe failed: {e}"));
            return outcome;
        }
    };
    if let Err(e) = client.flush().await {
        outcome.critical(format!("PING failed: {e}"));
        return outcome;
    }
    let started = Instant::now();
    if let Err(e) = client.publish(subject, "rnats check".into()).await {
        outcome.critical(format!("publish failed: {e}"));
        return outcome;
    }
    match tokio::time::timeout(settings.timeout, subscriber.next()).await {
        Ok(Some(_)) => timed(
            &mut outcome,
            "request_time",
            "round trip",
            started.elapsed(),
            t.req_warn,
            t.req_critical,
        ),
        _ => outcome.critical(format!("no round trip within {}", show(settings.timeout))),
    }
    outcome
}

/// `check stream`.
pub(super) async fn stream(conn: &ConnArgs, t: &StreamArgs) -> Outcome {
    let mut outcome = Outcome::new(format!("Stream {}", t.stream));
    let Some(js) = connect(conn, &mut outcome).await else {
        return outcome;
    };
    let info = match js.get_stream(&t.stream).await {
        Ok(stream) => stream.cached_info().clone(),
        Err(e) => {
            outcome.critical(format!("cannot read stream {}: {e}", t.stream));
            return outcome;
        }
    };
    at_least(
        &mut outcome,
        "messages",
        info.state.messages,
        t.msgs_warn,
        t.msgs_critical,
    );
    at_least(
        &mut outcome,
        "subjects",
        info.state.subjects_count,
        t.subjects_warn,
        t.subjects_critical,
    );

    let sources = info.sources.len();
    outcome.perf("sources", sources as f64, "", None, None);
    let too_few = t.min_sources.is_some_and(|min| sources < min);
    let too_many = t.max_sources.is_some_and(|max| sources > max);
    if too_few || too_many {
        outcome.critical(format!("{sources} sources"));
    } else if t.min_sources.is_some() || t.max_sources.is_some() {
        outcome.ok(format!("{sources} sources"));
    }
    for source in info.mirror.iter().chain(info.sources.iter()) {
        check_source(&mut outcome, source, t);
    }

    if let Some(expect) = t.peer_expect {
        let peers = info.cluster.as_ref().map_or(1, |c| 1 + c.replicas.len());
        if peers == expect {
            outcome.ok(format!("{peers} peers"));
        } else {
            outcome.critical(format!("{peers} peers, expected {expect}"));
        }
    }
    if let Some(cluster) = &info.cluster {
        check_peers(
            &mut outcome,
            &t.stream,
            cluster,
            t.peer_lag_critical,
            t.peer_seen_critical,
        );
    }
    outcome
}

/// `check consumer`.
pub(super) async fn consumer(conn: &ConnArgs, t: &ConsumerArgs) -> Outcome {
    let mut outcome = Outcome::new(format!("Consumer {} > {}", t.stream, t.consumer));
    let Some(js) = connect(conn, &mut outcome).await else {
        return outcome;
    };
    let info = match js.get_stream_no_info(&t.stream).await {
        Ok(stream) => stream.consumer_info(&t.consumer).await,
        Err(e) => {
            outcome.critical(format!("cannot read stream {}: {e}", t.stream));
            return outcome;
        }
    };
    let info = match info {
        Ok(info) => info,
        Err(e) => {
            outcome.critical(format!("cannot read consumer {}: {e}", t.consumer));
            return outcome;
        }
    };
    at_most(
        &mut outcome,
        "ack_pending",
        "outstanding acks",
        info.num_ack_pending as u64,
        t.outstanding_ack_critical,
    );
    at_most(
        &mut outcome,
        "waiting",
        "waiting pulls",
        info.num_waiting as u64,
        t.waiting_critical,
    );
    at_most(
        &mut outcome,
        "pending",
        "unprocessed messages",
        info.num_pending,
        t.unprocessed_critical,
    );
    at_most(
        &mut outcome,
        "redelivered",
        "redelivered messages",
        info.num_redelivered as u64,
        t.redelivery_critical,
    );
    recent(
        &mut outcome,
        "last delivery",
        info.delivered.last_active,
        t.last_delivery_critical,
    );
    recent(
        &mut outcome,
        "last ack",
        info.ack_floor.last_active,
        t.last_ack_critical,
    );
    outcome
}

/// `check kv`.
pub(super) async fn kv(conn: &ConnArgs, t: &KvArgs) -> Outcome {
    let mut outcome = Outcome::new(format!("KV Bucket {}", t.bucket));
    let Some(js) = connect(conn, &mut outcome).await else {
        return outcome;
    };
    let store = match js.get_key_value(&t.bucket).await {
        Ok(store) => store,
        Err(e) => {
            outcome.critical(format!("cannot open bucket {}: {e}", t.bucket));
            return outcome;
        }
    };
    let values = match store.status().await {
        Ok(status) => status.values(),
        Err(e) => {
            outcome.critical(format!("cannot read bucket {}: {e}", t.bucket));
            return outcome;
        }
    };
    let limit = |n: i64| (n >= 0).then_some(n as u64);
    let (warn, crit) = (limit(t.values_warn), limit(t.values_critical));
    outcome.perf(
        "values",
        values as f64,
        "",
        warn.map(|n| n as f64),
        crit.map(|n| n as f64),
    );
    // natscli's inversion: a warning above the critical mark means fewer is worse.
    let fewer_is_worse = matches!((warn, crit), (Some(w), Some(c)) if w > c);
    let past = |mark: Option<u64>| {
        mark.is_some_and(|m| {
            if fewer_is_worse {
                values <= m
            } else {
                values >= m
            }
        })
    };
    if past(crit) {
        outcome.critical(format!("{values} values"));
    } else if past(warn) {
        outcome.warning(format!("{values} values"));
    } else {
        outcome.ok(format!("{values} values"));
    }
    if let Some(key) = &t.key {
        match store.entry(key.as_str()).await {
            Ok(Some(entry)) if entry.operation == Operation::Put => {
                outcome.ok(format!("key {key} found"));
            }
            Ok(_) => outcome.critical(format!("key {key} not found")),
            Err(e) => outcome.critical(format!("cannot read key {key}: {e}")),
        }
    }
    outcome
}

/// `check jetstream`.
pub(super) async fn jetstream(conn: &ConnArgs, t: &JetStreamArgs) -> Outcome {
    let mut outcome = Outcome::new("JetStream");
    let Some(js) = connect(conn, &mut outcome).await else {
        return outcome;
    };
    let account = match js.query_account().await {
        Ok(account) => account,
        Err(e) => {
            outcome.critical(format!("cannot read the JetStream account: {e}"));
            return outcome;
        }
    };
    let limits = &account.limits;
    usage(
        &mut outcome,
        "memory",
        account.memory as f64,
        limits.max_memory,
        t.mem_warn,
        t.mem_critical,
    );
    usage(
        &mut outcome,
        "storage",
        account.storage as f64,
        limits.max_storage,
        t.store_warn,
        t.store_critical,
    );
    usage(
        &mut outcome,
        "streams",
        account.streams as f64,
        limits.max_streams,
        t.streams_warn,
        t.streams_critical,
    );
    usage(
        &mut outcome,
        "consumers",
        account.consumers as f64,
        limits.max_consumers,
        t.consumers_warn,
        t.consumers_critical,
    );
    if t.replicas {
        let mut streams = js.streams();
        let mut checked = 0;
        while let Some(info) = streams.next().await {
            match info {
                Ok(info) => {
                    if let Some(cluster) = info.cluster.as_ref().filter(|c| !c.replicas.is_empty())
                    {
                        checked += 1;
                        check_peers(
                            &mut outcome,
                            &info.config.name,
                            cluster,
                            Some(t.replica_lag_critical),
                            Some(t.replica_seen_critical),
                        );
                    }
                }
                Err(e) => {
                    outcome.critical(format!("cannot list streams: {e}"));
                    break;
                }
            }
        }
        outcome.ok(format!("{checked} replicated streams"));
    }
    outcome
}

/// Connects and makes a JetStream context; a failure is CRITICAL (UNKNOWN for settings
/// that cannot be read).
pub(super) async fn connect(conn: &ConnArgs, outcome: &mut Outcome) -> Option<jetstream::Context> {
    let settings = match conn.settings() {
        Ok(settings) => settings,
        Err(e) => {
            outcome.unknown(e.to_string());
            return None;
        }
    };
    match settings.connect().await {
        Ok(client) => Some(settings.jetstream(client)),
        Err(e) => {
            outcome.critical(e.to_string());
            None
        }
    }
}

/// A duration held to warning and critical marks, with its perf data in seconds.
pub(super) fn timed(
    outcome: &mut Outcome,
    perf: &str,
    what: &str,
    took: Duration,
    warn: Duration,
    crit: Duration,
) {
    let text = format!("{what} in {took:.1?}");
    outcome.perf(
        perf,
        took.as_secs_f64(),
        "s",
        Some(warn.as_secs_f64()),
        Some(crit.as_secs_f64()),
    );
    if took > crit {
        outcome.critical(text);
    } else if took > warn {
        outcome.warning(text);
    } else {
        outcome.ok(text);
    }
}

/// A count that must not fall below its marks.
fn at_least(outcome: &mut Outcome, what: &str, n: u64, warn: Option<u64>, crit: Option<u64>) {
    outcome.perf(
        what,
        n as f64,
        "",
        warn.map(|n| n as f64),
        crit.map(|n| n as f64),
    );
    let text = format!("{n} {what}");
    if crit.is_some_and(|c| n < c) {
        outcome.critical(text);
    } else if warn.is_some_and(|w| n < w) {
        outcome.warning(text);
    } else if crit.is_some() || warn.is_some() {
        outcome.ok(text);
    }
}

/// A count that must not rise above its critical mark (negative: not checked).
fn at_most(outcome: &mut Outcome, perf: &str, what: &str, n: u64, crit: i64) {
    let crit = u64::try_from(crit).ok();
    outcome.perf(perf, n as f64, "", None, crit.map(|c| c as f64));
    match crit {
        Some(c) if n > c => outcome.critical(format!("{n} {what}")),
        Some(_) => outcome.ok(format!("{n} {what}")),
        None => {}
    }
}

/// Something that must have happened within `within` (zero: not checked).
pub(super) fn recent(
    outcome: &mut Outcome,
    what: &str,
    last: Option<OffsetDateTime>,
    within: Duration,
) {
    if within.is_zero() {
        return;
    }
    let Some(last) = last.filter(|t| t.year() > 1) else {
        outcome.critical(format!("no {what}"));
        return;
    };
    let ago = (OffsetDateTime::now_utc() - last).unsigned_abs();
    let text = format!("{what} {} ago", show(Duration::from_secs(ago.as_secs())));
    if ago > within {
        outcome.critical(text);
    } else {
        outcome.ok(text);
    }
}

/// Use of an account limit in percent; no limit (or a negative mark) is not checked.
fn usage(outcome: &mut Outcome, what: &str, used: f64, limit: Option<i64>, warn: i64, crit: i64) {
    let Some(limit) = limit.filter(|l| *l > 0) else {
        outcome.perf(what, used, "", None, None);
        return;
    };
    let percent = used * 100.0 / limit as f64;
    let mark = |m: i64| (m >= 0).then_some(m as f64);
    outcome.perf(&format!("{what}_pct"), percent, "%", mark(warn), mark(crit));
    let text = format!("{what} {percent:.1}% of the limit");
    if mark(crit).is_some_and(|c| percent >= c) {
        outcome.critical(text);
    } else if mark(warn).is_some_and(|w| percent >= w) {
        outcome.warning(text);
    } else {
        outcome.ok(text);
    }
}

/// A mirror's or source's lag and last contact.
fn check_source(outcome: &mut Outcome, source: &SourceInfo, t: &StreamArgs) {
    if t.lag_critical.is_some_and(|max| source.lag > max) {
        outcome.critical(format!(
            "source {} lags {} messages",
            source.name, source.lag
        ));
    }
    if let (Some(max), Some(active)) = (t.seen_critical, source.active) {
        if active <= max {
            return;
        }
        outcome.critical(format!(
            "source {} last seen {} ago",
            source.name,
            show(active)
        ));
    }
}

/// A RAFT group's replicas: each online, current, recently seen and close behind.
fn check_peers(
    outcome: &mut Outcome,
    stream: &str,
    cluster: &ClusterInfo,
    lag_critical: Option<u64>,
    seen_critical: Option<Duration>,
) {
    if cluster.leader.is_none() {
        outcome.critical(format!("{stream} has no leader"));
    }
    for peer in &cluster.replicas {
        if peer.offline {
            outcome.critical(format!("{stream} replica {} offline", peer.name));
        } else if !peer.current {
            outcome.critical(format!("{stream} replica {} not current", peer.name));
        }
        if let (Some(max), Some(lag)) = (lag_critical, peer.lag)
            && lag > max
        {
            outcome.critical(format!(
                "{stream} replica {} lags {lag} operations",
                peer.name
            ));
        }
        if seen_critical.is_some_and(|max| peer.active > max) {
            outcome.critical(format!(
                "{stream} replica {} last seen {} ago",
                peer.name,
                show(peer.active)
            ));
        }
    }
}
