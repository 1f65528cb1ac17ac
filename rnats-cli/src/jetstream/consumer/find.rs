//! `consumer find`: the consumers of a stream that pass natscli's filters (kind, binding,
//! pins, backlogs, age, idleness, placement), one name a line or the server's JSON.

use std::time::Duration;

use clap::Args;
use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::consumer::{Info, PriorityPolicy};
use time::OffsetDateTime;

use super::get_stream;
use crate::conn::parse_duration;
use crate::error::CliError;
use crate::jetstream::{led_by, needs_api_level, print_raw_found, render_unlisted};
use crate::out;

/// Options of `consumer find`: each filter given must pass; `--invert` turns each around.
#[derive(Debug, Default, Args)]
pub(super) struct FindArgs {
    /// The stream.
    stream: String,
    /// Pull consumers.
    #[arg(long, conflicts_with = "push")]
    pull: bool,
    /// Push consumers.
    #[arg(long)]
    push: bool,
    /// Push consumers with a subscriber, and pull consumers with pulls waiting.
    #[arg(long)]
    bound: bool,
    /// Consumers with pulls waiting, fewer than this many (0: any).
    #[arg(long, value_name = "N")]
    waiting: Option<u64>,
    /// Consumers with messages awaiting their ack, fewer than this many (0: any).
    #[arg(long, value_name = "N")]
    ack_pending: Option<u64>,
    /// Consumers with messages left to deliver, fewer than this many (0: any).
    #[arg(long, value_name = "N")]
    pending: Option<u64>,
    /// Consumers that delivered nothing for this long, e.g. 1h (never counts as idle).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    idle: Option<Duration>,
    /// Consumers created at least this long ago, e.g. 24h.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    created: Option<Duration>,
    /// Consumers with this many replicas or fewer (0: any).
    #[arg(long, value_name = "REPLICAS")]
    replicas: Option<usize>,
    /// Clustered consumers led by this server.
    #[arg(long, value_name = "SERVER")]
    leader: Option<String>,
    /// Pinned-client consumers (ADR-42) with a client pinned in each of their groups.
    #[arg(long)]
    pinned: bool,
    /// Consumers that need at least this JetStream API level (their `_nats.req.level`).
    #[arg(long, value_name = "LEVEL")]
    api_level: Option<i64>,
    /// Turn each filter around: older becomes newer, with becomes without.
    #[arg(long, overrides_with = "no_invert")]
    invert: bool,
    /// natscli's `--no-invert`: the filters as they are (the default).
    #[arg(long, hide = true)]
    no_invert: bool,
    /// The server's infos of the consumers found, as a JSON array.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Runs `consumer find`: the names found, one a line, in name order.
pub(super) async fn run(js: &Context, args: FindArgs) -> Result<(), CliError> {
    let stream = &args.stream;
    let action = || format!("cannot list consumers of {stream}");
    // Found first, for the same error either way (a name that is no subject token, or no
    // such stream).
    let handle = get_stream(js, stream).await?;
    if args.json {
        let subject = format!("CONSUMER.LIST.{stream}");
        let keeps = |info: &Info, now| args.keeps(info, now);
        return print_raw_found(js, &subject, "consumers", &action(), keeps).await;
    }
    let mut consumers = handle.consumers();
    let mut listed = Vec::new();
    while let Some(info) = consumers.next().await {
        listed.push(info.map_err(CliError::js(action()))?);
    }
    // The names are for scripts: what could not be listed goes to stderr.
    eprint!(
        "{}",
        render_unlisted("consumers", consumers.missing(), consumers.offline())
    );
    let now = OffsetDateTime::now_utc();
    let mut found: Vec<String> = listed
        .into_iter()
        .filter(|info| args.keeps(info, now))
        .map(|info| info.name)
        .collect();
    found.sort();
    out::print(
        &found
            .iter()
            .map(|name| format!("{name}\n"))
            .collect::<String>(),
    )
}

impl FindArgs {
    /// Whether `info` passes every filter given, `now` being the time ages are taken at.
    /// Each filter is natscli's, and so is what `--invert` makes of it; the counts
    /// (`--waiting`, `--ack-pending`, `--pending`) keep only consumers with at least one,
    /// fewer than the number given or, inverted, more.
    fn keeps(&self, info: &Info, now: OffsetDateTime) -> bool {
        let (config, invert) = (&info.config, self.invert);
        let push = config.deliver_subject.is_some();
        let pull = !push;
        let fewer = |value: u64, limit: u64| {
            value > 0 && if invert { value > limit } else { value < limit }
        };
        let checks = [
            self.pull.then_some(pull != invert),
            self.push.then_some(push != invert),
            self.bound
                .then_some((info.push_bound || info.num_waiting > 0) != invert),
            self.pinned.then(|| {
                config.priority_policy == PriorityPolicy::PinnedClient
                    && (fully_pinned(info) != invert)
            }),
            self.ack_pending
                .filter(|limit| *limit > 0)
                .map(|limit| fewer(count(info.num_ack_pending), limit)),
            self.waiting
                .filter(|limit| *limit > 0)
                .map(|limit| fewer(count(info.num_waiting), limit)),
            self.pending
                .filter(|limit| *limit > 0)
                .map(|limit| fewer(info.num_pending, limit)),
            // Year 1 is Go's zero time: a consumer the server gave no creation time.
            self.created.filter(|span| !span.is_zero()).map(|span| {
                let age = now - info.created;
                info.created.year() > 1 && if invert { age < span } else { age >= span }
            }),
            self.idle.filter(|span| !span.is_zero()).map(|span| {
                let last = info.delivered.last_active;
                let idle = last.is_none_or(|last| now - last > span);
                idle != invert
            }),
            self.replicas.filter(|limit| *limit > 0).map(|limit| {
                let replicas = replicas(info);
                if invert {
                    replicas >= limit
                } else {
                    replicas <= limit
                }
            }),
            self.leader
                .as_deref()
                .map(|leader| led_by(info.cluster.as_ref(), leader, invert)),
            self.api_level
                .filter(|level| *level > 0)
                .map(|level| needs_api_level(&config.metadata, level, invert)),
        ];
        checks.into_iter().all(|check| check.unwrap_or(true))
    }
}

/// Whether each priority group the consumer has has a client pinned.
fn fully_pinned(info: &Info) -> bool {
    let pinned = info
        .priority_groups
        .iter()
        .filter(|group| {
            group
                .pinned_client_id
                .as_deref()
                .is_some_and(|id| !id.is_empty())
        })
        .count();
    pinned == info.config.priority_groups.len()
}

/// How many copies the consumer keeps: as configured, or as its group has when it takes the
/// stream's number (0 in the configuration).
fn replicas(info: &Info) -> usize {
    match (info.config.num_replicas, &info.cluster) {
        (0, Some(cluster)) => cluster.leader.iter().count() + cluster.replicas.len(),
        (configured, _) => configured,
    }
    .max(1)
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}
