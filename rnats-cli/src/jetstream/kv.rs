//! `rnats kv`: Key-Value buckets, their keys, values and histories (the buckets' settings and
//! status are in `kv_bucket.rs`, the key listings in `kv_list.rs`).

use std::time::Duration;

use clap::{Args, Subcommand};
use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::kv::{Operation, Store, UpdateErrorKind, WatchEvent, WatchOptions};
use serde_json::Value;

use super::kv_bucket::{
    AddArgs, EditArgs, create_bucket, edit_bucket, list_buckets, list_names, render_status,
};
use super::kv_list::{entry_json, list_entries, list_keys};
use super::{bytes, time};
use crate::conn::{ConnArgs, parse_duration};
use crate::error::CliError;
use crate::out::{self, Table};

/// Options of `rnats kv`.
#[derive(Debug, Args)]
pub(crate) struct KvArgs {
    /// What to do with Key-Value buckets.
    #[command(subcommand)]
    command: KvCommand,
}

/// The Key-Value commands.
#[derive(Debug, Subcommand)]
enum KvCommand {
    /// Lists the buckets, or the keys in BUCKET (those matching KEY when given).
    ///
    /// Example: rnats kv ls --names   |   rnats kv ls config 'app.>' -v --display-value
    #[command(alias = "list")]
    Ls {
        /// The bucket whose keys to list.
        bucket: Option<String>,
        /// Only keys matching this (wildcards allowed).
        #[arg(requires = "bucket")]
        key: Option<String>,
        /// Only the bucket names, one per line.
        #[arg(long, short = 'n')]
        names: bool,
        /// JSON instead of a table.
        #[arg(long, short = 'j')]
        json: bool,
        /// The keys in a table with each one's revision and when it was written.
        #[arg(long, short = 'v', requires = "bucket")]
        verbose: bool,
        /// The keys' values too (implies --verbose).
        #[arg(long, requires = "bucket")]
        display_value: bool,
    },
    /// Creates a bucket.
    ///
    /// Example: rnats kv add config --history 5 --ttl 24h
    #[command(alias = "new")]
    Add(AddArgs),
    /// Changes the settings given of a bucket, keeping the others.
    ///
    /// Example: rnats kv edit config --history 10 --ttl 1h
    Edit(EditArgs),
    /// Stores a value (from standard input when VALUE is absent or `-`); prints the value,
    /// as natscli does.
    ///
    /// Example: rnats kv put config app.color blue
    Put {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// The value.
        value: Option<String>,
    },
    /// Stores a value only if the key has none (or was deleted); prints the value.
    ///
    /// Example: rnats kv create config app.owner alice
    Create {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// The value.
        value: Option<String>,
        /// Remove the key this long after it is stored (a bucket made with --marker-ttl).
        #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
        ttl: Option<Duration>,
    },
    /// Stores a value only if the key's latest revision is REVISION (compare-and-set);
    /// prints the value. Fails, naming the key's latest revision, when it moved on.
    ///
    /// Example: rnats kv update config app.color red 3
    Update {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// The value (`-`: from standard input).
        value: String,
        /// The revision the key must be at.
        revision: u64,
    },
    /// Prints the keys of BUCKET, one per line (only those matching a FILTER when given).
    ///
    /// Example: rnats kv keys config 'app.>' 'db.*'
    Keys {
        /// The bucket.
        bucket: String,
        /// Subjects the keys must match (wildcards allowed); repeat for more.
        filters: Vec<String>,
        /// A JSON array instead of lines.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Prints a key's value (or the value at --revision).
    ///
    /// Example: rnats kv get config app.color --raw
    Get {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// The value at this revision instead of the latest.
        #[arg(long, value_name = "N")]
        revision: Option<u64>,
        /// Only the value.
        #[arg(long, conflicts_with = "json")]
        raw: bool,
        /// The entry as JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Deletes a key (its history stays until purged), or without a key the whole bucket,
    /// as natscli's `kv del` does.
    ///
    /// Example: rnats kv del config app.color --force
    #[command(alias = "delete")]
    Del {
        /// The bucket.
        bucket: String,
        /// The key (none: remove the bucket and everything in it).
        key: Option<String>,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Removes a key and its whole history.
    ///
    /// Example: rnats kv purge config app.color --force
    Purge {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
        /// Keep the purge marker this long, then remove it too (a bucket made with
        /// --marker-ttl).
        #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
        ttl: Option<Duration>,
    },
    /// Shows every stored revision of a key.
    ///
    /// Example: rnats kv history config app.color
    History {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// One JSON object per revision.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Prints the current values, then every change, of keys matching KEY (default: all).
    ///
    /// Example: rnats kv watch config 'app.>'
    Watch {
        /// The bucket.
        bucket: String,
        /// The keys to watch; wildcards allowed.
        #[arg(default_value = ">")]
        key: String,
        /// Exit after this many entries.
        #[arg(long, short = 'c')]
        count: Option<u64>,
        /// Only changes from now on, not the current values.
        #[arg(long, visible_alias = "updates", conflicts_with_all = ["history", "revision"])]
        updates_only: bool,
        /// Start with every stored revision, not only the last of each key.
        #[arg(long)]
        history: bool,
        /// Show deletes and purges (the default; natscli's flag).
        #[arg(long, overrides_with = "no_deletes")]
        deletes: bool,
        /// Leave out deletes and purges.
        #[arg(long, overrides_with = "deletes")]
        no_deletes: bool,
        /// Start at this revision.
        #[arg(long, value_name = "N", conflicts_with = "history")]
        revision: Option<u64>,
        /// One JSON object per entry.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Shows a bucket's configuration and state.
    ///
    /// Example: rnats kv status config
    #[command(visible_alias = "status", alias = "view")]
    Info {
        /// The bucket.
        bucket: String,
        /// The bucket's stream info as the server's JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Removes the history of deleted keys, reclaiming their space.
    ///
    /// Example: rnats kv compact config --force
    Compact {
        /// The bucket.
        bucket: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Puts a key's value at REVISION back as its latest value, then shows the history.
    ///
    /// Example: rnats kv revert config app.color 3 --force
    Revert {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// The revision whose value to restore.
        revision: u64,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f', overrides_with = "no_force")]
        force: bool,
        /// natscli's `--no-force`: ask (the default).
        #[arg(long, hide = true)]
        no_force: bool,
    },
    /// Removes a bucket and everything in it.
    ///
    /// Example: rnats kv rm config --force
    Rm {
        /// The bucket.
        bucket: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
    },
}

/// Runs a Key-Value command.
pub(crate) async fn run(args: KvArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let js = crate::conn::jetstream(conn).await?;
    match args.command {
        KvCommand::Ls {
            bucket: None,
            names: true,
            json: false,
            ..
        } => list_names(&js).await,
        KvCommand::Ls {
            bucket: None, json, ..
        } => list_buckets(&js, json).await,
        KvCommand::Ls {
            bucket: Some(bucket),
            key,
            json,
            verbose,
            display_value,
            ..
        } => {
            let store = open(&js, &bucket).await?;
            if verbose || display_value {
                list_entries(&store, &bucket, key.as_slice(), display_value, json).await
            } else {
                list_keys(&store, &bucket, key.as_slice(), json).await
            }
        }
        KvCommand::Add(add) => create_bucket(&js, add).await,
        KvCommand::Edit(edit) => edit_bucket(&js, edit).await,
        KvCommand::Put { bucket, key, value } => {
            let store = open(&js, &bucket).await?;
            let value = crate::core::body_or_stdin(value.as_deref())?;
            store
                .put(&key, value.clone())
                .await
                .map_err(CliError::js(format!("cannot put {key} into {bucket}")))?;
            echo(&value)
        }
        KvCommand::Create {
            bucket,
            key,
            value,
            ttl,
        } => {
            let store = open(&js, &bucket).await?;
            let value = crate::core::body_or_stdin(value.as_deref())?;
            let created = match ttl {
                Some(ttl) => store.create_with_ttl(&key, value.clone(), ttl).await,
                None => store.create(&key, value.clone()).await,
            };
            created.map_err(CliError::js(format!("cannot create {key} in {bucket}")))?;
            echo(&value)
        }
        KvCommand::Update {
            bucket,
            key,
            value,
            revision,
        } => update(&js, &bucket, &key, &value, revision).await,
        KvCommand::Keys {
            bucket,
            filters,
            json,
        } => list_keys(&open(&js, &bucket).await?, &bucket, &filters, json).await,
        KvCommand::Get {
            bucket,
            key,
            revision,
            raw,
            json,
        } => get(&js, &bucket, &key, revision, raw, json).await,
        KvCommand::Del {
            bucket,
            key: None,
            force,
        } => remove_bucket(&js, &bucket, force).await,
        KvCommand::Del {
            bucket,
            key: Some(key),
            force,
        } => {
            let store = open(&js, &bucket).await?;
            out::confirm(&format!("Really delete {key} from {bucket}"), force)?;
            store
                .delete(&key)
                .await
                .map_err(CliError::js(format!("cannot delete {key} from {bucket}")))?;
            eprintln!("Deleted {key} from {bucket}");
            Ok(())
        }
        KvCommand::Purge {
            bucket,
            key,
            force,
            ttl,
        } => {
            let store = open(&js, &bucket).await?;
            out::confirm(
                &format!("Really purge {key} and its history from {bucket}"),
                force,
            )?;
            match ttl {
                Some(ttl) => store.purge_with_ttl(&key, ttl).await,
                None => store.purge(&key).await,
            }
            .map_err(CliError::js(format!("cannot purge {key} from {bucket}")))?;
            eprintln!("Purged {key} from {bucket}");
            Ok(())
        }
        KvCommand::History { bucket, key, json } => history(&js, &bucket, &key, json).await,
        KvCommand::Watch {
            bucket,
            key,
            count,
            updates_only,
            history,
            no_deletes,
            revision,
            json,
            ..
        } => {
            let mut options = WatchOptions::new();
            if updates_only {
                options = options.updates_only();
            }
            if history {
                options = options.include_history();
            }
            if no_deletes {
                options = options.ignore_deletes();
            }
            if let Some(revision) = revision {
                options = options.from_revision(revision);
            }
            watch(&js, &bucket, &key, count, options, json).await
        }
        KvCommand::Compact { bucket, force } => {
            let store = open(&js, &bucket).await?;
            out::confirm(
                &format!("Really remove the history of every deleted key in {bucket}"),
                force,
            )?;
            store
                .purge_deletes()
                .await
                .map_err(CliError::js(format!("cannot compact bucket {bucket}")))?;
            eprintln!("Compacted Key-Value bucket {bucket}");
            Ok(())
        }
        KvCommand::Revert {
            bucket,
            key,
            revision,
            force,
            ..
        } => revert(&js, &bucket, &key, revision, force).await,
        KvCommand::Info { bucket, json } => {
            if json {
                let stream = format!("STREAM.INFO.KV_{bucket}");
                return out::json_pretty(&super::raw(&js, &stream, &Value::Null).await?);
            }
            let store = open(&js, &bucket).await?;
            let status = store
                .status()
                .await
                .map_err(CliError::js(format!("cannot read bucket {bucket}")))?;
            out::print(&render_status(&status))
        }
        KvCommand::Rm { bucket, force } => remove_bucket(&js, &bucket, force).await,
    }
}

/// `kv rm BUCKET` and `kv del BUCKET`: removes the bucket and every key in it, once
/// confirmed.
async fn remove_bucket(js: &Context, bucket: &str, force: bool) -> Result<(), CliError> {
    open(js, bucket).await?;
    out::confirm(
        &format!("Really remove bucket {bucket} and every key in it"),
        force,
    )?;
    js.delete_key_value(bucket)
        .await
        .map_err(CliError::js(format!("cannot remove bucket {bucket}")))?;
    eprintln!("Removed Key-Value bucket {bucket}");
    Ok(())
}

async fn open(js: &Context, bucket: &str) -> Result<Store, CliError> {
    js.get_key_value(bucket)
        .await
        .map_err(CliError::js(format!("cannot open bucket {bucket}")))
}

/// Prints a stored value as natscli's `kv put`, `create` and `update` do: the value and a
/// newline.
fn echo(value: &[u8]) -> Result<(), CliError> {
    out::print_bytes(value)?;
    out::print("\n")
}

/// `kv update`: a put that only succeeds while the key is at `revision`.
async fn update(
    js: &Context,
    bucket: &str,
    key: &str,
    value: &str,
    revision: u64,
) -> Result<(), CliError> {
    let store = open(js, bucket).await?;
    let value = crate::core::body_or_stdin(Some(value))?;
    let action = format!("cannot update {key} in {bucket}");
    match store.update(key, value.clone(), revision).await {
        Ok(_) => echo(&value),
        Err(error) if error.kind() == UpdateErrorKind::WrongLastRevision => {
            // Name where the key is now, so the caller can read it again and retry.
            let latest = match store.entry(key).await {
                Ok(Some(entry)) => format!("it is at revision {}", entry.revision),
                Ok(None) => "it has no value".to_owned(),
                Err(_) => "its latest revision could not be read".to_owned(),
            };
            Err(CliError::RevisionMoved {
                bucket: bucket.to_owned(),
                key: key.to_owned(),
                expected: revision,
                latest,
            })
        }
        Err(error) => Err(CliError::js(action)(error)),
    }
}

async fn get(
    js: &Context,
    bucket: &str,
    key: &str,
    revision: Option<u64>,
    raw: bool,
    json: bool,
) -> Result<(), CliError> {
    let store = open(js, bucket).await?;
    let action = format!("cannot get {key} from {bucket}");
    let entry = match revision {
        Some(revision) => store
            .entry_for_revision(key, revision)
            .await
            .map_err(CliError::js(&action))?,
        None => store.entry(key).await.map_err(CliError::js(&action))?,
    };
    let entry = entry
        .filter(|e| e.operation == Operation::Put)
        .ok_or_else(|| CliError::KeyNotFound {
            bucket: bucket.to_owned(),
            key: key.to_owned(),
        })?;
    if json {
        return out::json(&entry_json(&entry));
    }
    if raw {
        // The value byte for byte, as natscli writes it: no newline added.
        return out::print_bytes(&entry.value);
    }
    out::print(&format!(
        "{bucket} > {key} revision {} created {}\n\n{}\n",
        entry.revision,
        time(entry.created),
        String::from_utf8_lossy(&entry.value)
    ))
}

async fn history(js: &Context, bucket: &str, key: &str, json: bool) -> Result<(), CliError> {
    let store = open(js, bucket).await?;
    let action = format!("cannot read the history of {key} in {bucket}");
    let mut entries = store.history(key).await.map_err(CliError::js(&action))?;
    let mut all = Vec::new();
    while let Some(entry) = entries.next().await {
        all.push(entry.map_err(CliError::js(&action))?);
    }
    if json {
        let text: String = all
            .iter()
            .map(|e| format!("{}\n", Value::Object(entry_json(e))))
            .collect();
        return out::print(&text);
    }
    if all.is_empty() {
        return Err(CliError::KeyNotFound {
            bucket: bucket.to_owned(),
            key: key.to_owned(),
        });
    }
    let mut table = Table::new(["Revision", "Operation", "Created", "Length", "Value"]);
    for e in &all {
        table.row(vec![
            e.revision.to_string(),
            e.operation.as_str().to_owned(),
            time(e.created),
            bytes(e.value.len() as u64),
            preview(&e.value),
        ]);
    }
    table.print()
}

async fn watch(
    js: &Context,
    bucket: &str,
    key: &str,
    count: Option<u64>,
    options: WatchOptions,
    json: bool,
) -> Result<(), CliError> {
    let store = open(js, bucket).await?;
    let action = format!("cannot watch {key} in {bucket}");
    let watch = store
        .watch_with_options([key], options)
        .await
        .map_err(CliError::js(&action))?;
    // Scripts and tests wait for this line before changing values.
    eprintln!("Watching {key:?} in {bucket}");
    let mut events = watch.events();
    let mut seen = 0u64;
    while let Some(event) = events.next().await {
        let entry = match event.map_err(CliError::js(&action))? {
            WatchEvent::Entry(entry) => entry,
            WatchEvent::InitialValuesDone => {
                if !json {
                    eprintln!("(current values done; watching for changes)");
                }
                continue;
            }
        };
        seen += 1;
        if json {
            out::json(&entry_json(&entry))?;
        } else {
            let value = match entry.operation {
                Operation::Put => String::from_utf8_lossy(&entry.value).into_owned(),
                other => other.as_str().to_owned(),
            };
            out::print(&format!(
                "[{}] {} {} > {}: {value}\n",
                time(entry.created),
                entry.operation.as_str(),
                entry.bucket,
                entry.key
            ))?;
        }
        if count == Some(seen) {
            return Ok(());
        }
    }
    Err(CliError::SubscriptionEnded)
}

/// `kv revert`: the value at `revision` written again as the key's latest, on the condition
/// that nobody wrote the key in between (an update against the last revision seen).
async fn revert(
    js: &Context,
    bucket: &str,
    key: &str,
    revision: u64,
    force: bool,
) -> Result<(), CliError> {
    let store = open(js, bucket).await?;
    let action = format!("cannot revert {key} in {bucket}");
    let old = store
        .entry_for_revision(key, revision)
        .await
        .map_err(CliError::js(&action))?
        .filter(|e| e.operation == Operation::Put)
        .ok_or_else(|| CliError::KeyNotFound {
            bucket: bucket.to_owned(),
            key: format!("{key} at revision {revision}"),
        })?;
    let latest = store
        .entry(key)
        .await
        .map_err(CliError::js(&action))?
        .map_or(0, |e| e.revision);
    out::confirm(
        &format!(
            "Really make revision {revision} ({}) the value of {key}",
            preview(&old.value)
        ),
        force,
    )?;
    let new = store
        .update(key, old.value, latest)
        .await
        .map_err(CliError::js(&action))?;
    eprintln!("Reverted {key} in {bucket} to revision {revision} as revision {new}");
    history(js, bucket, key, false).await
}

/// The first 40 characters of a value, for tables.
fn preview(value: &[u8]) -> String {
    let text = String::from_utf8_lossy(value);
    let mut out: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        out.push('…');
    }
    out
}
