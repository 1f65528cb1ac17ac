//! `rnats stream`: list, find, add, inspect, edit, copy, back up, restore, remove, purge and
//! read streams, list their gaps, and manage a clustered one's leader and peers.

use clap::{Args, Subcommand};
use rnats::jetstream::Context;
use rnats::jetstream::stream::{ClusterInfo, Config, Info};
use serde_json::{Value, json};

use super::config_check::{CheckFlags, stream_problems};
use super::stream_config::StreamFlags;
use super::stream_read::{get, view};
use super::{bytes, duration, limit, limit_bytes, raw, read_config, time};
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out::{self, Fields};
use crate::stats::human;

/// Options of `rnats stream`.
#[derive(Debug, Args)]
pub(crate) struct StreamArgs {
    /// Include the streams the system keeps for itself (KV_*, OBJ_*, $MQTT_*) in `stream
    /// ls` (natscli's flag).
    #[arg(long, short = 'a', global = true)]
    all: bool,
    /// What to do with streams.
    #[command(subcommand)]
    command: StreamCommand,
}

/// The stream commands.
#[derive(Debug, Subcommand)]
enum StreamCommand {
    /// Lists the streams: name, subjects, messages, bytes, consumers, created.
    ///
    /// Example: rnats stream ls
    #[command(alias = "list", alias = "l")]
    Ls(crate::jetstream::stream_list::LsArgs),
    /// Creates a stream (or, with --validate or --output, only checks its configuration).
    ///
    /// Example: rnats stream add ORDERS --subjects 'orders.>' --storage file --max-age 24h
    #[command(alias = "create", alias = "new")]
    Add {
        /// The stream's name (may come from --config instead).
        name: Option<String>,
        #[command(flatten)]
        flags: StreamFlags,
        /// Print the server's stream info as JSON.
        #[arg(long, short = 'j')]
        json: bool,
        /// Accept the defaults for what is not given (natscli's flag; rnats never prompts).
        #[arg(long)]
        defaults: bool,
        #[command(flatten)]
        check: CheckFlags,
    },
    /// Creates a stream with another's configuration (not its messages); flags override it.
    ///
    /// Example: rnats stream copy ORDERS ARCHIVE --subjects 'archive.>'
    #[command(alias = "cp")]
    Copy {
        /// The stream whose configuration to copy.
        source: String,
        /// The new stream.
        destination: String,
        #[command(flatten)]
        flags: StreamFlags,
        /// Print the server's stream info as JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Backs a stream up into a directory over the NATS connection (the server's snapshot).
    ///
    /// Example: rnats stream backup ORDERS /backups/orders
    #[command(alias = "snapshot")]
    Backup(crate::jetstream::stream_backup::BackupArgs),
    /// Restores a stream from a backup directory (`stream backup`'s or natscli's).
    ///
    /// Example: rnats stream restore /backups/orders
    Restore(crate::jetstream::stream_backup::RestoreArgs),
    /// Reports on every stream: storage, consumers, messages, bytes, replicas.
    ///
    /// Example: rnats stream report --messages
    Report(crate::jetstream::stream_report::ReportArgs),
    /// Finds the streams that pass every filter given (natscli's filters); a table, or names.
    ///
    /// Example: rnats stream find --empty --invert --created 24h
    #[command(alias = "query")]
    Find(crate::jetstream::stream_find::FindArgs),
    /// Shows a stream's configuration and state.
    ///
    /// Example: rnats stream info ORDERS
    #[command(alias = "nfo", alias = "i")]
    Info {
        /// The stream.
        name: String,
        /// The server's JSON.
        #[arg(long, short = 'j')]
        json: bool,
        /// Only the state: messages, bytes, sequences, consumers (and the cluster).
        #[arg(long)]
        state: bool,
    },
    /// Shows a stream's state: messages, bytes, sequences, consumers (and the cluster).
    ///
    /// Example: rnats stream state ORDERS
    State {
        /// The stream.
        name: String,
        /// The server's JSON (the whole stream info, as natscli prints it).
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Changes the settings given of a stream, keeping the others.
    ///
    /// Example: rnats stream edit ORDERS --max-msgs 100000
    #[command(alias = "update")]
    Edit {
        /// The stream.
        name: String,
        #[command(flatten)]
        flags: StreamFlags,
        /// Print the server's stream info as JSON.
        #[arg(long, short = 'j')]
        json: bool,
        /// Print the configuration the edit would send, and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Edit without asking (natscli's flag; rnats does not ask before an edit).
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Removes a stream and its messages.
    ///
    /// Example: rnats stream rm ORDERS --force
    #[command(alias = "delete", alias = "del")]
    Rm {
        /// The stream.
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Lists the stream's subjects with their message counts.
    ///
    /// Example: rnats stream subjects ORDERS 'orders.>' --sort name
    #[command(alias = "subj")]
    Subjects(crate::jetstream::stream_subjects::SubjectsArgs),
    /// Lists the gaps in a stream: runs of deleted messages between its first and last.
    ///
    /// Example: rnats stream gaps ORDERS
    Gaps(crate::jetstream::stream_gaps::GapsArgs),
    /// Removes one message, overwriting its data (natscli's `rmm`).
    ///
    /// Example: rnats stream rmm ORDERS 42 --force
    Rmm {
        /// The stream.
        name: String,
        /// The message's sequence.
        sequence: u64,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Seals a stream: no more writes, deletes or purges, for good.
    ///
    /// Example: rnats stream seal ORDERS --force
    Seal {
        /// The stream.
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
        /// The sealed stream's info as JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Removes messages: all, those on a subject, up to a sequence, or all but the newest.
    ///
    /// Example: rnats stream purge ORDERS --subject orders.old --keep 10 --force
    Purge {
        /// The stream.
        name: String,
        /// Only messages on this subject.
        #[arg(long, value_name = "SUBJECT")]
        subject: Option<String>,
        /// Keep this many of the newest messages.
        #[arg(long, value_name = "N", conflicts_with = "seq")]
        keep: Option<u64>,
        /// Remove messages below this sequence.
        #[arg(long, value_name = "SEQ")]
        seq: Option<u64>,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
        /// The server's reply as JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Reads one message by sequence, or the last one on a subject.
    ///
    /// With a wildcard, --last-for prints the last message of every matching subject (one
    /// snapshot, by direct get: the stream needs --allow-direct).
    ///
    /// Example: rnats stream get ORDERS 42   |   rnats stream get ORDERS --last-for orders.new
    Get {
        /// The stream.
        name: String,
        /// The message's sequence.
        #[arg(required_unless_present = "last_for", conflicts_with = "last_for")]
        seq: Option<u64>,
        /// The last message on this subject instead (with wildcards: on each subject).
        #[arg(long, short = 'S', value_name = "SUBJECT")]
        last_for: Option<String>,
        /// The message as JSON.
        #[arg(long, short = 'j')]
        json: bool,
        /// Show the body as this command prints it, the body on its standard input (split
        /// as a shell would, run without one; {{Subject}} and {{Stream}} are the message's).
        #[arg(long, value_name = "CMD", value_parser = crate::core::pipe::Translate::parse)]
        translate: Option<crate::core::pipe::Translate>,
    },
    /// Shows a page of messages in order: with an ordered consumer, or one get at a time
    /// from a work-queue or interest stream (which a consumer would change).
    ///
    /// Example: rnats stream view ORDERS 20 --since 1h
    View(crate::jetstream::stream_read::ViewArgs),
    /// Manages a clustered stream: moves its leader, removes a peer.
    ///
    /// Example: rnats stream cluster step-down ORDERS --preferred n2
    #[command(alias = "c")]
    Cluster(crate::jetstream::stream_cluster::ClusterArgs),
}

/// Runs a stream command.
pub(crate) async fn run(args: StreamArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let command = match args.command {
        // Checking or saving a configuration makes nothing, so it needs no server.
        StreamCommand::Add {
            name, flags, check, ..
        } if check.wanted() => {
            let config = add_config(name, &flags)?;
            return check.finish("stream", &config, stream_problems(&config));
        }
        command => command,
    };
    let js = crate::conn::jetstream(conn).await?;
    match command {
        StreamCommand::Ls(ls) => crate::jetstream::stream_list::run(&js, ls, args.all).await,
        StreamCommand::Add {
            name, flags, json, ..
        } => add(&js, name, flags, json).await,
        StreamCommand::Info { name, json, state } => {
            if state {
                state_info(&js, name, json).await
            } else {
                info(&js, name, json).await
            }
        }
        StreamCommand::State { name, json } => state_info(&js, name, json).await,
        StreamCommand::Copy {
            source,
            destination,
            flags,
            json,
        } => copy(&js, &source, destination, flags, json).await,
        StreamCommand::Backup(args) => crate::jetstream::stream_backup::backup(&js, args).await,
        StreamCommand::Restore(args) => crate::jetstream::stream_backup::restore(&js, args).await,
        StreamCommand::Report(report) => crate::jetstream::stream_report::run(&js, report).await,
        StreamCommand::Find(find) => crate::jetstream::stream_find::run(&js, find).await,
        StreamCommand::Subjects(args) => crate::jetstream::stream_subjects::run(&js, args).await,
        StreamCommand::Gaps(args) => crate::jetstream::stream_gaps::run(&js, args).await,
        StreamCommand::Edit {
            name,
            flags,
            json,
            dry_run,
            ..
        } => edit(&js, name, flags, json, dry_run).await,
        StreamCommand::Rm { name, force } => remove(&js, name, force).await,
        StreamCommand::Rmm {
            name,
            sequence,
            force,
        } => {
            raw(&js, &format!("STREAM.INFO.{name}"), &Value::Null).await?;
            out::confirm(
                &format!("Really remove message {sequence} from {name}"),
                force,
            )?;
            let request = json!({ "seq": sequence });
            raw(&js, &format!("STREAM.MSG.DELETE.{name}"), &request).await?;
            out::print(&format!("Removed message {sequence} from stream {name}\n"))
        }
        StreamCommand::Seal { name, force, json } => {
            let answer = raw(&js, &format!("STREAM.INFO.{name}"), &Value::Null).await?;
            let config = sealed(answer).ok_or_else(|| {
                CliError::js(format!("cannot seal stream {name}"))(
                    "STREAM.INFO answered without a stream configuration",
                )
            })?;
            out::confirm(&format!("Really seal stream {name}, for good"), force)?;
            raw(&js, &format!("STREAM.UPDATE.{name}"), &config).await?;
            if !json {
                out::print(&format!("Sealed stream {name}\n"))?;
            }
            info(&js, name, json).await
        }
        StreamCommand::Purge {
            name,
            subject,
            keep,
            seq,
            force,
            json,
        } => {
            raw(&js, &format!("STREAM.INFO.{name}"), &Value::Null).await?;
            out::confirm(&format!("Really purge stream {name}"), force)?;
            let mut request = json!({});
            if let Some(subject) = &subject {
                request["filter"] = json!(subject);
            }
            if let Some(keep) = keep {
                request["keep"] = json!(keep);
            }
            if let Some(seq) = seq {
                request["seq"] = json!(seq);
            }
            let reply = raw(&js, &format!("STREAM.PURGE.{name}"), &request).await?;
            if json {
                return out::json(&reply);
            }
            let purged = reply.get("purged").and_then(Value::as_u64).unwrap_or(0);
            out::print(&format!(
                "Purged {} messages from {name}\n",
                human::count(purged)
            ))
        }
        StreamCommand::Get {
            name,
            seq,
            last_for,
            json,
            translate,
        } => get(&js, name, seq, last_for, json, translate).await,
        StreamCommand::View(args) => view(&js, args).await,
        StreamCommand::Cluster(args) => {
            crate::jetstream::stream_cluster::run(&js, args, conn).await
        }
    }
}

async fn add(
    js: &Context,
    name: Option<String>,
    flags: StreamFlags,
    json: bool,
) -> Result<(), CliError> {
    create(js, add_config(name, &flags)?, json).await
}

/// The configuration `stream add` makes: the `--config` file's (or the defaults) named
/// `name`, with the flags given written in.
fn add_config(name: Option<String>, flags: &StreamFlags) -> Result<Config, CliError> {
    let mut config: Config = match &flags.config_file {
        Some(path) => read_config(path, &[])?,
        // natscli's default for a new stream lets every replica answer direct gets.
        None => Config {
            allow_direct: true,
            ..Config::default()
        },
    };
    if let Some(name) = name {
        config.name = name;
    }
    if config.name.is_empty() {
        return Err(CliError::Usage(
            "give a NAME or a --config file with a name",
        ));
    }
    flags.apply(&mut config);
    Ok(config)
}

/// Creates the stream `config` describes and shows it.
async fn create(js: &Context, config: Config, json: bool) -> Result<(), CliError> {
    let name = config.name.clone();
    let mut stream = js
        .create_stream(config)
        .await
        .map_err(CliError::js(format!("cannot create stream {name}")))?;
    if json {
        return out::json_pretty(&raw(js, &format!("STREAM.INFO.{name}"), &Value::Null).await?);
    }
    eprintln!("Created stream {name}");
    let info = stream
        .info()
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    out::print(&render_info(info))
}

async fn copy(
    js: &Context,
    source: &str,
    destination: String,
    flags: StreamFlags,
    json: bool,
) -> Result<(), CliError> {
    let original = js
        .get_stream(source)
        .await
        .map_err(CliError::js(format!("cannot read stream {source}")))?;
    let mut config = original.cached_info().config.clone();
    config.name = destination;
    flags.apply(&mut config);
    create(js, config, json).await
}

async fn info(js: &Context, name: String, json: bool) -> Result<(), CliError> {
    if json {
        return out::json_pretty(&raw(js, &format!("STREAM.INFO.{name}"), &Value::Null).await?);
    }
    let stream = js
        .get_stream(&name)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    out::print(&render_info(stream.cached_info()))
}

/// `stream state` and `stream info --state`: the state alone, for people; `--json` gives the
/// whole info, as natscli's does.
async fn state_info(js: &Context, name: String, json: bool) -> Result<(), CliError> {
    if json {
        return info(js, name, json).await;
    }
    let stream = js
        .get_stream(&name)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    let info = stream.cached_info();
    let mut text = format!(
        "State of stream {} created {}\n\n{}",
        info.config.name,
        time(info.created),
        render_state(info)
    );
    if let Some(cluster) = &info.cluster {
        text.push_str(&render_cluster(cluster));
    }
    out::print(&text)
}

async fn edit(
    js: &Context,
    name: String,
    flags: StreamFlags,
    json: bool,
    dry_run: bool,
) -> Result<(), CliError> {
    let stream = js
        .get_stream(&name)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    let mut config = match &flags.config_file {
        Some(path) => read_config(path, &[])?,
        None => stream.cached_info().config.clone(),
    };
    config.name = name.clone();
    flags.apply(&mut config);
    if dry_run {
        return out::json_pretty(&config);
    }
    let info = js
        .update_stream(config)
        .await
        .map_err(CliError::js(format!("cannot update stream {name}")))?;
    if json {
        return out::json_pretty(&raw(js, &format!("STREAM.INFO.{name}"), &Value::Null).await?);
    }
    eprintln!("Updated stream {name}");
    out::print(&render_info(&info))
}

async fn remove(js: &Context, name: String, force: bool) -> Result<(), CliError> {
    // Fail on a missing stream before asking anything.
    raw(js, &format!("STREAM.INFO.{name}"), &Value::Null).await?;
    out::confirm(
        &format!("Really remove stream {name} and all its messages"),
        force,
    )?;
    js.delete_stream(&name)
        .await
        .map_err(CliError::js(format!("cannot remove stream {name}")))?;
    eprintln!("Removed stream {name}");
    Ok(())
}

/// The configuration that seals the stream `STREAM.INFO` answered `info` for: its own, with
/// `sealed` set. `None` when the answer holds no configuration object.
fn sealed(mut info: Value) -> Option<Value> {
    let mut config = info.get_mut("config")?.take();
    config.as_object_mut()?.insert("sealed".into(), json!(true));
    Some(config)
}

/// `stream info` for people.
pub(super) fn render_info(info: &Info) -> String {
    let c = &info.config;
    let mut config = Fields::new();
    config.add_some("Description", c.description.as_deref());
    config.add(
        "Subjects",
        if c.subjects.is_empty() {
            c.name.clone()
        } else {
            c.subjects.join(", ")
        },
    );
    config.add("Storage", format!("{:?}", c.storage));
    config.add("Replicas", c.num_replicas.max(1));
    config.add("Retention", format!("{:?}", c.retention));
    config.add("Discard", format!("{:?}", c.discard));
    config.add("Max messages", limit(c.max_messages));
    config.add("Max per subject", limit(c.max_messages_per_subject));
    config.add("Max bytes", limit_bytes(c.max_bytes));
    config.add(
        "Max age",
        if c.max_age.is_zero() {
            "unlimited".to_owned()
        } else {
            duration(c.max_age)
        },
    );
    config.add(
        "Max message size",
        limit_bytes(i64::from(c.max_message_size)),
    );
    config.add("Max consumers", limit(i64::from(c.max_consumers)));
    config.add("Duplicate window", duration(c.duplicate_window));
    config.add("Allows rollups", yes_no(c.allow_rollup));
    config.add("Allows direct get", yes_no(c.allow_direct));
    config.add("Denies deletes", yes_no(c.deny_delete));
    config.add("Denies purges", yes_no(c.deny_purge));
    // natscli shows these only when on; so do we, to keep the common case short.
    for (on, what) in [
        (c.allow_atomic_publish, "Allows atomic batches"),
        (c.allow_batch_publish, "Allows fast batches"),
        (c.allow_message_counter, "Counter stream"),
        (c.allow_message_ttl, "Allows per-message TTL"),
        (c.allow_message_schedules, "Allows schedules"),
    ] {
        if on {
            config.add(what, "yes");
        }
    }
    // The server's own `_nats.*` entries (API levels) are not the user's metadata.
    let mut pairs: Vec<String> = c
        .metadata
        .iter()
        .filter(|(k, _)| !k.starts_with("_nats."))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !pairs.is_empty() {
        pairs.sort();
        config.add("Metadata", pairs.join(", "));
    }
    if c.sealed {
        config.add("Sealed", "yes");
    }
    let mut text = format!(
        "Stream {} created {}\n\nConfiguration:\n{}\n{}",
        c.name,
        time(info.created),
        config.render(),
        render_state(info)
    );
    if let Some(cluster) = &info.cluster {
        text.push_str(&render_cluster(cluster));
    }
    text
}

/// The `State:` section of `stream info`, which `stream state` shows alone.
fn render_state(info: &Info) -> String {
    let s = &info.state;
    let mut state = Fields::new();
    state.add("Messages", human::count(s.messages));
    state.add("Bytes", bytes(s.bytes));
    state.add(
        "First sequence",
        format!("{} @ {}", s.first_sequence, time(s.first_timestamp)),
    );
    state.add(
        "Last sequence",
        format!("{} @ {}", s.last_sequence, time(s.last_timestamp)),
    );
    state.add("Subjects", human::count(s.subjects_count));
    state.add("Deleted", human::count(s.deleted_count.unwrap_or(0)));
    state.add("Consumers", s.consumer_count);
    format!("State:\n{}", state.render())
}

/// Where a replicated stream or consumer lives: its cluster, leader and replicas.
pub(super) fn render_cluster(cluster: &ClusterInfo) -> String {
    let mut fields = Fields::new();
    fields.add_some("Name", cluster.name.as_deref());
    fields.add_some("Leader", cluster.leader.as_deref());
    for peer in &cluster.replicas {
        let state = match (peer.offline, peer.current) {
            (true, _) => "offline".to_owned(),
            (false, true) => "current".to_owned(),
            (false, false) => format!("lagging by {}", peer.lag.unwrap_or(0)),
        };
        fields.add(
            "Replica",
            format!("{}: {state}, seen {} ago", peer.name, duration(peer.active)),
        );
    }
    format!("\nCluster:\n{}", fields.render())
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealing_keeps_the_configuration_and_sets_sealed() {
        let info = json!({ "config": { "name": "S", "subjects": ["s.>"] }, "state": {} });
        assert_eq!(
            sealed(info),
            Some(json!({ "name": "S", "subjects": ["s.>"], "sealed": true }))
        );
    }

    #[test]
    fn an_answer_without_a_configuration_object_seals_nothing() {
        for info in [
            json!([]),
            json!(null),
            json!({}),
            json!({ "config": [] }),
            json!({ "config": 7 }),
        ] {
            assert_eq!(sealed(info.clone()), None, "{info}");
        }
    }
}
