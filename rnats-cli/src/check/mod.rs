//! `rnats server check`: health checks for monitoring systems, in natscli's shape. Each
//! check prints one result (Nagios line, JSON or text) and exits with the monitoring-plugin
//! code of its status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.

mod credential;
mod message;
mod meta;
mod outcome;
mod probes;
mod request;
mod server;

use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

use crate::conn::{ConnArgs, parse_duration};
use crate::error::CliError;
pub(crate) use outcome::{Outcome, Status};

/// Options of `rnats server check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// What to check.
    #[command(subcommand)]
    command: CheckCommand,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t = Format::Nagios, global = true)]
    format: Format,
}

/// Output formats of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// `STATUS Name OK:... | perfdata`, one line.
    Nagios,
    /// The whole result as a JSON object.
    Json,
    /// A few lines for people.
    Text,
}

/// The checks.
#[derive(Debug, Subcommand)]
enum CheckCommand {
    /// Connects, times a PING and a request through the server.
    ///
    /// Example: rnats server check connection --connect-warn 200ms --rtt-critical 1s
    #[command(alias = "conn")]
    Connection(ConnectionArgs),
    /// Checks a stream's messages, subjects, sources and replicas.
    ///
    /// Example: rnats server check stream --stream ORDERS --msgs-warn 10 --peer-expect 3
    Stream(StreamArgs),
    /// Checks a consumer's outstanding acks, waiting pulls, backlog and activity.
    ///
    /// Example: rnats server check consumer --stream ORDERS --consumer billing --unprocessed-critical 1000
    Consumer(ConsumerArgs),
    /// Checks a Key-Value bucket: its number of values, and that a key has a value.
    ///
    /// Example: rnats server check kv --bucket config --key app.color
    Kv(KvArgs),
    /// Checks the account's JetStream usage against its limits, and stream replicas.
    ///
    /// Example: rnats server check jetstream --store-warn 70 --store-critical 85
    #[command(alias = "js")]
    Jetstream(JetStreamArgs),
    /// Checks a request-reply service: it answers, in time, with what is expected.
    ///
    /// Example: rnats server check request --subject time.now --match-payload '^\d+' --response-critical 1s
    #[command(alias = "req")]
    Request(request::RequestArgs),
    /// Checks the newest message on a subject of a stream: its age and content.
    ///
    /// Example: rnats server check message --stream METRICS --subject metrics.heartbeat --age-critical 5m
    #[command(alias = "msg")]
    Message(message::MessageArgs),
    /// Checks one server's CPU, memory, connections, subscriptions, uptime and settings
    /// (needs a system account user).
    ///
    /// Example: rnats server check server --name n1 --cpu-critical 90 --js-required
    Server(server::ServerArgs),
    /// Checks that a credentials file's JWT does not expire too soon.
    ///
    /// Example: rnats server check credential --credential app.creds --validity-warn 720h
    #[command(alias = "creds")]
    Credential(credential::CredentialArgs),
    /// Checks the JetStream meta cluster: a leader, the expected peers, all current
    /// (needs a system account user).
    ///
    /// Example: rnats server check meta --expect 3 --lag-critical 100 --seen-critical 5s
    #[command(alias = "raft")]
    Meta(meta::MetaArgs),
}

/// Thresholds of `check connection`.
#[derive(Debug, Args)]
pub(crate) struct ConnectionArgs {
    /// Warn when connecting takes longer.
    #[arg(long, default_value = "500ms", value_parser = parse_duration)]
    pub(crate) connect_warn: Duration,
    /// Critical when connecting takes longer.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub(crate) connect_critical: Duration,
    /// Warn when the PING round trip takes longer.
    #[arg(long, default_value = "500ms", value_parser = parse_duration)]
    pub(crate) rtt_warn: Duration,
    /// Critical when the PING round trip takes longer.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub(crate) rtt_critical: Duration,
    /// Warn when a request through the server takes longer.
    #[arg(long, default_value = "500ms", value_parser = parse_duration)]
    pub(crate) req_warn: Duration,
    /// Critical when a request through the server takes longer.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub(crate) req_critical: Duration,
}

/// Thresholds of `check stream`.
#[derive(Debug, Args)]
pub(crate) struct StreamArgs {
    /// The stream.
    #[arg(long)]
    pub(crate) stream: String,
    /// Warn with fewer messages than this.
    #[arg(long, value_name = "MSGS")]
    pub(crate) msgs_warn: Option<u64>,
    /// Critical with fewer messages than this.
    #[arg(long, value_name = "MSGS")]
    pub(crate) msgs_critical: Option<u64>,
    /// Warn with fewer subjects than this.
    #[arg(long, value_name = "SUBJECTS")]
    pub(crate) subjects_warn: Option<u64>,
    /// Critical with fewer subjects than this.
    #[arg(long, value_name = "SUBJECTS")]
    pub(crate) subjects_critical: Option<u64>,
    /// Critical when a source or mirror lags by more messages than this.
    #[arg(long, value_name = "MSGS")]
    pub(crate) lag_critical: Option<u64>,
    /// Critical when a source or mirror was last seen longer ago than this.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) seen_critical: Option<Duration>,
    /// Critical with fewer sources than this.
    #[arg(long, value_name = "SOURCES")]
    pub(crate) min_sources: Option<usize>,
    /// Critical with more sources than this.
    #[arg(long, value_name = "SOURCES")]
    pub(crate) max_sources: Option<usize>,
    /// Critical unless the stream has this many replicas (the leader included).
    #[arg(long, value_name = "SERVERS")]
    pub(crate) peer_expect: Option<usize>,
    /// Critical when a replica lags by more operations than this.
    #[arg(long, value_name = "OPS")]
    pub(crate) peer_lag_critical: Option<u64>,
    /// Critical when a replica was last seen longer ago than this.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) peer_seen_critical: Option<Duration>,
}

/// Thresholds of `check consumer`.
#[derive(Debug, Args)]
pub(crate) struct ConsumerArgs {
    /// The stream.
    #[arg(long)]
    pub(crate) stream: String,
    /// The consumer.
    #[arg(long)]
    pub(crate) consumer: String,
    /// Critical with more outstanding acks than this (-1: no check).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub(crate) outstanding_ack_critical: i64,
    /// Critical with more waiting pulls than this (-1: no check).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub(crate) waiting_critical: i64,
    /// Critical with more unprocessed messages than this (-1: no check).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub(crate) unprocessed_critical: i64,
    /// Critical with more redelivered messages than this (-1: no check).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub(crate) redelivery_critical: i64,
    /// Critical when the last delivery is older than this (0s: no check).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub(crate) last_delivery_critical: Duration,
    /// Critical when the last ack is older than this (0s: no check).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub(crate) last_ack_critical: Duration,
}

/// Thresholds of `check kv`.
#[derive(Debug, Args)]
pub(crate) struct KvArgs {
    /// The bucket.
    #[arg(long)]
    pub(crate) bucket: String,
    /// Critical past this many values (-1: no check); below it when higher than --values-warn.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub(crate) values_critical: i64,
    /// Warn past this many values (-1: no check); below it when higher than --values-critical.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub(crate) values_warn: i64,
    /// Critical unless this key has a value (not deleted).
    #[arg(long)]
    pub(crate) key: Option<String>,
}

/// Thresholds of `check jetstream`, in percent of the account's limits.
#[derive(Debug, Args)]
pub(crate) struct JetStreamArgs {
    /// Warn past this memory use.
    #[arg(long, default_value_t = 75)]
    pub(crate) mem_warn: i64,
    /// Critical past this memory use.
    #[arg(long, default_value_t = 90)]
    pub(crate) mem_critical: i64,
    /// Warn past this file storage use.
    #[arg(long, default_value_t = 75)]
    pub(crate) store_warn: i64,
    /// Critical past this file storage use.
    #[arg(long, default_value_t = 90)]
    pub(crate) store_critical: i64,
    /// Warn past this share of the stream limit (-1: no check).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub(crate) streams_warn: i64,
    /// Critical past this share of the stream limit (-1: no check).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub(crate) streams_critical: i64,
    /// Warn past this share of the consumer limit (-1: no check).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub(crate) consumers_warn: i64,
    /// Critical past this share of the consumer limit (-1: no check).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub(crate) consumers_critical: i64,
    /// Check that every clustered stream's replicas are current.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub(crate) replicas: bool,
    /// Critical when a replica was last seen longer ago than this.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub(crate) replica_seen_critical: Duration,
    /// Critical when a replica lags by more operations than this.
    #[arg(long, default_value_t = 200)]
    pub(crate) replica_lag_critical: u64,
}

/// Runs a check, prints its result and turns its status into the exit code.
pub(crate) async fn run(args: CheckArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let outcome = match args.command {
        CheckCommand::Connection(c) => probes::connection(conn, &c).await,
        CheckCommand::Stream(s) => probes::stream(conn, &s).await,
        CheckCommand::Consumer(c) => probes::consumer(conn, &c).await,
        CheckCommand::Kv(k) => probes::kv(conn, &k).await,
        CheckCommand::Jetstream(j) => probes::jetstream(conn, &j).await,
        CheckCommand::Request(r) => request::check(conn, &r).await,
        CheckCommand::Message(m) => message::check(conn, &m).await,
        CheckCommand::Server(s) => server::check(conn, &s).await,
        CheckCommand::Credential(c) => credential::check(&c),
        CheckCommand::Meta(m) => meta::check(conn, &m).await,
    };
    crate::out::print(&outcome.render(args.format))?;
    match outcome.status() {
        Status::Ok => Ok(()),
        status => Err(CliError::CheckStatus(status as u8)),
    }
}
