//! `rnats object`: Object Store buckets and the files in them (creating and editing buckets is
//! in `object_bucket.rs`).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::object_store::{ObjectInfo, ObjectStore, ObjectStoreStatus};
use rnats::jetstream::stream::StorageType;
use serde_json::json;

use super::object_bucket::{AddArgs, EditArgs, create, edit_bucket};
use super::object_progress::progress_bar;
use super::{bytes, duration, time};
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out::{self, Fields, Table};

/// Options of `rnats object`.
#[derive(Debug, Args)]
pub(crate) struct ObjectArgs {
    /// What to do with Object Store buckets.
    #[command(subcommand)]
    command: ObjectCommand,
}

/// The Object Store commands.
#[derive(Debug, Subcommand)]
enum ObjectCommand {
    /// Lists the buckets, or the objects in BUCKET.
    ///
    /// Example: rnats object ls files
    #[command(alias = "list")]
    Ls {
        /// The bucket whose objects to list.
        bucket: Option<String>,
        /// Only the bucket names, one per line.
        #[arg(long, short = 'n', conflicts_with = "bucket")]
        names: bool,
        /// JSON instead of a table.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Creates a bucket.
    ///
    /// Example: rnats object add files --max-bytes 1GB --storage file
    #[command(alias = "create")]
    Add(AddArgs),
    /// Changes the settings given of a bucket, keeping the others.
    ///
    /// Example: rnats object edit files --max-age 30d --description Reports
    Edit(EditArgs),
    /// Stores a file (or standard input) as an object, with a progress bar on a terminal.
    ///
    /// Example: rnats object put files ./report.pdf   |   tar c . | rnats object put files --name backup.tar
    Put(super::object_put::PutArgs),
    /// Reads an object into a file named after it in the current directory (as natscli
    /// does), or where `--output` says (`-` for standard output), checking its digest.
    ///
    /// Example: rnats object get files report.pdf   |   rnats object get files report.pdf -O - | less
    Get {
        /// The bucket.
        bucket: String,
        /// The object.
        name: String,
        /// Write here instead of a file named after the object; `-` writes to standard
        /// output (`-O` as in natscli).
        #[arg(long, short = 'o', short_alias = 'O', value_name = "FILE")]
        output: Option<PathBuf>,
        /// Overwrite without asking (accepted for natscli's command lines: rnats never
        /// asks).
        #[arg(long, short = 'f')]
        force: bool,
        /// Draw a progress bar on a terminal (the default; never when piped).
        #[arg(long, overrides_with = "no_progress")]
        progress: bool,
        /// No progress bar, not even on a terminal (natscli's `--no-progress`).
        #[arg(long)]
        no_progress: bool,
    },
    /// Shows a bucket's status, or an object's info.
    ///
    /// Example: rnats object status files   |   rnats object info files report.pdf
    #[command(visible_alias = "status", alias = "show", alias = "i")]
    Info {
        /// The bucket.
        bucket: String,
        /// The object.
        name: Option<String>,
        /// JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Prints the bucket's objects, then every change to them (puts and deletes).
    ///
    /// Example: rnats object watch files
    Watch {
        /// The bucket.
        bucket: String,
        /// Exit after this many changes.
        #[arg(long, short = 'c')]
        count: Option<u64>,
        /// Only changes from now on, not the current objects.
        #[arg(long)]
        updates_only: bool,
        /// One JSON object (the object's info) per change.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Seals a bucket: it refuses every change from then on, for good.
    ///
    /// Example: rnats object seal files --force
    Seal {
        /// The bucket.
        bucket: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Removes an object, or the whole bucket when no NAME is given.
    ///
    /// Example: rnats object rm files report.pdf --force
    #[command(alias = "delete", alias = "del")]
    Rm {
        /// The bucket.
        bucket: String,
        /// The object.
        name: Option<String>,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
    },
}

/// Runs an Object Store command.
pub(crate) async fn run(args: ObjectArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let js = crate::conn::jetstream(conn).await?;
    match args.command {
        ObjectCommand::Ls {
            names: true,
            json: false,
            ..
        } => list_names(&js).await,
        ObjectCommand::Ls {
            bucket: None, json, ..
        } => list_buckets(&js, json).await,
        ObjectCommand::Ls {
            bucket: Some(bucket),
            json,
            ..
        } => list_objects(&js, &bucket, json).await,
        ObjectCommand::Watch {
            bucket,
            count,
            updates_only,
            json,
        } => watch(&js, &bucket, count, updates_only, json).await,
        ObjectCommand::Seal { bucket, force } => {
            let mut store = open(&js, &bucket).await?;
            out::confirm(
                &format!(
                    "Really seal bucket {bucket}? A sealed bucket cannot be changed or unsealed"
                ),
                force,
            )?;
            store
                .seal()
                .await
                .map_err(CliError::js(format!("cannot seal bucket {bucket}")))?;
            eprintln!("Sealed Object Store bucket {bucket}");
            let status = store
                .status()
                .await
                .map_err(CliError::js(format!("cannot read bucket {bucket}")))?;
            out::print(&render_status(&status))
        }
        ObjectCommand::Add(add) => create(&js, add).await,
        ObjectCommand::Edit(edit) => edit_bucket(&js, edit).await,
        ObjectCommand::Put(put_args) => {
            let store = open(&js, &put_args.bucket).await?;
            super::object_put::run(&store, put_args).await
        }
        ObjectCommand::Get {
            bucket,
            name,
            output,
            no_progress,
            ..
        } => get(&js, &bucket, &name, output, !no_progress).await,
        ObjectCommand::Info { bucket, name, json } => info(&js, &bucket, name, json).await,
        ObjectCommand::Rm {
            bucket,
            name,
            force,
        } => remove(&js, &bucket, name, force).await,
    }
}

async fn list_buckets(js: &Context, json: bool) -> Result<(), CliError> {
    let mut stores = js.object_stores();
    let mut all = Vec::new();
    while let Some(status) = stores.next().await {
        all.push(status.map_err(CliError::js("cannot list Object Store buckets"))?);
    }
    all.sort_by(|a, b| a.bucket.cmp(&b.bucket));
    if json {
        return out::json(&all.iter().map(status_json).collect::<Vec<_>>());
    }
    if all.is_empty() {
        eprintln!("No Object Store buckets");
        return Ok(());
    }
    let mut table = Table::new([
        "Bucket",
        "Description",
        "Size",
        "Storage",
        "Replicas",
        "Sealed",
    ]);
    for s in &all {
        table.row(vec![
            s.bucket.clone(),
            s.description.clone().unwrap_or_default(),
            bytes(s.size),
            storage_name(s.storage).to_owned(),
            s.replicas.to_string(),
            yes_no(s.sealed).to_owned(),
        ]);
    }
    table.print()
}

async fn list_names(js: &Context) -> Result<(), CliError> {
    let mut names = js.object_store_names();
    let mut all = Vec::new();
    while let Some(name) = names.next().await {
        all.push(name.map_err(CliError::js("cannot list Object Store buckets"))?);
    }
    all.sort();
    out::print(&all.iter().map(|n| format!("{n}\n")).collect::<String>())
}

/// `object watch`: one line per change, as natscli prints them.
async fn watch(
    js: &Context,
    bucket: &str,
    count: Option<u64>,
    updates_only: bool,
    json: bool,
) -> Result<(), CliError> {
    let store = open(js, bucket).await?;
    let action = format!("cannot watch bucket {bucket}");
    let mut watch = if updates_only {
        store.watch().await
    } else {
        store.watch_with_history().await
    }
    .map_err(CliError::js(&action))?;
    // Scripts and tests wait for this line before changing objects.
    eprintln!("Watching bucket {bucket}");
    let mut seen = 0u64;
    while let Some(info) = watch.next().await {
        let info = info.map_err(CliError::js(&action))?;
        seen += 1;
        let when = info.modified.map(time).unwrap_or_default();
        if json {
            out::json(&info)?;
        } else if info.deleted {
            out::print(&format!("[{when}] DEL {} > {}\n", info.bucket, info.name))?;
        } else {
            out::print(&format!(
                "[{when}] PUT {} > {}: {} in {} chunks\n",
                info.bucket,
                info.name,
                bytes(info.size as u64),
                info.chunks
            ))?;
        }
        if count == Some(seen) {
            return Ok(());
        }
    }
    Err(CliError::SubscriptionEnded)
}

async fn list_objects(js: &Context, bucket: &str, json: bool) -> Result<(), CliError> {
    let store = open(js, bucket).await?;
    let action = format!("cannot list bucket {bucket}");
    let mut list = store.list().await.map_err(CliError::js(&action))?;
    let mut objects = Vec::new();
    while let Some(info) = list.next().await {
        objects.push(info.map_err(CliError::js(&action))?);
    }
    objects.sort_by(|a, b| a.name.cmp(&b.name));
    if json {
        return out::json(&objects);
    }
    if objects.is_empty() {
        eprintln!("No objects in {bucket}");
        return Ok(());
    }
    let mut table = Table::new(["Name", "Size", "Chunks", "Modified"]);
    for o in &objects {
        table.row(vec![
            o.name.clone(),
            bytes(o.size as u64),
            o.chunks.to_string(),
            o.modified.map(time).unwrap_or_default(),
        ]);
    }
    table.print()
}

async fn get(
    js: &Context,
    bucket: &str,
    name: &str,
    output: Option<PathBuf>,
    progress: bool,
) -> Result<(), CliError> {
    let store = open(js, bucket).await?;
    let object = store
        .get(name)
        .await
        .map_err(CliError::js(format!("cannot get {name} from {bucket}")))?;
    let total = object.info().size as u64;
    let action = format!("cannot read {name} from {bucket}");
    // natscli's default: the object's base name, in the current directory. An object name
    // with no base name (`dir/`, `..`) cannot name a file, so it needs `--output`.
    let path = match output {
        Some(path) => path,
        None => match Path::new(&object.info().name).file_name() {
            Some(base) => PathBuf::from(base),
            None => {
                return Err(CliError::InvalidArgument {
                    what: "object name",
                    given: name.to_owned(),
                    reason: "it names no file: give --output FILE, or - for standard output".into(),
                });
            }
        },
    };
    if path.as_os_str() == "-" {
        let mut object = object;
        let mut stdout = tokio::io::stdout();
        tokio::io::copy(&mut object, &mut stdout)
            .await
            .map_err(CliError::js(action))?;
        return tokio::io::AsyncWriteExt::flush(&mut stdout)
            .await
            .map_err(CliError::Stdout);
    };
    let write_failed = |source| CliError::WriteFile {
        path: path.clone(),
        source,
    };
    let bar = progress_bar(Some(total), progress);
    let shown = bar.clone();
    let mut object = object.with_progress(move |p| shown.set_position(p.bytes));
    let mut file = tokio::fs::File::create(&path).await.map_err(write_failed)?;
    let copied = tokio::io::copy(&mut object, &mut file).await;
    bar.finish_and_clear();
    copied.map_err(CliError::js(action))?;
    tokio::io::AsyncWriteExt::flush(&mut file)
        .await
        .map_err(write_failed)?;
    eprintln!("Wrote {} to {}", bytes(total), path.display());
    Ok(())
}

async fn info(
    js: &Context,
    bucket: &str,
    name: Option<String>,
    json: bool,
) -> Result<(), CliError> {
    let store = open(js, bucket).await?;
    match name {
        Some(name) => {
            let info = store
                .info(&name)
                .await
                .map_err(CliError::js(format!("cannot read {name} in {bucket}")))?;
            if json {
                return out::json_pretty(&info);
            }
            out::print(&render_object(&info))
        }
        None => {
            let status = store
                .status()
                .await
                .map_err(CliError::js(format!("cannot read bucket {bucket}")))?;
            if json {
                return out::json_pretty(&status_json(&status));
            }
            out::print(&render_status(&status))
        }
    }
}

async fn remove(
    js: &Context,
    bucket: &str,
    name: Option<String>,
    force: bool,
) -> Result<(), CliError> {
    let store = open(js, bucket).await?;
    let Some(name) = name else {
        out::confirm(
            &format!("Really remove bucket {bucket} and every object in it"),
            force,
        )?;
        js.delete_object_store(bucket)
            .await
            .map_err(CliError::js(format!("cannot remove bucket {bucket}")))?;
        eprintln!("Removed Object Store bucket {bucket}");
        return Ok(());
    };
    let action = format!("cannot remove {name} from {bucket}");
    store.info(&name).await.map_err(CliError::js(&action))?;
    out::confirm(&format!("Really remove {name} from {bucket}"), force)?;
    store.delete(&name).await.map_err(CliError::js(&action))?;
    eprintln!("Removed {name} from {bucket}");
    Ok(())
}

async fn open(js: &Context, bucket: &str) -> Result<ObjectStore, CliError> {
    js.get_object_store(bucket)
        .await
        .map_err(CliError::js(format!("cannot open bucket {bucket}")))
}

fn storage_name(storage: StorageType) -> &'static str {
    match storage {
        StorageType::File => "file",
        StorageType::Memory => "memory",
    }
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn status_json(s: &ObjectStoreStatus) -> serde_json::Value {
    json!({
        "bucket": s.bucket,
        "description": s.description,
        "max_age": s.max_age.as_nanos() as u64,
        "storage": storage_name(s.storage),
        "replicas": s.replicas,
        "sealed": s.sealed,
        "size": s.size,
        "compressed": s.compressed,
        "metadata": s.metadata,
        "fast_ingest": s.fast_ingest,
    })
}

pub(super) fn render_status(s: &ObjectStoreStatus) -> String {
    let mut fields = Fields::new();
    fields.add_some("Description", s.description.as_deref());
    fields.add("Size", bytes(s.size));
    fields.add(
        "Max age",
        if s.max_age.is_zero() {
            "unlimited".to_owned()
        } else {
            duration(s.max_age)
        },
    );
    fields.add("Storage", storage_name(s.storage));
    fields.add("Replicas", s.replicas);
    fields.add("Sealed", yes_no(s.sealed));
    fields.add("Compressed", yes_no(s.compressed));
    fields.add("Stream", &s.info.config.name);
    if s.fast_ingest {
        fields.add("Fast ingest", "yes");
    }
    if let Some(metadata) = super::user_metadata(&s.metadata) {
        fields.add("Metadata", metadata);
    }
    format!("Object Store bucket {}\n\n{}", s.bucket, fields.render())
}

fn render_object(o: &ObjectInfo) -> String {
    let mut fields = Fields::new();
    fields.add("Bucket", &o.bucket);
    fields.add_some("Description", o.description.as_deref());
    fields.add("Size", bytes(o.size as u64));
    fields.add("Chunks", o.chunks);
    fields.add_some("Modified", o.modified.map(time));
    fields.add_some("Digest", o.digest.as_deref());
    // A row a value: a value may hold a comma (`Cache-Control: no-cache, no-store`).
    for (name, values) in o.headers.iter().flat_map(|h| h.iter()) {
        for value in values {
            fields.add("Header", format!("{name}: {value}"));
        }
    }
    if let Some(link) = o.link() {
        let target = match &link.name {
            Some(name) => format!("{}/{name}", link.bucket),
            None => link.bucket.clone(),
        };
        fields.add("Link to", target);
    }
    format!("Object {}\n\n{}", o.name, fields.render())
}
