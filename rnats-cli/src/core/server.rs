//! `rnats server info` and `rnats rtt`: what the server says about itself, and how far
//! away it is.

use std::time::Instant;

use clap::{Args, Subcommand};
use serde_json::json;

use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out::{self, Fields};
use crate::stats::human;

/// Options of `rnats server`.
#[derive(Debug, Args)]
pub(crate) struct ServerArgs {
    /// What to ask the server.
    #[command(subcommand)]
    command: ServerCommand,
}

/// The server commands.
#[derive(Debug, Subcommand)]
enum ServerCommand {
    /// Shows the INFO the server sent: name, version, limits, JetStream, cluster.
    ///
    /// Example: rnats server info -s nats://127.0.0.1:4222
    #[command(alias = "i")]
    Info {
        /// The INFO as JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Pings every server of the system and shows how long each took to answer (needs a
    /// system account user).
    ///
    /// Example: rnats server ping 3 --user sys --password pass
    Ping {
        /// Servers to wait for (0 or none: as many as the answers count active).
        expect: Option<usize>,
        /// Show each server's ID too.
        #[arg(long)]
        id: bool,
    },
    /// Lists every server of the system with its load (needs a system account user).
    ///
    /// Example: rnats server list --sort conns
    #[command(alias = "ls")]
    List(super::server_ping::ListArgs),
    /// Reports gathered from every server: connections, accounts, JetStream, routes, leaf
    /// nodes, gateways, CPU, memory and health (needs a system account user).
    ///
    /// Example: rnats server report connections --top 10
    #[command(alias = "rep")]
    Report(super::server_report::ReportArgs),
    /// One kind of monitoring data from every server, as JSON: variables, connections,
    /// routes, gateways, leafnodes, subscriptions, accounts, jetstream, jetstream-health,
    /// raft, ipqueue; and kick (needs a system account user).
    ///
    /// Example: rnats server request variables --name n1
    #[command(alias = "req")]
    Request(super::server_request::RequestArgs),
    /// Manages the JetStream meta group: moves its leader, removes a server for good (needs
    /// a system account user).
    ///
    /// Example: rnats server cluster step-down --user sys --password pass
    #[command(alias = "raft", alias = "r")]
    Cluster(super::server_cluster::ClusterArgs),
    /// Health checks for monitoring systems, exiting 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
    ///
    /// Example: rnats server check connection
    Check(crate::check::CheckArgs),
}

/// Options of `rnats rtt`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  rnats rtt 10\n  rnats rtt --count 3 --json")]
pub(crate) struct RttArgs {
    /// Round trips to time (natscli's argument) [default: 5].
    #[arg(value_name = "ITERATIONS", value_parser = clap::value_parser!(u64).range(1..))]
    iterations: Option<u64>,
    /// Round trips to time, as a flag.
    #[arg(long, short = 'c', conflicts_with = "iterations", value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// The samples and their average as JSON.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Runs `rnats server ...`.
pub(crate) async fn run(args: ServerArgs, conn: &ConnArgs) -> Result<(), CliError> {
    match args.command {
        ServerCommand::Info { json } => info(conn, json).await,
        ServerCommand::Ping { expect, id } => super::server_ping::ping(conn, expect, id).await,
        ServerCommand::List(list) => super::server_ping::list(conn, list).await,
        ServerCommand::Check(check) => crate::check::run(check, conn).await,
        ServerCommand::Report(report) => super::server_report::run(report, conn).await,
        ServerCommand::Request(request) => super::server_request::run(request, conn).await,
        ServerCommand::Cluster(cluster) => super::server_cluster::run(cluster, conn).await,
    }
}

/// Runs `server info`.
async fn info(conn: &ConnArgs, json: bool) -> Result<(), CliError> {
    let (client, settings) = conn.connect().await?;
    let info = client.server_info();
    if json {
        return out::json_pretty(&info);
    }
    let mut fields = Fields::new();
    fields.add("Name", &info.server_name);
    fields.add("ID", &info.server_id);
    fields.add("Version", &info.version);
    fields.add("Go", &info.go);
    fields.add("Host", format!("{}:{}", info.host, info.port));
    fields.add("Connected to", &settings.url);
    fields.add("Max payload", human::size(info.max_payload));
    fields.add("Headers", yes_no(info.headers));
    fields.add("JetStream", yes_no(info.jetstream));
    fields.add_some("Domain", info.domain.as_deref());
    fields.add("Cluster", info.cluster.as_deref().unwrap_or("-"));
    fields.add("Auth required", yes_no(info.auth_required));
    fields.add(
        "TLS",
        if info.tls_required {
            "required"
        } else if info.tls_available {
            "available"
        } else {
            "no"
        },
    );
    fields.add("Lame duck", yes_no(info.lame_duck_mode));
    fields.add("Client ID", info.client_id);
    fields.add("Client IP", &info.client_ip);
    let urls = if info.connect_urls.is_empty() {
        "-".to_owned()
    } else {
        info.connect_urls.join(", ")
    };
    fields.add("Connect URLs", urls);
    out::print(&format!(
        "Server {:?}\n\n{}",
        info.server_name,
        fields.render()
    ))
}

/// Runs `rnats rtt`.
pub(crate) async fn rtt(args: RttArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let (client, settings) = conn.connect().await?;
    let rounds = args.iterations.or(args.count).unwrap_or(5);
    let mut samples = Vec::new();
    for _ in 0..rounds {
        let started = Instant::now();
        client.flush().await?;
        samples.push(started.elapsed().as_secs_f64() * 1e6);
    }
    let average = samples.iter().sum::<f64>() / samples.len() as f64;
    if args.json {
        return out::json(&json!({
            "server": settings.url,
            "samples_us": samples,
            "average_us": average,
        }));
    }
    let mut text = format!("{}:\n", settings.url);
    for sample in &samples {
        text.push_str(&format!("  {}\n", human::latency_us(*sample)));
    }
    text.push_str(&format!("  average {}\n", human::latency_us(average)));
    out::print(&text)
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}
