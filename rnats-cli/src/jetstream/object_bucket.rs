//! `object add` and `object edit`: an Object Store bucket's settings.

use std::time::Duration;

use clap::Args;
use rnats::jetstream::Context;
use rnats::jetstream::object_store::Config;
use rnats::jetstream::stream::{Compression, StorageType};

use super::natscli_values::negatable;
use super::object::render_status;
use super::{Storage, parse_size};
use crate::conn::parse_duration;
use crate::error::CliError;
use crate::out;

/// The settings `object add` and `object edit` take; an edit changes only those given.
#[derive(Debug, Args)]
pub(super) struct BucketFlags {
    /// What the bucket is for.
    #[arg(long)]
    description: Option<String>,
    /// How long objects are kept, e.g. 30d (0: for ever).
    #[arg(long, alias = "ttl", value_name = "DURATION", value_parser = parse_duration)]
    max_age: Option<Duration>,
    /// Bytes the bucket may hold, e.g. 1GB (-1: no limit).
    #[arg(long, alias = "max-bucket-size", value_name = "SIZE", value_parser = parse_size, allow_negative_numbers = true)]
    max_bytes: Option<i64>,
    /// Copies of each chunk in a cluster [add's default: 1].
    #[arg(long)]
    replicas: Option<usize>,
    /// Compress the data (`--compression=false` to stop).
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
    /// Place the bucket on servers with this tag; repeat for more (an edit replaces them).
    #[arg(long = "tags", alias = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// Place the bucket in this cluster.
    #[arg(long, value_name = "CLUSTER")]
    cluster: Option<String>,
}

impl BucketFlags {
    /// Writes the settings given into `config`, leaving the others as they are.
    fn apply(self, config: &mut Config) {
        if let Some(description) = self.description {
            config.description = Some(description);
        }
        if let Some(max_age) = self.max_age {
            config.max_age = max_age;
        }
        if let Some(max_bytes) = self.max_bytes {
            config.max_bytes = max_bytes;
        }
        if let Some(replicas) = self.replicas {
            config.num_replicas = replicas;
        }
        if let Some(compression) = negatable(self.compression, self.no_compression) {
            config.compression = compression;
        }
        if !self.metadata.is_empty() {
            config.metadata = self.metadata.into_iter().collect();
        }
        super::apply_placement(&mut config.placement, self.cluster, self.tags);
    }
}

/// Options of `object add`.
#[derive(Debug, Args)]
pub(super) struct AddArgs {
    /// The bucket's name.
    bucket: String,
    #[command(flatten)]
    flags: BucketFlags,
    /// Where the data is stored.
    #[arg(long, value_enum, default_value = "file")]
    storage: Storage,
}

/// Options of `object edit`: `object add`'s, but for the storage, which a bucket keeps for
/// life.
#[derive(Debug, Args)]
pub(super) struct EditArgs {
    /// The bucket.
    bucket: String,
    #[command(flatten)]
    flags: BucketFlags,
}

/// `object add`: a bucket with the settings given and the defaults for the rest.
pub(super) async fn create(js: &Context, add: AddArgs) -> Result<(), CliError> {
    let bucket = add.bucket;
    let mut config = Config {
        bucket: bucket.clone(),
        max_bytes: -1,
        storage: StorageType::from(add.storage),
        num_replicas: 1,
        ..Default::default()
    };
    add.flags.apply(&mut config);
    let store = js
        .create_object_store(config)
        .await
        .map_err(CliError::js(format!("cannot create bucket {bucket}")))?;
    eprintln!("Created Object Store bucket {bucket}");
    let status = store
        .status()
        .await
        .map_err(CliError::js(format!("cannot read bucket {bucket}")))?;
    out::print(&render_status(&status))
}

/// `object edit`: the bucket's settings as its stream has them, with those given changed.
/// The library's update writes every setting of the config it is given, so the config
/// starts from the stream's.
pub(super) async fn edit_bucket(js: &Context, edit: EditArgs) -> Result<(), CliError> {
    let bucket = edit.bucket;
    let stream = js
        .get_stream(format!("OBJ_{bucket}"))
        .await
        .map_err(CliError::js(format!("cannot open bucket {bucket}")))?;
    let current = &stream.cached_info().config;
    let mut config = Config {
        bucket: bucket.clone(),
        description: current.description.clone(),
        max_age: current.max_age,
        max_bytes: current.max_bytes,
        storage: current.storage,
        num_replicas: current.num_replicas,
        compression: matches!(current.compression, Some(Compression::S2)),
        placement: current.placement.clone(),
        metadata: current.metadata.clone(),
        fast_ingest: current.allow_batch_publish,
    };
    edit.flags.apply(&mut config);
    let store = js
        .update_object_store(config)
        .await
        .map_err(CliError::js(format!("cannot update bucket {bucket}")))?;
    eprintln!("Updated Object Store bucket {bucket}");
    let status = store
        .status()
        .await
        .map_err(CliError::js(format!("cannot read bucket {bucket}")))?;
    out::print(&render_status(&status))
}
