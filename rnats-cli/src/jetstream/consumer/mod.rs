//! `rnats consumer`: list, find, add, copy, edit, inspect, pause, reset and remove consumers,
//! report on a stream's consumers, read from them, and move a clustered one's leader.

mod backoff;
mod cluster;
mod copy;
mod find;
mod flags;
mod manage;
mod next;
mod report;
mod sub;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::consumer::{self, DeliverPolicy};
use serde_json::{Value, json};

use self::flags::ConsumerFlags;
use super::config_check::{CheckFlags, consumer_problems};
use super::{ago, duration, raw, raw_list, render_unlisted, time};
use crate::conn::ConnArgs;
use crate::core::show::Shown;
use crate::error::CliError;
use crate::out::{self, Fields, Table};
use crate::stats::human;

/// Options of `rnats consumer`.
#[derive(Debug, Args)]
pub(crate) struct ConsumerArgs {
    /// natscli's flag for its stream picker, which lists the system's streams too with it;
    /// rnats never picks, so it changes nothing.
    #[arg(long, short = 'a', global = true)]
    all: bool,
    /// What to do with consumers.
    #[command(subcommand)]
    command: ConsumerCommand,
}

/// The consumer commands.
#[derive(Debug, Subcommand)]
enum ConsumerCommand {
    /// Lists a stream's consumers.
    ///
    /// Example: rnats consumer ls ORDERS
    #[command(alias = "list")]
    Ls {
        /// The stream.
        stream: String,
        /// The consumers' names as a JSON array (natscli's form).
        #[arg(long, short = 'j')]
        json: bool,
        /// Only the names, one per line.
        #[arg(long, short = 'n', conflicts_with = "json")]
        names: bool,
    },
    /// Finds a stream's consumers that pass every filter given (natscli's filters); one name
    /// a line.
    ///
    /// Example: rnats consumer find ORDERS --pull --idle 24h
    #[command(alias = "query")]
    Find(find::FindArgs),
    /// Creates a durable consumer (pull unless --deliver-subject is given), or with
    /// --validate or --output only checks its configuration.
    ///
    /// Example: rnats consumer add ORDERS billing --filter 'orders.new' --ack explicit --deliver all
    #[command(alias = "create", alias = "new")]
    Add {
        /// The stream.
        stream: String,
        /// The consumer's (durable) name (may come from --config instead).
        #[arg(required_unless_present = "config_file")]
        name: Option<String>,
        /// Take the config from this JSON file (the server's ConsumerConfig, or `consumer
        /// info --json`'s output); flags override it.
        #[arg(
            long = "config",
            value_name = "FILE",
            help_heading = "Consumer settings"
        )]
        config_file: Option<PathBuf>,
        /// A pull consumer (the default; makes a push --config file pull, dropping its push
        /// settings).
        #[arg(
            long,
            conflicts_with = "deliver_subject",
            help_heading = "Consumer settings"
        )]
        pull: bool,
        #[command(flatten)]
        flags: Box<ConsumerFlags>,
        /// Print the server's consumer info as JSON.
        #[arg(long, short = 'j')]
        json: bool,
        /// Accept the defaults for what is not given (natscli's flag; rnats never prompts).
        #[arg(long)]
        defaults: bool,
        #[command(flatten)]
        check: CheckFlags,
    },
    /// Shows a consumer's configuration and state.
    ///
    /// Example: rnats consumer info ORDERS billing
    #[command(alias = "nfo")]
    Info {
        /// The stream.
        stream: String,
        /// The consumer.
        name: String,
        /// The server's JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Shows a consumer's state: deliveries, acks, pending messages, waiting pulls (and its
    /// cluster).
    ///
    /// Example: rnats consumer state ORDERS billing
    State {
        /// The stream.
        stream: String,
        /// The consumer.
        name: String,
        /// The server's JSON (the whole consumer info, as natscli prints it).
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Creates a consumer on the same stream with another's configuration (not its state);
    /// flags override it.
    ///
    /// Example: rnats consumer copy ORDERS billing audit --description Audit
    #[command(alias = "cp")]
    Copy(copy::CopyArgs),
    /// Removes a consumer.
    ///
    /// Example: rnats consumer rm ORDERS billing --force
    #[command(alias = "delete", alias = "del")]
    Rm {
        /// The stream.
        stream: String,
        /// The consumer.
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Fetches messages from a pull consumer and acks them.
    ///
    /// Example: rnats consumer next ORDERS billing --count 10
    Next(next::NextArgs),
    /// Changes the settings given of a consumer, keeping the others.
    ///
    /// Example: rnats consumer edit ORDERS billing --max-deliver 10 --description Billing
    #[command(alias = "update")]
    Edit(manage::EditArgs),
    /// Pauses a consumer until a time, or for a duration: it delivers nothing meanwhile.
    ///
    /// Example: rnats consumer pause ORDERS billing 1h --force
    Pause(manage::PauseArgs),
    /// Resumes a paused consumer.
    ///
    /// Example: rnats consumer resume ORDERS billing --force
    Resume(manage::ResumeArgs),
    /// Unpins the pinned client of a priority group, so the next client to pull gets the pin.
    ///
    /// Example: rnats consumer unpin ORDERS workers jobs --force
    Unpin(manage::UnpinArgs),
    /// Moves a consumer's ack floor back to a stream sequence (or to where it is), so that it
    /// delivers again from there (nats-server 2.14+).
    ///
    /// Example: rnats consumer reset ORDERS billing --sequence 100 --force
    Reset(manage::ResetArgs),
    /// Manages a clustered consumer: moves its leader.
    ///
    /// Example: rnats consumer cluster step-down ORDERS billing --preferred n2
    #[command(alias = "c")]
    Cluster(cluster::ClusterArgs),
    /// Reports on every consumer of a stream: mode, acks, pending and redelivered.
    ///
    /// Example: rnats consumer report ORDERS
    Report(report::ReportArgs),
    /// Reads messages from a consumer as they come (pull or push), acking them.
    ///
    /// Example: rnats consumer sub ORDERS billing --count 10
    Sub(sub::SubArgs),
}

/// Runs a consumer command.
pub(crate) async fn run(args: ConsumerArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let command = match args.command {
        // Checking or saving a configuration makes nothing, so it needs no server.
        ConsumerCommand::Add {
            name,
            config_file,
            pull,
            flags,
            check,
            ..
        } if check.wanted() => {
            let (_, config) = flags.new_config(config_file.as_deref(), name.as_deref(), pull)?;
            return check.finish("consumer", &config, consumer_problems(&config));
        }
        command => command,
    };
    let js = crate::conn::jetstream(conn).await?;
    match command {
        ConsumerCommand::Ls {
            stream,
            json,
            names,
        } => list(&js, stream, json, names).await,
        ConsumerCommand::Add {
            stream,
            name,
            config_file,
            pull,
            flags,
            json,
            ..
        } => {
            let (name, config) = flags.new_config(config_file.as_deref(), name.as_deref(), pull)?;
            add(&js, stream, name, config, json).await
        }
        ConsumerCommand::Info { stream, name, json } => info(&js, stream, name, json).await,
        ConsumerCommand::State { stream, name, json } => state(&js, stream, name, json).await,
        ConsumerCommand::Copy(args) => copy::run(&js, args).await,
        ConsumerCommand::Rm {
            stream,
            name,
            force,
        } => remove(&js, stream, name, force).await,
        ConsumerCommand::Next(next_args) => next::run(&js, next_args, js_timeout(conn)).await,
        ConsumerCommand::Edit(edit) => manage::edit(&js, edit).await,
        ConsumerCommand::Pause(pause) => manage::pause(&js, pause).await,
        ConsumerCommand::Resume(resume) => manage::resume(&js, resume).await,
        ConsumerCommand::Unpin(unpin) => manage::unpin(&js, unpin).await,
        ConsumerCommand::Reset(reset) => manage::reset(&js, reset).await,
        ConsumerCommand::Cluster(args) => cluster::run(&js, args, conn).await,
        ConsumerCommand::Report(report) => report::run(&js, report).await,
        ConsumerCommand::Find(find) => find::run(&js, find).await,
        ConsumerCommand::Sub(sub) => sub::run(&js, sub).await,
    }
}

async fn list(js: &Context, stream: String, json: bool, names: bool) -> Result<(), CliError> {
    // Found first, for the same error either way (a name that is no subject token, or no
    // such stream).
    let handle = get_stream(js, &stream).await?;
    if json {
        // natscli prints the names alone, as the server lists them, sorted.
        let listed = raw_list(js, &format!("CONSUMER.NAMES.{stream}"), "consumers").await?;
        let mut names: Vec<&str> = listed.iter().filter_map(Value::as_str).collect();
        names.sort_unstable();
        return out::json(&names);
    }
    let mut consumers = handle.consumers();
    let mut infos = Vec::new();
    while let Some(info) = consumers.next().await {
        infos.push(info.map_err(CliError::js(format!("cannot list consumers of {stream}")))?);
    }
    let unlisted = render_unlisted("consumers", consumers.missing(), consumers.offline());
    infos.sort_by(|a, b| a.name.cmp(&b.name));
    if names {
        // The names are for scripts: what could not be listed goes to stderr.
        eprint!("{unlisted}");
        return out::print(
            &infos
                .iter()
                .map(|i| format!("{}\n", i.name))
                .collect::<String>(),
        );
    }
    if infos.is_empty() && unlisted.is_empty() {
        eprintln!("No consumers on {stream}");
        return Ok(());
    }
    let mut table = Table::new([
        "Name",
        "Kind",
        "Filter",
        "Pending",
        "Ack pending",
        "Redelivered",
        "Last delivery",
    ]);
    for info in &infos {
        table.row(vec![
            info.name.clone(),
            kind(&info.config).to_owned(),
            filter(&info.config),
            human::count(info.num_pending),
            human::count(info.num_ack_pending as u64),
            human::count(info.num_redelivered as u64),
            info.delivered
                .last_active
                .map(|t| format!("{} ago", ago(t)))
                .unwrap_or_else(|| "never".to_owned()),
        ]);
    }
    if !infos.is_empty() {
        table.print()?;
    }
    out::print(&unlisted)
}

async fn add(
    js: &Context,
    stream: String,
    name: String,
    config: consumer::Config,
    json: bool,
) -> Result<(), CliError> {
    let handle = get_stream(js, &stream).await?;
    let consumer: consumer::Consumer<consumer::Config> = handle
        .create_consumer(config)
        .await
        .map_err(CliError::js(format!(
            "cannot create consumer {name} on {stream}"
        )))?;
    show_consumer(js, &stream, &name, consumer.cached_info(), json).await
}

/// Shows the consumer `name` on `stream` that `add` or `copy` asked for, whose info is
/// `info`: for people, or as the server's JSON. Nothing says it was created, as the server
/// answers alike when a consumer with that configuration was already there; natscli too
/// prints the info alone.
async fn show_consumer(
    js: &Context,
    stream: &str,
    name: &str,
    info: &consumer::Info,
    json: bool,
) -> Result<(), CliError> {
    if json {
        return info_json(js, stream, name).await;
    }
    out::print(&render_info(info))
}

async fn info(js: &Context, stream: String, name: String, json: bool) -> Result<(), CliError> {
    if json {
        return info_json(js, &stream, &name).await;
    }
    let info = consumer_info(js, &stream, &name).await?;
    out::print(&render_info(&info))
}

/// `consumer state`: the state alone, for people; `--json` gives the whole info, as natscli's
/// does.
async fn state(js: &Context, stream: String, name: String, json: bool) -> Result<(), CliError> {
    if json {
        return info_json(js, &stream, &name).await;
    }
    let info = consumer_info(js, &stream, &name).await?;
    out::print(&format!(
        "State of consumer {} on {} created {}\n\n{}",
        info.name,
        info.stream_name,
        time(info.created),
        render_state(&info)
    ))
}

async fn remove(js: &Context, stream: String, name: String, force: bool) -> Result<(), CliError> {
    raw(js, &format!("CONSUMER.INFO.{stream}.{name}"), &Value::Null).await?;
    out::confirm(&format!("Really remove consumer {name} on {stream}"), force)?;
    js.delete_consumer_from_stream(&name, &stream)
        .await
        .map_err(CliError::js(format!(
            "cannot remove consumer {name} on {stream}"
        )))?;
    eprintln!("Removed consumer {name} on {stream}");
    Ok(())
}

/// How long `next` waits for messages: the connection timeout.
fn js_timeout(conn: &ConnArgs) -> Duration {
    conn.timeout.unwrap_or(Duration::from_secs(5))
}

async fn get_stream(
    js: &Context,
    stream: &str,
) -> Result<rnats::jetstream::stream::Stream<()>, CliError> {
    js.get_stream_no_info(stream)
        .await
        .map_err(CliError::js(format!("cannot read stream {stream}")))
}

/// The info of the consumer `name` on `stream`, failing as `consumer info` does.
async fn consumer_info(js: &Context, stream: &str, name: &str) -> Result<consumer::Info, CliError> {
    get_stream(js, stream)
        .await?
        .consumer_info(name)
        .await
        .map_err(CliError::js(format!(
            "cannot read consumer {name} on {stream}"
        )))
}

async fn info_json(js: &Context, stream: &str, name: &str) -> Result<(), CliError> {
    let info = raw(js, &format!("CONSUMER.INFO.{stream}.{name}"), &Value::Null).await?;
    out::json_pretty(&info)
}

fn kind(config: &consumer::Config) -> &'static str {
    if config.deliver_subject.is_some() {
        "push"
    } else {
        "pull"
    }
}

fn filter(config: &consumer::Config) -> String {
    if !config.filter_subject.is_empty() {
        config.filter_subject.clone()
    } else if !config.filter_subjects.is_empty() {
        config.filter_subjects.join(", ")
    } else {
        "-".to_owned()
    }
}

/// `consumer info` for people.
fn render_info(info: &consumer::Info) -> String {
    let c = &info.config;
    let mut config = Fields::new();
    config.add_some("Description", c.description.as_deref());
    config.add("Kind", kind(c));
    config.add_some("Deliver subject", c.deliver_subject.as_deref());
    config.add_some("Deliver group", c.deliver_group.as_deref());
    config.add("Filter", filter(c));
    config.add("Deliver policy", deliver_text(&c.deliver_policy));
    config.add("Ack policy", format!("{:?}", c.ack_policy));
    config.add("Ack wait", duration(c.ack_wait));
    if c.sample_frequency > 0 {
        config.add("Sampling rate", format!("{}%", c.sample_frequency));
    }
    config.add("Max deliver", super::limit(c.max_deliver));
    config.add("Max ack pending", super::limit(c.max_ack_pending));
    config.add("Replay policy", format!("{:?}", c.replay_policy));
    format!(
        "Consumer {} on {} created {}\n\nConfiguration:\n{}\n{}",
        info.name,
        info.stream_name,
        time(info.created),
        config.render(),
        render_state(info)
    )
}

/// A consumer's state and, when replicated, where its replicas are.
fn render_state(info: &consumer::Info) -> String {
    let mut state = Fields::new();
    state.add(
        "Last delivered",
        format!(
            "consumer seq {}, stream seq {}",
            info.delivered.consumer_sequence, info.delivered.stream_sequence
        ),
    );
    state.add(
        "Ack floor",
        format!(
            "consumer seq {}, stream seq {}",
            info.ack_floor.consumer_sequence, info.ack_floor.stream_sequence
        ),
    );
    state.add("Pending", human::count(info.num_pending));
    state.add("Ack pending", human::count(info.num_ack_pending as u64));
    state.add("Redelivered", human::count(info.num_redelivered as u64));
    state.add("Waiting pulls", info.num_waiting);
    let mut text = format!("State:\n{}", state.render());
    if let Some(cluster) = &info.cluster {
        text.push_str(&super::stream::render_cluster(cluster));
    }
    text
}

fn deliver_text(policy: &DeliverPolicy) -> String {
    match policy {
        DeliverPolicy::All => "all".to_owned(),
        DeliverPolicy::Last => "last".to_owned(),
        DeliverPolicy::New => "new".to_owned(),
        DeliverPolicy::LastPerSubject => "last per subject".to_owned(),
        DeliverPolicy::ByStartSequence { start_sequence } => {
            format!("from sequence {start_sequence}")
        }
        DeliverPolicy::ByStartTime { start_time } => format!("from {}", time(*start_time)),
    }
}

/// How `next` prints what it fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    Human,
    Json,
    Raw,
}

fn print_fetched(
    stream: &str,
    message: &rnats::jetstream::Message,
    seq: u64,
    output: Output,
    label: &str,
) -> Result<(), CliError> {
    let shown = Shown {
        subject: message.subject.as_str(),
        reply: None,
        headers: message.headers.as_ref(),
        payload: &message.payload,
    };
    match output {
        Output::Json => {
            let mut object = shown.json();
            object.insert("seq".into(), json!(seq));
            out::json(&object)
        }
        Output::Raw => {
            out::print_bytes(&message.payload)?;
            out::print("\n")
        }
        Output::Human => out::print(&shown.human(&format!(
            "[{stream}#{seq}] Received on {:?}{label}",
            shown.subject
        ))),
    }
}
