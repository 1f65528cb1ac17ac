//! `rnats service`: find Service API (ADR-32) instances and read their info and stats from
//! their `$SRV.*` replies.

use std::collections::BTreeMap;
use std::time::Duration;

use clap::{Args, Subcommand};
use rnats::service::discovery::Discovery;

use crate::conn::{ConnArgs, parse_duration};
use crate::core::RequestFlags;
use crate::error::CliError;
use crate::out::{self, Table};
use crate::stats::human;

/// Options of `rnats service`.
#[derive(Debug, Args)]
pub(crate) struct ServiceArgs {
    /// What to ask the services.
    #[command(subcommand)]
    command: ServiceCommand,
    /// How long to collect replies.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "1s", global = true)]
    wait: Duration,
    /// Stop collecting once this many instances answered.
    #[arg(long, value_name = "N", global = true)]
    expect: Option<usize>,
}

/// The service commands.
#[derive(Debug, Subcommand)]
enum ServiceCommand {
    /// Lists the services that answer, one line per name.
    ///
    /// Example: rnats service ls
    #[command(alias = "list", alias = "l")]
    Ls {
        /// Only instances of this service.
        name: Option<String>,
        /// Every instance's INFO as a JSON array.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Shows each instance of a service with its endpoints.
    ///
    /// Example: rnats service info adder
    #[command(alias = "i")]
    Info {
        /// The service.
        name: String,
        /// Only this instance.
        id: Option<String>,
        /// Only the endpoints whose names this regular expression matches.
        #[arg(long, short = 'e', value_name = "REGEX", value_parser = crate::parse::regex)]
        endpoint: Option<regex::Regex>,
        /// The INFO replies as a JSON array.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Shows request counts, errors and processing times per endpoint.
    ///
    /// Example: rnats service stats adder
    Stats {
        /// Only instances of this service.
        name: Option<String>,
        /// Only this instance.
        id: Option<String>,
        /// The STATS replies as a JSON array.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Sends a request to a service's endpoint, its subject read from the service's INFO,
    /// and prints the reply as `rnats req` does (its flags too).
    ///
    /// Example: rnats service request adder add '[1, 2]'
    #[command(alias = "req")]
    Request {
        /// The service.
        name: String,
        /// The endpoint's name.
        endpoint: String,
        #[command(flatten)]
        request: RequestFlags,
    },
    /// Runs a demo service, NAME with the endpoint `echo` on `NAME.echo`, until interrupted:
    /// each request is answered with its body and headers, and headers saying who answered.
    ///
    /// Example: rnats service serve demo -H Region:eu
    Serve {
        /// The service's name.
        name: String,
        /// A header added to every reply, KEY:VALUE; repeat for more.
        #[arg(long = "header", short = 'H', value_name = "KEY:VALUE")]
        headers: Vec<String>,
        /// Stop after answering this many requests (rnats' own; natscli runs until
        /// interrupted).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        count: Option<u64>,
    },
    /// PINGs the instances and lists those that answer.
    ///
    /// Example: rnats service ping adder
    Ping {
        /// Only instances of this service.
        name: Option<String>,
        /// The PING replies as a JSON array.
        #[arg(long, short = 'j')]
        json: bool,
    },
}

/// What a failed discovery request says.
const FAILED: &str = "service discovery failed";

/// Runs a service command.
pub(crate) async fn run(args: ServiceArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let (client, settings) = conn.connect().await?;
    let mut discovery = Discovery::new(client.clone()).timeout(args.wait);
    if let Some(n) = args.expect {
        discovery = discovery.max_replies(n);
    }
    match args.command {
        ServiceCommand::Request {
            name,
            endpoint,
            mut request,
        } => {
            // Any instance's INFO names the endpoint's subject: the first to answer does.
            let discovery = discovery.max_replies(1);
            let infos = discovery
                .info(Some(&name))
                .await
                .map_err(CliError::js(FAILED))?;
            let Some(info) = infos.first() else {
                return Err(CliError::NothingReceived {
                    what: "no instance of the service answered",
                    timeout: args.wait,
                });
            };
            let subject = endpoint_subject(info, &endpoint)?;
            request.empty_unless_piped();
            let mut requests = crate::core::request_messages(&subject, &request)?;
            crate::core::send_requests(&client, settings.timeout, &mut requests, &request).await
        }
        ServiceCommand::Serve {
            name,
            headers,
            count,
        } => serve(client, settings.timeout, &name, &headers, count).await,
        ServiceCommand::Ls { name, json } => list(&discovery, name, json, args.wait).await,
        ServiceCommand::Info {
            name,
            id,
            endpoint,
            json,
        } => info(&discovery, name, id, endpoint.as_ref(), json, args.wait).await,
        ServiceCommand::Stats { name, id, json } => {
            stats(&discovery, name, id, json, args.wait).await
        }
        ServiceCommand::Ping { name, json } => ping(&discovery, name, json, args.wait).await,
    }
}

/// `service serve`: the demo service, answering on `NAME.echo` until interrupted or `count`
/// requests were answered.
async fn serve(
    client: rnats::Client,
    timeout: Duration,
    name: &str,
    headers: &[String],
    count: Option<u64>,
) -> Result<(), CliError> {
    use futures_util::StreamExt;
    use rnats::service::ServiceExt;

    // Read before anything is started, so that a bad header costs nothing.
    let extra = crate::parse::headers(headers)?.unwrap_or_default();
    let metadata = [
        ("_nats.client.created.library", "rnats"),
        ("_nats.client.created.version", env!("CARGO_PKG_VERSION")),
    ];
    // natscli's custom stats: the bytes of every request body the echo endpoint took.
    let total_payload = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = total_payload.clone();
    let service = client
        .service_builder()
        .description(format!("rnats demo service ({name})"))
        .stats_handler(move |_endpoint, _stats| {
            serde_json::json!({
                "total_payload": counted.load(std::sync::atomic::Ordering::Relaxed)
            })
        })
        .metadata(
            metadata
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
        .start(name, "1.0.0")
        .await
        .map_err(CliError::js("cannot start the service"))?;
    let mut echo = service
        .group(name)
        .endpoint_builder()
        .name("echo")
        .add("echo")
        .await
        .map_err(CliError::js("cannot add the echo endpoint"))?;
    client
        .flush()
        .await
        .map_err(CliError::js("cannot flush the service's subscriptions"))?;
    // No credentials: the address's own display leaves them out.
    let connected = || {
        client
            .connected_server()
            .map(|s| s.to_string())
            .unwrap_or_default()
    };
    let server = connected();
    let mut banner = format!(
        "rnats service {name} (handler {}) waiting for requests on {server}\n\n\
         Listening subjects:\n  {name}.echo  echo service\n",
        std::process::id()
    );
    if !extra.is_empty() {
        banner.push_str("\nCustom response headers:\n");
        for (key, values) in extra.iter() {
            for value in values {
                banner.push_str(&format!("  {key}: {value}\n"));
            }
        }
    }
    // One listener for the whole run: a Ctrl-C while a reply is sent is kept for the next
    // turn, and the first thing each turn looks at. Polled once before the banner, which
    // puts the handler in place: a Ctrl-C right after "waiting" stops the service cleanly.
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    let already =
        std::future::poll_fn(|cx| std::task::Poll::Ready(interrupted.as_mut().poll(cx).is_ready()))
            .await;
    // On stderr, as the other commands that run until interrupted say they are ready.
    eprint!("{banner}");
    let mut answered = 0u64;
    // A Ctrl-C that came before the banner ends the run before any request is taken.
    if !already {
        loop {
            let request = tokio::select! {
                biased;
                _ = &mut interrupted => None,
                request = echo.next() => request,
            };
            let Some(request) = request else { break };
            let subject = request.message.subject.to_string();
            eprintln!("Handling request on subject {subject}");
            let mut reply = rnats::HeaderMap::new();
            // Read for each request: after a reconnect they name the server that answered.
            reply.insert("ConnectedUrl", connected().as_str());
            reply.insert("Handler", std::process::id().to_string().as_str());
            reply.insert("Subject", subject.as_str());
            reply.insert(
                "Timestamp",
                crate::jetstream::time(time::OffsetDateTime::now_utc()).as_str(),
            );
            if let Some(cluster) = &client.server_info().cluster {
                reply.insert("ConnectedCluster", cluster.as_str());
            }
            for source in [Some(&extra), request.message.headers.as_ref()]
                .into_iter()
                .flatten()
            {
                for (key, values) in source.iter() {
                    for value in values {
                        reply.append(key.as_str(), value.as_str());
                    }
                }
            }
            let payload = request.message.payload.clone();
            total_payload.fetch_add(payload.len() as u64, std::sync::atomic::Ordering::Relaxed);
            if let Err(e) = request.respond_with_headers(Ok(payload), reply).await {
                eprintln!("cannot answer the request on {subject}: {e}");
            }
            answered += 1;
            if count.is_some_and(|count| answered >= count) {
                break;
            }
        }
    }
    // Bounded: a stop waits for its last flush, which a lost server would hold for ever.
    match tokio::time::timeout(timeout, service.stop()).await {
        Ok(stopped) => stopped.map_err(CliError::js("cannot stop the service")),
        Err(_) => Err(CliError::NothingReceived {
            what: "the service did not stop (its subscriptions were not flushed)",
            timeout,
        }),
    }
}

/// The subject of the endpoint `name` of the service `info` describes, or an error naming
/// the endpoints it has.
fn endpoint_subject(info: &rnats::service::Info, name: &str) -> Result<String, CliError> {
    if let Some(endpoint) = info.endpoints.iter().find(|e| e.name == name) {
        return Ok(endpoint.subject.clone());
    }
    let names: Vec<&str> = info.endpoints.iter().map(|e| e.name.as_str()).collect();
    Err(CliError::InvalidArgument {
        what: "endpoint",
        given: name.to_owned(),
        reason: if names.is_empty() {
            format!("service {:?} has no endpoints", info.name)
        } else {
            format!("service {:?} has {}", info.name, names.join(", "))
        },
    })
}

async fn list(
    discovery: &Discovery,
    name: Option<String>,
    json: bool,
    wait: Duration,
) -> Result<(), CliError> {
    let mut infos = discovery
        .info(name.as_deref())
        .await
        .map_err(CliError::js(FAILED))?;
    infos.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    if json {
        return out::json(&infos);
    }
    if infos.is_empty() {
        eprintln!("No services answered within {:?}", wait);
        return Ok(());
    }
    let mut by_name: BTreeMap<&str, Vec<&rnats::service::Info>> = BTreeMap::new();
    for info in &infos {
        by_name.entry(&info.name).or_default().push(info);
    }
    let mut table = Table::new(["Name", "Version", "Instances", "Endpoints", "Description"]);
    for (name, instances) in by_name {
        let mut versions: Vec<&str> = instances.iter().map(|i| i.version.as_str()).collect();
        versions.sort_unstable();
        versions.dedup();
        table.row(vec![
            name.to_owned(),
            versions.join(", "),
            instances.len().to_string(),
            instances[0].endpoints.len().to_string(),
            instances[0].description.clone(),
        ]);
    }
    table.print()
}

async fn info(
    discovery: &Discovery,
    name: String,
    id: Option<String>,
    endpoint: Option<&regex::Regex>,
    json: bool,
    wait: Duration,
) -> Result<(), CliError> {
    let mut infos = match &id {
        Some(id) => vec![
            discovery
                .info_instance(&name, id)
                .await
                .map_err(CliError::js(FAILED))?,
        ],
        None => discovery
            .info(Some(&name))
            .await
            .map_err(CliError::js(FAILED))?,
    };
    infos.sort_by(|a, b| a.id.cmp(&b.id));
    if let Some(endpoint) = endpoint {
        for info in &mut infos {
            info.endpoints.retain(|e| endpoint.is_match(&e.name));
        }
    }
    if json {
        return out::json(&infos);
    }
    if infos.is_empty() {
        return Err(CliError::NothingReceived {
            what: "no service instance answered",
            timeout: wait,
        });
    }
    let mut text = String::new();
    for info in &infos {
        text.push_str(&format!(
            "Service {} {} ({})\n",
            info.name, info.version, info.id
        ));
        if !info.description.is_empty() {
            text.push_str(&format!("  {}\n", info.description));
        }
        let mut table = Table::new(["  Endpoint", "Subject", "Queue group"]);
        for e in &info.endpoints {
            table.row(vec![
                format!("  {}", e.name),
                e.subject.clone(),
                e.queue_group.clone(),
            ]);
        }
        text.push_str(&table.render());
        text.push('\n');
    }
    out::print(&text)
}

async fn stats(
    discovery: &Discovery,
    name: Option<String>,
    id: Option<String>,
    json: bool,
    wait: Duration,
) -> Result<(), CliError> {
    let mut stats = match (&name, &id) {
        (Some(name), Some(id)) => {
            vec![
                discovery
                    .stats_instance(name, id)
                    .await
                    .map_err(CliError::js(FAILED))?,
            ]
        }
        _ => discovery
            .stats(name.as_deref())
            .await
            .map_err(CliError::js(FAILED))?,
    };
    stats.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    if json {
        return out::json(&stats);
    }
    if stats.is_empty() {
        eprintln!("No services answered within {:?}", wait);
        return Ok(());
    }
    let mut table = Table::new([
        "Service",
        "ID",
        "Endpoint",
        "Requests",
        "Errors",
        "Average",
        "Last error",
    ]);
    for s in &stats {
        for e in &s.endpoints {
            table.row(vec![
                s.name.clone(),
                s.id.clone(),
                e.name.clone(),
                human::count(e.requests as u64),
                human::count(e.errors as u64),
                human::latency_us(e.average_processing_time.as_secs_f64() * 1e6),
                e.last_error
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
            ]);
        }
    }
    table.print()
}

async fn ping(
    discovery: &Discovery,
    name: Option<String>,
    json: bool,
    wait: Duration,
) -> Result<(), CliError> {
    let mut pongs = discovery
        .ping(name.as_deref())
        .await
        .map_err(CliError::js(FAILED))?;
    pongs.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    if json {
        return out::json(&pongs);
    }
    if pongs.is_empty() {
        return Err(CliError::NothingReceived {
            what: "no service instance answered",
            timeout: wait,
        });
    }
    let mut table = Table::new(["Name", "ID", "Version"]);
    for p in &pongs {
        table.row(vec![p.name.clone(), p.id.clone(), p.version.clone()]);
    }
    table.print()
}
