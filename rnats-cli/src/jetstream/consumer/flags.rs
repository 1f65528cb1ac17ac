//! The consumer settings `consumer add`, `edit` and `copy` take as flags, natscli's names
//! for them, and how they are written into a consumer's config.

use std::path::Path;
use std::time::Duration;

use clap::{Args, ValueEnum};
use rnats::jetstream::consumer::{self, AckPolicy, DeliverPolicy, ReplayPolicy};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{backoff, manage};
use crate::conn::parse_duration;
use crate::error::CliError;
use crate::jetstream::natscli_values::{duration_or_none, negatable, split_subjects};
use crate::jetstream::{CONSUMER_FILE_DEFAULTS, read_config};

/// Consumer settings of `consumer add`, `edit` and `copy`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Consumer settings")]
pub(super) struct ConsumerFlags {
    /// Make a push consumer delivering to this subject (`add` and `copy` drop the pull
    /// settings of a pull configuration they start from).
    #[arg(long, visible_alias = "target", value_name = "SUBJECT")]
    deliver_subject: Option<String>,
    /// Queue group of a push consumer's subscribers.
    #[arg(long, value_name = "GROUP", requires = "deliver_subject")]
    deliver_group: Option<String>,
    /// Only messages on these subjects: separated by commas or spaces, or repeated (a lone
    /// '' removes the filter).
    #[arg(long, value_name = "SUBJECTS")]
    filter: Vec<String>,
    /// How messages are acknowledged.
    #[arg(long, value_enum)]
    ack: Option<Ack>,
    /// Where to start: all, new (or next), last, last-per-subject (or subject), a sequence, a
    /// duration ago (1h) or an RFC 3339 time.
    #[arg(long, value_name = "POLICY")]
    deliver: Option<String>,
    /// Deliveries of a message at most (-1: no limit).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    max_deliver: Option<i64>,
    /// How long a delivery waits for its ack, e.g. 30s.
    #[arg(long, visible_alias = "wait", value_name = "DURATION", value_parser = parse_duration)]
    ack_wait: Option<Duration>,
    /// Unacknowledged messages allowed at once.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    max_pending: Option<i64>,
    /// Percentage of acks the server samples as advisories for monitoring, 0 to 100
    /// (0: none).
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    sample: Option<u8>,
    #[command(flatten)]
    backoff: backoff::BackoffFlags,
    /// Make the consumer paused until this time: a duration from now (2h), an RFC 3339
    /// time or `YYYY-MM-DD hh:mm:ss` (UTC).
    #[arg(long, value_name = "UNTIL")]
    pause: Option<String>,
    /// Replay at the pace messages were stored instead of at once.
    #[arg(long, value_enum)]
    replay: Option<Replay>,
    /// Replicas (0: the stream's).
    #[arg(long, value_name = "N")]
    replicas: Option<usize>,
    /// What the consumer is for.
    #[arg(long)]
    description: Option<String>,
    /// Idle heartbeats of a push consumer, this often, e.g. 5s (-1: none).
    #[arg(long, value_name = "DURATION", value_parser = duration_or_none, allow_negative_numbers = true)]
    heartbeat: Option<Duration>,
    /// Flow control for a push consumer.
    #[arg(long)]
    flow_control: bool,
    /// How long the consumer may go unused before the server removes it, e.g. 1h.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    inactive_threshold: Option<Duration>,
    /// Deliver only headers, no bodies.
    #[arg(
        long,
        num_args = 0..=1,
        default_missing_value = "true",
        value_name = "BOOL",
        overrides_with = "no_headers_only"
    )]
    headers_only: Option<bool>,
    /// natscli's `--no-headers-only`: the same as `--headers-only=false`.
    #[arg(long, hide = true)]
    no_headers_only: bool,
    /// Pull requests waiting at once, at most.
    #[arg(long, value_name = "PULLS")]
    max_waiting: Option<i64>,
    /// The largest batch a pull request may ask for.
    #[arg(long, value_name = "BATCH_SIZE")]
    max_pull_batch: Option<i64>,
    /// The longest expiry a pull request may ask for.
    #[arg(long, value_name = "EXPIRES", value_parser = parse_duration)]
    max_pull_expire: Option<Duration>,
    /// The most bytes a pull request may ask for.
    #[arg(long, value_name = "BYTES")]
    max_pull_bytes: Option<i64>,
    /// Deliver at most this many bits per second (push consumers).
    #[arg(long, value_name = "BPS")]
    bps: Option<u64>,
    /// Keep the consumer's state in memory whatever the stream's storage.
    #[arg(long)]
    memory: bool,
    /// Metadata, KEY=VALUE; repeat for more (replaces the consumer's metadata).
    #[arg(long, value_name = "KEY=VALUE", value_parser = crate::parse::metadata)]
    metadata: Vec<(String, String)>,
    /// A pinned-client consumer (ADR-42) with these priority groups (comma separated or
    /// repeated): the server delivers to one pinned client per group.
    #[arg(long, value_name = "GROUPS", value_delimiter = ',', conflicts_with_all = ["overflow_groups", "prioritized_groups", "priority_groups"])]
    pinned_groups: Vec<String>,
    /// How long a pinned client keeps its pin without pulling, e.g. 2m.
    #[arg(long, value_name = "TTL", value_parser = parse_duration)]
    pinned_ttl: Option<Duration>,
    /// An overflow consumer (ADR-42) with these priority groups: pulls with min-pending or
    /// min-ack-pending only get messages past those marks.
    #[arg(long, value_name = "GROUPS", value_delimiter = ',', conflicts_with_all = ["prioritized_groups", "priority_groups"])]
    overflow_groups: Vec<String>,
    /// A prioritized consumer (ADR-42) with these priority groups: pulls with a lower
    /// priority number are served first.
    #[arg(
        long,
        value_name = "GROUPS",
        value_delimiter = ',',
        conflicts_with = "priority_groups"
    )]
    prioritized_groups: Vec<String>,
    /// Priority groups, with --priority-policy (the generic form of the three above).
    #[arg(
        long,
        value_name = "GROUPS",
        value_delimiter = ',',
        requires = "priority_policy"
    )]
    priority_groups: Vec<String>,
    /// The priority policy of --priority-groups.
    #[arg(long, value_enum, value_name = "POLICY")]
    priority_policy: Option<Priority>,
}

/// `--priority-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Priority {
    /// No priority groups.
    None,
    /// Overflow: past min-pending or min-ack-pending marks.
    Overflow,
    /// One pinned client per group.
    #[value(name = "pinned_client", alias = "pinned-client", alias = "pinned")]
    PinnedClient,
    /// Lower priority numbers first.
    Prioritized,
}

/// `--ack`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Ack {
    Explicit,
    None,
    All,
    /// Acked by the answers to flow control (ADR-60; push consumers, nats-server 2.14+).
    #[value(name = "flow_control", alias = "flowcontrol", alias = "fc")]
    FlowControl,
}

/// `--replay`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Replay {
    Instant,
    Original,
}

impl ConsumerFlags {
    /// The name and config of a new consumer: the `file`'s or a durable default, made pull
    /// (`pull`) or push as [`ConsumerFlags::applied_to_new`] does, with the flags written in.
    /// The name is `name`, or else the file's durable name or name, as natscli takes it.
    pub(super) fn new_config(
        &self,
        file: Option<&Path>,
        name: Option<&str>,
        pull: bool,
    ) -> Result<(String, consumer::Config), CliError> {
        let config: consumer::Config = match file {
            Some(path) => read_config(path, CONSUMER_FILE_DEFAULTS)?,
            None => consumer::Config::default(),
        };
        let name = name
            .or(config.durable_name.as_deref())
            .or(config.name.as_deref())
            .filter(|name| !name.is_empty())
            .ok_or(CliError::Usage(
                "give a NAME or a --config file with a durable_name",
            ))?
            .to_owned();
        let mut config = self.applied_to_new(config, &name, pull)?;
        // natscli's add reads every subject when delivering the last message of each and no
        // filter is given.
        if config.deliver_policy == DeliverPolicy::LastPerSubject
            && config.filter_subject.is_empty()
            && config.filter_subjects.is_empty()
        {
            config.filter_subject = ">".to_owned();
        }
        Ok((name, config))
    }

    /// `config`, the base of a new consumer (`add --config`, `copy`), named `name` and with
    /// the flags written in. `pull` (natscli's `--pull`) makes a push configuration pull;
    /// a deliver subject given to a pull configuration makes it push. Either way the
    /// settings only the other mode has go, as the server refuses them (a push consumer
    /// with `max_waiting` or priority groups, a pull one with a heartbeat, flow control, a
    /// rate limit or flow-control acks); flags given for them still apply. `edit` leaves
    /// this out: the server never turns an existing consumer pull or push.
    pub(super) fn applied_to_new(
        &self,
        mut config: consumer::Config,
        name: &str,
        pull: bool,
    ) -> Result<consumer::Config, CliError> {
        if pull {
            drop_push_settings(&mut config);
        } else if config.deliver_subject.is_none() && self.deliver_subject.is_some() {
            drop_pull_settings(&mut config);
        }
        self.applied_to(config, name)
    }

    /// `config` named `name`, with the flags given written in.
    pub(super) fn applied_to(
        &self,
        mut config: consumer::Config,
        name: &str,
    ) -> Result<consumer::Config, CliError> {
        config.durable_name = Some(name.to_owned());
        config.name = Some(name.to_owned());
        if let Some(subject) = &self.deliver_subject {
            config.deliver_subject = Some(subject.clone());
        }
        if let Some(group) = &self.deliver_group {
            config.deliver_group = Some(group.clone());
        }
        // The server refuses a config with both fields set, so one replaces the other.
        if !self.filter.is_empty() {
            match split_subjects(&self.filter).as_slice() {
                [] => {
                    config.filter_subject.clear();
                    config.filter_subjects.clear();
                }
                [one] => {
                    config.filter_subject = one.clone();
                    config.filter_subjects.clear();
                }
                many => {
                    config.filter_subjects = many.to_vec();
                    config.filter_subject.clear();
                }
            }
        }
        if let Some(ack) = self.ack {
            config.ack_policy = match ack {
                Ack::Explicit => AckPolicy::Explicit,
                Ack::None => AckPolicy::None,
                Ack::All => AckPolicy::All,
                Ack::FlowControl => AckPolicy::FlowControl,
            };
        }
        if let Some(deliver) = &self.deliver {
            config.deliver_policy = deliver_policy(deliver)?;
        }
        if let Some(n) = self.max_deliver {
            config.max_deliver = n;
        }
        if let Some(wait) = self.ack_wait {
            config.ack_wait = wait;
        }
        if let Some(n) = self.max_pending {
            config.max_ack_pending = n;
        }
        if let Some(percent) = self.sample {
            config.sample_frequency = percent;
        }
        if let Some(delays) = self.backoff.delays()? {
            config.backoff = delays;
        }
        if let Some(until) = &self.pause {
            config.pause_until = Some(manage::pause_until(until)?);
        }
        if let Some(replay) = self.replay {
            config.replay_policy = match replay {
                Replay::Instant => ReplayPolicy::Instant,
                Replay::Original => ReplayPolicy::Original,
            };
        }
        if let Some(n) = self.replicas {
            config.num_replicas = n;
        }
        if let Some(d) = &self.description {
            config.description = Some(d.clone());
        }
        self.apply_delivery(&mut config);
        Ok(config)
    }

    /// The push, pull and lifetime settings natscli also takes as flags.
    fn apply_delivery(&self, config: &mut consumer::Config) {
        set(&mut config.idle_heartbeat, self.heartbeat);
        config.flow_control |= self.flow_control;
        set(&mut config.inactive_threshold, self.inactive_threshold);
        set(
            &mut config.headers_only,
            negatable(self.headers_only, self.no_headers_only),
        );
        set(&mut config.max_waiting, self.max_waiting);
        set(&mut config.max_batch, self.max_pull_batch);
        set(&mut config.max_expires, self.max_pull_expire);
        set(&mut config.max_bytes, self.max_pull_bytes);
        set(&mut config.rate_limit, self.bps);
        config.memory_storage |= self.memory;
        if !self.metadata.is_empty() {
            config.metadata = self.metadata.iter().cloned().collect();
        }
        self.apply_priority(config);
    }

    /// The priority groups and policy (ADR-42), natscli's flags or the generic pair.
    fn apply_priority(&self, config: &mut consumer::Config) {
        use consumer::PriorityPolicy as P;
        let chosen = [
            (&self.pinned_groups, Some(P::PinnedClient)),
            (&self.overflow_groups, Some(P::Overflow)),
            (&self.prioritized_groups, Some(P::Prioritized)),
            (
                &self.priority_groups,
                self.priority_policy.map(|p| match p {
                    Priority::None => P::None,
                    Priority::Overflow => P::Overflow,
                    Priority::PinnedClient => P::PinnedClient,
                    Priority::Prioritized => P::Prioritized,
                }),
            ),
        ]
        .into_iter()
        .find(|(groups, _)| !groups.is_empty());
        if let Some((groups, Some(policy))) = chosen {
            config.priority_groups = groups.clone();
            config.priority_policy = policy;
        } else if self.priority_policy == Some(Priority::None) {
            config.priority_groups.clear();
            config.priority_policy = P::None;
        }
        set(&mut config.priority_timeout, self.pinned_ttl);
    }
}

/// A push configuration made pull: what only push delivery has goes (`--pull`).
fn drop_push_settings(config: &mut consumer::Config) {
    config.deliver_subject = None;
    config.deliver_group = None;
    config.idle_heartbeat = Duration::ZERO;
    config.flow_control = false;
    config.rate_limit = 0;
    // Acks by flow control need push delivery (ADR-60).
    if config.ack_policy == AckPolicy::FlowControl {
        config.ack_policy = AckPolicy::Explicit;
    }
}

/// A pull configuration made push: what only pull requests use goes, the server's own
/// `max_waiting` default (512) with it.
fn drop_pull_settings(config: &mut consumer::Config) {
    config.max_waiting = 0;
    config.max_batch = 0;
    config.max_expires = Duration::ZERO;
    config.max_bytes = 0;
    config.priority_groups.clear();
    config.priority_policy = consumer::PriorityPolicy::None;
    config.priority_timeout = Duration::ZERO;
}

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *field = value;
    }
}

/// natscli's `--deliver` values.
fn deliver_policy(text: &str) -> Result<DeliverPolicy, CliError> {
    Ok(match text {
        "all" => DeliverPolicy::All,
        "new" | "next" => DeliverPolicy::New,
        "last" => DeliverPolicy::Last,
        "last-per-subject" | "last_per_subject" | "subject" => DeliverPolicy::LastPerSubject,
        _ => {
            if let Ok(seq) = text.parse::<u64>() {
                DeliverPolicy::ByStartSequence {
                    start_sequence: seq.max(1),
                }
            } else if let Ok(start_time) = OffsetDateTime::parse(text, &Rfc3339) {
                DeliverPolicy::ByStartTime { start_time }
            } else if let Ok(ago) = crate::parse::duration(text) {
                DeliverPolicy::ByStartTime {
                    start_time: crate::parse::time_ago("--deliver", ago)?,
                }
            } else {
                return Err(CliError::InvalidArgument {
                    what: "--deliver",
                    given: text.to_owned(),
                    reason: "use all, new, next, last, last-per-subject, subject, a sequence, a duration or an RFC 3339 time".to_owned(),
                });
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deliver_times_before_year_minus_9999_are_refused() {
        assert!(deliver_policy("20000y").is_err());
        assert!(matches!(
            deliver_policy("1h"),
            Ok(DeliverPolicy::ByStartTime { .. })
        ));
    }
}
