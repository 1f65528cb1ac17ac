//! The stream settings `stream add` and `stream edit` take as flags.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use rnats::jetstream::stream::{Config, DiscardPolicy, RetentionPolicy, StorageType};

use crate::conn::parse_duration;

/// Stream settings; only those given change the config.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Stream settings")]
pub(crate) struct StreamFlags {
    /// Take the whole config from this JSON file (the server's StreamConfig); flags given
    /// too override it.
    #[arg(long = "config", value_name = "FILE")]
    pub(crate) config_file: Option<PathBuf>,
    /// Subjects the stream stores, comma separated (default: the stream's name).
    #[arg(long, value_delimiter = ',', value_name = "SUBJECTS")]
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
    /// Oldest message kept, e.g. 24h (0: no limit).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
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
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    allow_rollup: Option<bool>,
    /// Refuse message deletes.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    deny_delete: Option<bool>,
    /// Refuse purges.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    deny_purge: Option<bool>,
    /// Let every replica answer direct gets.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    allow_direct: Option<bool>,
}

/// `--storage`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Storage {
    File,
    Memory,
}

/// `--retention`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Retention {
    Limits,
    Interest,
    #[value(alias = "work-queue", alias = "work")]
    Workqueue,
}

/// `--discard`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Discard {
    Old,
    New,
}

fn parse_size(text: &str) -> Result<i64, String> {
    crate::parse::size(text).map_err(|e| e.to_string())
}

impl StreamFlags {
    /// Writes the settings given into `config`.
    pub(crate) fn apply(&self, config: &mut Config) {
        if let Some(subjects) = &self.subjects {
            config.subjects = subjects.iter().filter(|s| !s.is_empty()).cloned().collect();
        }
        if let Some(description) = &self.description {
            config.description = Some(description.clone()).filter(|d| !d.is_empty());
        }
        if let Some(storage) = self.storage {
            config.storage = match storage {
                Storage::File => StorageType::File,
                Storage::Memory => StorageType::Memory,
            };
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
        set(&mut config.allow_rollup, self.allow_rollup);
        set(&mut config.deny_delete, self.deny_delete);
        set(&mut config.deny_purge, self.deny_purge);
        set(&mut config.allow_direct, self.allow_direct);
    }
}

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *field = value;
    }
}
