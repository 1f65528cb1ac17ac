//! `kv add`, `kv edit`, `kv ls` and `kv info` of buckets: their settings and status.

use std::time::Duration;

use clap::Args;
use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::kv::{Config, Status};
use rnats::jetstream::stream::{Compression, Republish, Source, StorageType};
use serde_json::{Value, json};

use super::natscli_values::negatable;
use super::{Storage, bytes, duration, parse_size};
use crate::conn::parse_duration;
use crate::error::CliError;
use crate::out::{self, Fields, Table};
use crate::stats::human;

/// The settings `kv add` and `kv edit` take (natscli's); an edit changes only those given.
#[derive(Debug, Args)]
pub(super) struct BucketFlags {
    /// Values kept per key, 1 to 64 [add's default: 1].
    #[arg(long)]
    history: Option<i64>,
    /// How long values are kept, e.g. 24h (0: for ever).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    ttl: Option<Duration>,
    /// Bytes the bucket may hold, e.g. 1GB (-1: no limit).
    #[arg(long, alias = "max-bucket-size", value_name = "SIZE", value_parser = parse_size, allow_negative_numbers = true)]
    max_bytes: Option<i64>,
    /// The largest value, e.g. 1MB (-1: no limit).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, allow_negative_numbers = true)]
    max_value_size: Option<i64>,
    /// Copies of each value in a cluster [add's default: 1].
    #[arg(long)]
    replicas: Option<usize>,
    /// What the bucket is for.
    #[arg(long)]
    description: Option<String>,
    /// Compress the values (`--compression=false` to stop).
    #[arg(
        long,
        alias = "compress",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        overrides_with = "no_compression"
    )]
    compression: Option<bool>,
    /// natscli's `--no-compress`: the same as `--compression=false`.
    #[arg(long = "no-compress", alias = "no-compression", hide = true)]
    no_compression: bool,
    /// Metadata, KEY=VALUE; repeat for more (an edit replaces all of it).
    #[arg(long, value_name = "KEY=VALUE", value_parser = crate::parse::metadata)]
    metadata: Vec<(String, String)>,
    /// Enable per-key TTLs and limit markers, kept this long (nats-server 2.11).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    marker_ttl: Option<Duration>,
    /// Place the bucket on servers with this tag; repeat for more (an edit replaces them).
    #[arg(long = "tags", alias = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// Place the bucket in this cluster.
    #[arg(long, value_name = "CLUSTER")]
    cluster: Option<String>,
    /// Republish each value stored on these of the bucket's subjects, e.g. `$KV.config.app.>`
    /// (default: all of them), to --republish-destination.
    #[arg(long, value_name = "SRC", requires = "republish_destination")]
    republish_source: Option<String>,
    /// Where values are republished, e.g. `changes.>`.
    #[arg(long, value_name = "DEST", conflicts_with = "no_republish")]
    republish_destination: Option<String>,
    /// Republish the headers only, with the value's size in `Nats-Msg-Size`.
    #[arg(long, requires = "republish_destination")]
    republish_headers: bool,
    /// Stop republishing (an edit).
    #[arg(long)]
    no_republish: bool,
    /// Take the values of this bucket too; repeat for more (an edit replaces the sources).
    #[arg(long = "source", value_name = "BUCKET")]
    sources: Vec<String>,
}

impl BucketFlags {
    /// Writes the settings given into `config`, leaving the others as they are.
    fn apply(self, config: &mut Config) {
        if let Some(history) = self.history {
            config.history = history;
        }
        if let Some(ttl) = self.ttl {
            config.max_age = ttl;
        }
        if let Some(max_bytes) = self.max_bytes {
            config.max_bytes = max_bytes;
        }
        if let Some(size) = self.max_value_size {
            config.max_value_size = i32::try_from(size).unwrap_or(i32::MAX);
        }
        if let Some(replicas) = self.replicas {
            config.num_replicas = replicas;
        }
        if let Some(description) = self.description {
            config.description = description;
        }
        if let Some(compression) = negatable(self.compression, self.no_compression) {
            config.compression = compression;
        }
        if !self.metadata.is_empty() {
            config.metadata = self.metadata.into_iter().collect();
        }
        if let Some(ttl) = self.marker_ttl {
            config.limit_markers = Some(ttl);
        }
        super::apply_placement(&mut config.placement, self.cluster, self.tags);
        if let Some(destination) = self.republish_destination {
            config.republish = Some(Republish {
                // The server takes an empty source for all of the bucket's subjects.
                source: self.republish_source.unwrap_or_default(),
                destination,
                headers_only: self.republish_headers,
            });
        }
        if self.no_republish {
            config.republish = None;
        }
        if !self.sources.is_empty() {
            // Bare bucket names: rnats-jetstream gives each its stream name and subjects.
            let sources = self.sources.into_iter().map(|bucket| Source {
                name: bucket,
                ..Source::default()
            });
            config.sources = Some(sources.collect());
        }
    }
}

/// Options of `kv add`.
#[derive(Debug, Args)]
pub(super) struct AddArgs {
    /// The bucket's name: A-Z a-z 0-9 _ -.
    bucket: String,
    #[command(flatten)]
    flags: BucketFlags,
    /// Where values are stored.
    #[arg(long, value_enum, default_value = "file")]
    storage: Storage,
    /// Make the bucket a read-only copy of this bucket (a mirror keeps no values of its own).
    #[arg(long, value_name = "BUCKET", conflicts_with = "sources")]
    mirror: Option<String>,
    /// The JetStream domain of the bucket --mirror names, when it is not this one's.
    #[arg(long, value_name = "DOMAIN", requires = "mirror")]
    mirror_domain: Option<String>,
}

/// Options of `kv edit`: `kv add`'s, but for the storage, which a bucket keeps for life.
#[derive(Debug, Args)]
pub(super) struct EditArgs {
    /// The bucket.
    bucket: String,
    #[command(flatten)]
    flags: BucketFlags,
}

/// `kv add`: a bucket with the settings given and natscli's defaults for the rest.
pub(super) async fn create_bucket(js: &Context, add: AddArgs) -> Result<(), CliError> {
    let bucket = add.bucket;
    let mut config = Config {
        bucket: bucket.clone(),
        history: 1,
        max_bytes: -1,
        max_value_size: -1,
        storage: StorageType::from(add.storage),
        num_replicas: 1,
        mirror: add.mirror.map(|bucket| Source {
            name: bucket,
            domain: add.mirror_domain,
            ..Source::default()
        }),
        ..Default::default()
    };
    add.flags.apply(&mut config);
    let store = js
        .create_key_value(config)
        .await
        .map_err(CliError::js(format!("cannot create bucket {bucket}")))?;
    eprintln!("Created Key-Value bucket {bucket}");
    let status = store
        .status()
        .await
        .map_err(CliError::js(format!("cannot read bucket {bucket}")))?;
    out::print(&render_status(&status))
}

/// `kv edit`: the bucket's configuration as it is, with the settings given changed.
pub(super) async fn edit_bucket(js: &Context, edit: EditArgs) -> Result<(), CliError> {
    let bucket = edit.bucket;
    let store = js
        .get_key_value(&bucket)
        .await
        .map_err(CliError::js(format!("cannot open bucket {bucket}")))?;
    let status = store
        .status()
        .await
        .map_err(CliError::js(format!("cannot read bucket {bucket}")))?;
    let mut config = current_config(&status);
    if config.mirror.is_some() && !edit.flags.sources.is_empty() {
        // The library would drop them (a mirror takes its subjects from its origin), and the
        // edit would report a success that changed nothing.
        return Err(CliError::Usage(
            "a mirror has no sources: --source cannot be given to a mirror's edit",
        ));
    }
    edit.flags.apply(&mut config);
    let store = js
        .update_key_value(config)
        .await
        .map_err(CliError::js(format!("cannot update bucket {bucket}")))?;
    eprintln!("Updated Key-Value bucket {bucket}");
    let status = store
        .status()
        .await
        .map_err(CliError::js(format!("cannot read bucket {bucket}")))?;
    out::print(&render_status(&status))
}

/// A bucket's configuration read back from its stream, as natscli's edit reads it: what the
/// bucket settings cover, so that an update keeps them.
fn current_config(status: &Status) -> Config {
    let stream = &status.info.config;
    Config {
        bucket: status.bucket.clone(),
        description: stream.description.clone().unwrap_or_default(),
        max_value_size: stream.max_message_size,
        history: stream.max_messages_per_subject,
        max_age: stream.max_age,
        max_bytes: stream.max_bytes,
        storage: stream.storage,
        num_replicas: stream.num_replicas,
        republish: stream.republish.clone(),
        mirror: stream.mirror.clone(),
        sources: stream.sources.clone(),
        mirror_direct: stream.mirror_direct,
        compression: matches!(stream.compression, Some(Compression::S2)),
        placement: stream.placement.clone(),
        limit_markers: stream.subject_delete_marker_ttl,
        metadata: stream.metadata.clone(),
    }
}

pub(super) async fn list_buckets(js: &Context, json: bool) -> Result<(), CliError> {
    let mut stores = js.key_value_stores();
    let mut all = Vec::new();
    while let Some(status) = stores.next().await {
        all.push(status.map_err(CliError::js("cannot list Key-Value buckets"))?);
    }
    all.sort_by(|a, b| a.bucket().cmp(b.bucket()));
    if json {
        return out::json(&all.iter().map(status_json).collect::<Vec<_>>());
    }
    if all.is_empty() {
        eprintln!("No Key-Value buckets");
        return Ok(());
    }
    let mut table = Table::new(["Bucket", "Description", "Values", "Size", "History", "TTL"]);
    for s in &all {
        table.row(vec![
            s.bucket().to_owned(),
            s.description().unwrap_or_default().to_owned(),
            human::count(s.values()),
            bytes(s.bytes()),
            s.history().to_string(),
            ttl(s.max_age()),
        ]);
    }
    table.print()
}

pub(super) async fn list_names(js: &Context) -> Result<(), CliError> {
    let mut names = js.key_value_store_names();
    let mut all = Vec::new();
    while let Some(name) = names.next().await {
        all.push(name.map_err(CliError::js("cannot list Key-Value buckets"))?);
    }
    all.sort();
    out::print(&all.iter().map(|n| format!("{n}\n")).collect::<String>())
}

fn ttl(max_age: Duration) -> String {
    if max_age.is_zero() {
        "forever".to_owned()
    } else {
        duration(max_age)
    }
}

fn status_json(s: &Status) -> Value {
    json!({
        "bucket": s.bucket(),
        "description": s.description(),
        "values": s.values(),
        "bytes": s.bytes(),
        "history": s.history(),
        "ttl": s.max_age().as_nanos() as u64,
        "storage": match s.storage() { StorageType::File => "file", StorageType::Memory => "memory" },
        "replicas": s.replicas(),
        "compressed": s.is_compressed(),
        "stream": s.stream_name(),
        "metadata": s.metadata(),
    })
}

/// `kv info`, `kv status` and what `kv add` and `kv edit` print: natscli's `showStatus`
/// rows, the bucket's limits among them, in rnats' units.
pub(super) fn render_status(s: &Status) -> String {
    let config = &s.info.config;
    let yes_no = |on: bool| if on { "true" } else { "false" };
    let mut fields = Fields::new();
    fields.add("Bucket Name", s.bucket());
    fields.add("History Kept", s.history());
    fields.add("Values Stored", human::count(s.values()));
    fields.add("Compressed", yes_no(s.is_compressed()));
    fields.add(
        "Per-Key TTL Supported",
        yes_no(s.limit_marker_ttl().is_some_and(|ttl| !ttl.is_zero())),
    );
    fields.add_some("Limit Marker TTL", s.limit_marker_ttl().map(duration));
    fields.add("Backing Store Kind", s.backing_store());
    fields.add_some("Description", s.description());
    fields.add("Bucket Size", bytes(s.bytes()));
    fields.add("Maximum Bucket Size", super::limit_bytes(config.max_bytes));
    fields.add(
        "Maximum Value Size",
        super::limit_bytes(i64::from(config.max_message_size)),
    );
    fields.add(
        "Maximum Age",
        if s.max_age().is_zero() {
            "unlimited".to_owned()
        } else {
            duration(s.max_age())
        },
    );
    fields.add("JetStream Stream", s.stream_name());
    fields.add(
        "Storage",
        match s.storage() {
            StorageType::File => "File",
            StorageType::Memory => "Memory",
        },
    );
    fields.add("Replicas", s.replicas());
    if let Some(republish) = &config.republish {
        let label = if republish.headers_only {
            "Republishing Headers"
        } else {
            "Republishing"
        };
        fields.add(
            label,
            format!("{} to {}", republish.source, republish.destination),
        );
    }
    if let Some(mirror) = &config.mirror {
        fields.add("Origin Bucket", bucket_of(&mirror.name));
    }
    for source in config.sources.iter().flatten() {
        fields.add("Source Bucket", bucket_of(&source.name));
    }
    if let Some(metadata) = super::user_metadata(s.metadata()) {
        fields.add("Metadata", metadata);
    }
    let mut text = format!(
        "Information for Key-Value Store Bucket {} created {}\n\nConfiguration:\n{}",
        s.bucket(),
        super::time(s.info.created),
        fields.render()
    );
    if let Some(cluster) = &s.info.cluster {
        text.push_str(&super::stream::render_cluster(cluster));
    }
    text
}

/// The bucket a `KV_` stream holds.
fn bucket_of(stream: &str) -> &str {
    stream.strip_prefix("KV_").unwrap_or(stream)
}
