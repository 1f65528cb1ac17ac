//! The stream settings `stream add` and `stream edit` take as flags.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use rnats::jetstream::stream::{
    Compression, Config, ConsumerLimits, DiscardPolicy, PersistenceMode, Republish,
    RetentionPolicy, Source, StorageType, SubjectTransform,
};

use super::natscli_values::{duration_or_none, negatable, split_subjects};
use super::{Storage, parse_size};
use crate::conn::parse_duration;

/// Stream settings; only those given change the config.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Stream settings")]
pub(crate) struct StreamFlags {
    /// Take the whole config from this JSON file (the server's StreamConfig, or `stream
    /// info --json`'s output); flags given too override it.
    #[arg(long = "config", value_name = "FILE")]
    pub(crate) config_file: Option<PathBuf>,
    /// Subjects the stream stores, separated by commas or spaces, or repeated (default: the
    /// stream's name).
    #[arg(long, value_name = "SUBJECTS")]
    subjects: Option<Vec<String>>,
    /// What the stream is for.
    #[arg(long)]
    description: Option<String>,
    /// Where messages are stored.
    #[arg(long, value_enum)]
    storage: Option<Storage>,
    /// Copies of each message in a cluster.
    #[arg(long, value_name = "N")]
    replicas: Option<usize>,
    /// When messages are removed.
    #[arg(long, value_enum)]
    retention: Option<Retention>,
    /// What happens at a limit: drop old messages or refuse new ones.
    #[arg(long, value_enum)]
    discard: Option<Discard>,
    /// Messages kept at most (-1: no limit).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    max_msgs: Option<i64>,
    /// Bytes kept at most, e.g. 1GB (-1: no limit).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, allow_negative_numbers = true)]
    max_bytes: Option<i64>,
    /// Oldest message kept, e.g. 24h (0 or -1: no limit).
    #[arg(long, value_name = "DURATION", value_parser = duration_or_none, allow_negative_numbers = true)]
    max_age: Option<Duration>,
    /// Largest message accepted, e.g. 1MB (-1: no limit).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, allow_negative_numbers = true)]
    max_msg_size: Option<i64>,
    /// Messages kept per subject (-1: no limit).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    max_msgs_per_subject: Option<i64>,
    /// Consumers allowed (-1: no limit).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    max_consumers: Option<i32>,
    /// How long message ids are remembered to drop duplicates, e.g. 2m.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    dupe_window: Option<Duration>,
    /// Allow Nats-Rollup headers.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", overrides_with = "no_allow_rollup")]
    allow_rollup: Option<bool>,
    /// natscli's `--no-allow-rollup`: the same as `--allow-rollup=false`.
    #[arg(long, hide = true)]
    no_allow_rollup: bool,
    /// Refuse message deletes.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", overrides_with = "no_deny_delete")]
    deny_delete: Option<bool>,
    /// natscli's `--no-deny-delete`: the same as `--deny-delete=false`.
    #[arg(long, hide = true)]
    no_deny_delete: bool,
    /// Refuse purges.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", overrides_with = "no_deny_purge")]
    deny_purge: Option<bool>,
    /// natscli's `--no-deny-purge`: the same as `--deny-purge=false`.
    #[arg(long, hide = true)]
    no_deny_purge: bool,
    /// Let every replica answer direct gets.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", overrides_with = "no_allow_direct")]
    allow_direct: Option<bool>,
    /// natscli's `--no-allow-direct`: the same as `--allow-direct=false`.
    #[arg(long, hide = true)]
    no_allow_direct: bool,
    /// Let a mirror answer direct gets for the stream it mirrors.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", overrides_with = "no_allow_mirror_direct")]
    allow_mirror_direct: Option<bool>,
    /// natscli's `--no-allow-mirror-direct`: the same as `--allow-mirror-direct=false`.
    #[arg(long, hide = true)]
    no_allow_mirror_direct: bool,
    /// Allow atomic batch publishing (ADR-50, nats-server 2.12).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", overrides_with = "no_allow_batch")]
    allow_batch: Option<bool>,
    /// natscli's `--no-allow-batch`: the same as `--allow-batch=false`.
    #[arg(long, hide = true)]
    no_allow_batch: bool,
    /// Allow fast-ingest batch publishing (ADR-50, nats-server 2.14).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", overrides_with = "no_allow_fast")]
    allow_fast: Option<bool>,
    /// natscli's `--no-allow-fast`: the same as `--allow-fast=false`.
    #[arg(long, hide = true)]
    no_allow_fast: bool,
    /// Make the stream a distributed counter (ADR-49; cannot be turned off later).
    #[arg(long)]
    allow_counter: bool,
    /// Allow a per-message TTL (the Nats-TTL header; cannot be turned off later).
    #[arg(long)]
    allow_msg_ttl: bool,
    /// Allow message schedules (ADR-51, nats-server 2.12).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", overrides_with = "no_allow_schedules")]
    allow_schedules: Option<bool>,
    /// natscli's `--no-allow-schedules`: the same as `--allow-schedules=false`.
    #[arg(long, hide = true)]
    no_allow_schedules: bool,
    /// Discard new messages per subject once --max-msgs-per-subject is reached.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL", overrides_with = "no_discard_per_subject")]
    discard_per_subject: Option<bool>,
    /// natscli's `--no-discard-per-subject`: the same as `--discard-per-subject=false`.
    #[arg(long, hide = true)]
    no_discard_per_subject: bool,
    /// Storage compression (file storage only).
    #[arg(long, value_enum)]
    compression: Option<CompressionFlag>,
    /// Leave a delete marker, kept this long, when max age removes a subject's last message.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    subject_del_markers_ttl: Option<Duration>,
    /// Metadata, KEY=VALUE; repeat for more (replaces the stream's metadata).
    #[arg(long, value_name = "KEY=VALUE", value_parser = crate::parse::metadata)]
    metadata: Vec<(String, String)>,
    /// The sequence the first message gets (only when adding).
    #[arg(long, value_name = "SEQ")]
    first_sequence: Option<u64>,
    /// Place the stream in this cluster (`--cluster ""` removes it).
    #[arg(long, value_name = "CLUSTER")]
    cluster: Option<String>,
    /// Place the stream on servers with this tag; repeat for more (`--tag ""` removes the
    /// tags).
    #[arg(long = "tag", alias = "tags", value_name = "TAG")]
    tags: Vec<String>,
    /// How writes are made durable.
    #[arg(long, value_enum)]
    persist_mode: Option<PersistMode>,
    /// The longest inactive threshold a consumer of the stream may have.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    limit_consumer_inactive: Option<Duration>,
    /// The most unacknowledged messages a consumer of the stream may have.
    #[arg(long, value_name = "N")]
    limit_consumer_max_pending: Option<i64>,
    /// Acknowledge publishes (`--ack=false`: the stream stores them without answering).
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        default_missing_value = "true",
        overrides_with = "no_ack"
    )]
    ack: Option<bool>,
    /// natscli's `--no-ack`: the same as `--ack=false`.
    #[arg(long, hide = true)]
    no_ack: bool,
    /// Mirror this stream (all of it, nothing else).
    #[arg(long, value_name = "STREAM", conflicts_with = "no_mirror")]
    mirror: Option<String>,
    /// Remove the mirror, making the stream its own (edit; nats-server 2.12+).
    #[arg(long)]
    no_mirror: bool,
    /// Source messages from this stream too (repeatable; replaces the sources).
    #[arg(long = "source", value_name = "STREAM")]
    sources: Vec<String>,
    /// Transform the subjects of stored messages: from these...
    #[arg(long, value_name = "SOURCE", requires = "transform_destination")]
    transform_source: Option<String>,
    /// ...to these.
    #[arg(long, value_name = "DEST", requires = "transform_source")]
    transform_destination: Option<String>,
    /// Remove the subject transform.
    #[arg(long, conflicts_with = "transform_source")]
    no_transform: bool,
    /// Republish stored messages on these subjects...
    #[arg(long, value_name = "SOURCE", requires = "republish_destination")]
    republish_source: Option<String>,
    /// ...to these.
    #[arg(long, value_name = "DEST", requires = "republish_source")]
    republish_destination: Option<String>,
    /// Republish headers only, no bodies.
    #[arg(long, requires = "republish_source")]
    republish_headers: bool,
    /// Remove the republishing.
    #[arg(long, conflicts_with = "republish_source")]
    no_republish: bool,
}

/// `--compression`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum CompressionFlag {
    None,
    S2,
}

/// `--persist-mode`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum PersistMode {
    Default,
    Async,
}

/// `--retention`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Retention {
    Limits,
    Interest,
    #[value(alias = "workq", alias = "work-queue", alias = "work")]
    Workqueue,
}

/// `--discard`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Discard {
    Old,
    New,
}

impl StreamFlags {
    /// Writes the settings given into `config`.
    pub(crate) fn apply(&self, config: &mut Config) {
        if let Some(subjects) = &self.subjects {
            config.subjects = split_subjects(subjects);
        }
        if let Some(description) = &self.description {
            config.description = Some(description.clone()).filter(|d| !d.is_empty());
        }
        if let Some(storage) = self.storage {
            config.storage = StorageType::from(storage);
        }
        if let Some(replicas) = self.replicas {
            config.num_replicas = replicas;
        }
        if let Some(retention) = self.retention {
            config.retention = match retention {
                Retention::Limits => RetentionPolicy::Limits,
                Retention::Interest => RetentionPolicy::Interest,
                Retention::Workqueue => RetentionPolicy::WorkQueue,
            };
        }
        if let Some(discard) = self.discard {
            config.discard = match discard {
                Discard::Old => DiscardPolicy::Old,
                Discard::New => DiscardPolicy::New,
            };
        }
        set(&mut config.max_messages, self.max_msgs);
        set(&mut config.max_bytes, self.max_bytes);
        set(&mut config.max_age, self.max_age);
        if let Some(size) = self.max_msg_size {
            config.max_message_size = i32::try_from(size).unwrap_or(i32::MAX);
        }
        set(
            &mut config.max_messages_per_subject,
            self.max_msgs_per_subject,
        );
        set(&mut config.max_consumers, self.max_consumers);
        set(&mut config.duplicate_window, self.dupe_window);
        set(
            &mut config.allow_rollup,
            negatable(self.allow_rollup, self.no_allow_rollup),
        );
        set(
            &mut config.deny_delete,
            negatable(self.deny_delete, self.no_deny_delete),
        );
        set(
            &mut config.deny_purge,
            negatable(self.deny_purge, self.no_deny_purge),
        );
        set(
            &mut config.allow_direct,
            negatable(self.allow_direct, self.no_allow_direct),
        );
        set(
            &mut config.mirror_direct,
            negatable(self.allow_mirror_direct, self.no_allow_mirror_direct),
        );
        set(
            &mut config.allow_atomic_publish,
            negatable(self.allow_batch, self.no_allow_batch),
        );
        set(
            &mut config.allow_batch_publish,
            negatable(self.allow_fast, self.no_allow_fast),
        );
        set(
            &mut config.allow_message_schedules,
            negatable(self.allow_schedules, self.no_allow_schedules),
        );
        set(
            &mut config.discard_new_per_subject,
            negatable(self.discard_per_subject, self.no_discard_per_subject),
        );
        // Counters and TTLs cannot be turned off once on, so the flags only turn them on.
        config.allow_message_counter |= self.allow_counter;
        config.allow_message_ttl |= self.allow_msg_ttl;
        if let Some(compression) = self.compression {
            config.compression = Some(match compression {
                CompressionFlag::None => Compression::None,
                CompressionFlag::S2 => Compression::S2,
            });
        }
        if self.subject_del_markers_ttl.is_some() {
            config.subject_delete_marker_ttl = self.subject_del_markers_ttl;
        }
        if !self.metadata.is_empty() {
            config.metadata = self.metadata.iter().cloned().collect();
        }
        if self.first_sequence.is_some() {
            config.first_sequence = self.first_sequence;
        }
        super::apply_placement(
            &mut config.placement,
            self.cluster.clone(),
            self.tags.clone(),
        );
        if let Some(mode) = self.persist_mode {
            config.persist_mode = Some(match mode {
                PersistMode::Default => PersistenceMode::Default,
                PersistMode::Async => PersistenceMode::Async,
            });
        }
        self.apply_consumer_limits(config);
        self.apply_flow(config);
    }

    /// Where messages come from and go to besides publishes: mirror, sources, subject
    /// transform, republishing; and whether publishes are acknowledged.
    fn apply_flow(&self, config: &mut Config) {
        if let Some(ack) = negatable(self.ack, self.no_ack) {
            config.no_ack = !ack;
        }
        if let Some(mirror) = &self.mirror {
            config.mirror = Some(Source {
                name: mirror.clone(),
                ..Source::default()
            });
        }
        if self.no_mirror {
            config.mirror = None;
        }
        if !self.sources.is_empty() {
            config.sources = Some(
                self.sources
                    .iter()
                    .map(|name| Source {
                        name: name.clone(),
                        ..Source::default()
                    })
                    .collect(),
            );
        }
        if let (Some(source), Some(destination)) =
            (&self.transform_source, &self.transform_destination)
        {
            config.subject_transform = Some(SubjectTransform {
                source: source.clone(),
                destination: destination.clone(),
            });
        }
        if self.no_transform {
            config.subject_transform = None;
        }
        if let (Some(source), Some(destination)) =
            (&self.republish_source, &self.republish_destination)
        {
            config.republish = Some(Republish {
                source: source.clone(),
                destination: destination.clone(),
                headers_only: self.republish_headers,
            });
        }
        if self.no_republish {
            config.republish = None;
        }
    }

    fn apply_consumer_limits(&self, config: &mut Config) {
        if self.limit_consumer_inactive.is_none() && self.limit_consumer_max_pending.is_none() {
            return;
        }
        let limits = config
            .consumer_limits
            .get_or_insert_with(ConsumerLimits::default);
        set(&mut limits.inactive_threshold, self.limit_consumer_inactive);
        set(&mut limits.max_ack_pending, self.limit_consumer_max_pending);
    }
}

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *field = value;
    }
}
