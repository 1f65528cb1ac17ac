//! `rnats consumer`: list, find, add, edit, inspect, pause, reset and remove consumers, report
//! on a stream's consumers, read from them, and move a clustered one's leader.

mod backoff;
mod cluster;
mod find;
mod manage;
mod next;
mod report;
mod sub;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::consumer::{self, AckPolicy, DeliverPolicy, ReplayPolicy};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{ago, duration, raw, raw_list, read_json, render_unlisted, time};
use crate::conn::{ConnArgs, parse_duration};
use crate::core::show::Shown;
use crate::error::CliError;
use crate::out::{self, Fields, Table};
use crate::stats::human;

/// Options of `rnats consumer`.
#[derive(Debug, Args)]
pub(crate) struct ConsumerArgs {
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
        /// The server's consumer infos as a JSON array.
        #[arg(long)]
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
    /// Creates a durable consumer (pull unless --deliver-subject is given).
    ///
    /// Example: rnats consumer add ORDERS billing --filter 'orders.new' --ack explicit --deliver all
    #[command(alias = "create", alias = "new")]
    Add {
        /// The stream.
        stream: String,
        /// The consumer's (durable) name.
        name: String,
        #[command(flatten)]
        flags: Box<ConsumerFlags>,
        /// Print the server's consumer info as JSON.
        #[arg(long)]
        json: bool,
        /// Accept the defaults for what is not given (natscli's flag; rnats never prompts).
        #[arg(long)]
        defaults: bool,
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
        #[arg(long)]
        json: bool,
    },
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

/// Consumer settings of `consumer add`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Consumer settings")]
struct ConsumerFlags {
    /// Take the config from this JSON file (the server's ConsumerConfig); flags override it.
    #[arg(long = "config", value_name = "FILE")]
    config_file: Option<PathBuf>,
    /// A pull consumer (the default).
    #[arg(long, conflicts_with = "deliver_subject")]
    pull: bool,
    /// Make a push consumer delivering to this subject.
    #[arg(long, visible_alias = "target", value_name = "SUBJECT")]
    deliver_subject: Option<String>,
    /// Queue group of a push consumer's subscribers.
    #[arg(long, value_name = "GROUP", requires = "deliver_subject")]
    deliver_group: Option<String>,
    /// Only messages on this subject; repeat for several.
    #[arg(long, value_name = "SUBJECT")]
    filter: Vec<String>,
    /// How messages are acknowledged.
    #[arg(long, value_enum)]
    ack: Option<Ack>,
    /// Where to start: all, new, last, last-per-subject, a sequence, a duration ago (1h) or
    /// an RFC 3339 time.
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
    /// Idle heartbeats of a push consumer, this often, e.g. 5s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    heartbeat: Option<Duration>,
    /// Flow control for a push consumer.
    #[arg(long)]
    flow_control: bool,
    /// How long the consumer may go unused before the server removes it, e.g. 1h.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    inactive_threshold: Option<Duration>,
    /// Deliver only headers, no bodies.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    headers_only: Option<bool>,
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
    /// The config: the file's or a durable default, with the flags given written in.
    fn config(&self, name: &str) -> Result<consumer::Config, CliError> {
        let config: consumer::Config = match &self.config_file {
            Some(path) => read_json(path)?,
            None => consumer::Config::default(),
        };
        self.applied_to(config, name)
    }

    /// `config` named `name`, with the flags given written in.
    fn applied_to(
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
        match self.filter.as_slice() {
            [] => {}
            [one] => config.filter_subject = one.clone(),
            many => config.filter_subjects = many.to_vec(),
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
        set(&mut config.headers_only, self.headers_only);
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

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *field = value;
    }
}

/// natscli's `--deliver` values.
fn deliver_policy(text: &str) -> Result<DeliverPolicy, CliError> {
    Ok(match text {
        "all" => DeliverPolicy::All,
        "new" => DeliverPolicy::New,
        "last" => DeliverPolicy::Last,
        "last-per-subject" | "last_per_subject" => DeliverPolicy::LastPerSubject,
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
                    reason: "use all, new, last, last-per-subject, a sequence, a duration or an RFC 3339 time".to_owned(),
                });
            }
        }
    })
}

/// Runs a consumer command.
pub(crate) async fn run(args: ConsumerArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let js = crate::conn::jetstream(conn).await?;
    match args.command {
        ConsumerCommand::Ls {
            stream,
            json,
            names,
        } => list(&js, stream, json, names).await,
        ConsumerCommand::Add {
            stream,
            name,
            flags,
            json,
            ..
        } => add(&js, stream, name, flags, json).await,
        ConsumerCommand::Info { stream, name, json } => info(&js, stream, name, json).await,
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
        let list = raw_list(js, &format!("CONSUMER.LIST.{stream}"), "consumers").await?;
        return out::json(&list);
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
    flags: Box<ConsumerFlags>,
    json: bool,
) -> Result<(), CliError> {
    let config = flags.config(&name)?;
    let handle = get_stream(js, &stream).await?;
    let consumer: consumer::Consumer<consumer::Config> = handle
        .create_consumer(config)
        .await
        .map_err(CliError::js(format!(
            "cannot create consumer {name} on {stream}"
        )))?;
    if json {
        return info_json(js, &stream, &name).await;
    }
    eprintln!("Created consumer {name} on {stream}");
    out::print(&render_info(consumer.cached_info()))
}

async fn info(js: &Context, stream: String, name: String, json: bool) -> Result<(), CliError> {
    if json {
        return info_json(js, &stream, &name).await;
    }
    let handle = get_stream(js, &stream).await?;
    let info = handle
        .consumer_info(&name)
        .await
        .map_err(CliError::js(format!(
            "cannot read consumer {name} on {stream}"
        )))?;
    out::print(&render_info(&info))
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
